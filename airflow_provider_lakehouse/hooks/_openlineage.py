"""OpenLineage for the operators: naming, and the run-time facts (schemas, versions, statistics).

Facts come from the lake catalog or Postgres ``information_schema`` after the run; a failure to collect
them costs the facet, never the task.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.hooks._lineage import SqlTarget
from airflow_provider_lakehouse.lineage import Dataset, Lineage
from airflow_provider_lakehouse.lineage.openlineage import (
    DatasetFacts,
    Naming,
    ducklake_catalog_facet,
    extraction_error_facets,
    file_naming,
    openlineage_datasets,
    sql_job_facets,
)

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage

    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
    from airflow_provider_lakehouse.connections.specs import PostgresSpec
    from airflow_provider_lakehouse.datatables.runner import ScriptResult

log = logging.getLogger(__name__)


def operator_lineage(
    sql: str, target: SqlTarget, lineage: Lineage, naming: Naming, facts: Mapping[Dataset, DatasetFacts] | None = None
) -> OperatorLineage:
    """Inputs, outputs, the SQL job facet and (if any statement defeated the extractor) an error facet."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    inputs, outputs = openlineage_datasets(lineage, naming, facts)
    return OperatorLineage(
        inputs=inputs,
        outputs=outputs,
        run_facets=extraction_error_facets(lineage),
        job_facets=sql_job_facets(sql, target.dialect),
    )


# -- naming -------------------------------------------------------------------------------------
def datatable_naming(target: SqlTarget, spec: PostgresSpec | None) -> Naming:
    """Data Table tables by the OpenLineage Postgres naming (host and port only, never credentials)."""

    def naming(dataset: Dataset) -> tuple[str, str] | None:
        if dataset.kind == "file":
            return file_naming(dataset)
        store = dataset.store or target.store
        if store == target.store and spec is not None:
            name = dataset.name if dataset.name.count(".") == 2 else f"{spec.dbname}.{dataset.name}"
            return f"postgres://{spec.host}:{spec.port}", name
        return _store_naming(store, dataset)

    return naming


#: the Postgres target of a Data Table by name (None when it cannot be resolved)
DataTableSpecs = Callable[[str], "PostgresSpec | None"]


def ducklake_naming(target: SqlTarget, datatable_spec: DataTableSpecs | None = None) -> Naming:
    """Lake tables as ``ducklake://NAME`` + ``schema.table`` (the spec has no DuckLake entry); the tables of
    Data Tables a lake script attaches by the Postgres naming, as a Data Table's own SQL names them."""

    resolved: dict[str, PostgresSpec | None] = {}  # one connection look-up per Data Table, not per dataset

    def naming(dataset: Dataset) -> tuple[str, str] | None:
        if dataset.kind == "file":
            return file_naming(dataset)
        store = dataset.store or target.store
        if store.startswith("datatable://") and datatable_spec is not None and dataset.name.count(".") == 1:
            name = store.removeprefix("datatable://")
            if name not in resolved:
                resolved[name] = datatable_spec(name)
            spec = resolved[name]
            if spec is not None:
                return f"postgres://{spec.host}:{spec.port}", f"{spec.dbname}.{dataset.name}"
        return _store_naming(store, dataset)

    return naming


def attached_datatable_facts(
    target: SqlTarget, lineage: Lineage, datatable_spec: DataTableSpecs, response: Mapping[str, Any] | None
) -> dict[Dataset, DatasetFacts]:
    """Facts of the Data Table tables a lake script read or wrote: columns from ``information_schema`` and the
    rows the response counted for each one it changed."""
    touched = {t["table"]: t for t in ((response or {}).get("catalog_info") or {}).get("tables_touched") or ()}
    stores = {
        d.dataset.store
        for d in lineage.datasets
        if d.dataset.kind == "table" and d.dataset.store and d.dataset.store.startswith("datatable://")
    }
    outputs = {d.dataset for d in lineage.datasets if d.is_output}
    facts: dict[Dataset, DatasetFacts] = {}
    for store in sorted(s for s in stores if s is not None):
        name = store.removeprefix("datatable://")
        spec = datatable_spec(name)
        if spec is None:
            continue
        for dataset, fact in datatable_facts(
            spec, SqlTarget("datatable", name, "public", target.dialect), lineage, None
        ).items():
            if dataset.store != store:
                continue
            rows = touched.get(f"{store}/{dataset.name}", {}).get("rows_written") if dataset in outputs else None
            facts[dataset] = dataclasses.replace(fact, rows=rows)
    return facts


def _store_naming(store: str, dataset: Dataset) -> tuple[str, str] | None:
    if store.startswith(("ducklake://", "datatable://")):
        return store, dataset.name
    return None


