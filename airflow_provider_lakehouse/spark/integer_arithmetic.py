"""DuckDB's integer types of ``+``, ``-`` and ``*``, and its overflow errors, in Spark SQL (pure: sqlglot only).

DuckDB computes ``a + b`` of two integers in one type (:func:`duckdb_integer_type`): an integer literal takes the
other operand's type when its value fits it (``tinyint_column + 1`` is a ``TINYINT``), and two typed operands
take the type DuckDB 1.5.5 gives the pair (:data:`_COMMON`, measured with ``typeof``). It fails a result outside
that type: ``100::TINYINT * 2`` raises ``Overflow in multiplication of INT8 (100 * 2)!``. Spark types the same
literal as an ``INT`` and widens, and it reads an unsigned lake column as the next wider signed type, so
``WHERE c * 2 > 0`` matched rows where DuckDB fails the statement. :func:`checked` writes the arithmetic of the
narrow types (:attr:`IntegerType.narrow`) so that Spark computes it wide, fails where DuckDB fails, with
DuckDB's message, and returns the Spark type that holds DuckDB's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression


@dataclass(frozen=True)
class IntegerType:
    """One of DuckDB's integer types, as the Spark engine computes it.

    :param name: DuckDB's name in its overflow errors (``INT8``).
    :param kind: sqlglot's type of it.
    :param low: its smallest value.
    :param high: its largest value.
    :param spark: the Spark type that holds it, as a lake column of the type is read (``SMALLINT`` for
        ``UTINYINT``).
    :param narrow: whether Spark computes ``+``, ``-`` and ``*`` of it wider than DuckDB does (every type but
        ``INTEGER`` and ``BIGINT``, whose overflow fails on both engines).
    """

    name: str
    kind: exp.DType
    low: int
    high: int
    spark: str
    narrow: bool = True

    def holds(self, value: int) -> bool:
        return self.low <= value <= self.high

    def sqlglot_type(self) -> exp.DataType:
        return exp.DataType(this=self.kind)


INT8 = IntegerType("INT8", exp.DataType.Type.TINYINT, -(2**7), 2**7 - 1, "TINYINT")
INT16 = IntegerType("INT16", exp.DataType.Type.SMALLINT, -(2**15), 2**15 - 1, "SMALLINT")
INT32 = IntegerType("INT32", exp.DataType.Type.INT, -(2**31), 2**31 - 1, "INT", narrow=False)
INT64 = IntegerType("INT64", exp.DataType.Type.BIGINT, -(2**63), 2**63 - 1, "BIGINT", narrow=False)
UINT8 = IntegerType("UINT8", exp.DataType.Type.UTINYINT, 0, 2**8 - 1, "SMALLINT")
UINT16 = IntegerType("UINT16", exp.DataType.Type.USMALLINT, 0, 2**16 - 1, "INT")
UINT32 = IntegerType("UINT32", exp.DataType.Type.UINT, 0, 2**32 - 1, "BIGINT")
UINT64 = IntegerType("UINT64", exp.DataType.Type.UBIGINT, 0, 2**64 - 1, "DECIMAL(20, 0)")

#: sqlglot's types of DuckDB's integer types, by the DuckLake type of a lake column
LAKE_TYPES = {
    "uint8": exp.DataType.Type.UTINYINT,
    "uint16": exp.DataType.Type.USMALLINT,
    "uint32": exp.DataType.Type.UINT,
    "uint64": exp.DataType.Type.UBIGINT,
}

# DuckDB 1.5.5's type of ``a + b`` for a of the row's type and b of the column's (``typeof``; "-": HUGEINT, which
# Spark has not). Not a widening order: UTINYINT with TINYINT is a BIGINT, UTINYINT with SMALLINT a SMALLINT.
_ORDER = (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64)
_PAIRS = """
INT8   INT8   INT16  INT32  INT64  INT64  INT64  INT64  -
INT16  INT16  INT16  INT32  INT64  INT16  INT64  INT64  -
INT32  INT32  INT32  INT32  INT64  INT32  INT32  INT64  -
INT64  INT64  INT64  INT64  INT64  INT64  INT64  INT64  -
UINT8  INT64  INT16  INT32  INT64  UINT8  UINT16 UINT32 UINT64
UINT16 INT64  INT64  INT32  INT64  UINT16 UINT16 UINT32 UINT64
UINT32 INT64  INT64  INT64  INT64  UINT32 UINT32 UINT32 UINT64
UINT64 -      -      -      -      UINT64 UINT64 UINT64 UINT64
"""


def _common_types() -> dict[tuple[IntegerType, IntegerType], IntegerType | None]:
    by_name = {t.name: t for t in _ORDER}
    table: dict[tuple[IntegerType, IntegerType], IntegerType | None] = {}
    for line in _PAIRS.strip().splitlines():
        row, *cells = line.split()
        for column, cell in zip(_ORDER, cells, strict=True):
            table[by_name[row], column] = by_name.get(cell)
    return table


_COMMON = _common_types()
_OPERATIONS = {exp.Add: ("+", "addition"), exp.Sub: ("-", "subtraction"), exp.Mul: ("*", "multiplication")}


def integer_type(dtype: exp.DataType | None) -> IntegerType | None:
    """The integer type of an operand of sqlglot type ``dtype``; None for any other."""
    return next((t for t in _ORDER if dtype is not None and dtype.is_type(t.kind)), None)


def integer_literal(node: exp.Expr) -> int | None:
    """The value of an integer literal DuckDB types by its value: ``7``, ``-7``, ``(7)``, ``(-7)``."""
    node = node.unnest()  # sqlglot's: the first node inside any parentheses
    negated = isinstance(node, exp.Neg)
    if negated:
        node = node.this
    if isinstance(node, exp.Literal) and node.is_int:
        return -int(node.name) if negated else int(node.name)
    return None


def _literal_type(value: int | None, other: IntegerType | None) -> IntegerType | None:
    """DuckDB's type of the integer literal ``value`` next to an operand of type ``other``."""
    if value is None:
        return None
    if other is not None and other.holds(value):
        return other
    # DuckDB types -2147483648 as the negation of a BIGINT literal: by its magnitude
    return next((t for t in (INT32, INT64) if t.holds(abs(value))), None)


