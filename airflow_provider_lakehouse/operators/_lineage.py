"""What both SQL operators share for lineage: parse-time inlets/outlets, asset events, OpenLineage methods.

Parse time: SQL written in the DAG is analysed once (cached) and its tables become inlets and outlets, so
the Airflow graph shows them between tasks. SQL known only at run time (a ``.sql`` file, Jinja blocks, a
templated table name) gets an asset alias instead, through which the run publishes what it wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.hooks._lineage import (
    SqlTarget,
    alias_name,
    parse_time_lineage,
    publish_asset_events,
    table_assets,
)
from airflow_provider_lakehouse.lineage import extract_lineage

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage

    from airflow_provider_lakehouse.lineage import Dataset, Lineage
    from airflow_provider_lakehouse.lineage.openlineage import DatasetFacts, Naming

log = logging.getLogger(__name__)


class SqlLineageMixin:
    """Lineage for an operator with a templated ``sql`` field; subclasses say where the SQL runs."""

    sql: Any
    task_id: str
    inlets: list[Any]
    outlets: list[Any]
    _lineage_alias: str | None = None
    _run_lineage: Lineage | None = None
    _run_outcome: Any = None
    _run_facts: Mapping[Dataset, DatasetFacts] | None = None
    _run_lineage_with_schemas: Lineage | None = None  # the run's lineage re-read with the catalog's columns

    # -- provided by the operator ------------------------------------------------------------
    def _sql_target(self) -> SqlTarget:
        raise NotImplementedError

    def _naming(self, target: SqlTarget) -> Naming:
        raise NotImplementedError

    def _facts(self, target: SqlTarget, lineage: Lineage, outcome: Any) -> Mapping[Dataset, DatasetFacts]:
        raise NotImplementedError

    # -- parse time --------------------------------------------------------------------------
    def _declare_lineage(self) -> None:
        """Add the SQL's tables to inlets/outlets, or an asset alias when the SQL is known only at run time."""
        try:
            lineage = parse_time_lineage(self.sql, self._sql_target())
        except Exception:  # a templated data table / lake name: run time will know
            lineage = None
        try:
            if lineage is not None:
                inlets, outlets = table_assets(lineage, self._sql_target())
                self.inlets = [*self.inlets, *(a for a in inlets if a not in self.inlets)]
                self.outlets = [*self.outlets, *(a for a in outlets if a not in self.outlets)]
                return
            from airflow.sdk import AssetAlias

            dag_id = getattr(getattr(self, "dag", None), "dag_id", None)
            self._lineage_alias = alias_name(dag_id, self.task_id)
            self.outlets = [*self.outlets, AssetAlias(self._lineage_alias)]
        except Exception:
            log.warning("could not declare the lineage of task %s", self.task_id, exc_info=True)

    # -- run time ----------------------------------------------------------------------------
    def _lineage_before_run(self) -> Lineage | None:
        try:
            self._run_lineage = self._sql_target().extract(self.sql)
            for error in self._run_lineage.errors:
                log.info(
                    "lineage: statement %d %s: %s",
                    error.index,
                    "partly analysed" if error.partial else "not analysed",
                    error.message,
                )
        except Exception:
            log.warning("lineage extraction failed", exc_info=True)
            self._run_lineage = None
        return self._run_lineage

    def _record_outcome(self, outcome: Any) -> None:
        """Keep the run's outcome and, when OpenLineage is on, read its schemas and statistics now.

        Why now: the OpenLineage listener builds the COMPLETE event in a forked child that it kills after
        ``[openlineage] execution_timeout`` (10 s by default), dropping the event. A catalog read there (a new
        catalog connection, extension loads) would count against that limit, and so would parsing the script
        again with the schemas read; the task itself has no such limit, so both happen here.
        """
        self._run_outcome = outcome
        if self._run_lineage is None or not _openlineage_enabled():
            return
        self._run_facts, self._run_lineage_with_schemas = self._read_facts(
            self._sql_target(), self._run_lineage, outcome
        )

    def _read_facts(
        self, target: SqlTarget, lineage: Lineage, outcome: Any
    ) -> tuple[Mapping[Dataset, DatasetFacts] | None, Lineage | None]:
        """The outputs' schemas and statistics, and the lineage re-read knowing the catalog's columns; ``None`` for
        what could not be read (logged, never raised: lineage must not fail the task)."""
        try:
            facts = self._facts(target, lineage, outcome)
        except Exception:
            log.warning("lineage: could not read schemas and statistics", exc_info=True)
            return None, None
        return facts, _with_schemas(self.sql, target, facts)

    def _publish_outputs(
        self, context: Mapping[str, Any], extras: Mapping[Dataset, dict[str, Any]], snapshot_read: int | None = None
    ) -> None:
        if self._run_lineage is not None:
            publish_asset_events(
                context,
                self._run_lineage,
                self._sql_target(),
                extras,
                self.outlets,
                self._lineage_alias,
                snapshot_read=snapshot_read,
            )

    # -- OpenLineage -------------------------------------------------------------------------
    def get_openlineage_facets_on_start(self) -> OperatorLineage:
        """Datasets and column lineage from the rendered SQL (no I/O beyond resolving the connection)."""
        return self._openlineage(with_facts=False)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> OperatorLineage:
        """Adds schemas, the snapshot id (lakes) and output statistics, read after the run."""
        return self._openlineage(with_facts=True)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> OperatorLineage:
        """What the SQL would have read and written (nothing landed: no version, no statistics)."""
        return self._openlineage(with_facts=False)

    def _openlineage(self, *, with_facts: bool) -> OperatorLineage:
        from airflow.providers.openlineage.extractors import OperatorLineage

        from airflow_provider_lakehouse.hooks._openlineage import operator_lineage  # the OpenLineage client: lazy

        try:
            target = self._sql_target()
            lineage = self._run_lineage or target.extract(self.sql)
            facts: Mapping[Dataset, DatasetFacts] | None = None
            with_schemas: Lineage | None = None
            if with_facts and self._run_facts is not None:  # read in the task by _record_outcome
                facts, with_schemas = self._run_facts, self._run_lineage_with_schemas
            elif with_facts:
                facts, with_schemas = self._read_facts(target, lineage, self._run_outcome)
            lineage = with_schemas or lineage
            facts = facts or {}
            return operator_lineage(self.sql, target, lineage, self._naming(target), facts)
        except Exception:
            log.warning("lineage: no OpenLineage datasets for task %s", self.task_id, exc_info=True)
            return OperatorLineage()


def _with_schemas(sql: Any, target: SqlTarget, facts: Mapping[Dataset, DatasetFacts]) -> Lineage | None:
    """The script's lineage again, knowing the catalog's columns (they expand ``SELECT *`` and place INSERTs
    without a column list); ``None`` when the facts name no columns."""
    schemas = {d.key: [name for name, _ in f.fields] for d, f in facts.items() if f.fields}
    if not schemas:
        return None
    return extract_lineage(sql, target.dialect, target.default_schema, schemas)


def _openlineage_enabled() -> bool:
    """Whether the OpenLineage provider is installed and on (its own switch, ``[openlineage] disabled``)."""
    try:
        from airflow.providers.openlineage.conf import is_disabled
    except ImportError:
        return False
    try:
        return not is_disabled()
    except Exception:
        return False
