"""DuckDB's ``PIVOT`` and ``UNPIVOT`` statements in Spark SQL (pure: sqlglot only).

DuckDB's statements are its shorthand for the SQL-standard clauses the planner already runs (``.pivots``):

- ``UNPIVOT t ON x, y [INTO NAME k VALUE v]`` is ``SELECT * FROM t UNPIVOT (v FOR k IN (x, y))``, ``name`` and
  ``value`` when ``INTO`` is left out.
- ``PIVOT t ON g [IN (...)] [USING agg, ...] [GROUP BY c, ...]`` is ``SELECT * FROM (SELECT c, ..., g, <the
  aggregates' columns> FROM t) PIVOT (agg, ... FOR g IN (...))``: without ``GROUP BY`` every other column groups,
  without ``USING`` the aggregate is ``count(*)``.

Without ``IN``, DuckDB pivots on the column's distinct values, NULL left out, ordered by their text, each column
named by its text (a second name equal but for case gets ``_1``). Spark's ``PIVOT`` needs the values written
out, so the planner writes them as a :data:`PIVOT_VALUES` marker over a query of those values, and the driver,
which can run it, writes them in (:func:`with_pivot_values`).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Sequence
from typing import Any

import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.spark.pattern_calls import parse_spark
from airflow_provider_lakehouse.spark.pivots import pivot_counts_for_spark
from airflow_provider_lakehouse.spark.rewriting import spark_text

#: ``__lh_pivot_values((SELECT DISTINCT g, CAST(g AS STRING) FROM ...))``: the values of a ``PIVOT ... ON g``
#: without ``IN``, with their DuckDB text
PIVOT_VALUES = "__lh_pivot_values"
#: a pivot's only value when its column has none: it matches no row, and its columns are dropped
_NO_VALUE = "__lh_no_value"


class PivotRefusal(ValueError):
    """A ``PIVOT``/``UNPIVOT`` statement of a form this module does not write for Spark."""


def pivot_statements_as_queries(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each ``PIVOT``/``UNPIVOT`` statement in it (the statement itself, a subquery or a CTE) written
    as the ``SELECT`` with the clause that computes it.

    A clause with DuckDB's ``GROUP BY`` inside it is written as a clause over the columns it reads.

    :raises PivotRefusal: for more than one ``ON`` column, an ``ON`` expression that is not a column, or an
        ``UNPIVOT`` into more than one value column.

    >>> sql = lambda s: pivot_statements_as_queries(sqlglot.parse_one(s, read="duckdb")).sql("duckdb")
    >>> sql("UNPIVOT t ON x, y INTO NAME k VALUE v")
    'SELECT * FROM t UNPIVOT(v FOR k IN (x, y))'
    >>> sql("PIVOT t ON g IN ('a', 'b') USING sum(x) GROUP BY id")
    "SELECT * FROM (SELECT id, g, x FROM t) PIVOT(SUM(x) FOR g IN ('a', 'b'))"
    """
    for pivot in reversed(list(tree.find_all(exp.Pivot))):
        if pivot.arg_key == "pivots":  # a clause: FROM t PIVOT (...)
            _grouped_clause_by_its_columns(pivot)
            continue
        query = _unpivot_query(pivot) if pivot.args.get("unpivot") else _pivot_query(pivot)
        if pivot is tree:
            tree = query
        else:
            pivot.replace(query)
    return tree


