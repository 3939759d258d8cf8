"""The TPC-DS benchmark queries on Spark over a lake give DuckDB's answers on the same generated data.

Small scale factor (the SF1 reference-answer check belongs to the benchmark pipeline): the generator's data
lands as Parquet, Spark loads the 24 tables into a lake, runs the generator's query text (DuckDB SQL) and
DuckDB runs the same text over the Parquet files.
"""

from __future__ import annotations

import decimal
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.tpcds.generate import generate
from airflow_provider_lakehouse.tpcds.pipeline import ingest_sql, validation_sql
from airflow_provider_lakehouse.tpcds.tables import BENCHMARK_QUERIES, SOURCE_TABLES
from tests import referee
from tests.integration.test_spark_sql import run, selected
from tests.referee import LakeSetup
from tests.support.local_spark import local_test_spark

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCALE_FACTOR = 0.05


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("tpcds")
    result = generate(SCALE_FACTOR, str(path), extension_dir=referee.extension_dir())
    assert result.rows["store_sales"] > 100_000 and len(result.rows) == 24
    return str(path)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = local_test_spark(shuffle_partitions=4)
    yield session
    session.stop()


def rounded(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Rows as tuples, decimals and floats to 2 places (the queries' own precision)."""

    def value(v: Any) -> Any:
        return round(float(v), 2) if isinstance(v, (float, decimal.Decimal)) else v

    return [tuple(value(v) for v in row.values()) for row in rows]


@pytest.fixture(scope="module")
def lake(spark: Any, landing: str, tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    setup = referee.sqlite_lake(tmp_path_factory.mktemp("tpcds_lake"))
    ingest = "ATTACH 'ducklake' AS dl; USE dl;\n" + "\n".join(ingest_sql(table, landing) for table in SOURCE_TABLES)
    response = run(spark, setup, ingest)
    assert len(response["catalog_info"]["tables_touched"]) == 24
    return setup


@pytest.mark.parametrize("number", BENCHMARK_QUERIES)
def test_query_answers_match_duckdb(number: int, spark: Any, landing: str, lake: LakeSetup) -> None:
    query = Path(landing, "queries", f"q{number:02d}.sql").read_text()
    ours = rounded(selected(run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl.tpcds;\n" + query)))

    con = referee.connect()
    for table in SOURCE_TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{landing}/{table}.parquet')")
    duck = rounded(referee.rows(con, query))
    assert ours == duck  # same rows in the same order (every query ends in ORDER BY ... LIMIT)
    assert duck or number in (3, 19), f"query {number} returns no rows at SF {SCALE_FACTOR}: a weak check"


def test_checks_pass_then_a_violation_fails_with_a_readable_report(spark: Any, lake: LakeSetup) -> None:
    checks = validation_sql()
    for name, sql in checks.items():
        response = run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl;\n" + sql)
        counts = selected(response)[0]
        assert counts.pop("failed") is None and set(counts.values()) == {0}, name

    # a sale of an item that does not exist, and a negative quantity
    run(
        spark,
        lake,
        "ATTACH 'ducklake' AS dl; USE dl;\n"
        "INSERT INTO tpcds.store_sales (ss_item_sk, ss_ticket_number, ss_quantity) VALUES (-1, -1, -5);",
    )
    with pytest.raises(StatementError) as failed:
        run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl;\n" + checks["store_sales_references"])
    assert "check store_sales_references failed: items=1, customers=0, stores=0, dates=0" in str(failed.value)
    with pytest.raises(StatementError) as failed:
        run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl;\n" + checks["non_negative_quantities"])
    assert "store_sales=1" in str(failed.value) and "statement 3" in str(failed.value).lower()
