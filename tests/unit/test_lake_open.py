"""Opening a lake from its spec: reads never create a catalog, and an existing lake opens with one query."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.store import SqliteStore
from airflow_provider_lakehouse.exceptions import CatalogNotFoundError


def _spec(tmp_path: Path) -> DuckLakeSpec:
    return DuckLakeSpec("demo", str(tmp_path / "catalog.sqlite"), str(tmp_path / "data"))


def test_a_read_only_open_of_a_missing_lake_creates_nothing(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    with pytest.raises(CatalogNotFoundError, match="holds no DuckLake catalog"):
        DuckLake.from_spec(spec)
    assert not Path(str(spec.catalog)).exists()


def test_create_initialises_once_and_reads_open_the_same_lake(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    created = DuckLake.from_spec(spec, create=True)
    assert created.data_path == spec.data_path + "/"
    assert DuckLake.from_spec(spec, create=True).current_snapshot_id() == 0  # an existing lake is opened as is
    opened = DuckLake.from_spec(spec)
    assert (opened.data_path, opened.retry) == (created.data_path, spec.retry)


def test_opening_an_existing_lake_does_not_look_for_the_catalog_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tmp_path)
    DuckLake.from_spec(spec, create=True)
    with SqliteStore(str(spec.catalog)).connection() as conn:
        connection_type = type(conn)

    def no_lookup(self: object, name: str) -> bool:
        raise AssertionError(f"looked for {name} although the metadata read succeeded")

    monkeypatch.setattr(connection_type, "table_exists", no_lookup)
    assert DuckLake.from_spec(spec).current_snapshot_id() == 0


def test_an_empty_database_is_no_catalog(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "empty.sqlite"))
    with store.connection() as conn:
        conn.execute("CREATE TABLE unrelated (x INTEGER)")
    with pytest.raises(CatalogNotFoundError, match=r"holds no DuckLake catalog; use DuckLake\.create"):
        DuckLake(store)
