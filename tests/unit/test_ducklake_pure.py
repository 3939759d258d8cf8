"""Pure pieces of the DuckLake core: change tokens and the conflict matrix, stats text, inlined value parsing."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake import changes
from airflow_provider_lakehouse.ducklake.inline_codec import decode_value, parse_timestamp
from airflow_provider_lakehouse.ducklake.stats import compute_stats, format_stat, merge_bound
from airflow_provider_lakehouse.ducklake.types import Column, columns_from_arrow, ducklake_type


def test_change_tokens_round_trip_in_duckdb_order() -> None:
    c = changes.ChangeSet(created_tables={("s", 'we"ird')}, inserted={3}, deleted={3}, created_schemas={"s"})
    assert c.text() == 'created_schema:"s",created_table:"s"."we""ird",inserted_into_table:3,deleted_from_table:3'
    parsed = changes.parse([c.text()])
    assert parsed.created_tables == {("s", 'we"ird')} and parsed.inserted == {3} and parsed.deleted == {3}


@pytest.mark.parametrize(
    ("mine", "theirs", "same_file", "conflicts"),
    [
        (changes.ChangeSet(inserted={1}), changes.ChangeSet(inserted={1}), False, False),
        (changes.ChangeSet(inserted={1}), changes.ChangeSet(dropped_tables={1}), False, True),
        (changes.ChangeSet(inserted={1}), changes.ChangeSet(altered={1}), False, True),
        (changes.ChangeSet(inserted={1}), changes.ChangeSet(deleted={2}), False, False),
        (changes.ChangeSet(deleted={1}), changes.ChangeSet(deleted={1}), False, False),
        (changes.ChangeSet(deleted={1}), changes.ChangeSet(deleted={1}), True, True),
        (changes.ChangeSet(deleted={1}), changes.ChangeSet(inserted={1}), False, True),
        (
            changes.ChangeSet(created_tables={("main", "t")}),
            changes.ChangeSet(created_tables={("main", "t")}),
            False,
            True,
        ),
        (changes.ChangeSet(created_schemas={"a"}), changes.ChangeSet(created_schemas={"b"}), False, False),
        (changes.ChangeSet(altered={1}), changes.ChangeSet(altered={1}), False, True),
    ],
)
def test_conflict_matrix(mine: changes.ChangeSet, theirs: changes.ChangeSet, same_file: bool, conflicts: bool) -> None:
    reason = changes.conflict(mine, theirs, my_deleted_files={7}, their_deleted_files={7} if same_file else {8})
    assert (reason is not None) is conflicts


@pytest.mark.parametrize(
    ("value", "column_type", "text"),
    [
        (1.0, "float64", "1.0"),
        (1e20, "float64", "1e+20"),
        (1.5e-7, "float64", "1.5e-07"),
        (0.1, "float32", "0.1"),
        (Decimal("12.5"), "decimal(12,2)", "12.50"),
        (dt.datetime(2024, 1, 1, 1, 2, 3, 500000), "timestamp", "2024-01-01 01:02:03.5"),
        (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "timestamptz", "2024-01-01 00:00:00+00"),
        (dt.date(2024, 2, 29), "date", "2024-02-29"),
        (b"\x00\xab", "blob", "00AB"),
        (True, "boolean", "1"),
        ("a\x00b", "varchar", None),
    ],
)
def test_stats_text_matches_duckdb(value: object, column_type: str, text: str | None) -> None:
    assert format_stat(value, Column(1, "c", column_type)) == text


def test_stats_merge_is_typed() -> None:
    col = Column(1, "c", "int64")
    assert merge_bound("9", "10", col, take_max=True) == "10"  # not string order
    assert merge_bound("9", None, col, take_max=True) is None  # unknown stays unknown


def test_compute_stats_counts_non_null_leaves_and_excludes_nan() -> None:
    table = pa.table(
        {
            "f": pa.array([1.0, float("nan"), None, 3.0]),
            "l": pa.array([["a", None], None, ["b"], []], pa.list_(pa.string())),
        }
    )
    columns = columns_from_arrow(table.schema)
    f, element = compute_stats(columns, table, None)
    assert (f.value_count, f.null_count, f.min_value, f.max_value, f.contains_nan) == (3, 1, "1.0", "3.0", True)
    assert (element.column_id, element.value_count, element.null_count, element.min_value, element.max_value) == (
        3,
        2,
        1,
        "a",
        "b",
    )


def test_inlined_nested_text_from_duckdb() -> None:
    lst = Column(1, "l", "list", children=(Column(2, "element", "varchar"),))
    st = Column(3, "s", "struct", children=(Column(4, "a", "int32"), Column(5, "b", "varchar")))
    mp = Column(6, "m", "map", children=(Column(7, "key", "varchar"), Column(8, "value", "int32")))
    assert decode_value("['b, c', NULL, z]", lst) == ["b, c", None, "z"]
    assert decode_value("{'a': 5, 'b': 'q, r'}", st) == {"a": 5, "b": "q, r"}
    assert decode_value("{q=1, r=NULL}", mp) == [("q", 1), ("r", None)]
    assert decode_value(b"text", Column(9, "v", "varchar")) == "text"  # Postgres BYTEA
    assert parse_timestamp("2024-01-01 10:00:00+02", with_tz=True) == dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)


def test_arrow_types_map_to_ducklake_types() -> None:
    assert [
        ducklake_type(t)
        for t in (
            pa.int16(),
            pa.uint64(),
            pa.float32(),
            pa.string(),
            pa.binary(),
            pa.uuid(),
            pa.json_(),
            pa.time64("us"),
            pa.timestamp("ms"),
        )
    ] == ["int16", "uint64", "float32", "varchar", "blob", "uuid", "json", "time", "timestamp_ms"]


def test_opening_a_store_without_a_catalog_says_so(tmp_path: object) -> None:
    from pathlib import Path

    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.ducklake.store import SqliteStore
    from airflow_provider_lakehouse.exceptions import CatalogNotFoundError, SnapshotNotFoundError

    store = SqliteStore(str(Path(str(tmp_path)) / "empty.sqlite"))
    with pytest.raises(CatalogNotFoundError, match=r"holds no DuckLake catalog; use DuckLake\.create"):
        DuckLake(store, data_path=str(tmp_path))
    assert not issubclass(CatalogNotFoundError, SnapshotNotFoundError)  # a missing catalog is not a missing snapshot