# -- facts --------------------------------------------------------------------------------------
def datatable_facts(
    spec: PostgresSpec, target: SqlTarget, lineage: Lineage, result: ScriptResult | None
) -> dict[Dataset, DatasetFacts]:
    """Column types from ``information_schema`` and rows written per table (from statement row counts)."""
    import psycopg

    tables = [
        d.dataset
        for d in lineage.datasets
        if d.dataset.kind == "table"
        and (d.dataset.store or target.store) == target.store
        and d.dataset.name.count(".") == 1
    ]
    fields: dict[Dataset, list[tuple[str, str]]] = {}
    if tables:
        with psycopg.connect(**spec.connect_kwargs()) as conn:
            rows = conn.execute(
                "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
                "WHERE (table_schema || '.' || table_name) = ANY(%s) ORDER BY table_schema, table_name, ordinal_position",
                ([d.name for d in tables],),
            ).fetchall()
        by_name = {d.name: d for d in tables}
        for schema, table, column, type_ in rows:
            fields.setdefault(by_name[f"{schema}.{table}"], []).append((column, type_))
    written = lineage.rows_written({st.index: st.rowcount for st in result.statements} if result else {})
    facts = {}
    for item in lineage.datasets:
        d = item.dataset
        facts[d] = DatasetFacts(
            fields=tuple(fields[d]) if d in fields else None,
            rows=written.get(d) if item.is_output and result is not None else None,
            symlinks=((d.store or target.store, d.name, "TABLE"),) if d.kind == "table" else (),
        )
    return facts


def ducklake_facts(
    spec: DuckLakeSpec, target: SqlTarget, lineage: Lineage, response: Mapping[str, Any] | None
) -> dict[Dataset, DatasetFacts]:
    """Column types, snapshot ids and files/bytes/rows written, read from the lake catalog after the run."""
    # imported here: DAG files import the operators, and the lake (with pyarrow) is needed only after a run
    from airflow_provider_lakehouse.ducklake import metadata
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

    info = (response or {}).get("catalog_info") or {}
    before = info.get("snapshot_before")
    after = info.get("snapshot_after")
    created = set(info.get("snapshots_created") or ())
    touched = {t["table"]: t for t in info.get("tables_touched") or ()}
    written = lineage.rows_written(
        {
            c["command_index"]: c.get("affected_rows")
            for c in ((response or {}).get("result") or {}).get("commands") or ()
        }
    )
    catalog = ducklake_catalog_facet(spec.name, _catalog_uri(spec), spec.data_path)
    lake = DuckLake.from_spec(spec)  # read-only: collecting lineage never creates a catalog
    facts: dict[Dataset, DatasetFacts] = {}
    with lake.store.connection() as conn:
        current = lake.snapshot(conn=conn).snapshot_id
        for item in lineage.datasets:
            d = item.dataset
            if d.kind != "table" or (d.store or target.store) != target.store:
                if d.kind == "file" and item.is_output:
                    facts[d] = DatasetFacts(rows=written.get(d))
                continue
            try:
                table = lake.find_table(conn, d.name, current)
            except Exception:  # dropped by the script, or never created
                facts[d] = DatasetFacts(catalog=catalog, version=str(after) if after is not None else None)
                continue
            new_files: list[Any] = []
            if item.is_output and created:  # only this run's snapshots: other tasks may have committed meanwhile
                new_files = [
                    f
                    for f in metadata.data_files_at(conn, table, lake.table_dir(table), current)
                    if f.begin_snapshot in created
                ]
            version = touched.get(d.name, {}).get("snapshot_id", after if item.is_output else before)
            read_and_written = item.is_input and item.is_output and before is not None
            facts[d] = DatasetFacts(
                fields=tuple((c.name, c.type) for c in table.columns),
                version=str(version if version is not None else current),
                version_read=str(before) if read_and_written else None,  # its input entry: the snapshot read
                rows=(
                    touched.get(d.name, {}).get("rows_written", written.get(d)) if item.is_output and response else None
                ),
                bytes=sum(f.file_size_bytes for f in new_files) if item.is_output and response else None,
                files=len(new_files) if item.is_output and response else None,
                catalog=catalog,
                symlinks=(_location(lake.table_dir(table)),),
            )
    return facts


def _catalog_uri(spec: DuckLakeSpec) -> str:
    if isinstance(spec.catalog, str):
        return f"sqlite://{spec.catalog}"
    pg = spec.catalog
    schema = f"?schema={spec.metadata_schema}" if spec.metadata_schema else ""
    return f"postgres://{pg.host}:{pg.port}/{pg.dbname}{schema}"


def _location(table_dir: str) -> tuple[str, str, str]:
    named = file_naming(Dataset("file", table_dir))
    namespace, name = named if named is not None else ("file", table_dir)
    return namespace, name, "LOCATION"
