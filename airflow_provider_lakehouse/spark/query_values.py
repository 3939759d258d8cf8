"""A query's ``VALUES`` typed as DuckDB types it where Spark's inline table differs (pure: sqlglot only).

DuckDB gives a ``VALUES`` column the type of its first row and widens it row by row. Text after a typed value takes
the column's type (``VALUES (DATE '2021-02-03'), ('2020-01-01')`` is a ``DATE`` column, ``(1), ('2')`` an
``INTEGER`` one), where Spark's inline table refuses the mix (``INCOMPATIBLE_TYPES_IN_INLINE_TABLE``). A typed value
after text fails in DuckDB (``Cannot combine types VARCHAR and DATE``), where Spark made a ``DATE`` column. So the
planner casts such text to the type of the column's other values, when they are all of one kind, and fails the
statement where DuckDB does (:func:`values_combine_error`). ``INSERT ... VALUES`` is bound by its target columns
instead (see :mod:`.insert_values`).

>>> import sqlglot
>>> typed_text_in_values(sqlglot.parse_one("SELECT * FROM (VALUES (DATE '2021-02-03'), ('2020-01-01')) v(d)", read="duckdb")).sql("duckdb")
"SELECT * FROM (VALUES (CAST('2021-02-03' AS DATE)), (CAST('2020-01-01' AS DATE))) AS v(d)"
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from airflow_provider_lakehouse.spark.insert_values import value_kind, values_rows

#: what DuckDB calls the type of a literal of each kind, in its error
_DUCKDB_NAMES = {"integer": "INTEGER_LITERAL", "double": "DOUBLE", "boolean": "BOOLEAN"}
#: the largest value of DuckDB's INTEGER: an integer literal beyond it is a BIGINT (beyond that a HUGEINT)
_INT32_MAX = 2**31 - 1


def typed_text_in_values(tree: exp.Expr) -> exp.Expr:
    """``tree`` with the text literals of each query ``VALUES`` column cast to the type of the column's other
    values, where those are all of one scalar kind and the column's first value is not text (DuckDB's type)."""
    for cells in list(_value_columns(tree)):
        target = _text_target(cells)
        for cell in cells if target is not None else ():
            if value_kind(cell) == "varchar":
                cell.replace(exp.Cast(this=cell.copy(), to=target))
    return tree


def values_combine_error(tree: exp.Expr) -> str | None:
    """DuckDB's error for a query ``VALUES`` column whose first value is text and a later one a typed scalar
    (``VALUES ('2'), (1)``), or None. The rows of an ``INSERT ... VALUES`` are not a query's: DuckDB casts them to
    the target's columns one by one."""
    own = tree.expression if isinstance(tree, exp.Insert) else None
    for cells in _value_columns(tree, skip=own):
        known = [kind for kind in map(value_kind, cells) if kind is not None]
        typed = next((kind for kind in known if _scalar(kind)), None)
        if known and known[0] == "varchar" and typed is not None:
            return (
                f"Not implemented Error: Cannot combine types VARCHAR and {_duckdb_name(typed)} - an explicit cast "
                "is required"
            )
    return None


def _value_columns(tree: exp.Expr, skip: exp.Expr | None = None) -> Iterator[list[exp.Expr]]:
    """The cells of each column of each ``VALUES`` in ``tree`` (but ``skip``) whose rows can be typed together."""
    for values in tree.find_all(exp.Values):
        rows = values_rows(values) if values is not skip else None
        if rows is not None:
            for position in range(len(rows[0])):
                yield [row[position] for row in rows]


def _text_target(cells: list[exp.Expr]) -> exp.DataType | None:
    kinds = [value_kind(cell) for cell in cells]
    known = [kind for kind in kinds if kind is not None]
    typed = {kind for kind in known if kind != "varchar"}
    if "varchar" not in known or len(typed) != 1 or known[0] == "varchar":
        return None
    kind = typed.pop()
    if not _scalar(kind):
        return None
    if kind == "integer":
        numbers = [_integer(cell) for cell, k in zip(cells, kinds, strict=True) if k == "integer"]
        if all(-_INT32_MAX - 1 <= n <= _INT32_MAX for n in numbers):
            return exp.DataType.build("INT")
        return exp.DataType.build("BIGINT") if all(-(2**63) <= n < 2**63 for n in numbers) else None
    if kind.startswith("decimal:"):
        return _decimal_type([cell for cell, k in zip(cells, kinds, strict=True) if k == kind], int(kind[8:]))
    if kind == "double":
        return exp.DataType.build("DOUBLE")
    if kind == "boolean":
        return exp.DataType.build("BOOLEAN")
    return exp.DataType.build(kind[len("cast:") :], dialect="duckdb")


def _integer(cell: exp.Expr) -> int:
    sign = 1
    while isinstance(cell, (exp.Paren, exp.Neg)):
        sign = -sign if isinstance(cell, exp.Neg) else sign
        cell = cell.this
    return sign * int(cell.name)


def _decimal_type(cells: list[exp.Expr], scale: int) -> exp.DataType:
    """DuckDB's type of decimal literals of one scale: every digit written counts (``0.5`` is ``DECIMAL(2, 1)``),
    and the widest wins."""
    width = max(sum(ch.isdigit() for ch in cell.sql("duckdb")) for cell in cells)
    return exp.DataType.build(f"DECIMAL({max(width, scale)}, {scale})")


def _scalar(kind: str) -> bool:
    """A kind whose values DuckDB's text never combines with after text: numbers, booleans, typed scalars."""
    if kind in ("integer", "double", "boolean") or kind.startswith("decimal:"):
        return True
    return kind.startswith("cast:") and kind[5:] in _CAST_SCALARS


_CAST_SCALARS = frozenset(
    {
        "date",
        "time",
        "timestamp",
        "timestamptz",
        "timestamp with time zone",
        "tinyint",
        "smallint",
        "int",
        "integer",
        "bigint",
        "double",
        "float",
        "real",
        "boolean",
    }
)


def _duckdb_name(kind: str) -> str:
    if kind.startswith("decimal:"):
        return "DECIMAL"
    return _DUCKDB_NAMES.get(kind) or kind[len("cast:") :].upper()
