"""Assets ``ducklake://NAME/schema.table``: a table of lake NAME (connection ``ducklake_<NAME>``).

Registered under ``asset-uris`` in :mod:`airflow_provider_lakehouse.get_provider_info`. Airflow and
OpenLineage are imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.assets.uris import (
    DUCKLAKE,
    ducklake_openlineage_name,
    parse_table_asset_uri,
    sanitize_table_uri,
    table_asset_uri,
)

if TYPE_CHECKING:
    from urllib.parse import SplitResult

    from airflow.providers.common.compat.openlineage.facet import Dataset as OpenLineageDataset
    from airflow.sdk import Asset

SCHEME = DUCKLAKE


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Normalize ``ducklake://NAME/schema.table`` (lower case); Airflow calls this for every such ``Asset``.

    :param uri: the URI, split (Airflow has lower-cased the scheme and dropped any fragment).
    :raises ValueError: if the URI is not of that form; the message shows the expected form.
    """
    return sanitize_table_uri(uri, scheme=SCHEME)


def create_asset(*, name: str, schema: str, table: str, extra: dict[str, Any] | None = None) -> Asset:
    """Build the ``Asset`` of table ``schema.table`` in lake ``name`` (used by hook-level lineage).

    :param name: the lake name.
    :param schema: the table's schema.
    :param table: the table's name.
    :param extra: the asset's extra.
    :raises ValueError: if a part has characters the URI form cannot carry.
    """
    from airflow_provider_lakehouse.assets import airflow_asset

    return airflow_asset(table_asset_uri(SCHEME, name, schema, table), extra)


def convert_asset_to_openlineage(asset: Asset, lineage_context: Any) -> OpenLineageDataset:
    """Translate the asset into an OpenLineage dataset: namespace ``ducklake://NAME``, name ``schema.table``.

    :param asset: an asset with a ``ducklake://`` URI (already sanitized by Airflow).
    :param lineage_context: Airflow's lineage context (unused: the name needs no connection).
    :raises ValueError: if the asset's URI is not a ``ducklake://`` table URI.
    """
    from airflow.providers.common.compat.openlineage.facet import Dataset as OpenLineageDataset

    namespace, name = ducklake_openlineage_name(parse_table_asset_uri(asset.uri, scheme=SCHEME))
    return OpenLineageDataset(namespace=namespace, name=name)