def _grouped_clause_by_its_columns(pivot: exp.Pivot) -> None:
    """A clause with DuckDB's ``GROUP BY`` inside (``FROM t PIVOT (sum(x) FOR g IN (...) GROUP BY id)``, how DuckDB
    stores a ``PIVOT`` statement's view), in place: the relation it pivots reads the grouping, pivoted and
    aggregated columns only, since a clause groups by every column it does not pivot or aggregate."""
    group = pivot.args.get("group")
    owner = pivot.parent
    if group is None or not isinstance(owner, (exp.Table, exp.Subquery)):
        return
    wanted: dict[str, exp.Column] = {}
    for part in [*group.expressions, *pivot.args.get("fields", []), *pivot.expressions]:
        keys = part.this if isinstance(part, exp.In) else part  # FOR g IN (...): g, not its values
        for column in keys.find_all(exp.Column):
            wanted.setdefault(column.name.lower(), column)
    source = owner.copy()
    source.set("pivots", None)
    alias = source.args.get("alias")
    source.set("alias", None)
    read = exp.select(*(exp.column(c.name, quoted=c.this.quoted) for c in wanted.values())).from_(source)
    clause = pivot.copy()
    clause.set("group", None)
    owner.replace(exp.Subquery(this=read, alias=alias, pivots=[clause]))


def _unpivot_query(pivot: exp.Pivot) -> exp.Select:
    into = pivot.args.get("into")
    name = into.this.name if into is not None else "name"
    values = [v.name for v in into.expressions] if into is not None else ["value"]
    columns = pivot.expressions
    if len(values) != 1 or not all(isinstance(c, exp.Column) for c in columns):
        raise PivotRefusal("UNPIVOT into more than one value column, or ON a list of columns, cannot run on Spark.")
    listed = ", ".join(c.sql("duckdb") for c in columns)
    return _parsed(f"SELECT * FROM {_source(pivot)} UNPIVOT ({_name(values[0])} FOR {_name(name)} IN ({listed}))")


def _pivot_query(pivot: exp.Pivot) -> exp.Select:
    ons = pivot.expressions
    if len(ons) != 1:
        raise PivotRefusal("PIVOT ON more than one column cannot run on Spark (pivot on one column at a time).")
    on = ons[0]
    column, values = (on.this, list(on.expressions)) if isinstance(on, exp.In) else (on, None)
    if not isinstance(column, exp.Column):
        raise PivotRefusal("PIVOT ON an expression cannot run on Spark: pivot on a column (compute it in a subquery).")
    usings = list(pivot.args.get("using") or []) or [exp.Count(this=exp.Star())]
    source = _source(pivot)
    group = pivot.args.get("group")
    if values is None:
        key = column.sql("duckdb")
        listed = (
            f"{PIVOT_VALUES}((SELECT DISTINCT {key}, CAST({key} AS VARCHAR) FROM {source} WHERE {key} IS NOT NULL))"
        )
    else:
        listed = ", ".join(v.sql("duckdb") for v in values)
    aggregates = ", ".join(u.sql("duckdb") for u in usings)
    grouped = f" GROUP BY {', '.join(g.sql('duckdb') for g in group.expressions)}" if group is not None else ""
    # without GROUP BY, a subquery, not the table itself: the planner reads a table's pivot, whose values query
    # reads the table again, through a copy of the pivot made before it replaces that inner read by its view
    read = source if group is not None else f"(SELECT * FROM {source})"
    query = _parsed(f"SELECT * FROM {read} PIVOT ({aggregates} FOR {column.sql('duckdb')} IN ({listed}){grouped})")
    clause = query.find(exp.Pivot)
    if clause is not None:  # the clause as DuckDB stores the statement in a view: read as such
        _grouped_clause_by_its_columns(clause)
    return query


def _source(pivot: exp.Pivot) -> str:
    return pivot.this.sql("duckdb")


def _name(text: str) -> str:
    return exp.to_identifier(text).sql("duckdb")


def _parsed(text: str) -> exp.Select:
    query = sqlglot.parse_one(text, read="duckdb")
    assert isinstance(query, exp.Select)
    return query


def has_pivot_values(sql: str) -> bool:
    return PIVOT_VALUES in sql.lower()


