"""Lineage -> OpenLineage datasets and facets (openlineage-python only; no Airflow).

Naming: Postgres tables use the OpenLineage naming spec (``postgres://host:port``, ``db.schema.table``),
S3 objects ``s3://bucket`` + key, local files ``file`` + path. The spec has no entry for DuckLake; lake
tables are ``ducklake://NAME`` + ``schema.table`` (the same identity as the Airflow asset), with a catalog
facet naming the lake's catalog and warehouse, and a symlink to the table's directory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import (
    DatasetFacet,
    OutputDatasetFacet,
    RunFacet,
    catalog_dataset,
    column_lineage_dataset,
    dataset_version_dataset,
    extraction_error_run,
    lifecycle_state_change_dataset,
    output_statistics_output_dataset,
    schema_dataset,
    sql_job,
    symlinks_dataset,
)

from airflow_provider_lakehouse.lineage.model import Dataset, DatasetLineage, Lineage

Naming = Callable[[Dataset], "tuple[str, str] | None"]


@dataclass(frozen=True)
class DatasetFacts:
    """What the run learned about a dataset beyond its SQL (all optional).

    :param fields: ``(column, type)`` pairs from the catalog or ``information_schema``.
    :param version: the DuckLake snapshot id the dataset is at after the run (for a dataset only read: the
        snapshot read).
    :param version_read: for a dataset the run both read and wrote (the target of UPDATE / DELETE / MERGE),
        the snapshot it read: the version of its input entry, while ``version`` is that of its output
        entry. ``None``: ``version`` for both.
    :param rows: rows written; :param bytes: bytes written; :param files: files written.
    :param catalog: a catalog facet (lakes); :param symlinks: ``(namespace, name, type)`` aliases.
    """

    fields: tuple[tuple[str, str], ...] | None = None
    version: str | None = None
    version_read: str | None = None
    rows: int | None = None
    bytes: int | None = None
    files: int | None = None
    catalog: catalog_dataset.CatalogDatasetFacet | None = None
    symlinks: tuple[tuple[str, str, str], ...] = ()


def file_naming(dataset: Dataset) -> tuple[str, str] | None:
    """OpenLineage naming of a file dataset: S3 objects and absolute local paths; ``None`` otherwise.

    >>> file_naming(Dataset("file", "s3://bucket/raw/orders.parquet"))
    ('s3://bucket', 'raw/orders.parquet')
    >>> file_naming(Dataset("file", "/data/x.csv"))
    ('file', '/data/x.csv')
    """
    if dataset.kind != "file":
        return None
    parts = urlsplit(dataset.name)
    if parts.scheme in ("s3", "s3a", "gs", "gcs", "abfss", "az"):
        scheme = {"s3a": "s3", "gcs": "gs"}.get(parts.scheme, parts.scheme)
        return f"{scheme}://{parts.netloc}", parts.path.lstrip("/")
    if parts.scheme == "file":
        return "file", parts.path
    if not parts.scheme and dataset.name.startswith("/"):
        return "file", dataset.name
    return None


def openlineage_datasets(
    lineage: Lineage,
    naming: Naming,
    facts: Mapping[Dataset, DatasetFacts] | None = None,
) -> tuple[list[InputDataset], list[OutputDataset]]:
    """Inputs and outputs with schema, column lineage, version, statistics, catalog and lifecycle facets.

    A dataset the SQL both read and wrote (the target of UPDATE, DELETE, MERGE, an upsert) is an input and
    an output, so every column-lineage input field names an input dataset (docs/lineage-rules.md).

    :param lineage: what the SQL read and wrote.
    :param naming: ``Dataset -> (namespace, name)``; datasets it maps to ``None`` are left out (and so are
        edges from them).
    :param facts: per-dataset runtime facts (schemas, versions, statistics).
    """
    facts = facts or {}
    inputs: list[InputDataset] = []
    outputs: list[OutputDataset] = []
    for item in lineage.datasets:
        named = naming(item.dataset)
        if named is None:
            continue
        fact = facts.get(item.dataset, DatasetFacts())
        if item.is_input:
            version = fact.version_read if fact.version_read is not None else fact.version
            inputs.append(InputDataset(namespace=named[0], name=named[1], facets=_common_facets(fact, version)))
        if item.is_output:
            facets = _common_facets(fact, fact.version)
            lineage_facet = _column_lineage(item, naming)
            if lineage_facet is not None:
                facets["columnLineage"] = lineage_facet
            if item.lifecycle:
                facets["lifecycleStateChange"] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
                    lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange(item.lifecycle)
                )
            output_facets: dict[str, OutputDatasetFacet] = {}
            if fact.rows is not None or fact.bytes is not None or fact.files is not None:
                output_facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                    rowCount=fact.rows, size=fact.bytes, fileCount=fact.files
                )
            outputs.append(OutputDataset(namespace=named[0], name=named[1], facets=facets, outputFacets=output_facets))
    return inputs, outputs


def _common_facets(fact: DatasetFacts, version: str | None) -> dict[str, DatasetFacet]:
    facets: dict[str, DatasetFacet] = {}
    if fact.fields:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(name=name, type=type_, ordinal_position=i)
                for i, (name, type_) in enumerate(fact.fields, start=1)
            ]
        )
    if version is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=version)
    if fact.catalog is not None:
        facets["catalog"] = fact.catalog
    if fact.symlinks:
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[
                symlinks_dataset.Identifier(namespace=ns, name=name, type=type_) for ns, name, type_ in fact.symlinks
            ]
        )
    return facets


def _column_lineage(item: DatasetLineage, naming: Naming) -> column_lineage_dataset.ColumnLineageDatasetFacet | None:
    def fields(edges: Sequence) -> list[column_lineage_dataset.InputField]:
        grouped: dict[tuple[str, str, str], list[column_lineage_dataset.Transformation]] = {}
        for edge in edges:
            named = naming(edge.dataset)
            if named is None:
                continue
            t = edge.transformation
            grouped.setdefault((*named, edge.column), []).append(
                column_lineage_dataset.Transformation(type=t.type, subtype=t.subtype, masking=t.masking)
            )
        return [
            column_lineage_dataset.InputField(namespace=ns, name=name, field=column, transformations=transformations)
            for (ns, name, column), transformations in sorted(grouped.items())
        ]

    per_column = {
        column: column_lineage_dataset.Fields(inputFields=fields(edges))
        for column, edges in item.column_lineage.items()
    }
    per_column = {c: f for c, f in per_column.items() if f.inputFields}
    dataset_wide = fields(item.dataset_lineage)
    if not per_column and not dataset_wide:
        return None
    return column_lineage_dataset.ColumnLineageDatasetFacet(fields=per_column, dataset=dataset_wide)


def sql_job_facets(sql: str, dialect: str) -> dict[str, object]:
    """The SQL job facet (query text as rendered, which never holds a credential: those are bound)."""
    return {"sql": sql_job.SQLJobFacet(query=sql, dialect=dialect)}


def extraction_error_facets(lineage: Lineage) -> dict[str, RunFacet]:
    """The ``extractionError`` run facet when some statements could not be analysed."""
    if not lineage.errors:
        return {}
    return {
        "extractionError": extraction_error_run.ExtractionErrorRunFacet(
            totalTasks=lineage.statements,
            failedTasks=len(lineage.errors),
            errors=[
                extraction_error_run.Error(
                    errorMessage=e.message, stackTrace=None, task=e.statement[:1000], taskNumber=e.index
                )
                for e in lineage.errors
            ],
        )
    }


def ducklake_catalog_facet(name: str, catalog_uri: str, warehouse_uri: str) -> catalog_dataset.CatalogDatasetFacet:
    """The catalog facet of a lake table: DuckLake over a Postgres or SQLite catalog.

    :param catalog_uri: where the catalog lives, without credentials (``postgres://host:port/db``).
    :param warehouse_uri: the lake's data path.
    """
    kind = "sqlite" if catalog_uri.startswith("sqlite") else "postgres"
    return catalog_dataset.CatalogDatasetFacet(
        framework="ducklake",
        type=kind,
        name=name,
        metadataUri=catalog_uri,
        warehouseUri=warehouse_uri,
        source="airflow-provider-lakehouse",
    )
