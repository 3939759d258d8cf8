"""DuckDB's ``COLUMNS(...)`` and ``* RENAME (...)`` in Spark SQL, once the driver knows the columns of the views a
query reads (pure: sqlglot only).

Both stand for columns that only the query's inputs name, so the planner leaves them in the Spark SQL and the
driver writes them out with the views' schemas (the query qualified, as for ``*``):

- A select-list item holding ``COLUMNS(<selector>)`` is repeated for each column the selector picks, in the
  inputs' order, and named by that column (as DuckDB names them): ``max(COLUMNS(*))`` is ``max(a) AS a, max(b)
  AS b, ...``. The selector is ``*`` (with ``EXCLUDE``), ``t.*``, a regular expression that must occur in the
  name (case-sensitive, as DuckDB's), or a lambda over the name (``c -> c LIKE 'x%'``; comparisons, ``LIKE``,
  ``ILIKE``, ``IN``, ``regexp_matches``, ``AND``/``OR``/``NOT``).
- ``* RENAME (a AS b, ...)`` (and ``t.* RENAME``) is the star's columns, the named ones renamed; ``* REPLACE (expr
  AS a, ...)`` the star's columns with ``a`` computed by ``expr`` in its place (Spark has ``* EXCEPT`` but no
  ``REPLACE``).

Not written out (left to fail on Spark): ``COLUMNS`` outside a select list, two different selectors in one item.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import MARKERS, column_spellings, marker_ids, typed_copy


class ColumnsError(ValueError):
    """DuckDB's error for a ``COLUMNS`` selector that picks no column."""


_WORD = re.compile(r"\bCOLUMNS\s*\(|\bRENAME\s*\(|\*\s*(?:EXCEPT\s*\([^)]*\)\s*)?REPLACE\s*\(", re.IGNORECASE)


def may_have_star_expressions(sql: str) -> bool:
    """Whether Spark SQL ``sql`` may hold ``COLUMNS(...)`` or ``RENAME (...)`` (a word test: the parse comes later).

    >>> may_have_star_expressions("SELECT max(COLUMNS(*)) FROM v"), may_have_star_expressions("SELECT columns FROM v")
    (True, False)
    """
    return _WORD.search(sql) is not None


def star_expressions_written_out(tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]]) -> exp.Expr:
    """``tree`` (Spark SQL) with its ``COLUMNS(...)`` items and ``* RENAME`` written as columns; ``tree`` unchanged
    where sqlglot cannot qualify it.

    :raises ColumnsError: a selector picks no column (DuckDB's Binder Error).

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT max(COLUMNS('^[ab]')), * RENAME (c AS d) FROM v", read="spark")
    >>> star_expressions_written_out(tree, {"v": {"a": "int", "b": "int", "c": "int"}}).sql("spark")
    'SELECT MAX(`a`) AS `a`, MAX(`b`) AS `b`, `a`, `b`, `c` AS `d` FROM v'
    """
    selects = [s for s in tree.find_all(exp.Select) if _expandable(s)]
    for select in reversed(selects):  # innermost first: an outer query's inputs may be written out ones
        for position in reversed(range(len(select.expressions))):
            item = select.expressions[position]
            stars = list(item.find_all(exp.Columns)) or (
                [item] if isinstance(item, (exp.Star, exp.Column)) and (_rename(item) or _replace(item)) else []
            )
            if not stars:
                continue
            names = _input_columns(tree, select, position, stars[0], schemas)
            if names is None:
                return tree
            replacement = (
                _renamed(names, _rename(item), _replace(item)) if not item.find(exp.Columns) else _repeated(item, names)
            )
            if replacement is None:
                continue
            select.set("expressions", select.expressions[:position] + replacement + select.expressions[position + 1 :])
    return tree


def _expandable(select: exp.Select) -> bool:
    return any(item.find(exp.Columns) or _rename(item) or _replace(item) for item in select.expressions)


def _rename(item: exp.Expr) -> list[exp.Alias]:
    return _star_clause(item, "rename")


def _replace(item: exp.Expr) -> list[exp.Alias]:
    return _star_clause(item, "replace")


def _star_clause(item: exp.Expr, clause: str) -> list[exp.Alias]:
    star = item.this if isinstance(item, exp.Column) and isinstance(item.this, exp.Star) else item
    return list(star.args.get(clause) or []) if isinstance(star, exp.Star) else []


def _input_columns(
    tree: exp.Expr,
    select: exp.Select,
    position: int,
    star_like: exp.Expr,
    schemas: Mapping[str, Mapping[str, str | exp.DataType]],
) -> list[str] | None:
    """The columns the star behind ``star_like`` stands for in ``select``'s inputs: the select list is replaced,
    in a copy, by that star alone, which qualifying expands."""
    star = _star_of(star_like)
    copy = tree.copy()
    index = list(tree.find_all(exp.Select)).index(select)
    copied = list(copy.find_all(exp.Select))[index]
    copied.set("expressions", [star])
    typed = typed_copy(copy, schemas, {})
    if typed is None:
        return None
    expanded = list(typed.find_all(exp.Select))[index]
    names = expanded.named_selects
    qualifier = star.args.get("table") if isinstance(star, exp.Column) else None
    spellings = column_spellings(select, schemas, qualifier.name if qualifier is not None else None)
    return [spellings.get(n.lower(), n) for n in names] if all(names) else None


