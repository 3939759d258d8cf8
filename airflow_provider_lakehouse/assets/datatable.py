"""Assets ``datatable://NAME/schema.table``: a table of Data Table NAME (connection ``datatable_<NAME>``).

Registered under ``asset-uris`` in :mod:`airflow_provider_lakehouse.get_provider_info`. Airflow and
OpenLineage are imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.airflow_connections import datatable_postgres_spec
from airflow_provider_lakehouse.assets import airflow_asset
from airflow_provider_lakehouse.assets.uris import (
    DATATABLE,
    TableAsset,
    parse_table_asset_uri,
    postgres_openlineage_name,
    sanitize_table_uri,
    table_asset_uri,
)
from airflow_provider_lakehouse.exceptions import LakehouseError

if TYPE_CHECKING:
    from urllib.parse import SplitResult

    from airflow.providers.common.compat.openlineage.facet import Dataset as OpenLineageDataset
    from airflow.sdk import Asset

SCHEME = DATATABLE

log = logging.getLogger(__name__)


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Normalize ``datatable://NAME/schema.table`` (lower case); Airflow calls this for every such ``Asset``.

    :param uri: the URI, split (Airflow has lower-cased the scheme and dropped any fragment).
    :raises ValueError: if the URI is not of that form; the message shows the expected form.
    """
    return sanitize_table_uri(uri, scheme=SCHEME)


def create_asset(*, name: str, schema: str, table: str, extra: dict[str, Any] | None = None) -> Asset:
    """Build the ``Asset`` of table ``schema.table`` in Data Table ``name`` (used by hook-level lineage).

    :param name: the Data Table name.
    :param schema: the table's schema.
    :param table: the table's name.
    :param extra: the asset's extra.
    :raises ValueError: if a part has characters the URI form cannot carry.
    """
    return airflow_asset(table_asset_uri(SCHEME, name, schema, table), extra)


def convert_asset_to_openlineage(asset: Asset, lineage_context: Any) -> OpenLineageDataset:
    """Translate the asset into an OpenLineage dataset named the way OpenLineage names Postgres tables.

    The Data Table's connection gives ``postgres://host:port`` and ``database.schema.table``, so the
    dataset joins what other integrations report for the same Postgres table. Only host, port and
    database are read; credentials never reach the dataset. If the connection cannot be resolved, the
    dataset is ``datatable://NAME`` / ``schema.table`` and a warning is logged: lineage must not fail a task.

    :param asset: an asset with a ``datatable://`` URI (already sanitized by Airflow).
    :param lineage_context: Airflow's lineage context (unused).
    :raises ValueError: if the asset's URI is not a ``datatable://`` table URI.
    """
    from airflow.providers.common.compat.openlineage.facet import Dataset as OpenLineageDataset

    table = parse_table_asset_uri(asset.uri, scheme=SCHEME)
    namespace, name = _openlineage_name(table)
    return OpenLineageDataset(namespace=namespace, name=name)


def _openlineage_name(table: TableAsset) -> tuple[str, str]:
    try:
        spec = datatable_postgres_spec(table.name)
    except Exception as exc:  # any failure (missing connection, bad fields, secrets backend down) -> fallback
        # Our own errors are written without credentials; a foreign one (a secrets backend echoing a
        # connection URI) might not be, so only its type is logged.
        reason = str(exc) if isinstance(exc, LakehouseError) else type(exc).__name__
        log.warning(
            "Could not resolve Data Table %r for OpenLineage (%s); %s gets namespace %r, name %r instead.",
            table.name,
            reason,
            table.uri,
            table.store,
            table.qualified_table,
        )
        return table.store, table.qualified_table
    return postgres_openlineage_name(spec.host, spec.port, spec.dbname, table.schema, table.table)
