"""``SELECT DISTINCT ON (...)`` and ``QUALIFY`` as Spark runs them with DuckDB's answer (pure: sqlglot only).

sqlglot writes both for Spark as a subquery filtered by a window, but moves the query's ``ORDER BY`` into the
window only (the rows come back in no order), keeps ``LIMIT`` inside the subquery (it cuts the rows before the
filter, so ``DISTINCT ON (g) ... LIMIT 2`` returns fewer rows than DuckDB), passes a select-list alias or an
ordinal of the ``ORDER BY`` into the window (Spark refuses the alias; ``ORDER BY 1`` orders by the constant) and,
under ``SELECT *``, returns its ``_row_number`` column. :func:`window_filters_for_spark` writes such a query as
three steps, each as DuckDB defines it:

1. the query without its ``DISTINCT ON``, ``QUALIFY``, ``ORDER BY``, ``LIMIT`` and ``OFFSET``, with the ``ORDER BY``
   keys, the ``DISTINCT ON`` keys and the ``QUALIFY`` condition as extra columns (aliases and ordinals replaced
   by the items they name);
2. the rows ``QUALIFY`` keeps, then the first of each ``DISTINCT ON`` group in the ``ORDER BY``'s order;
3. ``SELECT * EXCEPT (the extra columns)`` of those, in the ``ORDER BY``'s order, then ``LIMIT`` and ``OFFSET``.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import bottom_up

#: the prefix of the extra columns, which no script's own names start with in practice
_HELPER = "_lh_wf_"


def window_filters_for_spark(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each ``SELECT`` that has ``DISTINCT ON`` or ``QUALIFY`` in the three steps above.

    >>> import sqlglot
    >>> query = sqlglot.parse_one("SELECT DISTINCT ON (g) g, id FROM t ORDER BY g, id DESC LIMIT 2", read="duckdb")
    >>> print(window_filters_for_spark(query).sql("spark"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT * EXCEPT (_lh_wf_order_1, _lh_wf_order_2, _lh_wf_on_1, _lh_wf_first) FROM (SELECT *,
    ROW_NUMBER() OVER (PARTITION BY _lh_wf_on_1 ORDER BY _lh_wf_order_1 NULLS LAST, _lh_wf_order_2 DESC) AS
    _lh_wf_first FROM (SELECT g, id, g AS _lh_wf_order_1, id AS _lh_wf_order_2, g AS _lh_wf_on_1 FROM t) AS
    _lh_wf_rows) AS _lh_wf_rows WHERE _lh_wf_first = 1 ORDER BY _lh_wf_order_1 NULLS LAST, _lh_wf_order_2 DESC
    LIMIT 2
    """

    def rewrite(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Select) and (_distinct_on(node) is not None or node.args.get("qualify")):
            return _in_steps(node)
        return node

    return bottom_up(tree, rewrite)


def qualify_error(tree: exp.Expr) -> str | None:
    """DuckDB's error for a ``QUALIFY`` whose query computes no window function (neither in the condition, by
    itself or through an alias, nor in the select list), or None.

    >>> import sqlglot
    >>> qualify_error(sqlglot.parse_one("SELECT a FROM t QUALIFY a > 1", read="duckdb"))[:14]
    'Binder Error: '
    """
    for select in tree.find_all(exp.Select):
        qualify = select.args.get("qualify")
        if qualify is None:
            continue
        windows = [qualify.this, *select.expressions]
        if not any(part.find(exp.Window) for part in windows):
            return "Binder Error: at least one window function must appear in the SELECT column or QUALIFY clause"
    return None


def _distinct_on(select: exp.Select) -> list[exp.Expr] | None:
    distinct = select.args.get("distinct")
    on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
    return list(on.expressions) if isinstance(on, exp.Tuple) else None


def _in_steps(select: exp.Select) -> exp.Select:
    items = list(select.expressions)
    order = select.args.get("order")
    keys = [_named_item(o.this, items) for o in order.expressions] if isinstance(order, exp.Order) else []
    on = _distinct_on(select)
    qualify = select.args.get("qualify")

    rows = select.copy()
    for clause in ("distinct", "qualify", "order", "limit", "offset"):
        rows.set(clause, None)
    helpers: list[str] = []

    def add(expression: exp.Expr, name: str) -> exp.Column:
        rows.append("expressions", exp.alias_(expression.copy(), name))
        helpers.append(name)
        return exp.column(name)

    ordered = [
        o.__class__(**{**o.args, "this": add(key, f"{_HELPER}order_{i}")})
        for i, (o, key) in enumerate(zip(order.expressions if order else [], keys, strict=True), 1)
    ]
    partition = [add(_named_item(e, items), f"{_HELPER}on_{i}") for i, e in enumerate(on or [], 1)]
    kept = add(_aliases_replaced(qualify.this, items), f"{_HELPER}qualify") if qualify else None

    relation: exp.Expr = rows.subquery(f"{_HELPER}rows")
    condition: exp.Expr | None = kept
    if on is not None:
        first = exp.Window(
            this=exp.RowNumber(),
            partition_by=partition,
            order=exp.Order(expressions=[o.copy() for o in ordered]) if ordered else None,
        )
        numbered = exp.select(exp.Star(), exp.alias_(first, f"{_HELPER}first")).from_(relation)
        if kept is not None:
            numbered = numbered.where(kept.copy())
        helpers.append(f"{_HELPER}first")
        relation = numbered.subquery(f"{_HELPER}rows")
        condition = exp.EQ(this=exp.column(f"{_HELPER}first"), expression=exp.Literal.number(1))

    outer = exp.select(exp.Star(except_=[exp.column(name) for name in helpers])).from_(relation)
    if condition is not None:
        outer = outer.where(condition)
    if ordered:
        outer.set("order", exp.Order(expressions=ordered))
    for clause in ("limit", "offset"):
        if select.args.get(clause) is not None:
            outer.set(clause, select.args[clause].copy())
    return outer


def _named_item(key: exp.Expr, items: list[exp.Expr]) -> exp.Expr:
    """An ``ORDER BY`` or ``DISTINCT ON`` key as the expression it stands for: an ordinal is that select-list
    item, a bare name that is an item's alias is the item's expression (DuckDB looks among the aliases first),
    anything else itself with the aliases it uses replaced."""
    if isinstance(key, exp.Literal) and key.is_int and 1 <= int(key.name) <= len(items):
        item = items[int(key.name) - 1]
        return item.this if isinstance(item, exp.Alias) else item
    return _aliases_replaced(key, items)


def _aliases_replaced(expression: exp.Expr, items: list[exp.Expr]) -> exp.Expr:
    aliases = {item.alias.lower(): item.this for item in items if isinstance(item, exp.Alias) and item.alias}

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliases:
            target = aliases[node.name.lower()]
            if not (isinstance(target, exp.Column) and target.name.lower() == node.name.lower()):
                return target.copy()
        return node

    return expression.copy().transform(replace)
