"""Operands DuckDB types together as ``FLOAT`` (pure: sqlglot only).

DuckDB gives a ``FLOAT`` with an integer or a ``DECIMAL`` the type ``FLOAT`` wherever operands meet: a comparison
(``g = d`` casts ``d`` to ``FLOAT``, so a ``FLOAT`` 0.1 equals a ``DECIMAL`` 0.1), ``BETWEEN``, ``IN``, and the
branches of ``CASE``, ``IF``, ``COALESCE``, ``NULLIF``, ``GREATEST`` and ``LEAST`` (``COALESCE(g, d)`` is a
``FLOAT``, and the column a ``CREATE TABLE AS`` makes of it too). Spark widens them all to ``DOUBLE``.

The planner cannot see types, so it wraps each such expression whose operands are not all literals in a marker
(:func:`operands_marker`); the driver, which knows the types of what a statement reads, unwraps them
(:func:`unwrapped`) and, when a ``FLOAT`` can be involved at all, casts the integer and ``DECIMAL`` operands that
meet a ``FLOAT`` to ``FLOAT`` (:func:`floats_as_duckdb`). A decimal *literal* compared with a ``FLOAT`` is typed by
its own marker (``semantics``); arithmetic by the arithmetic markers.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from airflow_provider_lakehouse.spark.decimal_types import float_only, operand_kind, spark_expression_metadata
from airflow_provider_lakehouse.spark.rewriting import OPERANDS, marker_ids, replaced_markers, typed_copy

#: ``node.meta`` key of an unwrapped marker's expression: its marker's number
_TOGETHER = "lh_operands_together"
_FLOAT = exp.DataType.build("float")
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_BRANCHING = (exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least)
_TYPED_TOGETHER = (*COMPARISONS, exp.Between, exp.In, *_BRANCHING)


def operands(node: exp.Expr) -> list[exp.Expr]:
    """The operands of ``node`` that DuckDB casts to one type: both sides of a comparison, the three of
    ``BETWEEN``, the value and the list of ``IN``, the results (not the conditions) of ``CASE`` and ``IF``, the
    arguments of ``COALESCE``, ``NULLIF``, ``GREATEST`` and ``LEAST``; none for anything else.

    >>> import sqlglot
    >>> [o.sql() for o in operands(sqlglot.parse_one("CASE WHEN a > 0 THEN g ELSE d END"))]
    ['g', 'd']
    """
    if isinstance(node, COMPARISONS):
        return [node.this, node.expression]
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, exp.In):
        return [] if node.args.get("query") or node.args.get("unnest") else [node.this, *node.expressions]
    if isinstance(node, exp.Case):
        branches = [i.args["true"] for i in node.args.get("ifs") or []]
        return branches + ([node.args["default"]] if node.args.get("default") else [])
    if isinstance(node, exp.If):
        return [node.args["true"]] + ([node.args["false"]] if node.args.get("false") else [])
    if isinstance(node, exp.Nullif):
        return [node.this, node.expression]
    if isinstance(node, _BRANCHING):
        return [node.this, *node.expressions]
    return []


def needs_types(node: exp.Expr) -> bool:
    """Whether DuckDB's type of ``node``'s operands can differ from Spark's: a comparison or a range test of two
    expressions that are not literals, or a branching expression with a result that is not a literal and another
    that is not NULL. A decimal literal already typed by its own marker counts as an expression here: that marker
    sees sqlglot's type of the other side, and sqlglot types ``COALESCE(g, d)`` a DECIMAL where DuckDB's is FLOAT."""
    values = operands(node)
    not_literals = [v for v in values if not is_literal(v)]
    if isinstance(node, _BRANCHING):
        return bool(not_literals) and len([v for v in values if not isinstance(v, exp.Null)]) > 1
    return len(not_literals) > 1


def operands_marker(node: exp.Expr) -> exp.Expr:
    """``node`` wrapped in a numbered marker for the driver (see the module's docstring).

    >>> import sqlglot
    >>> operands_marker(sqlglot.parse_one("g = d")).sql("spark").startswith("__LH_OPERANDS(g = d, ")
    True
    """
    return exp.Anonymous(this=OPERANDS, expressions=[node.copy(), exp.Literal.number(next(marker_ids))])


def unwrapped(tree: exp.Expr) -> tuple[exp.Expr, bool]:
    """``tree`` with its operand markers replaced by the expressions they wrap, each numbered in its ``meta``; and
    whether there were any."""

    def unwrap(marker: exp.Anonymous) -> exp.Expr:
        inner, number = marker.expressions
        inner.meta[_TOGETHER] = int(number.name)
        return inner

    return replaced_markers(tree, OPERANDS, unwrap)


def may_meet_a_float(sql: str, schemas: Mapping[str, Mapping[str, str]]) -> bool:
    """Whether a statement can have a ``FLOAT`` operand at all: one of the columns it reads is one, or its text
    names the type (a cast). Typing a statement costs milliseconds; most read no ``FLOAT``.

    >>> may_meet_a_float("SELECT a FROM v", {"v": {"a": "decimal(5,1)"}}), may_meet_a_float("SELECT a FROM v", {"v": {"a": "float"}})
    (False, True)
    """
    return "float" in sql.lower() or any("float" in t for columns in schemas.values() for t in columns.values())


def floats_as_duckdb(tree: exp.Expr, schemas: Mapping[str, Mapping[str, str]]) -> exp.Expr:
    """``tree`` (markers unwrapped by :func:`unwrapped`) with the integer and ``DECIMAL`` operands that meet a
    ``FLOAT`` cast to ``FLOAT``, as DuckDB casts them; typed once, on a qualified copy. A statement sqlglot cannot
    type keeps Spark's types.

    >>> import sqlglot
    >>> tree, _ = unwrapped(sqlglot.parse_one("SELECT * FROM v WHERE __LH_OPERANDS(g = d, 1)", read="spark"))
    >>> floats_as_duckdb(tree, {"v": {"g": "float", "d": "decimal(3,1)"}}).sql("spark")
    'SELECT * FROM v WHERE g = CAST(d AS FLOAT)'
    """
    typed = typed_copy(tree, schemas, spark_expression_metadata(duckdb_arithmetic=True))
    if typed is None:
        return tree
    to_float: dict[int, list[bool]] = {}
    # innermost first: a CASE DuckDB makes a FLOAT is a FLOAT operand of the comparison around it
    for node in reversed(list(typed.find_all(*_TYPED_TOGETHER))):
        number = node.meta.get(_TOGETHER)
        if number is None:
            continue
        kinds = [None if isinstance(v, exp.Null) else operand_kind(v) for v in operands(node)]
        if float_only({k for k in kinds if k is not None}):
            to_float[number] = [k in ("integer", "decimal") for k in kinds]
            if isinstance(node, _BRANCHING):
                node.type = _FLOAT.copy()
    if not to_float:
        return tree
    for node in reversed(list(tree.find_all(*_TYPED_TOGETHER))):  # innermost first: an outer cast copies it
        casts = to_float.get(node.meta.get(_TOGETHER, 0))
        for value, cast in zip(operands(node), casts or (), strict=False):
            if cast:
                value.replace(exp.Cast(this=value.copy(), to=_FLOAT.copy()))
    return tree


def is_literal(node: exp.Expr) -> bool:
    """A literal or a parameter. A decimal literal typed by its own marker (``literal_as``) is not one here: that
    marker sees sqlglot's type of the other operand, which for ``COALESCE(g, d)`` is not DuckDB's FLOAT."""
    inner = node.this if isinstance(node, (exp.Neg, exp.Paren)) else node
    return isinstance(inner, (exp.Literal, exp.Null, exp.Boolean, exp.Placeholder, exp.Parameter))
