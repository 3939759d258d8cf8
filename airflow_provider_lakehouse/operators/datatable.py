"""DataTableOperator: SQL against a named Postgres Data Table, result to XCom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from airflow_provider_lakehouse.datatables.runner import FETCH_MODES
from airflow_provider_lakehouse.hooks.datatable import DataTableHook

if TYPE_CHECKING:
    from airflow.sdk import Context


class DataTableOperator(BaseOperator):
    """Run SQL on a Data Table in one transaction and push the last statement's result to XCom.

    :param sql: SQL text or a path ending in ``.sql``, one or more statements (templated).
    :param datatable: ``NAME``, ``NAME:SCHEMA`` or ``:SCHEMA``; default ``main`` (templated).
    :param parameters: a list binding ``$1, $2, ...`` or a dict binding ``$name`` (templated). Values
        are sent as bound parameters, never pasted into the SQL.
    :param fetch: ``all`` (list of row dicts, default), ``one`` (first row dict or None),
        ``scalar`` (first value or None) or ``none``.
    :param autocommit: run each statement in its own transaction (for ``CREATE DATABASE``, ``VACUUM``).
    """

    template_fields: Sequence[str] = ("sql", "datatable", "parameters")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers = {"sql": "sql", "parameters": "json"}
    ui_color = "#dbe9f6"

    def __init__(
        self,
        *,
        sql: str,
        datatable: str = "main",
        parameters: list[Any] | dict[str, Any] | None = None,
        fetch: str = "all",
        autocommit: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if fetch not in FETCH_MODES:
            raise ValueError(f"fetch must be one of {', '.join(FETCH_MODES)}, not {fetch!r}.")
        self.sql = sql
        self.datatable = datatable
        self.parameters = parameters
        self.fetch = fetch
        self.autocommit = autocommit

    def execute(self, context: Context) -> Any:
        hook = DataTableHook(datatable=self.datatable)
        result = hook.run(self.sql, self.parameters, fetch=self.fetch, autocommit=self.autocommit)  # type: ignore[arg-type]
        for st in result.statements:
            self.log.info("statement %d (%s): %d row(s)", st.index, st.kind or "?", st.rowcount)
        return result.result
