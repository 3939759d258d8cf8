"""Lineage inside Airflow: assets for the UI graph, asset events, hook lineage, OpenLineage datasets.

Everything here is best effort: lineage problems are logged and never fail a task.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.assets import airflow_asset
from airflow_provider_lakehouse.assets.lineage_extra import Edge, LineageRecord
from airflow_provider_lakehouse.lineage import Dataset, DatasetLineage, InputColumn, Lineage, extract_lineage

if TYPE_CHECKING:
    from airflow.sdk import Asset

log = logging.getLogger(__name__)


class _HandledCommandFilter(logging.Filter):
    """Drops sqlglot's "unsupported syntax ... Command" warning for ``CALL ducklake_*``: the planner runs those
    statements and lineage reads them, so the warning (logged at every DAG parse) says nothing useful.

    >>> record = logging.LogRecord("sqlglot", logging.WARNING, "", 0, "'CALL ducklake_x()' contains unsupported "
    ...                            "syntax. Falling back to parsing as a 'Command'.", (), None)
    >>> _HandledCommandFilter().filter(record)
    False
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("unsupported syntax" in message and re.match(r"^'\s*CALL\s+ducklake_", message, re.IGNORECASE))


if not any(isinstance(f, _HandledCommandFilter) for f in logging.getLogger("sqlglot").filters):
    logging.getLogger("sqlglot").addFilter(_HandledCommandFilter())

_JINJA_EXPRESSION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_JINJA_BLOCK = re.compile(r"\{%|\{#")
_TEMPLATE_STANDIN = "$__template_value"  # parses as a parameter wherever a value can go


@dataclass(frozen=True)
class SqlTarget:
    """The store a piece of SQL runs against, and how its tables are named.

    :param kind: ``datatable`` or ``ducklake``.
    :param name: the data table's or lake's name.
    :param default_schema: where unqualified tables live (``public`` or the data table's schema; ``main``).
    :param dialect: the SQL dialect to parse with.
    """

    kind: str
    name: str
    default_schema: str
    dialect: str

    @property
    def store(self) -> str:
        return f"{self.kind}://{self.name.lower()}"

    def extract(self, sql: str) -> Lineage:
        return extract_lineage(sql, self.dialect, self.default_schema)

    def dataset_id(self, dataset: Dataset) -> str:
        """How the Lakehouse views name a dataset: its asset URI, else its key (e.g. a relative path)."""
        return self.asset_uri(dataset) or dataset.key

    def asset_uri(self, dataset: Dataset) -> str | None:
        """The Airflow asset URI of a dataset (``None`` for what has no stable identity, e.g. relative paths)."""
        if dataset.kind == "file":
            if re.match(r"^[a-z][a-z0-9+.-]*://", dataset.name):
                return re.sub(r"^s3a://", "s3://", dataset.name)
            return f"file://{dataset.name}" if dataset.name.startswith("/") else None
        store = dataset.store or self.store
        if not re.match(r"^(ducklake|datatable)://[a-z0-9_]+$", store) or dataset.name.count(".") != 1:
            return None
        return f"{store}/{dataset.name}"


def parse_time_lineage(sql: Any, target: SqlTarget) -> Lineage | None:
    """Lineage of SQL known when the DAG file is parsed; ``None`` when it is not (a ``.sql`` file, Jinja
    blocks) or when a statement could not be analysed (run-time lineage will say). A statement with
    partial lineage (its tables all known, some column edges not) does not stop it."""
    if not isinstance(sql, str) or sql.rstrip().endswith(".sql") or _JINJA_BLOCK.search(sql):
        return None
    if "{{" in target.name or "{{" in target.default_schema:
        return None
    lineage = target.extract(_JINJA_EXPRESSION.sub(_TEMPLATE_STANDIN, sql))
    return None if any(not error.partial for error in lineage.errors) else lineage


def table_assets(lineage: Lineage, target: SqlTarget) -> tuple[list[Asset], list[Asset]]:
    """Inlets (datasets read) and outlets (datasets written) as Airflow assets."""
    inlets = [a for a in (_asset(d.dataset, target) for d in lineage.inputs) if a is not None]
    outlets = [a for a in (_asset(d.dataset, target) for d in lineage.outputs) if a is not None]
    return inlets, outlets


def _asset(dataset: Dataset, target: SqlTarget) -> Asset | None:
    uri = target.asset_uri(dataset)
    if uri is None:
        return None
    try:
        return airflow_asset(uri)
    except Exception as exc:  # a path Airflow will not take as a URI is no reason to fail the DAG
        log.warning("no asset for %s: %s", uri, exc)
        return None


def alias_name(dag_id: str | None, task_id: str) -> str:
    """The asset alias a task publishes run-time outputs through."""
    return f"lakehouse__{dag_id}__{task_id}" if dag_id else f"lakehouse__{task_id}"


