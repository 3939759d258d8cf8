"""DuckDB's quantiles on Spark (``spark/quantiles.py``): ``quantile_cont``, ``median``, ``quantile_disc``,
``quantile`` and ``percentile_cont``/``percentile_disc ... WITHIN GROUP``, over random groups of every type DuckDB interpolates, by group, under
``FILTER`` and ``OVER``. DuckDB 1.5 over the same lake is the referee: its answers at test time, values and the
types a created table stores."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_duckdb_functions import agree, ours, theirs
from tests.integration.test_spark_sql import spec_of
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: column: DuckDB type
COLUMNS = {
    "small": "DECIMAL(4, 2)",
    "money": "DECIMAL(18, 6)",
    "n": "INTEGER",
    "big": "BIGINT",
    "x": "DOUBLE",
    "day": "DATE",
    "stamp": "TIMESTAMP",
    "zoned": "TIMESTAMPTZ",
    "word": "VARCHAR",
}
FRACTIONS = ["0", "0.1", "0.25", "0.3", "0.5", "0.7", "0.9", "0.99", "1"]


def _rows(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    rows = []
    for row_id in range(count):
        values = [
            str(row_id),
            str(rng.randrange(6)),
            f"{Decimal(rng.randrange(-9999, 10000)) / 100}",
            f"{Decimal(rng.randrange(-(10**12), 10**12)) / 10**6}",
            str(rng.randrange(-1000, 1000)),
            str(rng.randrange(-(2**62), 2**62)),
            repr(rng.uniform(-1e6, 1e6)),
            f"DATE '{2000 + rng.randrange(30)}-{1 + rng.randrange(12):02d}-{1 + rng.randrange(28):02d}'",
            f"TIMESTAMP '2024-01-01' + INTERVAL '{rng.randrange(10**12)} microseconds'",
            f"TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL '{rng.randrange(10**9)} microseconds'",
            "'" + "".join(rng.choice("abcXYZé ") for _ in range(rng.randrange(4))) + "'",
        ]
        if rng.random() < 0.1:  # NULLs are left out of every quantile
            values[2 + rng.randrange(len(COLUMNS))] = "NULL"
        rows.append(f"({', '.join(values)})")
    return rows


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    columns = ", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())
    return referee.sqlite_lake_made_by_duckdb(
        Path(tmp_path_factory.mktemp("quantiles")),
        [
            f"CREATE TABLE vals (id INTEGER, g INTEGER, {columns})",
            f"INSERT INTO vals VALUES {', '.join(_rows(seed=7, count=160))}",
            "CREATE TABLE pairs (id INTEGER, small DECIMAL(4, 2))",  # two values a half unit apart, both signs
            "INSERT INTO pairs VALUES (1, 0.72), (2, 0.73), (3, -0.73), (4, -0.72)",
        ],
    )


def _compare(spark: Any, lake: LakeSetup, con: Any, select: str) -> None:
    expected, got = theirs(con, select), ours(spark, lake, select)
    assert agree(expected, got), f"{select}: DuckDB {expected!r}, ours {got!r}"


@pytest.mark.parametrize("function", ["quantile_cont", "quantile_disc", "quantile"])
@pytest.mark.parametrize("column", COLUMNS)
def test_quantiles_by_group_as_duckdb(spark: Any, lake: LakeSetup, con: Any, column: str, function: str) -> None:
    """Every fraction of every type, by group (DuckDB's ``quantile`` is the discrete one)."""
    quantiles = ", ".join(f"{function}({column}, {q})" for q in FRACTIONS)
    _compare(spark, lake, con, f"SELECT g, [{quantiles}] AS r FROM vals GROUP BY g ORDER BY g")


@pytest.mark.parametrize(
    "expression",
    [
        "median(small)",
        "median(money) FILTER (WHERE id % 3 = 0)",
        "percentile_cont(0.3) WITHIN GROUP (ORDER BY small)",
        "percentile_cont(0.3) WITHIN GROUP (ORDER BY small DESC)",
        "percentile_cont(0.7) WITHIN GROUP (ORDER BY n DESC)",
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY day)",
        "median(x)",
        "median(n * 1.5)",
        "median(CASE WHEN g > 99 THEN small END)",
        "percentile_disc(0.5) WITHIN GROUP (ORDER BY stamp DESC)",
        "percentile_disc(0.25) WITHIN GROUP (ORDER BY word)",
        "quantile_disc(day, 0.9) FILTER (WHERE id % 2 = 0)",
        # DuckDB reads DESC as a negative fraction, and -0 is 0: the lowest value either way
        "percentile_cont(0.0) WITHIN GROUP (ORDER BY n DESC)",
        "percentile_disc(0) WITHIN GROUP (ORDER BY n DESC)",
    ],
)
def test_median_and_percentile_cont_as_duckdb(spark: Any, lake: LakeSetup, con: Any, expression: str) -> None:
    _compare(spark, lake, con, f"SELECT g, {expression} AS r FROM vals GROUP BY g ORDER BY g")


