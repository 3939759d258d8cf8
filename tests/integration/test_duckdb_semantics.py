"""DuckDB-dialect SQL on Spark fails where DuckDB fails and returns DuckDB's values where it succeeds: casts,
overflow, division by zero, ``/``, ``//``, ``%`` and rounding casts, each checked against DuckDB 1.5 itself
(the expected values are DuckDB's answers at test time, not written down here)."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from duckdb import Error as DuckDBError

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LITERALS = [
    "1/0",
    "-1/0",
    "0/0",
    "7/2",
    "-7/2",
    "1.5/0.5",
    "7//2",
    "-7//2",
    "1//0",
    "5 // 2.0",
    "7.5 // 2",
    "7 % 3",
    "7 % 0",
    "-5 % 3",
    "5.5 % 0",
    "5 % 2.5",
    "CAST('abc' AS INTEGER)",
    "CAST(' 42 ' AS INTEGER)",
    "CAST('3.7' AS INTEGER)",
    "CAST('2.5' AS INTEGER)",
    "CAST('-2.5' AS BIGINT)",
    "CAST('4.5' AS SMALLINT)",
    "CAST('1e3' AS INTEGER)",
    "CAST('' AS INTEGER)",
    "CAST('9223372036854775807' AS BIGINT)",
    "CAST('9223372036854775808' AS BIGINT)",
    "CAST(2.5 AS INTEGER)",
    "CAST(-2.5 AS INTEGER)",
    "CAST(3.7 AS INTEGER)",
    "CAST(-0.4 AS INTEGER)",
    "CAST(2.5::DOUBLE AS INTEGER)",
    "CAST(3.5::DOUBLE AS INTEGER)",
    "CAST(-2.5::DOUBLE AS INTEGER)",
    "CAST(1.5::FLOAT AS INTEGER)",
    "CAST(300 AS TINYINT)",
    "CAST(2147483648 AS INTEGER)",
    "CAST(1e20 AS BIGINT)",
    "CAST('nan'::DOUBLE AS INTEGER)",
    "CAST(true AS INTEGER)",
    "CAST(NULL AS INTEGER)",
    "2147483647::INTEGER + 1::INTEGER",
    "9223372036854775807 + 1",
    "100::TINYINT * 2::TINYINT",
    "CAST(12345.678 AS DECIMAL(5,2))",
    "CAST('12.345' AS DECIMAL(4,2))",
    "CAST(1.005 AS DECIMAL(4,2))",
    "CAST('nan'::DOUBLE AS DECIMAL(10,2))",
    "CAST('-inf'::DOUBLE AS DECIMAL(10,2))",
    "TRY_CAST('nan'::DOUBLE AS DECIMAL(10,2))",
    "CAST(1e30 AS DECIMAL(10,2))",
    "CAST(2.675::DOUBLE AS DECIMAL(10,2))",
    "CAST(-0.125::DOUBLE AS DECIMAL(10,2))",
    "CAST(1.5::FLOAT AS DECIMAL(4,1))",
    "CAST(12.5 AS DECIMAL)",
    "CAST('2024-13-01' AS DATE)",
    "CAST('2024-01-01 10:00:00' AS DATE)",
    "CAST('x' AS DOUBLE)",
    "TRY_CAST('abc' AS INTEGER)",
    "TRY_CAST('2.5' AS INTEGER)",
    "TRY_CAST(3.5::DOUBLE AS INTEGER)",
    "TRY_CAST(300 AS TINYINT)",
    "TRY_CAST('x' AS DOUBLE)",
    # decimal results wider than 38 digits keep their scale, as in DuckDB (Spark's default rounds them)
    "CAST(-362309048361.6179852604 AS DECIMAL(38,10)) + 1",
    "CAST(12345678901234.123456 AS DECIMAL(20,6)) * CAST(98765432109876.654321 AS DECIMAL(20,6))",
    "CAST(1.123457 AS DECIMAL(20,6)) * CAST(2.654321 AS DECIMAL(20,6))",
    "CAST(1.5 AS DECIMAL(38,10)) * CAST(2.25 AS DECIMAL(38,10))",
    "CAST(0.1234567890123456789 AS DECIMAL(38,19)) - CAST(1 AS DECIMAL(38,0))",
    "CAST(7.5 AS DECIMAL(38,30)) * CAST(2 AS DECIMAL(38,10))",
    "CAST(99999999999999999999999999.99 AS DECIMAL(28,2)) * CAST(999999999999.99 AS DECIMAL(14,2))",
]

COLUMNS = [
    "CAST(f AS INTEGER)",
    "CAST(d AS INTEGER)",
    "CAST(s AS INTEGER)",
    "CAST(f * 2 AS BIGINT)",
    "i // 2",
    "i // 0",
    "i % 0",
    "i / 0",
    "f / 0",
    "d / 2",
    "i // d",
    "i // f",
    "TRY_CAST(s AS SMALLINT)",
    "CAST(d + i AS INTEGER)",
    "CAST(CASE WHEN i > 0 THEN f ELSE d END AS INTEGER)",
    "CAST(d AS DECIMAL(38,10)) * i + 1",
    "CAST(d AS DECIMAL(24,12)) * CAST(d AS DECIMAL(24,12))",
    "CAST(f / 0 AS DECIMAL(10,2))",
    "CAST(f * 1.1 AS DECIMAL(5,1))",
    "CAST(i / 3 AS DECIMAL(10,4))",
    # greatest/least/coalesce of an integer and a DECIMAL is the wider DECIMAL: rounded, it does not overflow a
    # DECIMAL as narrow as the decimal operand (expression fuzzer, seed 38022)
    "round(greatest(i * 100000, d), 1)",
    "round(least(i * -100000, d), 0)",
    "coalesce(i, d) * 2",
    # Spark rounds a DECIMAL to a DECIMAL: a % by a rounded 0 is NULL, not NaN (expression fuzzer, seed 22065)
    "3 % round(d, -1)",
    "(i % 4) % round(d)",
    "round(d) * 2",
    "round(d, 1) + 0.05",
    # a list from list_concat or flatten spells its NULLs as DuckDB does (seeds 22297, 22404)
    "CAST(list_concat([i, NULL], [1]) AS VARCHAR)",
    "CAST(flatten([[i], [NULL]]) AS VARCHAR)",
]


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    setup = referee.sqlite_lake(tmp_path_factory.mktemp("semantics"))
    with setup.create().transaction() as tx:
        tx.create_table(
            "main.vals",
            pa.schema(
                [
                    ("id", pa.int32()),
                    ("i", pa.int32()),
                    ("f", pa.float64()),
                    ("d", pa.decimal128(5, 2)),
                    ("s", pa.string()),
                ]
            ),
        )
        tx.append(
            "main.vals",
            pa.table(
                {
                    "id": pa.array([1, 2, 3, 4], pa.int32()),
                    "i": pa.array([7, -7, 0, 5], pa.int32()),
                    "f": [2.5, 3.5, -2.5, 0.4],
                    "d": pa.array([Decimal("2.50"), Decimal("-2.50"), Decimal("3.70"), None], pa.decimal128(5, 2)),
                    "s": ["2.5", " 7 ", "1e3", "-3.5"],
                }
            ),
        )
    return setup


def _spec(setup: LakeSetup) -> DuckLakeSpec:
    return DuckLakeSpec(name="main", catalog=setup.store.path, data_path=setup.data_path)  # type: ignore[attr-defined]


def ours(spark: Any, setup: LakeSetup, sql: str) -> list[Any] | str:
    """The values Spark returns, or ``"error"``."""
    try:
        response = PlanRunner(spark, _spec(setup)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}"))
    except StatementError:
        return "error"
    rows = response["result"]["commands"][-1]["rows"]
    return [r["r"] for r in rows]


def duckdb(con: Any, sql: str) -> list[Any] | str:
    """DuckDB's values as our responses carry them (JSON-safe: dates as ISO text), or ``"error"``."""
    try:
        return to_json_safe([r[0] for r in con.sql(sql).fetchall()])
    except Exception:
        return "error"


