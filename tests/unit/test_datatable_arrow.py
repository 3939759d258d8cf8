"""Postgres <-> Arrow types of Data Table rows in lake SQL: what a table reads as (DuckDB's postgres extension's
choices) and what a table created from a query gets."""

from __future__ import annotations

import decimal
import uuid
from types import SimpleNamespace

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.datatables.arrow import (
    ResultColumns,
    arrow_type_of,
    postgres_type,
    python_value,
    rows_of,
)
from airflow_provider_lakehouse.exceptions import UnsupportedStatementError


@pytest.mark.parametrize(
    "oid, precision, scale, expected",
    [
        (23, None, None, pa.int32()),
        (20, None, None, pa.int64()),
        (1700, 12, 2, pa.decimal128(12, 2)),
        (1700, None, None, pa.float64()),  # numeric without a precision: DOUBLE, as DuckDB reads it
        (3802, None, None, pa.string()),  # jsonb
        (2950, None, None, pa.uuid()),  # uuid: DuckDB's UUID
        (1186, None, None, pa.month_day_nano_interval()),  # interval: DuckDB's INTERVAL
        (1184, None, None, pa.timestamp("us", "UTC")),
        (1007, None, None, pa.list_(pa.int32())),
        (25, None, None, pa.string()),
    ],
)
def test_what_a_postgres_column_reads_as(
    oid: int, precision: int | None, scale: int | None, expected: pa.DataType
) -> None:
    assert arrow_type_of(oid, precision, scale) == expected


def test_values_become_what_their_arrow_type_holds() -> None:
    assert python_value({"a": [1]}, pa.string()) == '{"a": [1]}'
    assert python_value(decimal.Decimal("1.5"), pa.float64()) == 1.5
    assert python_value(None, pa.string()) is None
    assert python_value(uuid.UUID(int=1), pa.uuid()) == uuid.UUID(int=1).bytes
    assert python_value("1 year -2 mons +3 days -00:00:01.5", pa.month_day_nano_interval()) == pa.MonthDayNano(
        [10, 3, -1_500_000_000]
    )


def test_rows_go_to_postgres_as_it_reads_them() -> None:
    """Intervals as text Postgres reads exactly (psycopg would send Arrow's triple as a record), structs as JSON."""
    table = pa.table(
        {
            "iv": pa.array([pa.MonthDayNano([-1, 2, -999]), None], pa.month_day_nano_interval()),
            "s": pa.array([{"a": 1}, None], pa.struct([("a", pa.int64())])),
            "n": [1, 2],
        }
    )
    rows = list(rows_of(table))
    assert rows[0][0] == "-1 mons 2 days 0 microseconds" and rows[1][:2] == (None, None)
    assert rows[0][1].obj == {"a": 1} and [r[2] for r in rows] == [1, 2]


@pytest.mark.parametrize(
    "arrow_type, expected",
    [
        (pa.int8(), "SMALLINT"),
        (pa.uint64(), "NUMERIC(20, 0)"),
        (pa.float32(), "REAL"),
        (pa.string(), "TEXT"),
        (pa.uuid(), "UUID"),
        (pa.timestamp("us"), "TIMESTAMP"),
        (pa.date32(), "DATE"),
        (pa.struct([("a", pa.int32())]), "JSONB"),
        (pa.map_(pa.string(), pa.int32()), "JSONB"),
        (pa.list_(pa.list_(pa.string())), "TEXT[][]"),
        (pa.null(), "TEXT"),
        (pa.dictionary(pa.int8(), pa.string()), "TEXT"),  # a DuckDB ENUM
    ],
)
def test_the_postgres_type_of_a_created_column(arrow_type: pa.DataType, expected: str) -> None:
    assert postgres_type(arrow_type) == expected


def test_an_arrow_type_postgres_has_no_column_for_is_named() -> None:
    with pytest.raises(TypeError, match="no Postgres type for Arrow type dense_union"):
        postgres_type(pa.dense_union([pa.field("a", pa.int32())]))


def test_struct_and_map_values_are_sent_as_json() -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "s": pa.array([{"a": 1}, None], pa.struct([("a", pa.int64())])),
            "m": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        }
    )
    rows = list(rows_of(table))
    assert [r[0] for r in rows] == [1, 2]
    assert rows[0][1].obj == {"a": 1} and rows[0][2].obj == {"k": 1}
    assert rows[1][1:] == (None, None)


def _described(type_code: int, precision: int | None = None, scale: int | None = None) -> list[SimpleNamespace]:
    return [SimpleNamespace(name="c", type_code=type_code, precision=precision, scale=scale)]


def test_arrays_read_as_lists_of_their_elements() -> None:
    """numeric(10,2)[] keeps its precision, char(n)[] loses its padding, uuid[] holds UUIDs, as DuckDB reads them."""
    numeric = ResultColumns.of(_described(1231, 10, 2)).batch([([decimal.Decimal("1.50"), None],)])
    assert numeric.schema.field("c").type == pa.list_(pa.decimal128(10, 2))
    assert ResultColumns.of(_described(1014)).batch([(["a  ", None],), (None,)]).to_pylist() == [
        {"c": ["a", None]},
        {"c": None},
    ]
    uuids = ResultColumns.of(_described(2951)).batch([([uuid.UUID(int=7)],)])
    assert uuids.column(0).type == pa.list_(pa.uuid()) and uuids.column(0).to_pylist() == [[uuid.UUID(int=7)]]


def test_a_multi_dimensional_array_fails_naming_its_column() -> None:
    """Postgres's result says int[] for int[][]: the nested lists fail clearly, not inside pyarrow."""
    with pytest.raises(UnsupportedStatementError, match="'c' cannot be read: multi-dimensional arrays"):
        ResultColumns.of(_described(1007)).batch([([[1, 2], [3, 4]],)])
