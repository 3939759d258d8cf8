"""DuckDB expressions the Spark engine once refused or answered differently, each checked against DuckDB 1.5 on
the same lake table: struct fields by dot, ``IN (subquery)`` with NULLs, intervals of expressions and the
``to_<unit>`` constructors, and the spellings DuckDB itself writes into stored views (``regexp_full_match``,
``list_apply``, ``= ANY (subquery)``). The expected values are DuckDB's answers at test time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import referee
from tests.integration.test_duckdb_semantics import duckdb, ours
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLE = """
CREATE TABLE t (id INTEGER, a INTEGER, s VARCHAR, d DATE, l INTEGER[], st STRUCT(k INTEGER, sub STRUCT(z VARCHAR)));
INSERT INTO t VALUES
  (1, 1, 'q', DATE '2024-01-31', [1, 2], {'k': 3, 'sub': {'z': 'x'}}),
  (2, 2, 'Qr', DATE '2023-05-06', [4], {'k': 5, 'sub': NULL}),
  (3, NULL, NULL, NULL, NULL, NULL),
  (4, 7, '', DATE '2024-02-29', [], {'k': NULL, 'sub': {'z': NULL}});
CREATE TABLE u (v INTEGER);
INSERT INTO u VALUES (1), (NULL), (5);
"""

EXPRESSIONS = [
    # struct fields
    "st.k",
    "t.st.k",
    "st.sub.z",
    "st.k + a",
    # IN / NOT IN (subquery) with NULLs on either side
    "a IN (SELECT a FROM t)",
    "a IN (SELECT v FROM u)",
    "a NOT IN (SELECT v FROM u)",
    "a IN (SELECT 1)",
    "a NOT IN (SELECT 1)",
    "a IN (SELECT v FROM u WHERE false)",
    "NOT (a IN (SELECT v FROM u WHERE v IS NOT NULL))",
    "CASE WHEN a IN (SELECT v FROM u) THEN 'in' ELSE 'out' END",
    "a = ANY (SELECT v FROM u)",
    # intervals of expressions, DuckDB's interval constructors
    "d + INTERVAL (a) DAY",
    "d - INTERVAL (a) MONTH",
    "d + to_days(a)",
    "d + to_months(a)",
    "d + to_years(a)",
    "d + to_weeks(a)",
    "d + to_hours(a)",
    # what DuckDB writes into a stored view
    "regexp_full_match(s, 'q.*')",
    "list_apply(l, x -> x * 2)",
    "array_apply(l, x -> x + a)",
]


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    return referee.sqlite_lake_made_by_duckdb(Path(tmp_path_factory.mktemp("expressions")), [TABLE])


@pytest.fixture(scope="module")
def con(lake: LakeSetup) -> Any:
    connection = referee.connect()
    lake.attach(connection, alias="lake")
    connection.execute("USE lake")
    yield connection
    connection.close()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_expression_gives_duckdbs_answer(spark: Any, lake: LakeSetup, con: Any, expression: str) -> None:
    query = f"SELECT {expression} AS r FROM t ORDER BY id"
    expected = duckdb(con, query)
    assert expected != "error", f"DuckDB refuses {expression}: nothing to compare"
    got = ours(spark, lake, query)
    assert got == expected, f"{expression}: DuckDB {expected!r}, ours {got!r}"  # no floats here: exact


def test_in_subquery_filters_keep_sparks_plan_and_duckdbs_rows(spark: Any, lake: LakeSetup, con: Any) -> None:
    for where in ("a IN (SELECT v FROM u)", "a NOT IN (SELECT v FROM u WHERE v IS NOT NULL)", "NOT a IN (SELECT 1)"):
        query = f"SELECT id AS r FROM t WHERE {where} ORDER BY id"
        assert ours(spark, lake, query) == duckdb(con, query), where
