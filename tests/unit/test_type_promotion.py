"""The column type changes the provider allows are the ones DuckDB's ``ducklake`` allows: every pair of scalar
types (and a grid of decimals) is tried on a DuckDB lake at test time, the referee."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from airflow_provider_lakehouse.ducklake.type_promotion import promotion_allowed
from tests import referee

#: DuckDB spelling -> DuckLake spelling
TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "int8",
    "SMALLINT": "int16",
    "INTEGER": "int32",
    "BIGINT": "int64",
    "HUGEINT": "int128",
    "UTINYINT": "uint8",
    "USMALLINT": "uint16",
    "UINTEGER": "uint32",
    "UBIGINT": "uint64",
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "DECIMAL(4,1)": "decimal(4,1)",
    "DECIMAL(10,2)": "decimal(10,2)",
    "DECIMAL(18,3)": "decimal(18,3)",
    "DECIMAL(38,10)": "decimal(38,10)",
    "DATE": "date",
    "TIME": "time",
    "TIMESTAMP": "timestamp",
    "TIMESTAMPTZ": "timestamptz",
    "TIMESTAMP_S": "timestamp_s",
    "TIMESTAMP_MS": "timestamp_ms",
    "TIMESTAMP_NS": "timestamp_ns",
    "VARCHAR": "varchar",
    "BLOB": "blob",
    "UUID": "uuid",
}
#: decimals against each other and against integers, at the edges of DuckDB's width rules
DECIMALS = ["DECIMAL(10,3)", "DECIMAL(12,3)", "DECIMAL(11,2)", "DECIMAL(19,0)", "DECIMAL(20,0)", "DECIMAL(21,1)"]
DECIMALS += ["DECIMAL(38,0)", "DECIMAL(38,5)", "DECIMAL(38,30)", "DECIMAL(37,0)", "DECIMAL(4,0)", "DECIMAL(5,1)"]
DECIMAL_PAIRS = [
    (old, new)
    for old in ["DECIMAL(4,1)", "DECIMAL(10,2)", "DECIMAL(20,0)", "DECIMAL(38,5)", "BIGINT", "UBIGINT", "HUGEINT"]
    for new in DECIMALS
]


def duckdb_allows(tmp_path: Path, pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str, bool]]:
    """Each pair tried on a DuckDB lake: a table of the old type (all made in one commit), then ``ALTER COLUMN …
    TYPE`` to the new one (a new lake every 150 pairs: DuckDB reloads a catalog of many tables slowly)."""
    for start in range(0, len(pairs), 150):
        batch, folder = pairs[start : start + 150], tmp_path / f"lake{start}"
        con = referee.connect()
        con.sql(f"ATTACH 'ducklake:{folder}.duckdb' AS lake (DATA_PATH '{folder}')")
        con.sql("BEGIN")
        for n, (old, _new) in enumerate(batch):
            con.sql(f"CREATE TABLE lake.t{n} (c {old})")
        con.sql("COMMIT")
        for n, (old, new) in enumerate(batch):
            try:
                con.sql(f"ALTER TABLE lake.t{n} ALTER COLUMN c TYPE {new}")
            except Exception as exc:  # DuckDB's refusal is the referee's answer
                assert "only widening type promotions are allowed" in str(exc), str(exc)
                yield old, new, False
            else:
                yield old, new, True
        con.close()


def ducklake_type(duckdb_type: str) -> str:
    return TYPES.get(duckdb_type) or duckdb_type.lower().replace(" ", "")


def test_every_scalar_type_change_is_allowed_exactly_when_duckdb_allows_it(tmp_path: Path) -> None:
    pairs = [*itertools.product(TYPES, repeat=2), *DECIMAL_PAIRS]
    differ = [
        (old, new, allowed)
        for old, new, allowed in duckdb_allows(tmp_path, pairs)
        if promotion_allowed(ducklake_type(old), ducklake_type(new)) != allowed
    ]
    assert differ == []
    assert sum(promotion_allowed(ducklake_type(o), ducklake_type(n)) for o, n in pairs) > 100