def same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=False):
        if x is None or y is None or isinstance(x, bool) or isinstance(y, bool):  # the same singleton
            if x is not y:
                return False
        elif isinstance(x, float) or isinstance(y, float):
            fx, fy = float(x), float(y)
            if not ((math.isnan(fx) and math.isnan(fy)) or fx == fy or math.isclose(fx, fy, rel_tol=1e-12)):
                return False
        elif isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif Decimal(str(x)) != Decimal(str(y)):
            return False
    return True


@pytest.mark.parametrize("expression", LITERALS)
def test_literal_expressions_behave_as_in_duckdb(spark: Any, lake: LakeSetup, con: Any, expression: str) -> None:
    expected = duckdb(con, f"SELECT {expression} AS r")
    got = ours(spark, lake, f"SELECT {expression} AS r")
    assert same(got, expected), f"{expression}: DuckDB {expected!r}, ours {got!r}"


@pytest.mark.parametrize("expression", COLUMNS)
def test_column_expressions_behave_as_in_duckdb(spark: Any, lake: LakeSetup, con: Any, expression: str) -> None:
    query = f"SELECT {expression} AS r FROM vals ORDER BY id"
    expected = duckdb(con, query)
    got = ours(spark, lake, query)
    assert same(got, expected), f"{expression}: DuckDB {expected!r}, ours {got!r}"


