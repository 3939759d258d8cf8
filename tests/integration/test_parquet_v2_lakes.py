"""Lakes DuckDB writes with ``parquet_version 2``: 32-bit columns whose deltas need more than 32 bits.

DuckDB 1.5 encodes a ``UINTEGER`` of 2^31 or more, or an ``INTEGER`` column whose values lie 2^31 or more apart,
with 64-bit ``DELTA_BINARY_PACKED`` deltas, which pyarrow 26 refuses (``Unexpected end of stream``) and DuckDB and
Spark read. The provider decodes those columns itself (``ducklake/parquet_pages.py``); found by
tests/fuzz/duckdb_lakes_read_back.py, seed 28097."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from airflow_provider_lakehouse.ducklake.parquet_pages import read_columns
from tests import referee
from tests.integration.test_spark_sql import run, selected
from tests.referee import LakeSetup

pytestmark = pytest.mark.integration

U32_BOUNDS = [0, 1, 2**31 - 1, 2**31, 2**32 - 1]
I32_BOUNDS = [-(2**31), -1, 0, 2**31 - 1]


def _random_values(rng: random.Random, kind: str, count: int, nullable: bool) -> list[int | None]:
    def one() -> int:
        if kind == "UINTEGER":
            return rng.choice([*U32_BOUNDS, rng.randrange(2**32), rng.randrange(50)])
        return rng.choice([*I32_BOUNDS, rng.randrange(-(2**31), 2**31), rng.randrange(50)])

    return [None if nullable and rng.random() < 0.2 else one() for _ in range(count)]


@pytest.mark.parametrize("seed", range(12))
def test_delta_packed_32_bit_columns_read_as_duckdb_reads_them(tmp_path: Path, seed: int) -> None:
    """Random values, nulls, codecs and row group sizes; dictionary pages where DuckDB picks them (few values)."""
    rng = random.Random(seed)
    con = referee.connect()
    count = rng.choice([1, 33, 1000, 20000])
    columns = {"u": "UINTEGER", "i": "INTEGER", "few": "UINTEGER"}
    nullable = seed % 2 == 0
    values = {name: _random_values(rng, kind, count, nullable) for name, kind in columns.items()}
    values["few"] = [rng.choice([2**31 + 5, 7, None if nullable else 9]) for _ in range(count)]
    con.execute(
        "CREATE TABLE v AS SELECT * FROM (SELECT unnest(?::UINTEGER[]) AS u, unnest(?::INTEGER[]) AS i, "
        "unnest(?::UINTEGER[]) AS few)",
        [values["u"], values["i"], values["few"]],
    )
    codec = rng.choice(["uncompressed", "snappy", "zstd", "gzip", "lz4"])
    path = str(tmp_path / "v.parquet")
    con.execute(
        f"COPY v TO '{path}' (PARQUET_VERSION V2, COMPRESSION {codec}, ROW_GROUP_SIZE {rng.choice([100, 4096])})"
    )
    expected = referee.rows(con, f"SELECT * FROM '{path}'")
    with open(path, "rb") as handle:
        parquet = pq.ParquetFile(handle)
        assert read_columns(handle, parquet, path).to_pylist() == expected
        groups = list(range(parquet.num_row_groups))[1:]
        first_group_rows = parquet.metadata.row_group(0).num_rows
        assert read_columns(handle, parquet, path, ["i", "u"], groups).to_pylist() == [
            {"i": row["i"], "u": row["u"]} for row in expected[first_group_rows:]
        ]


def test_pyarrow_alone_refuses_these_files(tmp_path: Path) -> None:
    """Why the decoder exists: if pyarrow reads such a file one day, the fallback is no longer needed."""
    con = referee.connect()
    path = str(tmp_path / "v.parquet")
    con.execute(f"COPY (SELECT 3145702376::UINTEGER AS u) TO '{path}' (PARQUET_VERSION V2)")
    with pytest.raises(OSError, match="Unexpected end of stream"):
        pq.read_table(path)


def test_a_nested_column_neither_reads_is_named(tmp_path: Path) -> None:
    con = referee.connect()
    path = str(tmp_path / "nested.parquet")
    con.execute(f"COPY (SELECT 1 AS id, [3145702376::UINTEGER, 1] AS l) TO '{path}' (PARQUET_VERSION V2)")
    with open(path, "rb") as handle, pytest.raises(OSError, match=r"nested\.parquet: cannot read column 'l'.*nested"):
        read_columns(handle, pq.ParquetFile(handle), path)


def _lake_with_wide_32_bit_values(setup: LakeSetup) -> Any:
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT="0")
    con.sql("CALL lake.set_option('parquet_version', 2)")
    con.sql("CREATE TABLE lake.t (id BIGINT, u UINTEGER, i INTEGER)")
    con.sql(
        "INSERT INTO lake.t VALUES (1, 3145702376, -2147483648), (2, 1887778023, 2147483647), (3, NULL, NULL), "
        "(4, 4294967295, 0)"
    )
    con.sql("INSERT INTO lake.t SELECT range + 5, (range * 987654321) % 4294967296, range - 1000 FROM range(3000)")
    con.sql("DELETE FROM lake.t WHERE id % 7 = 0")
    con.sql("UPDATE lake.t SET u = u + 1 WHERE id < 4")
    return con


def test_our_reader_reads_a_parquet_version_2_lake_at_every_snapshot(setup: LakeSetup) -> None:
    con = _lake_with_wide_32_bit_values(setup)
    assert referee.assert_same_at_every_snapshot(setup.open(), con, "main.t") >= 4


def test_the_spark_engine_reads_a_parquet_version_2_lake(spark: Any, setup: LakeSetup) -> None:
    con = _lake_with_wide_32_bit_values(setup)
    query = "SELECT count(*) AS n, sum(u) AS su, sum(i) AS si, max(u) AS mu, min(i) AS mi FROM t"
    ours = selected(run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
    theirs = referee.rows(con, query.replace("FROM t", "FROM lake.t"))
    assert [{k: int(v) for k, v in row.items()} for row in ours] == [
        {k: int(v) for k, v in row.items()} for row in theirs
    ]


def test_a_parquet_version_2_file_is_copied_into_a_lake(spark: Any, setup: LakeSetup, tmp_path: Path) -> None:
    """``CREATE TABLE AS SELECT * FROM read_parquet(...)`` copies a file's row groups with pyarrow on the executors:
    a DuckDB file with 64-bit deltas in an ``INTEGER`` column goes through the decoder there too."""
    setup.create()
    con = referee.connect()
    landing = str(tmp_path / "wide.parquet")
    con.execute(
        f"COPY (SELECT range AS id, CASE WHEN range % 2 = 0 THEN -2147483648 + range ELSE 2147483647 - range END "
        f"::INTEGER AS i FROM range(5000)) TO '{landing}' (PARQUET_VERSION V2, ROW_GROUP_SIZE 2048)"
    )
    with pytest.raises(OSError, match="Unexpected end of stream"):
        pq.read_table(landing)  # what the copy met before
    response = run(
        spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE t AS SELECT * FROM read_parquet('{landing}')"
    )
    assert response["result"]["commands"][2]["write"] == "parquet-copy"
    setup.attach(con)
    assert referee.rows(con, "SELECT * FROM lake.t ORDER BY id") == referee.rows(
        con, f"SELECT * FROM '{landing}' ORDER BY id"
    )
