"""DuckDB's ``strftime`` on Spark prints what DuckDB prints (``spark/strftime.py``): every specifier DuckDB 1.5
knows, alone and between literal text that holds Spark's own pattern letters and quotes, over dates and
timestamps around the turns of years and weeks. The expected values are DuckDB's answers at test time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_spark_sql import spec_of
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: every day from 26 December to 8 January over the turns of years whose 1 January falls on each day of the week
#: (2016 to 2024, leap years among them), days of years 5 and 99, times on both sides of noon, fractions
TABLE = """
CREATE TABLE moments (id INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ);
INSERT INTO moments
SELECT row_number() OVER (ORDER BY day), day::DATE,
       day + to_microseconds((row_number() OVER (ORDER BY day)) * 3_723_004_567),
       (day + INTERVAL 13 HOUR)::TIMESTAMPTZ
FROM (SELECT unnest(generate_series(make_date(y, 12, 26)::TIMESTAMP, make_date(y + 1, 1, 8)::TIMESTAMP,
                                    INTERVAL 1 DAY)) AS day
      FROM range(2015, 2024) t(y)
      UNION ALL SELECT TIMESTAMP '0005-03-01 00:00:00' UNION ALL SELECT TIMESTAMP '0099-12-31 12:00:00');
INSERT INTO moments VALUES (1000, NULL, NULL, NULL)
"""

#: DuckDB 1.5's specifiers (each alone), and formats mixing them with text
FORMATS = [
    *(f"%{s}" for s in "aAbBcdfghHIjmMnpSTuUVwWxXyYzZG%"),
    *(f"%-{s}" for s in "dHIjmMSy"),
    "%Y-%m-%d %H:%M:%S.%f",
    "Week %U/%W (ISO %G-W%V-%u), day %j, %A the %-d of %B %y",
    "Date: %x, it's %I:%M %p at %X; 100%% done",
    "%d.%m.%Y [%H] {%-M} #%w 'quoted' ''",
    "no specifier at all",
    "%%Y %%%Y",
]


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    return referee.sqlite_lake_made_by_duckdb(Path(tmp_path_factory.mktemp("strftime")), TABLE.strip().split(";\n"))


def _select(formats: list[str], column: str, argument_first: bool = False) -> str:
    calls = [
        f"strftime('{f}', {column})" if argument_first else f"strftime({column}, '{f}')"
        for f in (f.replace("'", "''") for f in formats)
    ]
    return "SELECT " + ", ".join(f"{call} AS c{n}" for n, call in enumerate(calls)) + " FROM moments ORDER BY id"


def _ours(spark: Any, lake: LakeSetup, sql: str) -> list[list[Any]]:
    response = PlanRunner(spark, spec_of(lake)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}"))
    return [list(row.values()) for row in response["result"]["commands"][-1]["rows"]]


@pytest.mark.parametrize("column", ["d", "ts", "tz"])
def test_every_specifier_prints_what_duckdb_prints(spark: Any, lake: LakeSetup, con: Any, column: str) -> None:
    # %Z of a TIMESTAMPTZ names the session's zone: DuckDB's TimeZone and Spark's session zone (UTC) alike
    con.sql("SET TimeZone = 'UTC'")
    formats = FORMATS
    sql = _select(formats, column)
    expected = [to_json_safe(list(row)) for row in con.sql(sql).fetchall()]
    got = _ours(spark, lake, sql)
    assert len(got) == len(expected) == 129
    mismatches = [
        (formats[n], row, e, g)
        for row, (want, have) in enumerate(zip(expected, got, strict=True))
        for n, (e, g) in enumerate(zip(want, have, strict=True))
        if e != g
    ]
    assert mismatches == []


def test_the_format_may_come_first_as_duckdb_allows(spark: Any, lake: LakeSetup, con: Any) -> None:
    sql = _select(["%U %a", "%G-%V"], "d", argument_first=True)
    assert _ours(spark, lake, sql) == [to_json_safe(list(row)) for row in con.sql(sql).fetchall()]


@pytest.mark.parametrize("format_text", ["%e", "%Y%", "%-Y", "%Q of %Y", ""])
def test_a_format_duckdb_refuses_fails_with_duckdbs_error_even_without_rows(
    spark: Any, lake: LakeSetup, con: Any, format_text: str
) -> None:
    sql = f"SELECT strftime(ts, '{format_text}') AS r FROM moments WHERE id < 0"
    with pytest.raises(Exception) as duckdb_error:
        con.sql(sql).fetchall()
    with pytest.raises(StatementError) as ours:
        _ours(spark, lake, sql)
    assert ours.value.message == str(duckdb_error.value)
    assert ours.value.statement == sql