def publish_asset_events(
    context: Mapping[str, Any],
    lineage: Lineage,
    target: SqlTarget,
    extras: Mapping[Dataset, dict[str, Any]],
    declared: Iterable[Any],
    alias: str | None,
    *,
    snapshot_read: int | None = None,
) -> None:
    """Attach extras (snapshot id, rows and columns written, the column lineage record) to the events of
    declared outlets; outputs known only now go through the task's asset alias.

    :param declared: the task's outlets (assets declared at parse time, and its alias).
    :param snapshot_read: the lake snapshot the script read, kept in each output's lineage record.
    """
    try:
        from airflow.sdk import AssetAlias

        events = context.get("outlet_events")
        if events is None:
            return
        declared_uris = {getattr(a, "uri", None) for a in declared}
        for item in lineage.outputs:
            asset = _asset(item.dataset, target)
            if asset is None:
                continue
            extra = dict(extras.get(item.dataset, {}))
            if item.columns_written:  # the column badges of the asset node: which columns this run wrote
                extra["columns_written"] = list(item.columns_written)
            ti = context.get("ti")
            extra.update(
                lineage_record(
                    lineage, item, target, snapshot_read=snapshot_read, try_number=getattr(ti, "try_number", None)
                ).to_extra()
            )
            if asset.uri in declared_uris:
                accessor = events[asset]
                accessor.extra = {**(accessor.extra or {}), **extra}
            elif alias is not None:
                events[AssetAlias(alias)].add(asset, extra=extra)
            else:
                log.info("output %s was not declared as an outlet; no asset event for it", asset.uri)
    except Exception:
        log.warning("could not publish asset events", exc_info=True)


def lineage_record(
    lineage: Lineage,
    output: DatasetLineage,
    target: SqlTarget,
    *,
    snapshot_read: int | None = None,
    try_number: int | None = None,
) -> LineageRecord:
    """The compact column lineage of one output, as kept in its asset event (see :mod:`..assets.lineage_extra`)."""

    def edge(item: InputColumn) -> Edge:
        t = item.transformation
        return Edge(target.dataset_id(item.dataset), item.column, t.type, t.subtype, t.masking)

    return LineageRecord(
        columns={column: tuple(edge(i) for i in inputs) for column, inputs in output.column_lineage.items()},
        rows=tuple(edge(i) for i in output.dataset_lineage),
        reads={target.dataset_id(d.dataset): tuple(d.columns_read) for d in lineage.inputs},
        snapshot_read=snapshot_read,
        try_number=try_number,
    )


def is_real_input(item: DatasetLineage) -> bool:
    """Whether a dataset was read for its data: a table the script only empties and refills (``DELETE FROM t;
    INSERT INTO t ...``) is written, not read, though the convention records such in-place changes as both.

    >>> from airflow_provider_lakehouse.lineage import Dataset
    >>> is_real_input(DatasetLineage(Dataset("table", "agg.t"), "read_write", columns_written=("a",)))
    False
    >>> is_real_input(DatasetLineage(Dataset("table", "s.t"), "read_write", columns_read=("id",)))
    True
    """
    return item.access == "read" or (item.is_input and bool(item.columns_read))


def hook_lineage_listens() -> bool:
    """Whether Airflow's hook-lineage collector listens: a plugin registers a reader of it (OpenLineage's does when
    it is enabled); without one Airflow hands out a no-op collector. Asked first because making any collector, the
    no-op one too, discovers every installed provider's asset factories (about 0.25 s of CPU per task process
    here, measured with the plugins already loaded, as a task's listeners load them). True when this Airflow
    cannot say (the collector then decides, as before)."""
    import importlib

    for module in ("airflow.sdk.plugins_manager", "airflow.plugins_manager"):
        try:
            readers = importlib.import_module(module).get_hook_lineage_readers_plugins
        except (ImportError, AttributeError):
            continue
        return bool(readers())
    return True


def report_hook_lineage(hook: Any, sql: str, target: SqlTarget) -> None:
    """Tell Airflow's hook-lineage collector what a hook call read and wrote (it feeds OpenLineage).

    The SQL is analysed only when a collector listens (OpenLineage enabled): a hook called in a loop from
    TaskFlow code pays nothing otherwise, and without a listener no collector is made (see
    :func:`hook_lineage_listens`).
    """
    try:
        if not hook_lineage_listens():
            return
        from airflow.providers.common.compat.lineage.hook import get_hook_lineage_collector
        from airflow.sdk.lineage import NoOpCollector

        collector = get_hook_lineage_collector()
        if isinstance(collector, NoOpCollector):
            return
        for item in target.extract(sql).datasets:
            uri = target.asset_uri(item.dataset)
            if uri is None:
                continue
            if is_real_input(item):
                collector.add_input_asset(context=hook, uri=uri)
            if item.is_output:
                collector.add_output_asset(context=hook, uri=uri)
    except Exception:
        log.warning("could not report hook lineage", exc_info=True)
