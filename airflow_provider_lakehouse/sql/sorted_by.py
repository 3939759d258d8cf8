"""DuckLake's ``ALTER TABLE t SET SORTED BY (keys)`` and ``ALTER TABLE t RESET SORTED BY``, read as DuckDB reads
them (sqlglot does not parse either).

DuckDB stores each key as the text of its parsed expression (``k``, ``(k + 1)``, ``"Mixed Name"``,
``lower(s) COLLATE nocase``) with its direction and ``NULLS`` order, and refuses a key that names a column the
table does not have or qualifies a column. The keys are read with DuckDB's own parser where the ``duckdb``
package is installed, so the stored text is DuckDB's; without it, with sqlglot's DuckDB dialect.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.sql.duckdb_parser import expression_text, serialized
from airflow_provider_lakehouse.sql.sort_key import SortKey

_STATEMENT = re.compile(
    r"^\s*ALTER\s+TABLE\s+(?P<if_exists>IF\s+EXISTS\s+)?(?P<table>.+?)\s+(?P<verb>SET|RESET)\s+SORTED\s+BY\b"
    r"(?P<keys>.*?)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)

#: DuckDB's error for a key that qualifies its column (``t.k``)
QUALIFIED_COLUMN_ERROR = (
    "Invalid Input Error: Unexpected qualified column reference - only unqualified columns are supported"
)


@dataclass(frozen=True)
class SortedBy:
    """One ``SET``/``RESET SORTED BY`` statement.

    :param table: the table's name as written (possibly qualified and quoted).
    :param keys: the new sort order; empty for ``RESET SORTED BY``.
    :param columns: the columns the keys name, in the order they appear (the table must have each).
    :param if_exists: ``ALTER TABLE IF EXISTS``: a missing table is no error.
    :param error: DuckDB's error for keys it refuses when the statement runs; None when they are fine.
    """

    table: str
    keys: tuple[SortKey, ...]
    columns: tuple[str, ...] = ()
    if_exists: bool = False
    error: str | None = None


class SortedBySyntaxError(ValueError):
    """The statement is ``SET``/``RESET SORTED BY`` but its keys do not parse."""


def parse_sorted_by(text: str) -> SortedBy | None:
    """``text`` read as ``SET``/``RESET SORTED BY``; None for any other statement.

    >>> parse_sorted_by('ALTER TABLE dl.s.t SET SORTED BY (k DESC NULLS FIRST, "Mixed Name")').keys
    (SortKey(expression='k', descending=True, nulls_first=True), SortKey(expression='"Mixed Name"', \
descending=False, nulls_first=False))
    >>> parse_sorted_by("alter table t reset sorted by;")
    SortedBy(table='t', keys=(), columns=(), if_exists=False, error=None)
    >>> parse_sorted_by("ALTER TABLE t SET PARTITIONED BY (k)") is None
    True

    :raises SortedBySyntaxError: ``SET SORTED BY`` without keys in parentheses, or keys that do not parse.
    """
    match = _STATEMENT.match(text)
    if match is None:
        return None
    table, keys_text = match["table"].strip(), match["keys"].strip()
    if_exists = bool(match["if_exists"])
    if match["verb"].upper() == "RESET":
        if keys_text:
            raise SortedBySyntaxError(f"RESET SORTED BY takes no keys: {keys_text!r}.")
        return SortedBy(table, (), (), if_exists)
    if not (keys_text.startswith("(") and keys_text.endswith(")")) or not keys_text[1:-1].strip():
        raise SortedBySyntaxError("SET SORTED BY takes one or more keys in parentheses: SET SORTED BY (k DESC, ...).")
    query = f"SELECT 1 ORDER BY {keys_text[1:-1]}"
    tree = serialized(query)
    keys, columns = _duckdbs_keys(tree) if tree is not None else _sqlglots_keys(query)
    qualified = any(len(c) > 1 for c in columns)
    return SortedBy(
        table,
        keys,
        tuple(c[-1] for c in columns),
        if_exists,
        QUALIFIED_COLUMN_ERROR if qualified else None,
    )


def _duckdbs_keys(tree: dict[str, Any]) -> tuple[tuple[SortKey, ...], list[tuple[str, ...]]]:
    (modifier,) = [m for m in tree["statements"][0]["node"]["modifiers"] if m["type"] == "ORDER_MODIFIER"]
    keys, columns = [], []
    for order in modifier["orders"]:
        keys.append(
            SortKey(
                expression_text(tree, order["expression"]),
                descending=order["type"] == "DESCENDING",
                nulls_first=order["null_order"] == "NULLS FIRST",
            )
        )
        columns += [tuple(node["column_names"]) for node in _column_ref_nodes(order["expression"])]
    return tuple(keys), columns


def _column_ref_nodes(node: Any) -> Iterator[dict[str, Any]]:
    """The column references of a serialized expression, left to right, not those inside a subquery."""
    if isinstance(node, dict):
        if node.get("class") == "SUBQUERY":
            return
        if node.get("class") == "COLUMN_REF":
            yield node
            return
        for value in node.values():
            yield from _column_ref_nodes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _column_ref_nodes(item)


def _sqlglots_keys(query: str) -> tuple[tuple[SortKey, ...], list[tuple[str, ...]]]:
    try:
        select = sqlglot.parse_one(query, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise SortedBySyntaxError(f"the sort keys do not parse: {exc}") from None
    order = select.args.get("order")
    keys, columns = [], []
    for ordered in order.expressions if order is not None else []:
        descending = bool(ordered.args.get("desc"))
        keys.append(
            SortKey(
                ordered.this.sql("duckdb"),
                descending=descending,
                # DuckDB puts NULLs last unless told otherwise, in either direction
                nulls_first=bool(ordered.args.get("nulls_first")) and "NULLS FIRST" in ordered.sql("duckdb").upper(),
            )
        )
        for column in ordered.this.walk(bfs=False):
            if isinstance(column, exp.Column) and column.find_ancestor(exp.Subquery, exp.Select) is select:
                columns.append(tuple(p.name for p in column.parts))
    return tuple(keys), columns


def key_columns(expression: str) -> list[str]:
    """The columns a stored sort key names, left to right (a key is DuckDB's text of an expression).

    >>> key_columns('(a + "Even Odd")'), key_columns("lower(b) COLLATE nocase"), key_columns("1")
    (['a', 'Even Odd'], ['b'], [])
    """
    return [names[-1] for names in _parsed_key(expression)[1]]


def key_with_column_renamed(expression: str, old: str, new: str) -> str:
    """A stored sort key after its table's column ``old`` was renamed ``new``, written as DuckDB rewrites it.

    >>> key_with_column_renamed("(k + 1)", "K", "Mixed Name")
    '(\"Mixed Name\" + 1)'
    """
    query = f"SELECT 1 ORDER BY {expression}"
    tree = serialized(query)
    if tree is None:
        select = sqlglot.parse_one(query, read="duckdb")
        key = select.args["order"].expressions[0].this
        for column in list(key.find_all(exp.Column)):
            if column.name.lower() == old.lower():
                column.replace(exp.column(new, quoted=not re.fullmatch(r"[a-z_][a-z0-9_]*", new)))
        return str(key.sql("duckdb"))
    (modifier,) = [m for m in tree["statements"][0]["node"]["modifiers"] if m["type"] == "ORDER_MODIFIER"]
    key = modifier["orders"][0]["expression"]
    for node in _column_ref_nodes(key):
        if node["column_names"][-1].lower() == old.lower():
            node["column_names"][-1] = new
    return expression_text(tree, key)


def _parsed_key(expression: str) -> tuple[tuple[SortKey, ...], list[tuple[str, ...]]]:
    query = f"SELECT 1 ORDER BY {expression}"
    tree = serialized(query)
    return _duckdbs_keys(tree) if tree is not None else _sqlglots_keys(query)
