"""DataTableOperator: SQL against a named Postgres Data Table, result to XCom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_lakehouse.datatables.runner import FETCH_MODES
from airflow_provider_lakehouse.hooks.datatable import DataTableHook
from airflow_provider_lakehouse.operators._lineage import SqlLineageMixin
from airflow_provider_lakehouse.operators._links import LakehouseLink
from airflow_provider_lakehouse.operators._statement_log import datatable_statement_lines

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_provider_lakehouse.hooks._lineage import SqlTarget
    from airflow_provider_lakehouse.lineage import Dataset, Lineage
    from airflow_provider_lakehouse.lineage.openlineage import DatasetFacts, Naming


class DataTableOperator(SqlLineageMixin, BaseOperator):
    """Run SQL on a Data Table in one transaction and push the last statement's result to XCom.

    :param sql: SQL text or a path ending in ``.sql``, one or more statements (templated).
    :param datatable: ``NAME``, ``NAME:SCHEMA`` or ``:SCHEMA``; default ``main`` (templated).
    :param parameters: a list binding ``$1, $2, ...`` or a dict binding ``$name`` (templated). Values
        are sent as bound parameters, never pasted into the SQL.
    :param fetch: ``all`` (list of row dicts, default), ``one`` (first row dict or None),
        ``scalar`` (first value or None) or ``none``.
    :param autocommit: run each statement in its own transaction (for ``CREATE DATABASE``, ``VACUUM``).

    Lineage: tables the SQL reads and writes become the task's inlets and outlets
    (``datatable://NAME/schema.table``) when the SQL is known at parse time, else they are published at run
    time through an asset alias; asset events carry ``rows_written``. OpenLineage events carry schemas,
    column lineage and row counts, under the Postgres naming (``postgres://host:port``, ``db.schema.table``).
    """

    template_fields: Sequence[str] = ("sql", "datatable", "parameters")
    template_ext: Sequence[str] = (".sql",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"sql": "sql", "parameters": "json"}
    ui_color = "#dbe9f6"
    operator_extra_links = (LakehouseLink(),)

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
        self._hook: DataTableHook | None = None
        self._declare_lineage()

    def _get_hook(self) -> DataTableHook:
        """The Data Table's hook, made once per run (after templating): the connection is resolved once for the
        SQL and its lineage."""
        if self._hook is None:
            self._hook = DataTableHook(datatable=self.datatable)
        return self._hook

    def execute(self, context: Context) -> Any:
        hook = self._get_hook()
        lineage = self._lineage_before_run()
        result = hook.run(
            self.sql,
            self.parameters,
            fetch=self.fetch,  # type: ignore[arg-type]
            autocommit=self.autocommit,
            report_lineage=False,  # this operator emits its own, richer lineage
        )
        self._record_outcome(result)
        writes = {i: [d.name for d in datasets] for i, datasets in lineage.statement_outputs.items()} if lineage else {}
        for line in datatable_statement_lines(result.statements, writes):
            self.log.info("%s", line)
        if lineage is not None:
            written = lineage.rows_written({st.index: st.rowcount for st in result.statements})
            self._publish_outputs(context, {d: {"rows_written": n} for d, n in written.items()})
        return result.result

    # -- lineage ---------------------------------------------------------------------------------
    def _sql_target(self) -> SqlTarget:
        return DataTableHook.sql_target_of(self.datatable)

    # hooks._openlineage loads the OpenLineage client (requests, its facets): imported by the methods that emit
    # OpenLineage, not when a DAG file that uses this operator is parsed.
    def _naming(self, target: SqlTarget) -> Naming:
        from airflow_provider_lakehouse.hooks._openlineage import datatable_naming

        return datatable_naming(target, self._get_hook().spec)

    def _facts(self, target: SqlTarget, lineage: Lineage, outcome: Any) -> dict[Dataset, DatasetFacts]:
        from airflow_provider_lakehouse.hooks._openlineage import datatable_facts

        return datatable_facts(self._get_hook().spec, target, lineage, outcome)
