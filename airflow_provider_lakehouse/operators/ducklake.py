"""DucklakeOperator: SQL against a named DuckLake lake, run on Spark, response to XCom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_lakehouse.airflow_connections import datatable_postgres_spec
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.hooks._task import task_identity
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
from airflow_provider_lakehouse.operators._lineage import SqlLineageMixin
from airflow_provider_lakehouse.operators._links import LakehouseLink
from airflow_provider_lakehouse.operators._statement_log import lake_statement_lines

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_provider_lakehouse.connections.specs import PostgresSpec
    from airflow_provider_lakehouse.hooks._lineage import SqlTarget
    from airflow_provider_lakehouse.lineage import Dataset, Lineage
    from airflow_provider_lakehouse.lineage.openlineage import DatasetFacts, Naming


class DucklakeOperator(SqlLineageMixin, BaseOperator):
    """Run SQL against a lake on Spark. The script is one transaction: all its data changes land as one DuckLake
    snapshot, or nothing does; each statement sees the changes of the statements before it.

    Retry-safe: the commit records the task instance (dag, task, run, map index, try). When Airflow retries a
    try that committed and then failed or died before reporting success, the retry does not commit again; it
    returns the recorded outcome (``"deduplicated"`` in the response). A task cleared by a user runs again.

    The response (pushed to XCom) lists each statement's kind, affected or returned row count, columns and
    rows (capped by ``max_rows``), the snapshot the script read, the snapshots it committed and the tables
    written.

    :param sql: SQL text or a path ending in ``.sql``, one or more statements (templated). It may start
        with ``ATTACH 'ducklake://NAME' AS dl; USE dl;`` (``'ducklake'`` for ``main``).
    :param ducklake: the lake's name; default: the one the SQL attaches, else ``main`` (templated).
    :param parameters: a dict binding ``$name`` or a list binding ``$1, $2, ...`` (templated); bound by
        Spark as typed literals, never pasted into the SQL.
    :param dialect: ``duckdb`` (default, the lake's native SQL, translated to Spark) or ``spark``.
    :param max_rows: rows of each SELECT kept in the response (the row count is always exact).
    :param spark_conn_id: run on this Spark connection instead of the lake's ``spark_conn_id`` (templated;
        empty: the lake's).
    :param autocommit: commit each data-changing statement (or ``BEGIN ... COMMIT`` group) as its own snapshot,
        as before 0.3. Not retry-safe: a retry re-runs the whole script, statements that committed included.
    :param engine: ``spark``, ``duckdb`` (in this worker process, DuckDB's ``ducklake`` extension) or ``auto``
        (DuckDB when the script scans at most the lake's ``duckdb_max_scan_bytes``, else Spark); templated;
        empty: the lake's extra ``engine``, else ``spark``. The log and the response say which engine ran and why.

    Lineage: tables and files the SQL reads and writes become the task's inlets and outlets
    (``ducklake://NAME/schema.table``, ``s3://bucket/key``) when the SQL is known at parse time, else they
    are published at run time through an asset alias; asset events carry ``snapshot_id`` and
    ``rows_written``. OpenLineage events carry schemas, column lineage, the snapshot id as dataset version,
    files/bytes/rows written and the lake's catalog.
    """

    template_fields: Sequence[str] = ("sql", "ducklake", "parameters", "spark_conn_id", "engine")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"sql": "sql", "parameters": "json"}
    ui_color = "#fff3b0"
    operator_extra_links = (LakehouseLink(),)

    def __init__(
        self,
        *,
        sql: str,
        ducklake: str | None = None,
        parameters: list[Any] | dict[str, Any] | None = None,
        dialect: str = "duckdb",
        max_rows: int = 1000,
        spark_conn_id: str | None = None,
        autocommit: bool = False,
        engine: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spark_conn_id = spark_conn_id
        self.engine = engine
        self.autocommit = autocommit
        self.sql = sql
        self.ducklake = ducklake
        self.parameters = parameters
        self.dialect = dialect
        self.max_rows = max_rows
        self._hook: DucklakeHook | None = None
        self._declare_lineage()

    def _get_hook(self) -> DucklakeHook:
        """The lake's hook, made once per run (after templating) and kept for ``on_kill`` and the lineage facts:
        lake ``ducklake``, else the one the SQL attaches, else ``main``."""
        if self._hook is None:
            self._hook = DucklakeHook(
                ducklake=self._sql_target().name, spark_conn_id=self.spark_conn_id, engine=self.engine or None
            )
        return self._hook

    def execute(self, context: Context) -> Any:
        # Lazy: the Spark driver module loads the DuckLake engine; operators are imported whenever a DAG file
        # is parsed, the driver only when a task runs.
        from airflow_provider_lakehouse.spark.driver import RunOptions

        hook = self._get_hook()
        plan = hook.plan(self.sql, self.parameters, dialect=self.dialect, autocommit=self.autocommit)
        lineage = self._lineage_before_run()
        # run_plan, not run: the hook would report hook-level lineage; this operator emits its own, richer one
        response = hook.run_plan(plan, RunOptions(max_rows=self.max_rows, task=task_identity(context)))
        for line in lake_statement_lines(plan, response):
            self.log.info("%s", line)
        self.log.info("%s", describe_commit(response))
        self._record_outcome(response)
        if lineage is not None:
            self._publish_outputs(
                context,
                _asset_extras(lineage, self._sql_target(), response),
                snapshot_read=response["catalog_info"].get("snapshot_before"),
            )
        return response

    # -- lineage ---------------------------------------------------------------------------------
    def _sql_target(self) -> SqlTarget:
        return DucklakeHook.sql_target_of(self.ducklake, self.sql, self.dialect)

    # hooks._openlineage loads the OpenLineage client (requests, its facets): imported by the methods that emit
    # OpenLineage, not when a DAG file that uses this operator is parsed.
    def _naming(self, target: SqlTarget) -> Naming:
        from airflow_provider_lakehouse.hooks._openlineage import ducklake_naming

        return ducklake_naming(target, _datatable_spec)

    def _facts(self, target: SqlTarget, lineage: Lineage, outcome: Any) -> dict[Dataset, DatasetFacts]:
        from airflow_provider_lakehouse.hooks._openlineage import attached_datatable_facts, ducklake_facts

        facts = ducklake_facts(self._get_hook().spec, target, lineage, outcome)
        facts.update(attached_datatable_facts(target, lineage, _datatable_spec, outcome))
        return facts

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.kill()


def _datatable_spec(name: str) -> PostgresSpec | None:
    """The Postgres target of a Data Table a lake script attaches; None when it cannot be resolved (lineage
    then names it ``datatable://NAME``: naming must never fail a task)."""
    try:
        return datatable_postgres_spec(name)
    except LakehouseError:
        return None


def describe_commit(response: dict[str, Any]) -> str:
    """One log line naming only the snapshots this task committed (other tasks may commit meanwhile).

    >>> describe_commit({"engine": "local", "catalog_info": {"lake": "main", "snapshot_before": 4,
    ...                  "snapshots_created": [7]}})
    'lake main: read snapshot 4, committed snapshot 7 (engine local)'
    """
    info = response["catalog_info"]
    created = info.get("snapshots_created") or []
    done = response.get("deduplicated")
    if done:
        what = f"try {done['committed_by_try']} already committed snapshot {done['snapshot_id']}; not committed again"
    elif created:
        what = f"committed snapshot{'s' if len(created) > 1 else ''} {', '.join(str(s) for s in created)}"
    else:
        what = "committed nothing"
    return f"lake {info['lake']}: read snapshot {info['snapshot_before']}, {what} (engine {response.get('engine')})"


def _asset_extras(lineage: Lineage, target: SqlTarget, response: dict[str, Any]) -> dict[Dataset, dict[str, Any]]:
    """``snapshot_id`` and ``rows_written`` for each output (files: the rows of the COPY that wrote them)."""
    info = response["catalog_info"]
    touched = {t["table"]: t for t in info.get("tables_touched") or ()}
    written = lineage.rows_written({c["command_index"]: c.get("affected_rows") for c in response["result"]["commands"]})
    extras: dict[Dataset, dict[str, Any]] = {}
    for dataset in {d for datasets in lineage.statement_outputs.values() for d in datasets}:
        extra = extras.setdefault(dataset, {})
        if dataset.kind == "table" and (dataset.store or target.store) == target.store:
            extra["snapshot_id"] = touched.get(dataset.name, {}).get("snapshot_id", info["snapshot_after"])
        if dataset in written:
            extra["rows_written"] = written[dataset]
    return extras