@dataclass(frozen=True)
class IntegerOperation:
    """How DuckDB computes one ``+``, ``-`` or ``*`` of integers.

    :param result: its type.
    :param of_narrow_columns: whether an operand that is not a literal has a narrow type: Spark's type of the
        result may then be narrower than ``result`` (``utinyint_column + tinyint_column`` is a ``BIGINT`` in
        DuckDB, Spark's ``SMALLINT``).
    """

    result: IntegerType
    of_narrow_columns: bool


def duckdb_integer_operation(node: exp.Expr) -> IntegerOperation | None:
    """DuckDB's computation of the ``+``, ``-`` or ``*`` ``node`` whose operands are typed (sqlglot's ``.type``),
    when both are integers; None otherwise, or where DuckDB's type is a ``HUGEINT``.

    >>> import sqlglot
    >>> node = sqlglot.parse_one("CAST(a AS TINYINT) + 1", read="spark")
    >>> node.this.type = node.this.to
    >>> operation = duckdb_integer_operation(node)
    >>> operation.result.name, operation.of_narrow_columns
    ('INT8', True)
    """
    values = (integer_literal(node.this), integer_literal(node.expression))
    if None not in values:
        return None  # two literals: an INTEGER or a BIGINT, on both engines
    left, right = (
        integer_type(operand.type) if value is None else None
        for operand, value in zip((node.this, node.expression), values, strict=True)
    )
    typed = [t for t in (left, right) if t is not None]
    if len(typed) + sum(v is not None for v in values) != 2:
        return None  # an operand of another type
    # a literal takes the other operand's type when it fits it (DuckDB's INTEGER_LITERAL), else its own
    left = left or _literal_type(values[0], right)
    right = right or _literal_type(values[1], left)
    if left is None or right is None or (result := _COMMON[left, right]) is None:
        return None
    return IntegerOperation(result, any(t.narrow for t in typed))


def duckdb_integer_type(node: exp.Expr) -> IntegerType | None:
    """DuckDB's type of the ``+``, ``-`` or ``*`` ``node`` (see :func:`duckdb_integer_operation`), or None."""
    operation = duckdb_integer_operation(node)
    return None if operation is None else operation.result


