"""``x > ALL (subquery)``, ``x <= ANY (subquery)`` ... in Spark SQL (pure: sqlglot only).

Spark's grammar has no quantified comparisons (``ALL``/``ANY``/``SOME`` over a subquery, which sqlglot writes
unchanged). SQL's answer is three-valued, and Spark's ``EXISTS`` is not: the comparison is written as the cases
DuckDB (and the standard) tell apart, with the subquery's one column named ``__q_v``:

- ``x op ALL (s)``: FALSE if some ``v`` compares false with ``x``; else NULL if a ``v`` is NULL, or ``x`` is NULL
  and ``s`` has rows; else TRUE (an empty ``s`` too).
- ``x op ANY (s)``: TRUE if some ``v`` compares true; else NULL as above; else FALSE (an empty ``s`` too).

``x = ANY (s)`` is ``x IN (s)`` (``.duckdb_functions``).
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import rows_where

#: the comparisons that take a quantifier
COMPARISONS: tuple[type[exp.Binary], ...] = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def quantified_comparison(node: exp.Binary) -> exp.Expr | None:
    """``node`` (``x op ALL|ANY (subquery)``) as a Spark ``CASE`` over ``EXISTS``, or None for another comparison.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT x > ALL (SELECT y FROM t)", read="duckdb").selects[0]
    >>> quantified_comparison(tree).sql("spark")[:96]
    'CASE WHEN EXISTS(SELECT 1 FROM (SELECT y FROM t) AS __q(__q_v) WHERE NOT x > __q_v) THEN FALSE W'
    """
    quantifier = node.expression
    if not isinstance(quantifier, (exp.All, exp.Any)):
        return None
    query = quantifier.this.this if isinstance(quantifier.this, exp.Subquery) else quantifier.this
    if not isinstance(query, exp.Query) or len(query.selects) != 1:
        return None
    value = node.this
    comparison = type(node)(this=value.copy(), expression=exp.column("__q_v"))
    every = isinstance(quantifier, exp.All)
    decided = rows_where(query, ["__q_v"], exp.Not(this=comparison) if every else comparison)
    unknown = exp.or_(
        rows_where(query, ["__q_v"], exp.column("__q_v").is_(exp.null())),
        exp.and_(value.copy().is_(exp.null()), exp.Exists(this=query.copy())),
    )
    return exp.Case(
        ifs=[
            exp.If(this=decided, true=exp.false() if every else exp.true()),
            exp.If(this=unknown, true=exp.null()),
        ],
        default=exp.true() if every else exp.false(),
    )
