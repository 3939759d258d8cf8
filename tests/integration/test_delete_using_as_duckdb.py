"""``DELETE FROM t USING u WHERE ...`` on Spark as DuckDB 1.5's ``ducklake`` runs it (the Spark engine refused
it); the same script run by DuckDB on a second lake is the referee, and DuckDB reads both lakes. A row of ``t``
that the condition pairs with several rows of ``u`` is deleted once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLES = [
    "CREATE TABLE t (id INTEGER, v VARCHAR)",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, NULL)",
    "CREATE TABLE u (id INTEGER, k INTEGER)",
    "INSERT INTO u VALUES (1, 7), (1, 7), (2, 8), (3, NULL)",
]

SCRIPTS = {
    "a_table_with_duplicate_matches": ["DELETE FROM t USING u WHERE t.id = u.id AND u.k IS NOT NULL"],
    "aliases_and_two_tables": [
        "CREATE TABLE w (k INTEGER)",
        "INSERT INTO w VALUES (8)",
        "DELETE FROM t AS x USING u, w WHERE x.id = u.id AND u.k = w.k",
    ],
    "a_subquery_then_more_changes": [
        "DELETE FROM t USING (SELECT 2 AS id UNION ALL SELECT 4) s WHERE t.id = s.id",
        "INSERT INTO t VALUES (5, 'e')",
        "UPDATE t SET v = 'changed' WHERE id = 1",
    ],
    "the_table_itself": ["DELETE FROM t USING t AS later WHERE t.id < later.id AND later.v IS NULL"],
    "no_condition": ["DELETE FROM t USING u"],
    "an_empty_using_table": ["CREATE TABLE e (id INTEGER)", "DELETE FROM t USING e"],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_delete_using_deletes_the_rows_duckdb_deletes(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], name: str
) -> None:
    ours, theirs = lakes
    con = run_on_both(spark, ours, theirs, [*TABLES, *SCRIPTS[name]])
    same_table(con, "t")