def compared_as(node: exp.Expr, duckdbs: IntegerType) -> IntegerType:
    """The type DuckDB compares the arithmetic ``node`` (typed ``duckdbs``, in a typed tree) in: a comparison,
    ``BETWEEN`` or ``IN`` against a constant outside ``duckdbs`` is made in a wider type (``i8 + 100 = 200``
    compares INTEGERs: the addition is computed, and fails). Spark would compare a ``TINYINT`` with 200 as
    ``FALSE`` without computing it, so the checked arithmetic returns the wider type there."""
    child, parent = node, node.parent
    while isinstance(parent, exp.Paren):
        child, parent = parent, parent.parent
    if isinstance(parent, MOVABLE_COMPARISONS):
        constants = [parent.expression if child is parent.this else parent.this]
    elif isinstance(parent, exp.In) and child is parent.this:
        constants = list(parent.expressions)
    elif isinstance(parent, exp.Between) and child is parent.this:
        constants = [parent.args["low"], parent.args["high"]]
    else:
        return duckdbs
    compared = duckdbs
    for value in (_constant(c) for c in constants):
        wider = (
            None if value is None or duckdbs.holds(value) else _COMMON[compared, _literal_type(value, None) or INT64]
        )
        if wider is not None:
            compared = wider
    return compared


def checked(node: exp.Expr, duckdbs: IntegerType, compared: IntegerType | None = None) -> exp.Expr:
    """The ``+``, ``-`` or ``*`` ``node`` computed as DuckDB computes it in ``duckdbs``: wide enough in Spark not
    to overflow there, a result outside ``duckdbs`` failing with DuckDB's message, the value as
    ``duckdbs.spark`` (or ``compared.spark``: see :func:`compared_as`).

    >>> import sqlglot
    >>> checked(sqlglot.parse_one("a + 1"), INT8).sql("spark").split(" THEN ")[0]
    'CASE WHEN NOT CAST(a AS BIGINT) + CAST(1 AS BIGINT) BETWEEN -128 AND 127'
    """
    if not isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        raise TypeError(f"not a +, - or *: {node.sql()}")
    symbol, operation = _OPERATIONS[type(node)]
    wide = exp.DataType.build("DECIMAL(20, 0)" if duckdbs.high > INT32.high else "BIGINT")
    left, right = node.this.copy(), node.expression.copy()
    computed = type(node)(
        this=exp.Cast(this=left.copy(), to=wide.copy()), expression=exp.Cast(this=right.copy(), to=wide.copy())
    )
    message = (
        f"RAISE_ERROR(CONCAT('Out of Range Error: Overflow in {operation} of {duckdbs.name} (', "
        f"CAST(_a AS STRING), ' {symbol} ', CAST(_b AS STRING), ')!'))"
    )
    return spark_expression(
        f"CASE WHEN NOT _r BETWEEN {duckdbs.low} AND {duckdbs.high} THEN {message} "
        f"ELSE CAST(_r AS {(compared or duckdbs).spark}) END",
        _r=computed,
        _a=left,
        _b=right,
    )


#: the comparisons DuckDB 1.5.5's optimizer moves constants across, and each with its sides swapped
_FLIPPED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
    exp.GT: exp.LT,
    exp.LT: exp.GT,
    exp.GTE: exp.LTE,
    exp.LTE: exp.GTE,
}
MOVABLE_COMPARISONS = tuple(_FLIPPED)


def _constant(node: exp.Expr) -> int | None:
    """An integer literal, or one cast to an integer type (DuckDB folds the cast)."""
    while isinstance(node, (exp.Paren, exp.Cast)) and not isinstance(node, exp.TryCast):
        if isinstance(node, exp.Cast) and integer_type(node.to) is None:
            return None
        node = node.this
    return integer_literal(node)


