"""``TIME`` values computed on Spark land as DuckDB 1.5 stores them. Spark has no time type: a lake ``TIME`` column
is text there, and a ``TIME`` literal or cast was sqlglot's ``CAST(... AS TIMESTAMP)``, today's date at that time,
which ``CREATE TABLE ... AS`` stored as a ``TIMESTAMP WITH TIME ZONE``. The same script run by DuckDB on a second
lake is the referee, and DuckDB reads both lakes."""

from __future__ import annotations

from typing import Any

import pytest

from tests import referee
from tests.integration.test_spark_sql import duck_rows, run, selected
from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPTS = {
    "literals_and_casts_in_create_table_as": [
        "CREATE TABLE t AS SELECT 1 AS id, TIME '10:00:00' AS a, CAST('11:00:00.5' AS TIME) AS b, "
        "TRY_CAST('x' AS TIME) AS c, CAST(' 7:05:03 ' AS TIME) AS d, "
        "CAST(TIMESTAMP '2020-01-01 23:59:59.123456' AS TIME) AS e, '10:00:00.250'::TIME AS f"
    ],
    "inserted_compared_and_deleted": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00'), (2, '11:30:00.5'), (3, NULL)",
        "INSERT INTO t SELECT 4, CAST('12:00' AS TIME)",
        "INSERT INTO t SELECT id + 10, tm FROM t WHERE tm > TIME '10:30:00'",
        "DELETE FROM t WHERE tm = TIME '10:00:00'",
    ],
    "updated_and_merged": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00.123456'), (2, TIME '23:59:59')",
        "UPDATE t SET tm = CAST(TIMESTAMP '2020-01-01 08:15:00' AS TIME) WHERE id = 1",
        "MERGE INTO t USING (SELECT 1 AS id, TIME '09:00:00' AS tm UNION ALL SELECT 5, TIME '08:00:00.25') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET tm = s.tm WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.tm)",
        "INSERT INTO t SELECT 3, max(tm) FROM t",
    ],
    "comparisons_stored": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00'), (2, TIME '10:00:00.5'), (3, NULL)",
        "CREATE OR REPLACE TABLE t AS SELECT id, tm, tm = TIME '10:00:00.5' AS eq, tm < TIME '10:00:00.2' AS lt, "
        "TIME '10:00:00' > TIME '09:59:59' AS gt, TIME '06:30:00' AS fixed, CAST(tm AS TIME) AS same FROM t",
    ],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_time_values_computed_on_spark_are_duckdbs(spark: Any, lakes: tuple[LakeSetup, LakeSetup], name: str) -> None:
    ours, theirs = lakes
    con = run_on_both(spark, ours, theirs, SCRIPTS[name])
    same_table(con, "t")


def test_a_select_returns_duckdbs_times(spark: Any, lakes: tuple[LakeSetup, LakeSetup]) -> None:
    """The rows a SELECT returns (the task's XCom): DuckDB's times, not timestamps of the day the task ran."""
    ours, _theirs = lakes
    query = (
        "SELECT TIME '10:00:00' AS a, CAST('23:59:59.999999' AS TIME) AS b, "
        "CAST(TIMESTAMP '2020-01-01 00:00:01.5' AS TIME) AS c, TRY_CAST('soon' AS TIME) AS d"
    )
    ours_rows = selected(run(spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
    assert ours_rows == duck_rows(referee.connect(), query)
