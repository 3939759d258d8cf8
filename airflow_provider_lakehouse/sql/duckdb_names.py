"""The names DuckDB gives a query's result columns, asked of DuckDB's own parser.

DuckDB names a select-list item by its alias, a column reference by the column, and anything else by the text
of its parsed expression (``count(*)`` is ``count_star()``, ``x / 2`` is ``(x / 2)``, ``CAST(a AS VARCHAR)`` keeps
its cast). Spark names them its own way (``count(1)``, ``a`` for the cast), so a ``CREATE TABLE ... AS SELECT``
on Spark would create other columns than DuckDB and a ``SELECT`` would return other keys. The planner aliases
each unnamed item with DuckDB's name.

DuckDB's parser gives the names without binding anything (``json_serialize_sql``, then each item back to text
with ``json_deserialize_sql``), so no table needs to exist. It is DuckDB itself, so it is used only where the
``duckdb`` package is installed (the ``duckdb`` extra); without it :func:`output_names` answers None and Spark's
names stay.
"""

from __future__ import annotations

import re
from typing import Any

from airflow_provider_lakehouse.sql.duckdb_parser import expression_text, serialized

#: the text before the query of a statement whose result becomes a relation with DuckDB's column names
_QUERY_AFTER = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY)\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"(?:\"(?:[^\"]|\"\")*\"|[\w$]+)(?:\s*\.\s*(?:\"(?:[^\"]|\"\")*\"|[\w$]+)){0,2}\s*(?:\([^()]*\))?\s*AS\s+",
    re.IGNORECASE | re.DOTALL,
)


def query_text(statement: str) -> str | None:
    """The query of ``CREATE [TEMP] TABLE|VIEW ... AS <query>``, as written; None for another statement.

    >>> query_text('CREATE OR REPLACE TEMP TABLE "my t" (a, b) AS SELECT 1, 2')
    'SELECT 1, 2'
    >>> query_text("SELECT count(*) FROM t") is None
    True
    """
    match = _QUERY_AFTER.match(statement)
    return statement[match.end() :] if match else None


def output_names(query: str) -> list[str] | None:
    """DuckDB's name of each select-list item of ``query``'s outermost ``SELECT`` (the first of a set operation),
    in order; None when DuckDB is not installed or does not parse ``query`` as one SELECT.

    A ``*`` stays ``*`` (its columns keep their names).
    """
    tree = serialized(query)
    if tree is None or len(tree.get("statements") or []) != 1:
        return None
    node = tree["statements"][0]["node"]
    while node.get("type") == "SET_OPERATION_NODE":
        node = node["left"]
    if node.get("type") != "SELECT_NODE":
        return None
    try:
        return [_name(tree, item) for item in node["select_list"]]
    except Exception:
        return None


def _name(tree: dict[str, Any], item: dict[str, Any]) -> str:
    if item.get("alias"):
        return str(item["alias"])
    if item.get("class") == "COLUMN_REF":
        return str(item["column_names"][-1])
    if item.get("class") == "STAR":
        return "*"
    return expression_text(tree, item)
