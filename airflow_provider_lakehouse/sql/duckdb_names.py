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
    # DuckDB's parser writes DECIMAL(5,2), its binder names the column by DECIMAL(5, 2) (string literals kept)
    parts = _STRING_LITERAL.split(expression_text(tree, _with_bound_type_names(item)))
    return "".join(part if i % 2 else _DECIMAL_TYPE.sub(r"DECIMAL(\1, \2)", part) for i, part in enumerate(parts))


_STRING_LITERAL = re.compile(r"('(?:[^']|'')*')")
_DECIMAL_TYPE = re.compile(r"\bDECIMAL\((\d+),(\d+)\)")
#: the types whose names DuckDB writes bare in a result column's name (SQL keywords); it quotes the others'
#: (``CAST(x AS "DATE")``, ``CAST(x AS "TIMESTAMP WITH TIME ZONE")``), which its parser writes back bare
_KEYWORD_TYPES = frozenset(
    {"INTEGER", "BIGINT", "SMALLINT", "DECIMAL", "FLOAT", "VARCHAR", "BOOLEAN", "TIMESTAMP", "TIME", "INTERVAL", "BIT"}
)


def _with_bound_type_names(node: Any) -> Any:
    """A copy of the parsed expression ``node`` with each cast's type named as DuckDB names it once bound: the
    parser's name of a type DuckDB quotes is turned into a (quoted) type name of its own."""
    if isinstance(node, list):
        return [_with_bound_type_names(part) for part in node]
    if not isinstance(node, dict):
        return node
    copied = {key: _with_bound_type_names(value) for key, value in node.items()}
    if node.get("class") == "CAST" and isinstance(node.get("cast_type"), dict):
        copied["cast_type"] = _bound_type(node["cast_type"])
    return copied


def _bound_type(logical: dict[str, Any]) -> dict[str, Any]:
    kind, info = logical.get("id"), logical.get("type_info") or {}
    if kind in ("LIST", "ARRAY") and isinstance(info.get("child_type"), dict):
        return {**logical, "type_info": {**info, "child_type": _bound_type(info["child_type"])}}
    if kind == "STRUCT" and isinstance(info.get("child_types"), list):
        children = [{**child, "second": _bound_type(child["second"])} for child in info["child_types"]]
        return {**logical, "type_info": {**info, "child_types": children}}
    if kind in _KEYWORD_TYPES or info or not isinstance(kind, str) or kind in ("MAP", "UNION", "ENUM", "UNBOUND"):
        return logical  # a MAP's types stay as parsed, an aliased type (GEOMETRY) too; a named one is quoted
    return _quoted_type(kind)


def _quoted_type(name: str) -> dict[str, Any]:
    return {
        "id": "UNBOUND",
        "type_info": {
            "type": "UNBOUND_TYPE_INFO",
            "alias": "",
            "extension_info": None,
            "name": name,
            "catalog": "",
            "schema": "",
            "user_type_modifiers": [],
        },
    }
