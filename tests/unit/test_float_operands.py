"""Which expressions the planner hands to the driver to type as DuckDB types a FLOAT with a DECIMAL or an integer,
and what the driver writes for them (DuckDB's own answers: tests/integration/test_duckdb_semantics.py)."""

from __future__ import annotations

import pytest
import sqlglot

from airflow_provider_lakehouse.spark.rewriting import spark_text
from airflow_provider_lakehouse.spark.semantics import arithmetic_markers, duckdb_semantics, resolve

SCHEMAS = {"v": {"g": "float", "d": "decimal(5,2)", "i": "int", "x": "double"}, "w": {"j": "int"}}


def planned(sql: str) -> str:
    return spark_text(arithmetic_markers(duckdb_semantics(sqlglot.parse_one(sql, read="duckdb"))))


@pytest.mark.parametrize(
    ("sql", "typed"),
    [
        ("SELECT * FROM v JOIN w ON v.i = w.j", True),  # two columns: only their types tell
        ("SELECT g BETWEEN d AND 2 FROM v", True),
        ("SELECT g IN (d, 1) FROM v", True),
        ("SELECT coalesce(g, 0.5) FROM v", True),
        ("SELECT CASE WHEN i > 0 THEN g ELSE d END FROM v", True),
        ("SELECT nullif(g, d), greatest(g, i) FROM v", True),
        ("SELECT coalesce(g, d) = 0.5 FROM v", True),  # sqlglot types the COALESCE a DECIMAL, DuckDB a FLOAT
        ("SELECT * FROM v WHERE i = $1", False),  # a parameter is bound as its value's type
        ("SELECT CASE WHEN i > 0 THEN 1 ELSE 2 END FROM v", False),  # literals only
        ("SELECT coalesce(g, NULL) FROM v", False),  # one operand that is not NULL
    ],
)
def test_expressions_whose_operands_duckdb_may_type_together_are_marked(sql: str, typed: bool) -> None:
    assert ("__LH_OPERANDS(" in planned(sql)) is typed


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM v WHERE g = d", "SELECT * FROM v WHERE g = CAST(d AS FLOAT)"),
        ("SELECT * FROM v WHERE i < g", "SELECT * FROM v WHERE CAST(i AS FLOAT) < g"),
        ("SELECT coalesce(g, d, 1) FROM v", "SELECT COALESCE(g, CAST(d AS FLOAT), CAST(1 AS FLOAT)) FROM v"),
        ("SELECT coalesce(g, d) = 0.5 FROM v", "SELECT COALESCE(g, CAST(d AS FLOAT)) = CAST(0.5 AS FLOAT) FROM v"),
        # a DOUBLE is wider: both engines compare as DOUBLEs
        ("SELECT * FROM v WHERE x = d", "SELECT * FROM v WHERE x = d"),
        ("SELECT * FROM v WHERE g = x", "SELECT * FROM v WHERE g = x"),
        # no FLOAT read: unwrapped without typing
        ("SELECT * FROM w AS a JOIN w AS b ON a.j = b.j", "SELECT * FROM w AS a JOIN w AS b ON a.j = b.j"),
        # a CASE DuckDB makes a FLOAT is a FLOAT operand of the comparison around it
        (
            "SELECT CASE WHEN i > 0 THEN d ELSE g END = d FROM v",
            "SELECT CASE WHEN i > 0 THEN CAST(d AS FLOAT) ELSE g END = CAST(d AS FLOAT) FROM v",
        ),
    ],
)
def test_the_driver_casts_what_meets_a_float_to_float(sql: str, expected: str) -> None:
    assert resolve(planned(sql), SCHEMAS) == expected