def test_an_aggregate_integer_division_keeps_duckdb_semantics(spark: Any, lake: LakeSetup, con: Any) -> None:
    query = "SELECT sum(i) // 3 AS r FROM vals"
    assert same(ours(spark, lake, query), duckdb(con, query))


def test_spark_dialect_scripts_keep_sparks_decimal_precision_loss(spark: Any, lake: LakeSetup, con: Any) -> None:
    """DuckDB-dialect scripts turn Spark's decimal precision loss off; a Spark-dialect script on the same session
    afterwards gets Spark's own answer again (the setting follows the script, it does not leak)."""
    expression = "CAST(1.123457 AS DECIMAL(20,6)) * CAST(2.654321 AS DECIMAL(20,6))"
    assert same(ours(spark, lake, f"SELECT {expression} AS r"), duckdb(con, f"SELECT {expression} AS r"))
    response = PlanRunner(spark, _spec(lake)).run(plan_script(f"SELECT {expression} AS r", dialect="spark"))
    spark_dialect = response["result"]["commands"][-1]["rows"][0]["r"]
    spark.conf.unset("spark.sql.decimalOperations.allowPrecisionLoss")
    sparks_own = spark.sql(f"SELECT {expression} AS r").collect()[0]["r"]
    assert Decimal(str(spark_dialect)) == sparks_own
    assert sparks_own != Decimal(str(duckdb(con, f"SELECT {expression} AS r")[0]))  # so the test tells them apart


def test_a_failed_cast_commits_nothing(spark: Any, tmp_path: Path) -> None:
    """The issue's case: DuckDB raises a Conversion Error, so we raise and no snapshot lands (not NULLs)."""
    setup = referee.sqlite_lake(tmp_path)
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("main.src", pa.schema([("x", pa.string())]))
        tx.create_table("main.t", pa.schema([("n", pa.int32())]))
        tx.append("main.src", pa.table({"x": ["1", "2", "three"]}))
    before = lake.current_snapshot_id()
    statement = "INSERT INTO t SELECT CAST(x AS INTEGER) FROM src"
    con = referee.connect()
    setup.attach(con)
    with pytest.raises(Exception, match="Conversion Error"):
        con.sql(f"USE lake; {statement}")
    with pytest.raises(StatementError, match=r"CAST_INVALID_INPUT|cannot be cast|malformed") as caught:
        PlanRunner(spark, _spec(setup)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {statement}"))
    assert caught.value.index == 3
    assert lake.current_snapshot_id() == before
    assert lake.read("main.t").num_rows == 0
    assert lake.delete_orphaned_files(older_than=_future()).files_deleted == []


def _future() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC) + dt.timedelta(days=1)


