"""Airflow assets for tables: ``datatable://NAME/schema.table`` and ``ducklake://NAME/schema.table``.

:mod:`.uris` parses and builds the URIs and imports no Airflow; :mod:`.datatable` and :mod:`.ducklake`
are the handlers, factories and OpenLineage converters registered under ``asset-uris``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow.sdk import Asset


def airflow_asset(uri: str, extra: dict[str, Any] | None = None) -> Asset:
    """The Airflow ``Asset`` of ``uri``, named by its normalized URI (Airflow's default name is the URI as
    written, before sanitizing): one name per table or file, whichever task declares it."""
    from airflow.sdk import Asset

    normalized = Asset(uri=uri).uri
    return Asset(uri=normalized, name=normalized, extra=extra)
