"""A ``PIVOT`` clause's counts as DuckDB gives them (pure: sqlglot only).

DuckDB computes each pivoted cell as its aggregate over the rows of that value (a ``FILTER``), so a count of
none is 0; Spark's ``PIVOT`` leaves a cell without rows NULL whatever the aggregate. :func:`pivot_counts_for_spark`
reads the pivoted relation through a ``SELECT`` that turns the NULL counts into 0, keeping the columns' order.
"""

from __future__ import annotations

from sqlglot import exp

#: aggregates whose value over no rows is 0, not NULL
_COUNTS = (exp.Count, exp.CountIf, exp.ApproxDistinct)


def pivot_counts_for_spark(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each pivoted table or subquery whose ``PIVOT`` counts read with those counts 0 where Spark's
    are NULL.

    >>> import sqlglot
    >>> query = sqlglot.parse_one("SELECT * FROM t PIVOT (count(*) FOR g IN ('a', 'b'))", read="duckdb")
    >>> pivot_counts_for_spark(query).sql("spark")
    "SELECT * FROM (SELECT * EXCEPT (`a`, `b`), COALESCE(`a`, 0) AS `a`, COALESCE(`b`, 0) AS `b` FROM t PIVOT(COUNT(*) FOR g IN ('a', 'b'))) AS _lh_pivot"
    """
    for pivot in list(tree.find_all(exp.Pivot)):
        owner = pivot.parent
        if pivot.args.get("unpivot") or not isinstance(owner, (exp.Table, exp.Subquery)):
            continue
        if any(
            isinstance(a, exp.Anonymous) and a.name.lower() == "__lh_pivot_values"
            for a in pivot.find_all(exp.Anonymous)
        ):
            continue  # its values are known at run time, when the driver counts them (.pivot_statements)
        aggregates = [a.this if isinstance(a, exp.Alias) else a for a in pivot.expressions]
        counted = [isinstance(a, _COUNTS) for a in aggregates]
        columns = [c.name for c in pivot.args.get("columns") or []]
        if not any(counted) or not columns or len(columns) % len(aggregates):
            continue
        items: list[exp.Expr] = [exp.Star(except_=[exp.column(name, quoted=True) for name in columns])]
        for position, name in enumerate(columns):
            cell = exp.column(name, quoted=True)
            if counted[position % len(aggregates)]:
                items.append(exp.alias_(exp.func("COALESCE", cell, exp.Literal.number(0)), name, quoted=True))
            else:
                items.append(cell)
        alias = pivot.args.get("alias") or owner.args.get("alias")
        name = alias.name if alias is not None else "_lh_pivot"
        relation = exp.select(*items).from_(owner.copy()).subquery(name)
        if owner is tree:
            return relation
        owner.replace(relation)
    return tree