#: decimal arithmetic: DuckDB's result types (18 digits where both operands have at most 18, its overflow there)
DECIMAL_ARITHMETIC = [
    "d * i",
    "d + i",
    "d - d",
    "d * d",
    "d * d * d",
    "d * 2",
    "-d * 2147483648",
    "d + 1.5",
    "d * 0.05",
    "d * i + f",
    "CAST(d AS DECIMAL(18,2)) + CAST(d AS DECIMAL(18,2))",
    "CAST(d AS DECIMAL(10,2)) * i * i",
    "CAST(d AS DECIMAL(18,2)) * CAST(i AS BIGINT)",
    "CAST(d AS DECIMAL(20,2)) * i",
    "CAST(d AS DECIMAL(12,10)) * CAST(d AS DECIMAL(12,10))",
    "CAST(d AS DECIMAL(18,17)) + CAST(i AS SMALLINT)",
    "CAST(d AS DECIMAL(18,2)) * 1000000000 * 1000000000",
    "CAST(d AS DECIMAL(10,2)) * CAST(i AS TINYINT) - 1",
    "(d + i) * (d - i)",
    "CAST(d * i AS DECIMAL(30,4)) + 1",
    # decimal literals: DuckDB counts every digit written (0.5 is DECIMAL(2, 1); Spark's is DECIMAL(1, 1))
    "0.5",
    "-0.05",
    "00.50",
    "CASE WHEN i > 0 THEN 0.5 ELSE 0.25 END",
    "coalesce(NULL, 0.5)",
    "0.5 * i",
    # % and round of decimals: DuckDB's wider types (Spark made d % 3 a DECIMAL(3, 2), round(d) a DECIMAL(4, 0))
    "d % 3",
    "d % 2.5",
    "3 % d",
    "d % CAST(i AS BIGINT)",
    "CAST(d AS DECIMAL(10,0)) % 3",
    "round(d)",
    "round(d, 1)",
    "round(d, -1)",
    "round(d, 5)",
    "round(d) % 0",
]


