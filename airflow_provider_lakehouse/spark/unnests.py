"""Several ``unnest`` calls in one ``SELECT`` as DuckDB runs them (pure: sqlglot only).

DuckDB unnests the lists of one select list side by side: ``SELECT unnest([1, 2]) AS a, unnest(['x', 'y', 'z'])
AS b`` is three rows, ``(1, 'x'), (2, 'y'), (NULL, 'z')``, the shorter lists padded with NULL (a NULL list as an
empty one). Spark's generators in one select list multiply instead (six rows). :func:`zipped_unnests` writes such a
select list as one ``LATERAL VIEW INLINE(ARRAYS_ZIP(...))``, whose columns take the unnests' places.
"""

from __future__ import annotations

from sqlglot import exp

_VIEW = "_lh_unnested"


def zipped_unnests(tree: exp.Expr) -> exp.Expr:
    """``tree`` (DuckDB SQL) with each plain ``SELECT`` (no ``GROUP BY``, aggregate or window) that unnests two or
    more lists in its select list reading them side by side.

    >>> import sqlglot
    >>> query = sqlglot.parse_one("SELECT id, unnest(l) AS a, unnest(m) AS b FROM t WHERE id > 1", read="duckdb")
    >>> print(zipped_unnests(query).sql("spark"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT id, _lh_unnested._lh_u1 AS `a`, _lh_unnested._lh_u2 AS `b` FROM t LATERAL VIEW
    INLINE(ARRAYS_ZIP(COALESCE(l, ARRAY()), COALESCE(m, ARRAY()))) _lh_unnested AS _lh_u1, _lh_u2 WHERE id > 1
    """
    for select in list(tree.find_all(exp.Select)):
        unnests = [item for item in select.expressions if isinstance(_unaliased(item), exp.Explode)]
        if len(unnests) < 2 or not _plain(select):
            continue
        lists, names = [], []
        for position, item in enumerate(unnests, 1):
            explode = _unaliased(item)
            lists.append(exp.func("COALESCE", explode.this.copy(), exp.Array(expressions=[])))
            name = item.alias if isinstance(item, exp.Alias) else item.sql("duckdb")
            names.append(f"_lh_u{position}")
            item.replace(exp.alias_(exp.column(names[-1], table=_VIEW), name, quoted=True))
        view = exp.Lateral(
            this=exp.Inline(this=exp.ArraysZip(expressions=lists)),
            view=True,
            alias=exp.TableAlias(this=exp.to_identifier(_VIEW), columns=[exp.to_identifier(n) for n in names]),
        )
        select.append("laterals", view)
    return tree


def _unaliased(item: exp.Expr) -> exp.Expr:
    return item.this if isinstance(item, exp.Alias) else item


def _plain(select: exp.Select) -> bool:
    """No grouping, aggregate or window: the unnests read the rows of the ``FROM`` one by one."""
    if select.args.get("group") or select.args.get("having") or select.args.get("distinct"):
        return False
    return not any(item.find(exp.AggFunc, exp.Window) for item in select.expressions)
