"""One in-process DuckDB, asked only about SQL text: how its parser reads a query, and which functions it has.

Nothing here binds a table or reads data, so no lake needs to exist. It is DuckDB itself, so it answers only where
the ``duckdb`` package is installed (the ``duckdb`` extra); without it every question here answers None.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_LOCK = threading.Lock()
_CONNECTION: list[Any] = []  # one in-memory DuckDB for the process, created on first use
_FUNCTION_NAMES: list[frozenset[str]] = []


def serialized(query: str) -> dict[str, Any] | None:
    """DuckDB's parse of the ``SELECT`` ``query`` (``json_serialize_sql``); None when DuckDB is not installed or
    does not parse it as SELECT statements."""
    connection = _connection()
    if connection is None:
        return None
    with _LOCK:
        try:
            tree = json.loads(
                connection.execute("SELECT json_serialize_sql(?)", [query.strip().rstrip(";")]).fetchone()[0]
            )
        except Exception:
            return None
    return None if tree.get("error") else tree


def deserialized(tree: dict[str, Any]) -> str:
    """The SQL text DuckDB writes for a parse :func:`serialized` returned (possibly changed)."""
    connection = _connection()
    assert connection is not None, "a parse tree comes from DuckDB"
    with _LOCK:
        return str(connection.execute("SELECT json_deserialize_sql(?)", [json.dumps(tree)]).fetchone()[0])


def expression_text(tree: dict[str, Any], expression: dict[str, Any]) -> str:
    """DuckDB's text of ``expression``, one expression of the parse ``tree`` (what DuckDB names a result column
    by, and stores for a sort key): the expression alone in a ``SELECT``, written back by DuckDB."""
    alone = {**tree, "statements": [{"node": {**_BARE_SELECT, "select_list": [expression]}}]}
    return deserialized(alone)[len("SELECT ") :]


#: a SELECT node without FROM, WHERE or anything else, as DuckDB serializes one
_BARE_SELECT: dict[str, Any] = {
    "type": "SELECT_NODE",
    "modifiers": [],
    "cte_map": {"map": []},
    "select_list": [],
    "from_table": {"type": "EMPTY", "alias": "", "sample": None, "query_location": 18446744073709551615},
    "where_clause": None,
    "group_expressions": [],
    "group_sets": [],
    "aggregate_handling": "STANDARD_HANDLING",
    "having": None,
    "sample": None,
    "qualify": None,
}


def function_names() -> frozenset[str] | None:
    """The lower-case names of every function DuckDB's catalog holds (scalar, aggregate, window, table, macro)
    with its built-in extensions; None when DuckDB is not installed."""
    if not _FUNCTION_NAMES:
        connection = _connection()
        if connection is None:
            return None
        with _LOCK:
            rows = connection.execute("SELECT DISTINCT lower(function_name) FROM duckdb_functions()").fetchall()
        _FUNCTION_NAMES.append(frozenset(name for (name,) in rows))
    return _FUNCTION_NAMES[0]


def _connection() -> Any:
    with _LOCK:
        if not _CONNECTION:
            try:
                import duckdb
            except ImportError:
                return None
            _CONNECTION.append(duckdb.connect(":memory:", config={"autoinstall_known_extensions": False}))
        return _CONNECTION[0]
