"""Named windows (``WINDOW w AS (...)``) written into the ``OVER`` clauses that use them (pure: sqlglot only).

Spark has the ``WINDOW`` clause too, but the planner rewrites window functions one ``OVER`` at a time (a
``row_number()`` without ``ORDER BY`` gets one, as DuckDB numbers rows without it): it must see each window whole.
``OVER w`` becomes ``OVER (<w's definition>)`` and ``OVER (w ORDER BY y)`` adds its own order (and frame) to
``w``'s partitioning, as in DuckDB and the SQL standard; a window defined on another (``w2 AS (w ORDER BY x)``)
is resolved the same way. A name no ``WINDOW`` clause defines is left for Spark to refuse.

>>> import sqlglot
>>> sql = "SELECT rank() OVER w, sum(x) OVER (w ORDER BY y) FROM t WINDOW w AS (PARTITION BY g ORDER BY x)"
>>> inline_named_windows(sqlglot.parse_one(sql, read="duckdb")).sql("duckdb")
'SELECT RANK() OVER (PARTITION BY g ORDER BY x), SUM(x) OVER (PARTITION BY g ORDER BY y) FROM t'
"""

from __future__ import annotations

from sqlglot import exp


def inline_named_windows(tree: exp.Expr) -> exp.Expr:
    """``tree`` with every ``SELECT``'s named windows written into its ``OVER`` clauses and the ``WINDOW`` clause
    dropped."""
    for select in list(tree.find_all(exp.Select)):
        definitions = select.args.get("windows")
        if not definitions:
            continue
        named = _definitions(definitions)
        for window in list(select.find_all(exp.Window)):
            if window.parent_select is select and window.args.get("alias") is not None:
                base = named.get(window.args["alias"].name.lower())
                if base is not None:
                    window.replace(_on(window, base))
        select.set("windows", None)
    return tree


def _definitions(windows: list[exp.Window]) -> dict[str, exp.Window]:
    """Each named window by its lower-case name, those built on another window resolved on it."""
    named: dict[str, exp.Window] = {}
    for window in windows:
        base_name = window.args.get("alias")
        base = named.get(base_name.name.lower()) if base_name is not None else None
        named[window.this.name.lower()] = _on(window, base) if base is not None else window
    return named


def _on(window: exp.Window, base: exp.Window) -> exp.Window:
    """``window`` (a function's ``OVER``, or a window definition) over the named window ``base``: ``base``'s
    partitioning, its own order and frame where it has them, ``base``'s otherwise."""
    combined = window.copy()
    combined.set("alias", None)
    for part in ("partition_by", "order", "spec"):
        if not combined.args.get(part) and base.args.get(part):
            combined.set(
                part, base.args[part].copy() if part != "partition_by" else [p.copy() for p in base.args[part]]
            )
    return combined