def _star_of(star_like: exp.Expr) -> exp.Expr:
    """The plain star (``*``, ``* EXCLUDE (...)``, ``t.*``) a ``COLUMNS`` selector or a renaming star stands on."""
    inner = star_like.this if isinstance(star_like, exp.Columns) else star_like
    if isinstance(inner, exp.Star):
        return exp.Star(except_=[e.copy() for e in inner.args.get("except_") or []] or None)
    if isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
        star = exp.Star(except_=[e.copy() for e in inner.this.args.get("except_") or []] or None)
        return exp.Column(this=star, table=inner.args["table"].copy())
    return exp.Star()


def _renamed(names: list[str], renames: list[exp.Alias], replaces: list[exp.Alias]) -> list[exp.Expr]:
    new = {alias.this.name.lower(): alias.alias for alias in renames}
    computed = {alias.alias.lower(): alias.this for alias in replaces}
    items: list[exp.Expr] = []
    for name in names:
        if name.lower() in computed:
            items.append(exp.alias_(computed[name.lower()].copy(), name, quoted=True))
        elif name.lower() in new:
            items.append(exp.alias_(exp.column(name, quoted=True), new[name.lower()], quoted=True))
        else:
            items.append(exp.column(name, quoted=True))
    return items


def _repeated(item: exp.Expr, names: list[str]) -> list[exp.Expr] | None:
    selectors = {c.sql("spark") for c in item.find_all(exp.Columns)}
    if len(selectors) != 1:
        return None  # DuckDB fails two different selectors in one expression too
    selector = next(iter(item.find_all(exp.Columns))).this
    table = selector.args.get("table") if isinstance(selector, exp.Column) else None  # COLUMNS(u.*): u's columns
    picked = [n for n in names if _picks(selector, n)]
    if not picked:
        raise ColumnsError(f'Binder Error: No matching columns found that match regex "{_pattern(selector)}"')
    value = item.this if isinstance(item, exp.Alias) else item
    copies: list[exp.Expr] = []
    for name in picked:
        copy = _with_fresh_markers(value.copy())
        column = exp.column(name, table=table.copy() if table is not None else None, quoted=True)
        if isinstance(copy, exp.Columns):
            copy = column
        for columns in list(copy.find_all(exp.Columns)):
            columns.replace(column.copy())
        copies.append(exp.alias_(copy, name, quoted=True))
    return copies


def _pattern(selector: exp.Expr) -> str:
    return selector.name if isinstance(selector, exp.Literal) else selector.sql("duckdb")


def _picks(selector: exp.Expr, name: str) -> bool:
    if isinstance(selector, exp.Literal) and selector.is_string:
        return re.search(selector.name, name) is not None
    if isinstance(selector, exp.Lambda):
        parameter = selector.expressions[0].name
        return bool(_evaluated(selector.this, {parameter.lower(): name}))
    return True  # a star: its EXCLUDE is the qualified expansion's


def _evaluated(node: exp.Expr, names: Mapping[str, str]) -> object:
    """A lambda's body over a column's name, for the forms DuckDB users write to pick columns."""
    if isinstance(node, (exp.Identifier, exp.Column)) and node.name.lower() in names:
        return names[node.name.lower()]
    if isinstance(node, exp.Literal):
        return node.name if node.is_string else float(node.name)
    if isinstance(node, exp.Paren):
        return _evaluated(node.this, names)
    if isinstance(node, exp.Not):
        return not _evaluated(node.this, names)
    if isinstance(node, exp.And):
        return _evaluated(node.this, names) and _evaluated(node.expression, names)
    if isinstance(node, exp.Or):
        return _evaluated(node.this, names) or _evaluated(node.expression, names)
    if isinstance(node, exp.In):
        return _evaluated(node.this, names) in [_evaluated(e, names) for e in node.expressions]
    if isinstance(node, (exp.Like, exp.ILike)):
        pattern = _like_regex(str(_evaluated(node.expression, names)))
        flags = re.IGNORECASE | re.DOTALL if isinstance(node, exp.ILike) else re.DOTALL
        return re.fullmatch(pattern, str(_evaluated(node.this, names)), flags) is not None
    if isinstance(node, exp.RegexpLike):
        return re.search(str(_evaluated(node.expression, names)), str(_evaluated(node.this, names))) is not None
    comparisons: dict[type[exp.Expr], Callable[[object, object], bool]] = {
        exp.EQ: lambda a, b: a == b,
        exp.NEQ: lambda a, b: a != b,
    }
    for kind, compare in comparisons.items():
        if isinstance(node, kind):
            return compare(_evaluated(node.this, names), _evaluated(node.expression, names))
    raise ColumnsError(f"COLUMNS(lambda) with {node.sql('duckdb')!r} cannot be evaluated on Spark")


def _like_regex(pattern: str) -> str:
    return "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)


def _with_fresh_markers(value: exp.Expr) -> exp.Expr:
    """A copy's typed markers get ids of their own: each copy's operand is another column, of another type."""
    for marker in value.find_all(exp.Anonymous):
        if marker.name.lower() in MARKERS and marker.expressions:
            marker.expressions[-1].replace(exp.Literal.number(next(marker_ids)))
    return value
