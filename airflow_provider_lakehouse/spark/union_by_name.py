"""DuckDB's ``UNION [ALL] BY NAME`` in Spark SQL, once the driver knows the types of the views a query reads
(pure: sqlglot only).

Spark's grammar has no ``BY NAME`` (its DataFrames have ``unionByName``). DuckDB matches the inputs' columns by
name, case-insensitively: the result has the left input's columns, then those only the right one has, each
NULL in the rows of an input without it. Written for Spark, each input becomes a ``SELECT`` of those columns, in
that order, from the input as a subquery, and the set operation takes them by position. The inputs' column names
come from the query qualified with the views' schemas, which is also what expands their ``*``.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import column_spellings, typed_copy


def has_union_by_name(tree: exp.Expr) -> bool:
    return any(node.args.get("by_name") for node in tree.find_all(exp.Union))


def unions_by_position(tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]]) -> exp.Expr:
    """``tree`` (Spark SQL) with each ``UNION [ALL] BY NAME`` written as a union by position; ``tree`` unchanged
    where sqlglot cannot qualify it.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT a, b FROM v UNION ALL BY NAME SELECT c, A FROM v", read="spark")
    >>> unions_by_position(tree, {"v": {"a": "int", "b": "int", "c": "int"}}).sql("spark")
    'SELECT `__lh_l`.`a` AS `a`, `__lh_l`.`b` AS `b`, NULL AS `c` FROM (SELECT a, b FROM v) AS __lh_l UNION ALL SELECT `__lh_r`.`A` AS `a`, NULL AS `b`, `__lh_r`.`c` AS `c` FROM (SELECT c, A FROM v) AS __lh_r'
    """
    unions = [node for node in tree.find_all(exp.Union) if node.args.get("by_name")]
    if not unions:
        return tree
    typed = typed_copy(tree, schemas, {})
    if typed is None:
        return tree
    typed_unions = [node for node in typed.find_all(exp.Union) if node.args.get("by_name")]
    if len(typed_unions) != len(unions):
        return tree
    names: dict[int, list[str]] = {}  # id(a rewritten union) -> its output names
    # innermost first: an input may be a union by name itself, whose names are the merged ones
    for union, typed_union in reversed(list(zip(unions, typed_unions, strict=True))):
        left = _names(union.this, typed_union.this, names, schemas)
        right = _names(union.expression, typed_union.expression, names, schemas)
        if left is None or right is None:
            return tree
        merged = left + [n for n in right if n.lower() not in {m.lower() for m in left}]
        union.set("this", _selected(union.this, left, merged, "__lh_l"))
        union.set("expression", _selected(union.expression, right, merged, "__lh_r"))
        union.set("by_name", None)
        names[id(union)] = merged
    return tree


def _names(
    side: exp.Expr,
    typed_side: exp.Expr,
    rewritten: Mapping[int, list[str]],
    schemas: Mapping[str, Mapping[str, str | exp.DataType]],
) -> list[str] | None:
    """An input's output column names, as the query spells them (a ``*``'s as the schemas of the views it reads
    do)."""
    side, typed_side = _inner(side), _inner(typed_side)
    if id(side) in rewritten:
        return rewritten[id(side)]
    while isinstance(side, exp.SetOperation) and isinstance(typed_side, exp.SetOperation):
        side, typed_side = _inner(side.this), _inner(typed_side.this)  # a positional union: its left's names
        if id(side) in rewritten:
            return rewritten[id(side)]
    if not isinstance(side, exp.Select) or not isinstance(typed_side, exp.Select):
        return None
    if not any(item.find(exp.Star) for item in side.expressions):
        return list(side.named_selects)
    typed_names = typed_side.named_selects
    spellings = column_spellings(side, schemas)
    return [spellings.get(name.lower(), name) for name in typed_names] if all(typed_names) else None


def _inner(side: exp.Expr) -> exp.Expr:
    """An input without its parentheses."""
    while isinstance(side, (exp.Paren, exp.Subquery)) and not side.alias:
        side = side.this
    return side


def _selected(side: exp.Expr, names: list[str], merged: list[str], alias: str) -> exp.Select:
    """``SELECT`` of ``merged`` from ``side`` (whose columns are ``names``), NULL for those it lacks."""
    own = {name.lower(): name for name in names}
    items = [
        exp.alias_(
            exp.column(own[name.lower()], table=alias, quoted=True) if name.lower() in own else exp.null(),
            name,
            quoted=True,
        )
        for name in merged
    ]
    source = _inner(side)
    return exp.select(*items).from_(
        exp.Subquery(this=source.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))
    )
