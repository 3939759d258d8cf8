"""An ``INSERT ... VALUES`` as DuckDB binds it: each value cast to the type of its column on its own (pure: sqlglot).

DuckDB casts every value of ``INSERT INTO t VALUES (...), (...)`` straight to the type of the column it goes
into: ``'2'``, ``2.5`` and ``2.5::DOUBLE`` into an ``INTEGER`` column are 2, 3 and 2, and ``1`` and ``DATE
'2020-01-01'`` into a ``VARCHAR`` column are ``'1'`` and ``'2020-01-01'``. Spark first gives each column of an
inline table one type for all its rows: it refuses rows that mix kinds it does not unify (``'2'`` and ``1``,
``DATE`` and text), and unifies others into a type whose cast differs (``1`` and ``2.5`` become ``DECIMAL(11, 1)``,
so ``'1.0'`` in a ``VARCHAR`` column where DuckDB stores ``'1'``).

So a ``VALUES`` column whose rows hold values of different kinds is planned as a struct with one field per kind,
each row's value in the field of its kind and ``NULL`` in the others; the writer casts each field to the
column's type as DuckDB does and takes each row's value from its own field (``conform_to_table`` in
:mod:`.tasks`). Columns of
one kind stay as they are: Spark's type for them is exact (wider integers, decimals of one scale).

A ``DEFAULT`` cell (``INSERT INTO t VALUES (1, DEFAULT)``) is the column's default, which only the writer knows
(it reads the table's columns): its column is planned by kind too, with a boolean field :data:`DEFAULT_FIELD`
that is true in the rows whose value is the default.

>>> import sqlglot
>>> tree = sqlglot.parse_one("INSERT INTO t VALUES (1, 'a'), ('2', 'b')", read="duckdb")
>>> values, columns = values_by_kind(tree.expression)
>>> values.sql("duckdb"), columns
("VALUES ({'k0': 1, 'k1': NULL}, 'a'), ({'k0': NULL, 'k1': '2'}, 'b')", (0,))
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from airflow_provider_lakehouse.spark.steps import DEFAULT_FIELD

#: a column with more kinds of value than this keeps Spark's one type for all its rows (a struct per row kind
#: would grow with the statement, e.g. a thousand rows of ``now() + INTERVAL (n) DAY``)
MAX_KINDS = 16
#: the field names of a column planned by kind
KIND_FIELD = "k{}"
#: the kind of ``[]``
EMPTY_LIST = "list[]"


def is_default(node: exp.Expr) -> bool:
    """Whether a ``VALUES`` cell or an assigned value is the keyword ``DEFAULT`` (sqlglot's variable in ``VALUES``,
    an unquoted column elsewhere: a reserved word in DuckDB, no column's name; ``"DEFAULT"`` is a column).

    >>> import sqlglot
    >>> row = sqlglot.parse_one("VALUES (DEFAULT, default, \\"DEFAULT\\", 'DEFAULT')", read="duckdb").expressions[0]
    >>> [is_default(cell) for cell in row.expressions]
    [True, True, False, False]
    >>> is_default(sqlglot.parse_one("UPDATE t SET v = DEFAULT", read="duckdb").expressions[0].expression)
    True
    """
    if isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier):
        return not node.this.quoted and node.name.upper() == "DEFAULT"
    return isinstance(node, exp.Var) and node.name.upper() == "DEFAULT"


def value_kind(node: exp.Expr) -> str | None:
    """What decides how DuckDB casts ``node`` into a column, as a key: values of one kind cast alike after Spark
    unified them. None for ``NULL``, which fits every kind.

    >>> import sqlglot
    >>> [value_kind(sqlglot.parse_one(v, read="duckdb")) for v in ("1", "-2.50", "1e3", "'x'", "NULL", "DATE '2020-01-01'")]
    ['integer', 'decimal:2', 'double', 'varchar', None, 'cast:date']
    >>> value_kind(sqlglot.parse_one("{'a': 1, 'b': [1.5, NULL]}", read="duckdb"))
    'struct{a:integer,b:list[decimal:1]}'
    """
    while isinstance(node, (exp.Paren, exp.Neg)):
        node = node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return "boolean"
    if isinstance(node, exp.Literal):
        return _literal_kind(node)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return "cast:" + node.to.sql("duckdb").lower()
    if isinstance(node, exp.Array):
        elements = sorted({kind for kind in map(value_kind, node.expressions) if kind is not None})
        return f"list[{','.join(elements)}]"
    if isinstance(node, exp.Struct) and all(isinstance(e, exp.PropertyEQ) for e in node.expressions):
        fields = ",".join(f"{e.this.name.lower()}:{value_kind(e.expression)}" for e in node.expressions)
        return f"struct{{{fields}}}"
    return "expr:" + node.sql("duckdb")


def _literal_kind(node: exp.Literal) -> str:
    """DuckDB's literal types: a string literal, an integer literal (of any width: Spark widens them exactly),
    a decimal by its scale (DuckDB prints ``2.50`` as ``2.50``, so scales must not be unified) or a double."""
    if node.is_string:
        return "varchar"
    text = node.this.lower()
    if "e" in text:
        return "double"
    if "." in text:
        return f"decimal:{len(text.split('.', 1)[1])}"
    return "integer"


def values_by_kind(values: exp.Values, *, mixed_kinds: bool = True) -> tuple[exp.Values, tuple[int, ...]]:
    """``values`` with each column that mixes kinds of value (with ``mixed_kinds``: DuckDB's casts) or holds a
    ``DEFAULT`` turned into a struct of one field per kind (see the module's docstring), and the positions of
    those columns.

    >>> import sqlglot
    >>> values, columns = values_by_kind(sqlglot.parse_one("VALUES (1, DEFAULT)", read="duckdb"), mixed_kinds=False)
    >>> values.sql("duckdb"), columns
    ("VALUES (1, {'default': TRUE})", (1,))
    """
    rows = _cells(values)
    if not rows:
        return values, ()
    mixed_kinds = mixed_kinds and len(rows) > 1
    by_kind: list[int] = []
    new_rows = [list(row) for row in rows]
    for position in range(len(rows[0])):
        cells = [row[position] for row in rows]
        defaults = [is_default(cell) for cell in cells]
        has_default = any(defaults)
        kinds = [None if default else value_kind(cell) for cell, default in zip(cells, defaults, strict=True)]
        distinct = list(dict.fromkeys(kind for kind in kinds if kind is not None))
        lists = [k for k in distinct if k.startswith("list[") and k != EMPTY_LIST]
        if EMPTY_LIST in distinct and lists:
            # Spark's type of [] (array<void>) widens exactly to another list's: [] joins that kind
            distinct.remove(EMPTY_LIST)
            kinds = [lists[0] if kind == EMPTY_LIST else kind for kind in kinds]
        by_its_kinds = mixed_kinds and 2 <= len(distinct) <= MAX_KINDS
        if not by_its_kinds and not has_default:
            continue
        if not by_its_kinds:  # one field for the values, which Spark types as one
            distinct = ["all"] if distinct else []
            kinds = [None if kind is None else "all" for kind in kinds]
        by_kind.append(position)
        for row, cell, kind, default in zip(new_rows, cells, kinds, defaults, strict=True):
            row[position] = _struct_of_kinds(cell, distinct, kind, default=default if has_default else None)
    if not by_kind:
        return values, ()
    planned = values.copy()
    planned.set("expressions", [exp.Tuple(expressions=row) for row in new_rows])
    return planned, tuple(by_kind)


def values_rows(values: exp.Values) -> list[list[exp.Expr]] | None:
    """The cells of ``values``, row by row; None where there is nothing to type across rows: one row, or rows of
    different lengths (Spark fails those with its own message)."""
    rows = _cells(values)
    return rows if len(rows) > 1 else None


def _cells(values: exp.Values) -> list[list[exp.Expr]]:
    """The cells of ``values``, row by row; none where rows differ in length (Spark fails those with its own
    message)."""
    rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]
    return rows if len({len(row) for row in rows}) == 1 else []


def _struct_of_kinds(cell: exp.Expr, kinds: Sequence[str], kind: str | None, *, default: bool | None) -> exp.Struct:
    """The struct of one cell: its value in the field of its ``kind``, NULL in the others, and (``default`` not
    None) the :data:`DEFAULT_FIELD`, true where the cell is ``DEFAULT``."""
    fields = [
        exp.PropertyEQ(
            this=exp.to_identifier(KIND_FIELD.format(i)),
            expression=cell.copy() if kind == other else exp.Null(),
        )
        for i, other in enumerate(kinds)
    ]
    if default is not None:
        flag = exp.Boolean(this=True) if default else exp.Null()
        fields.append(exp.PropertyEQ(this=exp.to_identifier(DEFAULT_FIELD), expression=flag))
    return exp.Struct(expressions=fields)
