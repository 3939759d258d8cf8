"""DucklakeOperator: SQL against a named DuckLake lake, run on Spark, response to XCom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

if TYPE_CHECKING:
    from airflow.sdk import Context


class DucklakeOperator(BaseOperator):
    """Run SQL against a lake on Spark; every data-changing statement commits one DuckLake snapshot.

    The response (pushed to XCom) lists each statement's kind, affected or returned row count, columns and
    rows (capped by ``max_rows``), plus the snapshot before and after and the tables written.

    :param sql: SQL text or a path ending in ``.sql``, one or more statements (templated). It may start
        with ``ATTACH 'ducklake://NAME' AS dl; USE dl;`` (``'ducklake'`` for ``main``).
    :param ducklake: the lake's name; default: the one the SQL attaches, else ``main`` (templated).
    :param parameters: a dict binding ``$name`` or a list binding ``$1, $2, ...`` (templated); bound by
        Spark as typed literals, never pasted into the SQL.
    :param dialect: ``duckdb`` (default, the lake's native SQL, translated to Spark) or ``spark``.
    :param max_rows: rows of each SELECT kept in the response (the row count is always exact).
    """

    template_fields: Sequence[str] = ("sql", "ducklake", "parameters")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql", "parameters": "json"}
    ui_color = "#fff3b0"

    def __init__(
        self,
        *,
        sql: str,
        ducklake: str | None = None,
        parameters: list[Any] | dict[str, Any] | None = None,
        dialect: str = "duckdb",
        max_rows: int = 1000,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.ducklake = ducklake
        self.parameters = parameters
        self.dialect = dialect
        self.max_rows = max_rows
        self._hook: DucklakeHook | None = None

    def execute(self, context: Context) -> Any:
        from airflow_provider_lakehouse.spark.driver import RunOptions
        from airflow_provider_lakehouse.spark.plan import plan_script

        plan = plan_script(self.sql, dialect=self.dialect, lake=self.ducklake or None, parameters=self.parameters)
        self._hook = DucklakeHook(ducklake=plan.lake)
        ti = context.get("ti")
        author = f"{ti.dag_id}.{ti.task_id}" if ti is not None else None
        response = self._hook.run_plan(plan, RunOptions(max_rows=self.max_rows, author=author))
        for command in response["result"]["commands"]:
            count = command.get("row_count", command.get("affected_rows"))
            self.log.info("statement %d (%s): %s row(s)", command["command_index"], command["kind"],
                          "-" if count is None else count)
        info = response["catalog_info"]
        self.log.info("lake %s: snapshot %s -> %s on %s", info["lake"], info["snapshot_before"],
                      info["snapshot_after"], response["engine"])
        return response

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.kill()
