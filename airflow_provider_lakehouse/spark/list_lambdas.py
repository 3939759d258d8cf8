"""DuckDB's list comprehensions and list lambdas as Spark runs them, with DuckDB's answer (pure: sqlglot only).

- ``[f(x) FOR x IN l IF p(x)]``: sqlglot writes it for Spark as ``ARRAY(f(x) FOR x IN l)``, which Spark cannot
  parse. DuckDB defines it as ``list_transform(list_filter(l, x -> p(x)), x -> f(x))``, and that is how it is
  written (``[f(x, i) FOR x, i IN l]`` as ``list_transform(l, (x, i) -> f(x, i))``).
- A lambda's second parameter, in ``list_transform`` and ``list_filter``, is the element's position: 1-based in
  DuckDB, 0-based in Spark's ``transform`` and ``filter``. The lambda reads it as ``i + 1``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import bottom_up


def list_lambdas_for_spark(tree: exp.Expr) -> exp.Expr:
    """``tree`` (DuckDB SQL) with each list comprehension as DuckDB's lambda functions, and each lambda's position
    parameter counted from 1.

    >>> sql = lambda s: list_lambdas_for_spark(sqlglot.parse_one(s, read="duckdb")).sql("spark")
    >>> sql("SELECT [e * 2 FOR e IN l IF e > 1] FROM t")
    'SELECT TRANSFORM(FILTER(l, e -> e > 1), e -> e * 2) FROM t'
    >>> sql("SELECT list_transform(l, (x, i) -> x * i) FROM t")
    'SELECT TRANSFORM(l, (x, i) -> x * (i + 1)) FROM t'
    """

    def rewrite(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Array) and len(node.expressions) == 1:
            return _as_lambdas(node.expressions[0]) or node
        if isinstance(node, (exp.Transform, exp.ArrayFilter)):
            _count_from_one(node.expression)
        return node

    return bottom_up(tree, rewrite)


def _as_lambdas(comprehension: exp.Expr) -> exp.Expr | None:
    if not isinstance(comprehension, exp.Comprehension):
        return None
    name = comprehension.expression.sql("duckdb")
    position = comprehension.args.get("position")
    source = comprehension.args["iterator"].sql("duckdb")
    condition = comprehension.args.get("condition")
    if position is not None:
        if condition is not None:  # the filter would renumber the positions the condition reads
            return None
        name = f"({name}, {position.sql('duckdb')})"
    elif condition is not None:
        source = f"list_filter({source}, {name} -> {condition.sql('duckdb')})"
    transformed = sqlglot.parse_one(
        f"list_transform({source}, {name} -> {comprehension.this.sql('duckdb')})", read="duckdb"
    )
    if isinstance(transformed, exp.Transform):
        _count_from_one(transformed.expression)
    return transformed


def _count_from_one(function: exp.Expr) -> None:
    """In place: the position parameter of the lambda ``function``, if it has one, read as ``position + 1``."""
    if not isinstance(function, exp.Lambda) or len(function.expressions) != 2 or function.meta.get("counted"):
        return
    function.meta["counted"] = True
    position = function.expressions[1].name
    for node in list(function.this.find_all(exp.Identifier, exp.Column)):
        if node.name == position and not (isinstance(node, exp.Identifier) and isinstance(node.parent, exp.Column)):
            if isinstance(node, exp.Column) and node.table:
                continue
            node.replace(exp.Paren(this=exp.Add(this=exp.to_identifier(position), expression=exp.Literal.number(1))))
