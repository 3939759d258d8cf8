"""Which ``strftime`` formats DuckDB refuses, and with which message: ``spark/strftime.py`` reads formats as
DuckDB 1.5 does. DuckDB is the referee: every one- and two-character specifier is tried in both."""

from __future__ import annotations

import string

import duckdb
import pytest
import sqlglot

from airflow_provider_lakehouse.spark.strftime import FormatError, format_error, parse_format

CANDIDATES = [f"%{c}" for c in string.printable if c not in "'\\"] + [f"%-{c}" for c in string.ascii_letters]
CANDIDATES += ["", "%", "x%", "%Y%", "%-", "%%%", "%%%%", "a%%b%Y", "%Y-%m-%d %e"]


def duckdbs_error(format_text: str) -> str | None:
    con = duckdb.connect()
    try:
        con.sql(f"SELECT strftime(TIMESTAMP '2021-01-03 05:06:07', '{format_text}')").fetchall()
    except duckdb.Error as exc:
        return str(exc)
    finally:
        con.close()
    return None


@pytest.mark.parametrize("format_text", CANDIDATES)
def test_a_format_is_refused_exactly_when_duckdb_refuses_it(format_text: str) -> None:
    try:
        parse_format(format_text)
        ours = None
    except FormatError as exc:
        ours = exc.message
    assert ours == duckdbs_error(format_text)


def test_the_planner_finds_a_refused_format_anywhere_in_a_statement() -> None:
    sql = "SELECT a FROM t WHERE strftime(d, '%Y') IN (SELECT strftime('%q', e) FROM u)"
    assert format_error(sqlglot.parse_one(sql, read="duckdb"), sql) == duckdbs_error("%q")
    for fine in ["SELECT strftime(d, f) FROM t", "SELECT strftime(d, 'None') FROM t"]:
        assert format_error(sqlglot.parse_one(fine, read="duckdb"), fine) is None
    empty = "SELECT strftime(d, '') FROM t"  # sqlglot reads '' as 'None' here
    assert format_error(sqlglot.parse_one(empty, read="duckdb"), empty) == duckdbs_error("")
