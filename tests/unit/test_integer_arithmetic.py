"""The integer types the Spark engine gives ``+``, ``-`` and ``*`` are DuckDB's (``spark/integer_arithmetic.py``),
asked of DuckDB 1.5.5 with ``typeof`` for every pair of integer types and for literals at each type's edges."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.spark.integer_arithmetic import (
    IntegerOperation,
    duckdb_integer_type,
    moved_constants,
)

TYPES = ["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"]
#: DuckDB's names of the types in ``typeof``, by the names in its errors
TYPEOF_NAMES = {
    "INT8": "TINYINT",
    "INT16": "SMALLINT",
    "INT32": "INTEGER",
    "INT64": "BIGINT",
    "UINT8": "UTINYINT",
    "UINT16": "USMALLINT",
    "UINT32": "UINTEGER",
    "UINT64": "UBIGINT",
}
LITERALS = [0, -1, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.sql(f"CREATE TABLE t ({', '.join(f'c{n} {kind}' for n, kind in enumerate(TYPES))})")
    connection.sql(f"INSERT INTO t VALUES ({', '.join('1' for _ in TYPES)})")
    return connection


def typed(sql: str, types: dict[str, str]) -> exp.Expr:
    """``sql`` (DuckDB) with its columns typed as ``types`` says."""
    node = sqlglot.parse_one(sql, read="duckdb")
    for column in node.find_all(exp.Column):
        column.type = exp.DataType.build(types[column.name], dialect="duckdb")
    return node


def ours(node: exp.Expr) -> str:
    integer = duckdb_integer_type(node)
    return "HUGEINT" if integer is None else TYPEOF_NAMES[integer.name]


@pytest.mark.parametrize("left", range(len(TYPES)))
def test_two_columns_take_the_type_duckdb_gives_their_pair(con: duckdb.DuckDBPyConnection, left: int) -> None:
    types = {f"c{n}": kind for n, kind in enumerate(TYPES)}
    for right in range(len(TYPES)):
        for operator in "+-*":
            sql = f"c{left} {operator} c{right}"
            (duckdbs,) = con.sql(f"SELECT typeof({sql}) FROM t").fetchone() or ("?",)
            assert ours(typed(sql, types)) == duckdbs, sql


@pytest.mark.parametrize("column", range(len(TYPES)))
def test_a_literal_takes_the_columns_type_where_it_fits(con: duckdb.DuckDBPyConnection, column: int) -> None:
    types = {f"c{n}": kind for n, kind in enumerate(TYPES)}
    for value in LITERALS + [-v for v in LITERALS]:
        for sql in (f"c{column} + {value}", f"({value}) * c{column}"):
            (duckdbs,) = con.sql(f"SELECT typeof({sql}) FROM t").fetchone() or ("?",)
            assert ours(typed(sql, types)) == duckdbs, sql


def test_a_comparison_keeps_its_constant_where_the_moved_one_does_not_fit() -> None:
    """``u8 + 100 > 0`` would compare ``u8 > -100``, no UTINYINT: DuckDB computes the sum (and fails for 200)."""
    node = typed("u + 100 > 0", {"u": "UTINYINT"})

    def operation(arithmetic: exp.Expr) -> IntegerOperation | None:
        integer = duckdb_integer_type(arithmetic)
        return None if integer is None else IntegerOperation(integer, True)

    assert moved_constants(node, operation) is node
    assert moved_constants(typed("u - 1 > 0", {"u": "UTINYINT"}), operation).sql("duckdb") == "u > 1"
    assert moved_constants(typed("1 - u > 0", {"u": "UTINYINT"}), operation).sql("duckdb") == "u < 1"