def with_pivot_values(sql: str, distinct_values: Callable[[str], Sequence[tuple[Any, str]]]) -> str:
    """Spark SQL ``sql`` with each :data:`PIVOT_VALUES` marker replaced by the values ``distinct_values`` returns
    for its query (``(value, DuckDB's text of it)`` pairs), as literals named by their text, in DuckDB's order.

    >>> marked = "SELECT * FROM v PIVOT(SUM(x) FOR g IN (__lh_pivot_values((SELECT DISTINCT g, g FROM v))))"
    >>> with_pivot_values(marked, lambda query: [("b", "b"), ("B", "B"), (3, "3")])
    "SELECT * FROM v PIVOT(SUM(x) FOR g IN (3 AS `3`, 'B' AS `B`, 'b' AS `b_1`))"
    """
    tree = parse_spark(sql)
    markers = [m for m in tree.find_all(exp.Anonymous) if m.name.lower() == PIVOT_VALUES]
    emptied: list[exp.Pivot] = []
    for marker in markers:
        listed = marker.parent
        pivot = listed.parent if listed is not None else None
        if not isinstance(listed, exp.In) or not isinstance(pivot, exp.Pivot):
            raise PivotRefusal("a PIVOT's values marker outside its IN list")
        query = marker.expressions[0]
        rows = sorted(
            distinct_values(spark_text(query.unnest() if isinstance(query, exp.Subquery) else query)), key=_text
        )
        if rows:
            names = _distinct_names([text for _, text in rows])
            listed.set(
                "expressions", [exp.alias_(_literal(v), n, quoted=True) for (v, _), n in zip(rows, names, strict=True)]
            )
        else:  # no value to pivot on: one that matches no row, whose columns are then dropped
            listed.set("expressions", [exp.alias_(exp.null(), _NO_VALUE, quoted=True)])
            emptied.append(pivot)
    tree = parse_spark(spark_text(tree))  # parsed again, so that each pivot knows its columns' names
    tree = pivot_counts_for_spark(tree)  # DuckDB's count of no rows is 0
    if emptied:
        tree = _without_empty_columns(tree)
    return spark_text(tree)


def _text(row: tuple[Any, str]) -> bytes:
    return row[1].encode()  # DuckDB orders text by its bytes


def _distinct_names(names: list[str]) -> list[str]:
    """DuckDB's column names for pivoted values: a name equal to an earlier one but for case gets ``_1`` (``_2``,
    ...), since column names are case-insensitive."""
    seen: set[str] = set()
    result = []
    for name in names:
        unique, suffix = name, 0
        while unique.lower() in seen:
            suffix += 1
            unique = f"{name}_{suffix}"
        seen.add(unique.lower())
        result.append(unique)
    return result


def _literal(value: Any) -> exp.Expr:
    """A Spark literal of a value Spark returned (a pivot's ``IN`` takes constants only)."""
    if isinstance(value, bool):
        return exp.true() if value else exp.false()
    if isinstance(value, (int, decimal.Decimal)):
        return exp.Literal.number(str(value))
    if isinstance(value, float):
        return exp.cast(exp.Literal.string(repr(value)), "double")
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, datetime.datetime):
        to = "timestamp" if value.tzinfo is not None else "timestamp_ntz"
        return exp.cast(exp.Literal.string(value.replace(tzinfo=None).isoformat(sep=" ")), to)
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "date")
    raise PivotRefusal(f"PIVOT on values of type {type(value).__name__} cannot run on Spark.")


def _without_empty_columns(tree: exp.Expr) -> exp.Expr:
    """The relations pivoted on no value without the columns of that value."""
    for pivot in list(tree.find_all(exp.Pivot)):
        owner = pivot.parent
        columns = [c.name for c in pivot.args.get("columns") or [] if c.name.startswith(_NO_VALUE)]
        if not columns or not isinstance(owner, (exp.Table, exp.Subquery)):
            continue
        star = exp.Star(except_=[exp.column(name, quoted=True) for name in columns])
        relation = exp.select(star).from_(owner.copy()).subquery("_lh_pivot_none")
        if owner is tree:
            return relation
        owner.replace(relation)
    return tree