def moved_constants(comparison: exp.Expr, operation_of: Callable[[exp.Expr], IntegerOperation | None]) -> exp.Expr:
    """``comparison`` as DuckDB's optimizer rewrites it before it computes anything (its ``MoveConstantsRule``,
    as DuckDB 1.5.5 applies it): a comparison of integer arithmetic with one constant operand against a constant
    compares the other operand instead, ``i8 + 100 > 0`` becoming ``i8 > -100``, as long as the new constant fits
    the arithmetic's type (``operation_of`` gives it). So ``i8 + 100`` never overflows there. An equality that
    cannot hold is ``FALSE`` (NULL for a NULL operand): ``u8 + 100 = 10``, ``i8 * 3 = 7``, and ``<>`` of a product
    ``TRUE``. Repeated while the compared operand is such arithmetic again: ``(i8 + 100) - 100 > 0`` is ``i8 > 0``.
    ``comparison`` itself where DuckDB leaves it.

    >>> import sqlglot
    >>> typed = lambda node: IntegerOperation(INT8, True)
    >>> moved_constants(sqlglot.parse_one("(a + 100) - 100 > 0"), typed).sql("spark")
    'a > 0'
    >>> moved_constants(sqlglot.parse_one("7 = a * 3"), typed).sql("spark")
    'CASE WHEN a IS NULL THEN CAST(NULL AS BOOLEAN) ELSE FALSE END'
    >>> moved_constants(sqlglot.parse_one("a + 100 <> -100"), typed).sql("spark")  # -200 is no TINYINT
    'a + 100 <> -100'
    """
    while (kind := type(comparison)) in _FLIPPED:
        sides = (comparison.this, comparison.expression)
        constant_side = next((i for i, side in enumerate(sides) if _constant(side) is not None), None)
        if constant_side is None:
            return comparison
        outer = _constant(sides[constant_side])
        arithmetic = sides[1 - constant_side].unnest()
        operation = operation_of(arithmetic) if isinstance(arithmetic, (exp.Add, exp.Sub, exp.Mul)) else None
        if outer is None or operation is None or not operation.result.holds(outer):
            return comparison  # DuckDB compares in a wider type: the arithmetic is cast, and not matched
        if constant_side == 0:  # the arithmetic on the left
            kind = _FLIPPED[kind]
        literals = (integer_literal(arithmetic.this), integer_literal(arithmetic.expression))
        if (literals[0] is None) == (literals[1] is None):
            return comparison
        inner = next(value for value in literals if value is not None)
        operand = arithmetic.expression if literals[0] is not None else arithmetic.this
        flip = False
        if isinstance(arithmetic, exp.Add):
            moved = outer - inner
        elif isinstance(arithmetic, exp.Sub) and literals[1] is not None:  # x - c
            moved = outer + inner
        elif isinstance(arithmetic, exp.Sub):  # c - x
            moved, flip = inner - outer, True
        else:
            if inner == 0:
                return comparison  # x * 0: 0 or NULL, left to DuckDB's other rules
            if outer % inner:
                if kind in (exp.EQ, exp.NEQ):
                    return _constant_or_null(operand, kind is exp.NEQ)
                return comparison
            moved, flip = outer // inner, inner < 0
            if not operation.result.holds(moved):
                # DuckDB 1.5.5 answers FALSE for every comparison here (x * -1 > -128 of a TINYINT x), which its
                # later releases fixed: the arithmetic is left to fail where it overflows
                return comparison
        if not operation.result.holds(moved):
            return _constant_or_null(operand, False) if kind is exp.EQ else comparison
        kind = _FLIPPED[kind] if flip else kind
        comparison = kind(this=operand.copy(), expression=exp.Literal.number(moved))
    return comparison


def _constant_or_null(operand: exp.Expr, value: bool) -> exp.Expr:
    """DuckDB's ``constant_or_null``: ``value``, or NULL where ``operand`` is NULL."""
    return spark_expression(
        f"CASE WHEN _x IS NULL THEN CAST(NULL AS BOOLEAN) ELSE {'TRUE' if value else 'FALSE'} END", _x=operand
    )


def negated_unsigned(operand: exp.Expr, unsigned: IntegerType) -> exp.Expr:
    """DuckDB's ``-x`` of an unsigned ``x``: wrapped around in ``x``'s type (``-(255::UTINYINT)`` is 1, ``-0`` is
    0), as the Spark type that holds it.

    >>> negated_unsigned(exp.column("u"), UINT8).sql("spark")
    'CAST(CASE WHEN u = 0 THEN 0 ELSE 256 - u END AS SMALLINT)'
    """
    return spark_expression(
        f"CAST(CASE WHEN _x = 0 THEN 0 ELSE {unsigned.high + 1} - _x END AS {unsigned.spark})", _x=operand
    )