@pytest.mark.parametrize(
    "aggregate", ["median(small)", "median(money)", "median(n)", "median(stamp)", "quantile(word, 0.5)"]
)
def test_a_running_quantile_as_duckdb(spark: Any, lake: LakeSetup, con: Any, aggregate: str) -> None:
    _compare(spark, lake, con, f"SELECT id, {aggregate} OVER (PARTITION BY g ORDER BY id) AS r FROM vals ORDER BY id")


def test_a_decimal_median_halfway_is_cut_at_its_scale_as_in_duckdb(spark: Any, lake: LakeSetup, con: Any) -> None:
    """0.725 is 0.72 and -0.725 is -0.73 in DuckDB: the lower neighbour plus the difference's fraction cut at the
    column's scale."""
    select = "SELECT id > 2 AS negative, median(small) AS r FROM pairs GROUP BY 1 ORDER BY 1"
    assert [Decimal(str(v)) for v in theirs(con, select)] == [Decimal("0.72"), Decimal("-0.73")]  # what this pins
    _compare(spark, lake, con, select)


def test_a_created_table_keeps_duckdbs_quantile_types(spark: Any, lake: LakeSetup, con: Any) -> None:
    select = (
        "median(small) AS a, quantile_cont(money, 0.3) AS b, median(day) AS c, median(stamp) AS d, "
        "median(zoned) AS e, median(n) AS f, percentile_cont(0.5) WITHIN GROUP (ORDER BY big) AS h FROM vals"
    )
    PlanRunner(spark, spec_of(lake)).run(
        plan_script(f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE ours_q AS SELECT {select}")
    )
    con.sql(f"CREATE TABLE duckdb_q AS SELECT {select}")
    ours_types, duckdb_types = referee.described_again(con, lake, "ours_q", "duckdb_q")
    assert ours_types == duckdb_types
    assert con.sql("SELECT * FROM ours_q EXCEPT SELECT * FROM duckdb_q").fetchall() == []


@pytest.mark.parametrize(
    "aggregate, fraction",
    [
        ("percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC)", 0.5),
        ("percentile_cont(0.3) WITHIN GROUP (ORDER BY x)", 0.3),
        ("percentile_cont(0.3) WITHIN GROUP (ORDER BY x DESC)", 0.3),
    ],
)
def test_spark_dialect_percentiles_are_sparks_exact_ones(
    spark: Any, lake: LakeSetup, aggregate: str, fraction: float
) -> None:
    """sqlglot writes these as Spark's ``percentile_approx`` (an estimate, ``DESC`` dropped); a Spark-dialect
    script gets what Spark itself answers for the text as written."""
    table = "VALUES (1), (2), (3), (4) AS t(x)"
    response = PlanRunner(spark, spec_of(lake)).run(
        plan_script(f"SELECT {aggregate} AS r FROM {table}", dialect="spark")
    )
    sparks_own = spark.sql(f"SELECT {aggregate} AS r FROM {table}").collect()[0]["r"]
    assert response["result"]["commands"][-1]["rows"] == [{"r": sparks_own}]
    estimate = spark.sql(f"SELECT percentile_approx(x, {fraction}) AS r FROM {table}").collect()[0]["r"]
    assert sparks_own != estimate  # what the text used to run as: the test tells them apart
