"""``+``, ``-`` and ``*`` of DuckDB's narrow integer types on Spark: DuckDB's type, and DuckDB's failure where the
result leaves it (``spark/integer_arithmetic.py``). Spark typed ``tinyint_column + 1`` as an ``INT`` and read
an unsigned lake column as the next wider signed type, so a statement DuckDB fails returned numbers (script
fuzzer seed 28520). Each expression runs as a lake task on local Spark and in DuckDB 1.5.5 over the same lake;
the expected values and messages are DuckDB's at test time."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_spark_sql import spec_of
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COLUMNS = {
    "i8": "TINYINT",
    "i16": "SMALLINT",
    "i32": "INTEGER",
    "i64": "BIGINT",
    "u8": "UTINYINT",
    "u16": "USMALLINT",
    "u32": "UINTEGER",
    "u64": "UBIGINT",
}
TABLE = f"""
CREATE TABLE ints (id INTEGER, {", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())});
INSERT INTO ints VALUES
 (1, 100, 30000, 2000000000, 9000000000000000000, 200, 60000, 4000000000, 18000000000000000000),
 (2, -100, -30000, -2000000000, -9000000000000000000, 0, 0, 0, 0),
 (3, 1, 2, 3, 4, 5, 6, 7, 8),
 (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, -128, -32768, -2147483648, -9223372036854775808, 255, 65535, 4294967295, 18446744073709551615)
"""

#: (expression, the rows it is computed for): each fails in DuckDB on row 1 or 2, or returns its type's values
EXPRESSIONS = [
    # a literal that fits the column's type takes it: DuckDB computes in that type
    "i8 + 1",
    "i8 + 100",
    "i8 * 2",
    "i8 - -100",
    "1 - i8",
    "-100 - i8",
    "i8 + 127",
    "i8 + 128",  # the literal does not fit: an INTEGER
    "i8 + (100)",
    "i16 + 10000",
    "i16 * 2",
    "i16 - 32767",
    "u8 + 100",
    "u8 - 201",
    "u8 - 1",  # row 2: 0 - 1 leaves UTINYINT
    "u8 + -1",  # -1 is no UTINYINT: an INTEGER
    "u8 * 2",
    "u8 + 255",
    "u8 + 256",
    "u16 + 6000",
    "u16 - 1",
    "u16 * 2",
    "u32 + 400000000",
    "u32 - 1",
    "u32 * 2",
    "u32 + -1",  # a BIGINT
    "u64 + 1000000000000000000",
    "u64 - 1",
    "u64 * 2",
    # two columns: the type DuckDB gives the pair
    "i8 + i8",
    "i8 * i16",
    "u8 + u8",
    "u8 * u16",
    "u8 + i8",  # a BIGINT in DuckDB
    "u8 * i16",  # a SMALLINT
    "u16 * i16",
    "u16 + u32",
    "u32 * u32",
    "u32 * i32",
    "u64 + u64",
    "u8 + u64",
    # nested: each step in DuckDB's type, so an intermediate overflow fails although the result would fit
    "(i8 + 100) - 100",
    "(i8 + 1) * 2",
    "i8 * 1 + 1",
    "(u8 - u8) - 1",
    "abs(i8) + 100",
    # negation and abs at the types' edges
    "-i8",
    "-i16",
    "-i32",
    "-u8",
    "-u32",
    "abs(i8)",
    # not narrow: INTEGER and BIGINT overflow fails on both engines
    "i32 + 1",
    "i32 * 2",
    "i64 * 2",
    "i64 + i8",
    # decimals and doubles are not integer arithmetic
    "i8 + 1.5",
    "u8 * 1.5",
    "u64 * 1.5",
    "i8 * 2.0::DOUBLE",
]


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    return referee.sqlite_lake_made_by_duckdb(Path(tmp_path_factory.mktemp("overflow")), TABLE.strip().split(";\n"))


def number(value: Any) -> Decimal | None:
    """An integer, decimal or boolean value of either engine, comparable exactly (JSON gives decimals as text)."""
    return None if value is None else Decimal(str(int(value) if isinstance(value, bool) else value))


def ours(spark: Any, lake: LakeSetup, sql: str) -> list[Any] | str:
    try:
        response = PlanRunner(spark, spec_of(lake)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}"))
    except StatementError as exc:
        return f"error: {exc}"
    return [number(row["r"]) for row in response["result"]["commands"][-1]["rows"]]


def theirs(con: Any, sql: str) -> list[Any] | str:
    try:
        return [number(row[-1]) for row in con.sql(sql).fetchall()]
    except Exception as exc:  # DuckDB's failure is the referee's answer
        return f"error: {str(exc).splitlines()[0]}"


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_narrow_integer_arithmetic_is_duckdbs(spark: Any, lake: LakeSetup, con: Any, expression: str) -> None:
    """The values DuckDB returns, row by row; or the statement fails, with DuckDB's message where the type is a
    narrow one (``Overflow in addition of INT8 (100 + 100)!``)."""
    sql = f"SELECT id, {expression} AS r FROM ints ORDER BY id"
    expected, got = theirs(con, sql), ours(spark, lake, sql)
    if isinstance(expected, str):
        assert isinstance(got, str), f"{expression}: DuckDB {expected!r}, ours {got!r}"
        if re.search(r"of U?INT(8|16) |of UINT(32|64) ", expected) and "Out of Range Error" in got:
            assert expected.removeprefix("error: ") in got, f"{expression}: DuckDB {expected!r}, ours {got!r}"
        else:
            # INTEGER and BIGINT overflow, negation, abs: Spark's own ARITHMETIC_OVERFLOW; or DuckDB's message for
            # another row (DuckDB computes a function for a whole vector of rows before the next operator)
            assert "ARITHMETIC_OVERFLOW" in got or "Out of Range Error: Overflow" in got, expression
    else:
        assert got == expected, expression


#: comparisons of arithmetic with a constant: DuckDB's optimizer moves the constant across where the result fits
#: (``i8 + 100 > 0`` is ``i8 > -100``, which cannot overflow), or decides an equality that cannot hold
COMPARISONS = [
    "u8 * 2 > 1",  # 1 is not a multiple of 2: computed, and fails (seed 28520's shape)
    "u8 * 2 > 0",
    "u8 + 100 > 0",  # -100 is no UTINYINT: computed, and fails
    "u8 - 201 < 0",
    "u8 - 1 > 0",
    "1 - u8 > 0",
    "u8 + 100 = 10",
    "i8 + 100 > 0",
    "0 < i8 + 100",
    "i8 * 2 > 0",
    "i8 * -1 > 0",
    "-100 - i8 > 0",
    "i8 + 100 > i32",
    "i8 + 100 = 200",  # 200 is no TINYINT: compared as INTEGERs, computed, fails
    "i8 + 100 = -100",
    "i8 + 100 <> -100",
    "i8 + 100 <> 5",
    "i8 * 3 = 7",
    "i8 * 3 <> 7",
    "i8 * 3 > 7",
    "(i8 + 100) - 100 > 0",
    "(i8 + 100) * 1 > 0",
    "i8 + 100 BETWEEN 0 AND 300",
    "i8 + 100 IN (200, 0)",
    "i8 + 100 > CAST(0 AS INTEGER)",
    "i32 + 2000000000 > 0",  # INTEGER: moved as well, where Spark's own addition overflowed
    "i64 * 2 > 0",
    "i8 + 100 > NULL",  # NULL, computing nothing
    "(i8 + 100) + NULL > 0",
]


@pytest.mark.parametrize("comparison", COMPARISONS)
def test_a_comparison_with_a_constant_is_decided_as_in_duckdb(
    spark: Any, lake: LakeSetup, con: Any, comparison: str
) -> None:
    """In a filter and as a value: the rows DuckDB keeps, or DuckDB's failure."""
    for sql in (
        f"SELECT id, id AS r FROM ints WHERE {comparison} ORDER BY id",
        f"SELECT id, ({comparison})::INTEGER AS r FROM ints ORDER BY id",
    ):
        expected, got = theirs(con, sql), ours(spark, lake, sql)
        if isinstance(expected, str):
            assert isinstance(got, str), f"{sql}: DuckDB {expected!r}, ours {got!r}"
            assert expected.removeprefix("error: ") in got, f"{sql}: DuckDB {expected!r}, ours {got!r}"
        else:
            assert got == expected, sql


def test_a_created_table_of_narrow_arithmetic_has_duckdbs_signed_types(spark: Any, lake: LakeSetup, con: Any) -> None:
    """``i8 + 1`` is a ``TINYINT`` column, as in DuckDB (Spark's own type was ``INT``), with DuckDB's values."""
    select = "i8 + 1 AS a, i16 - 1 AS b, i8 * i8 AS c, u8 + i8 AS e FROM ints WHERE id IN (3, 4)"
    PlanRunner(spark, spec_of(lake)).run(
        plan_script(f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE ours AS SELECT {select}")
    )
    con.sql(f"CREATE TABLE theirs AS SELECT {select}")
    ours_types, duckdb_types = referee.described_again(con, lake, "ours", "theirs")
    assert ours_types == duckdb_types
    assert con.sql("SELECT * FROM ours EXCEPT SELECT * FROM theirs").fetchall() == []
