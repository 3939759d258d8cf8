"""Window frames DuckDB computes and Spark cannot (pure: sqlglot only).

Spark's grammar has ``ROWS`` and ``RANGE`` frames only, without an ``EXCLUDE`` clause; and sqlglot's Spark
generator drops ``EXCLUDE`` with a warning, so ``sum(x) OVER (... EXCLUDE CURRENT ROW)`` would silently sum the
current row too. Such a statement is refused by name instead.
"""

from __future__ import annotations

from sqlglot import exp


def window_frame_refusal(tree: exp.Expr) -> str | None:
    """Why ``tree``'s window frames cannot run on Spark, or None.

    >>> import sqlglot
    >>> window_frame_refusal(sqlglot.parse_one(
    ...     "SELECT sum(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM t", read="duckdb"
    ... ))
    'a window frame with EXCLUDE TIES cannot run on Spark (its frames exclude no rows).'
    """
    for spec in tree.find_all(exp.WindowSpec):
        exclude = spec.args.get("exclude")
        if exclude is not None and exclude.name.upper() != "NO OTHERS":
            return (
                f"a window frame with EXCLUDE {exclude.name.upper()} cannot run on Spark (its frames exclude no rows)."
            )
        if str(spec.args.get("kind") or "").upper() == "GROUPS":
            return "a GROUPS window frame cannot run on Spark (it has ROWS and RANGE frames)."
    return None
