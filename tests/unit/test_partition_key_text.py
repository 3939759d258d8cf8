"""Partition values as DuckDB writes them, for keys whose text is easy to get wrong (checked against DuckDB 1.5.5's
own ``ducklake_file_partition_value`` rows in tests/integration/test_partitioned_writes.py; here the cases that need
no lake)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake.partitioning import PartitionKey, key_values, value_text
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.exceptions import LakehouseError


def _texts(kind: str, array: pa.Array) -> list[str | None]:
    key = PartitionKey(0, Column(1, "k", kind), "identity", "k")
    return [None if v is None else value_text(key, v) for v in key_values(key, array).to_pylist()]


def test_nanosecond_keys_keep_their_nanoseconds_whatever_unit_the_values_came_in() -> None:
    as_nanos = pa.array([1704110400123456789, -1, None], pa.timestamp("ns"))
    assert _texts("timestamp_ns", as_nanos) == ["2024-01-01 12:00:00.123456789", "1969-12-31 23:59:59.999999999", None]
    as_micros = pa.array([1704110400123456, 0], pa.timestamp("us"))
    assert _texts("timestamp_ns", as_micros) == ["2024-01-01 12:00:00.123456", "1970-01-01 00:00:00"]


def test_blob_keys_escape_as_duckdb_and_refuse_bytes_that_are_not_utf8() -> None:
    assert _texts("blob", pa.array([b"\"q't/ %", "é".encode(), b""], pa.binary())) == [
        "\\x22q\\x27t/ %",
        "\\xC3\\xA9",
        "",
    ]
    with pytest.raises(LakehouseError, match=r"Invalid unicode \(byte sequence mismatch\).*'k'"):
        _texts("blob", pa.array([b"\xaa"], pa.binary()))


def test_hugeint_keys_are_their_exact_decimal_text() -> None:
    values = pa.array([2**100, -(2**70) - 1, None], pa.decimal128(38, 0))
    assert _texts("int128", values) == [str(2**100), str(-(2**70) - 1), None]