def test_a_table_made_of_a_decimal_literal_holds_what_duckdbs_holds(spark: Any, lake: LakeSetup) -> None:
    """``CREATE TABLE AS SELECT 0.5 AS x`` makes DuckDB's ``DECIMAL(2, 1)``, so 1.5 fits in it later (Spark's own
    ``DECIMAL(1, 1)`` failed the insert)."""
    script = "CREATE TABLE literal_made AS SELECT 0.5 AS x; INSERT INTO literal_made VALUES (1.5)"
    con = referee.connect()  # DuckDB's own table, in memory
    con.sql(script)
    PlanRunner(spark, _spec(lake)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {script}"))
    reader = referee.connect()
    lake.attach(reader)
    query = "SELECT typeof(x), x FROM {} ORDER BY x"
    got = reader.sql(query.format("lake.literal_made")).fetchall()
    assert (
        got
        == con.sql(query.format("literal_made")).fetchall()
        == [("DECIMAL(2,1)", Decimal("0.5")), ("DECIMAL(2,1)", Decimal("1.5"))]
    )


@pytest.mark.parametrize("expression", DECIMAL_ARITHMETIC)
def test_decimal_arithmetic_has_duckdbs_type_and_overflow(
    spark: Any, lake: LakeSetup, con: Any, expression: str
) -> None:
    """A ``CREATE TABLE AS`` of decimal arithmetic makes DuckDB's column type, with DuckDB's values or its
    failure (Spark's own types are wider: it would store ``DECIMAL(21, 2)`` for ``DECIMAL(10, 2) * INTEGER``,
    where DuckDB computes ``DECIMAL(18, 2)`` and fails a result of more than 18 digits)."""
    stored_as_in_duckdb(spark, lake, con, expression, f"arith_{DECIMAL_ARITHMETIC.index(expression)}")


def stored_as_in_duckdb(spark: Any, lake: LakeSetup, con: Any, expression: str, table: str) -> None:
    """``CREATE TABLE table AS SELECT expression`` over ``vals`` on Spark stores DuckDB's values and column type,
    or fails where DuckDB fails."""
    query = f"SELECT {expression} AS r FROM vals ORDER BY id"
    expected = duckdb(con, query)
    try:
        PlanRunner(spark, _spec(lake)).run(
            plan_script(f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE {table} AS {query}")
        )
    except StatementError:
        assert expected == "error", f"{expression}: DuckDB {expected!r}, ours failed"
        return
    reader = referee.connect()
    lake.attach(reader)
    got = to_json_safe([r[0] for r in reader.sql(f"SELECT r FROM lake.{table}").fetchall()])
    assert same(got, expected), f"{expression}: DuckDB {expected!r}, ours {got!r}"
    ours_type = reader.sql(f"SELECT typeof(r) FROM lake.{table} LIMIT 1").fetchone()[0]
    duckdbs_type = con.sql(f"SELECT typeof({expression}) FROM vals LIMIT 1").fetchone()[0]
    assert ours_type == duckdbs_type, f"{expression}: DuckDB {duckdbs_type}, ours {ours_type}"


# A FLOAT (single precision) with a DECIMAL: DuckDB computes and compares in FLOAT, Spark widens both to DOUBLE
# (``0.1::FLOAT = 0.1`` is true in DuckDB; in Spark false, and ``> 0.1`` true).
FLOAT_EXPRESSIONS = [
    "g = 0.1",
    "g > 0.1",
    "g >= 0.2",
    "g <> 1.1",
    "g < -2.5",
    "0.1 < g",
    "g BETWEEN 0.1 AND 1.1",
    "g IN (0.1, 1.1)",
    "g NOT IN (0.2, -2.5)",
    "g IS DISTINCT FROM 0.2",
    "-g = -0.1",
    "g * 2 = 0.2",
    "g + 0.1 = 0.2",
    "g / 2 = 0.05",
    "g = 1e-1",
    "g + 0.1",
    "0.1 + g",
    "g * 1.5",
    "g - d",
    "g * d + 1",
    "g + 1",
    "g / 3",
    "g / d",
    "g / 3.0",
    "g / 0",
    "g // 2",
    "g % 0.3",
    "g % 0",
    # a FLOAT meeting a DECIMAL or an integer column: DuckDB casts the other to FLOAT wherever they meet
    "g = d",
    "g < d",
    "d >= g",
    "g <> d",
    "g IS NOT DISTINCT FROM d",
    "g BETWEEN d AND 2",
    "g IN (d, 1.1)",
    "g = i",
    "i <= g",
    "coalesce(g, d)",
    "coalesce(g, d) = 0.1",
    "ifnull(g, 0.3)",
    "CASE WHEN id > 2 THEN g ELSE d END",
    "CASE WHEN id > 2 THEN g ELSE 0.1 END = d",
    "if(id > 2, d, g)",
    "greatest(g, d)",
    "least(g, i)",
    "nullif(g, d)",
]


@pytest.fixture(scope="module")
def reals(con: Any) -> str:
    """A table with a FLOAT column ``g``, a DECIMAL column ``d`` and an INTEGER column ``i``, written by DuckDB
    (16777217 is the first integer a FLOAT cannot hold: as a FLOAT it is 16777216)."""
    con.sql(
        "CREATE TABLE reals AS SELECT id::INTEGER AS id, g::FLOAT AS g, d::DECIMAL(5, 2) AS d, i::INTEGER AS i "
        "FROM (VALUES (1, 0.1, 0.10, 0), (2, 0.2, 0.30, 1), (3, 1.1, 1.10, -3), (4, -2.5, 2.50, NULL), "
        "(5, NULL, 1.00, 2), (6, 16777216, 0.10, 16777217)) AS v(id, g, d, i)"
    )
    return "reals"


@pytest.mark.parametrize("expression", FLOAT_EXPRESSIONS)
def test_floats_with_decimals_compute_and_compare_as_in_duckdb(
    spark: Any, lake: LakeSetup, con: Any, reals: str, expression: str
) -> None:
    query = f"SELECT {expression} AS r FROM {reals} ORDER BY id"
    expected = duckdb(con, query)
    got = ours(spark, lake, query)
    assert same(got, expected), f"{expression}: DuckDB {expected!r}, ours {got!r}"
    rows = f"SELECT count(*) AS r FROM {reals} WHERE {expression}"
    if duckdbs_type_of(con, expression, reals) == "BOOLEAN":  # the same test as a filter
        assert ours(spark, lake, rows) == duckdb(con, rows), f"WHERE {expression}"


FLOAT_RESULTS = [
    "g + 0.1",
    "g * d",
    "g / 3",
    "g / d",
    "g // 2",
    "g % 0.3",
    "g - 1.5 * g",
    "coalesce(g, d)",
    "CASE WHEN id > 2 THEN g ELSE d END",
    "greatest(g, i)",
    "nullif(g, d)",
]


@pytest.mark.parametrize("expression", FLOAT_RESULTS)
def test_float_arithmetic_with_decimals_stores_duckdbs_type(
    spark: Any, lake: LakeSetup, con: Any, reals: str, expression: str
) -> None:
    table = f"float_result_{FLOAT_RESULTS.index(expression)}"
    PlanRunner(spark, _spec(lake)).run(
        plan_script(f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE {table} AS SELECT {expression} AS r FROM {reals}")
    )
    reader = referee.connect()
    lake.attach(reader)
    ours_type = reader.sql(f"SELECT typeof(r) FROM lake.{table} LIMIT 1").fetchone()[0]
    assert ours_type == duckdbs_type_of(con, expression, reals) == "FLOAT"
    got = to_json_safe([r[0] for r in reader.sql(f"SELECT r FROM lake.{table} ORDER BY r").fetchall()])
    assert same(got, duckdb(con, f"SELECT {expression} AS r FROM {reals} ORDER BY r")), expression


def duckdbs_type_of(con: Any, expression: str, table: str) -> str:
    return con.sql(f"SELECT typeof({expression}) FROM {table} LIMIT 1").fetchone()[0]


# DuckDB binds ||, &, | and the shifts alike, left to right and below + and - (PostgreSQL's generic operators);
# Spark binds || with + and & before xor before |. A shift fails in DuckDB where Spark wraps around (a negative
# value, a negative shift, a shift of the type's width or more, an overflow); >> beyond the width is 0.
OPERATORS = [
    "1 | 2 & 0",
    "i | 2 & 0",
    "(-i) | 1 & 6",
    "xor(i, 3) & 0",
    "i & 3 | 4",
    "'a' || 1 + 2",
    "1 | 2 || 'a'",
    "s || i + 1",
    "i + 1 || s",
    "abs(i) << 1 | 1",
    "1 | abs(i) << 2",
    "abs(i) << 28",
    "abs(i) << 29",
    "i << 1",
    "abs(i) << 32",
    "abs(i) << -1",
    "0 << 100",
    "(i - i) << 40",
    "1 << 62",
    "CAST(1 AS BIGINT) << 62",
    "CAST(abs(i) AS SMALLINT) << 12",
    "CAST(abs(i) AS SMALLINT) << 13",
    "CAST(abs(i) AS TINYINT) << 4",
    "abs(i) << NULL",
    "i >> 1",
    "i >> 31",
    "i >> 32",
    "i >> -1",
    "CAST(i AS TINYINT) >> 9",
    "CAST(i AS BIGINT) >> 63",
    "CAST(i AS BIGINT) >> 64",
    "NULL >> 70",
]


@pytest.mark.parametrize("expression", OPERATORS)
def test_bitwise_operators_and_shifts_behave_as_in_duckdb(
    spark: Any, lake: LakeSetup, con: Any, expression: str
) -> None:
    """Values as DuckDB's; where DuckDB fails, the statement fails with DuckDB's message."""
    query = f"SELECT {expression} AS r FROM vals ORDER BY id"
    try:
        expected: list[Any] | str = to_json_safe([r[0] for r in con.sql(query).fetchall()])
    except DuckDBError as exc:
        expected = str(exc).splitlines()[0]
    try:
        response = PlanRunner(spark, _spec(lake)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
    except StatementError as exc:
        assert isinstance(expected, str), f"{expression}: DuckDB {expected!r}, ours failed: {exc}"
        assert expected in str(exc), f"{expression}: DuckDB {expected!r}, ours {exc}"
        return
    got = [r["r"] for r in response["result"]["commands"][-1]["rows"]]
    assert same(got, expected), f"{expression}: DuckDB {expected!r}, ours {got!r}"


OPERATOR_TYPES = [
    "CAST(i AS TINYINT) | 1",
    "CAST(i AS TINYINT) & 300",
    "xor(CAST(i AS SMALLINT), 1)",
    "CAST(i AS SMALLINT) & CAST(i AS BIGINT)",
    "i | 3000000000",
    "CAST(abs(i) AS SMALLINT) << 2",
    "CAST(i AS SMALLINT) >> 1",
    "CAST(i AS TINYINT) >> 300",
    "1 << 2",
]


@pytest.mark.parametrize("expression", OPERATOR_TYPES)
def test_bitwise_operators_and_shifts_store_duckdbs_type(
    spark: Any, lake: LakeSetup, con: Any, expression: str
) -> None:
    assert duckdb(con, f"SELECT {expression} AS r FROM vals") != "error", expression  # each is a value to store
    stored_as_in_duckdb(spark, lake, con, expression, f"bitwise_{OPERATOR_TYPES.index(expression)}")


def test_spark_dialect_scripts_keep_sparks_operator_order(spark: Any, lake: LakeSetup, con: Any) -> None:
    """A Spark-dialect script is Spark's SQL: ``&`` binds before ``|`` and ``1 << 33`` wraps around, as Spark
    computes them itself (DuckDB-dialect scripts get DuckDB's 0 and its error)."""
    expressions = ["1 | 2 & 0", "3 ^ 1 & 0", "2 || 1 + 2", "1 << 33"]
    for expression in expressions:
        response = PlanRunner(spark, _spec(lake)).run(plan_script(f"SELECT {expression} AS r", dialect="spark"))
        spark_dialect = response["result"]["commands"][-1]["rows"][0]["r"]
        assert spark_dialect == spark.sql(f"SELECT {expression} AS r").collect()[0]["r"], expression
    assert ours(spark, lake, "SELECT 1 | 2 & 0 AS r") == duckdb(con, "SELECT 1 | 2 & 0 AS r") == [0]
    assert spark.sql("SELECT 1 | 2 & 0 AS r").collect()[0]["r"] == 1  # so the test tells them apart


def test_datetime_patterns_keep_their_quoted_text(spark: Any, lake: LakeSetup, con: Any) -> None:
    """sqlglot reads a pattern's quoted text as pattern letters when it re-reads Spark SQL (``'Day'`` came back as
    ``'Dayyyy'``): a DuckDB ``strftime`` whose statement the driver re-reads (a constant date is a marker), and a
    Spark-dialect ``date_format``/``to_timestamp``, print and parse as DuckDB and Spark themselves do."""
    sql = "SELECT strftime(DATE '2024-02-03', 'Day %-j, %Y') AS r"
    assert ours(spark, lake, sql) == duckdb(con, sql) == ["Day 34, 2024"]
    expressions = [
        "date_format(DATE '2024-02-03', \"'Today is' EEEE, yyyy\")",
        "to_timestamp('2024-02-03 at 10', \"yyyy-MM-dd 'at' HH\")",
        "unix_timestamp('day 2024-02-03', \"'day' yyyy-MM-dd\")",
        "to_date('2024-02-03')",
    ]
    for expression in expressions:
        sql = f"SELECT CAST({expression} AS STRING) AS r"
        response = PlanRunner(spark, _spec(lake)).run(plan_script(sql, dialect="spark"))
        assert response["result"]["commands"][-1]["rows"][0]["r"] == spark.sql(sql).collect()[0]["r"], expression
