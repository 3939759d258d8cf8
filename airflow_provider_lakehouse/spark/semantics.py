"""DuckDB's arithmetic and cast semantics in Spark SQL (pure: sqlglot only).

Spark runs with ANSI mode on, so a cast that cannot convert, an integer overflow and a numeric value out of range
fail as they do in DuckDB. Where DuckDB *succeeds* differently from Spark, the DuckDB-dialect statement is
rewritten explicitly (checked against DuckDB 1.5 in ``tests/integration/test_duckdb_semantics.py``):

========================  =======================================  ==========================================
DuckDB                    DuckDB's result                          Spark SQL written
========================  =======================================  ==========================================
``a / b``                 DOUBLE; ``x / 0`` is ``inf``/``-inf``,   ``CAST(a AS DOUBLE) / CAST(b AS DOUBLE)``,
                          ``0 / 0`` is ``nan``                     IEEE results for a zero divisor
``a % b``                 NULL when ``b = 0`` (NaN for doubles)    ``CASE WHEN b = 0 THEN NULL ELSE a % b END``
``a // b`` (integers)     truncating division, NULL when ``b = 0``  ``a DIV b`` under the same guard, cast back
``a // b`` (otherwise)    DOUBLE division, NULL when ``b = 0``     double division under the guard
``CAST(x AS <integer>)``  rounds: decimals and numeric strings      ``CAST(ROUND(x) ...)``, ``CAST(BROUND(x)
                          half away from zero, doubles half even    ...)`` by the operand's type
``CAST(x AS DECIMAL)``    fails for a NaN or infinite double       a check that fails them (Spark: NULL)
``TRY_CAST`` likewise     NULL instead of an error                 the same, with ``TRY_CAST``
``a * b``, ``a + b``,     DECIMAL of DuckDB's precision (18 digits  ``CAST(a * b AS DECIMAL(p, s))`` of
``a - b`` of decimals     when both operands have at most 18),     DuckDB's type: Spark's is wider and
                          an error on overflow                     does not fail where DuckDB does
``a + 1``, ``a * b`` ...  DuckDB's type (``TINYINT + 1`` is a      a ``CASE`` computing wide and raising
of narrow integers        ``TINYINT``), an error on overflow       DuckDB's error (:mod:`.integer_arithmetic`)
``a + 1 > 0`` (integers)  ``a > -1`` (its optimizer moves the      the same comparison (Spark computed, and
                          constant; nothing overflows)             could overflow)
``a << b``                fails for a negative ``a`` or ``b``, a   a ``CASE`` raising DuckDB's errors, of
                          ``b`` of the width or more, an overflow  DuckDB's type (Spark wraps around)
``a >> b``                0 for a negative ``b`` or one of the     a ``CASE``; Spark shifts by ``b`` modulo
                          width or more                            the width
``a & b``, ``|``, xor     DuckDB's integer type (``TINYINT | 1``   a cast to it (Spark: ``INT``)
                          is a ``TINYINT``)
``round(d, n)``,          DuckDB's DECIMAL type (``round`` keeps   a cast to it (Spark's is narrower:
``d % x`` (DECIMAL d)     the precision)                           ``DECIMAL(3, 2)`` for ``d % 3``)
========================  =======================================  ==========================================

DuckDB binds ``||``, ``&``, ``|`` and the shifts alike, left to right (Spark does not):
:func:`~.rewriting.spark_text` writes the parentheses DuckDB's order needs.

``//``, integer casts and decimal arithmetic depend on the operand's type, which only the driver knows (it has
registered the lake tables as views): the planner writes them as markers (:data:`MARKERS`) and :func:`resolve`
replaces the markers once the view schemas are known. A marker that could not be typed keeps Spark's plain form (integer
division; a cast that fails on a fractional string instead of rounding it).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from airflow_provider_lakehouse.ducklake.blob_text import blob_from_text
from airflow_provider_lakehouse.spark.decimal_types import (
    DUCKDB_ARITHMETIC,
    computed_in_float,
    duckdb_decimal_type,
    operand_kind,
    spark_decimal_type,
    spark_expression_metadata,
)
from airflow_provider_lakehouse.spark.float_operands import (
    COMPARISONS,
    floats_as_duckdb,
    is_literal,
    may_meet_a_float,
    needs_types,
    operands_marker,
    unwrapped,
)
from airflow_provider_lakehouse.spark.integer_arithmetic import (
    LAKE_TYPES,
    MOVABLE_COMPARISONS,
    IntegerOperation,
    IntegerType,
    checked,
    compared_as,
    duckdb_integer_operation,
    integer_type,
    moved_constants,
    negated_unsigned,
)
from airflow_provider_lakehouse.spark.pattern_calls import parse_spark
from airflow_provider_lakehouse.spark.rewriting import (
    ARITHMETIC,
    CAST,
    INT_DIV,
    MARKERS,
    TIMESTAMP_TYPES,
    TYPED,
    bottom_up,
    int_literal,
    marker_ids,
    raise_error,
    replaced_markers,
    spark_expression,
    spark_text,
    typed_call,
    typed_copy,
)
from airflow_provider_lakehouse.spark.set_operations import has_set_operation, text_where_duckdb_unites_with_text
from airflow_provider_lakehouse.spark.star_expressions import may_have_star_expressions, star_expressions_written_out
from airflow_provider_lakehouse.spark.typed_functions import Operand, as_float, in_float, resolve_typed
from airflow_provider_lakehouse.spark.union_by_name import has_union_by_name, unions_by_position

_DOUBLE = exp.DataType.build("double")


def duckdb_semantics(tree: exp.Expr) -> exp.Expr:
    """Rewrite DuckDB-dialect arithmetic and casts in ``tree`` for Spark (markers where types decide).

    >>> import sqlglot
    >>> sql = lambda s: duckdb_semantics(sqlglot.parse_one(s, read="duckdb")).sql("spark")
    >>> sql("SELECT a % b").startswith("SELECT __LH_TYPED('mod', a, b, ")  # NULL or NaN for 0: types decide
    True
    >>> sql("SELECT a // 2, CAST(x AS INTEGER)").startswith("SELECT __LH_INT_DIV(a, 2, ")
    True
    """
    counter = marker_ids

    def rewrite(node: exp.Expression) -> exp.Expr:
        if isinstance(node, exp.Null) and _a_condition(node):  # DuckDB's WHERE NULL: Spark's NULL has no type
            return exp.Cast(this=exp.Null(), to=exp.DataType.build("boolean"))
        if isinstance(node, _OPERATORS):  # the script's own: see arithmetic_markers
            node.meta[DUCKDB_ARITHMETIC] = True
            return node
        if isinstance(node, exp.Neg) and not _number_literal(node):  # DuckDB wraps -x of an unsigned x around
            node.meta[DUCKDB_ARITHMETIC] = True
            return node
        if isinstance(node, exp.Div):  # a FLOAT quotient in DuckDB when no operand is wider: types decide
            return typed_call("divide", node.this, node.expression)
        if isinstance(node, exp.In) and isinstance(node.parent, exp.Pivot):  # PIVOT's FOR g IN (...): no test
            return node
        if isinstance(node, (*COMPARISONS, exp.Between, exp.In)):
            _type_literals_against(node)
            return operands_marker(node) if needs_types(node) else node
        if isinstance(node, (exp.Cast, exp.TryCast)) and node.to.is_type(exp.DataType.Type.UUID):
            return uuid_cast(node.this, lenient=isinstance(node, exp.TryCast) or bool(node.args.get("safe")))
        if needs_types(node):  # CASE, COALESCE ...: operands DuckDB may type together as FLOAT (.float_operands)
            return operands_marker(node)
        if isinstance(node, exp.Mod):
            return typed_call("mod", node.this, node.expression)
        if isinstance(node, exp.Round) and _literal_places(node):  # DuckDB keeps a DECIMAL's precision
            return typed_call("round", node.this, node.args.get("decimals") or exp.Literal.number(0))
        if isinstance(node, exp.BitwiseLeftShift):  # DuckDB fails where Spark wraps: types decide the width
            return typed_call("shift_left", node.this, node.expression)
        if isinstance(node, exp.BitwiseRightShift):
            return typed_call("shift_right", node.this, node.expression)
        if isinstance(node, (exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor)):
            return typed_call(f"bitwise_{type(node).__name__[len('Bitwise') :].lower()}", node.this, node.expression)
        if isinstance(node, exp.IntDiv):
            return exp.Anonymous(
                this=INT_DIV, expressions=[node.this, node.expression, exp.Literal.number(next(counter))]
            )
        if (
            isinstance(node, (exp.Cast, exp.TryCast))
            and node.to.is_type(exp.DataType.Type.VARBINARY, exp.DataType.Type.BINARY)
            and isinstance(node.this, exp.Literal)
            and node.this.is_string
        ):
            return _blob_literal(node.this.name, lenient=isinstance(node, exp.TryCast) or bool(node.args.get("safe")))
        if isinstance(node, (exp.Cast, exp.TryCast)) and (
            _is_integer(node.to)
            or node.to.is_type(exp.DataType.Type.DATE, exp.DataType.Type.DECIMAL, exp.DataType.Type.TIME)
        ):
            return exp.Anonymous(
                this=CAST,
                expressions=[
                    node.this,
                    # an unsigned type keeps DuckDB's name (Spark's SMALLINT for UTINYINT would lose its range),
                    # and so does TIME (Spark's name for it is TIMESTAMP)
                    exp.Literal.string(node.to.sql("duckdb" if node.to.this in _DUCKDB_NAMED else "spark")),
                    exp.Boolean(this=isinstance(node, exp.TryCast) or bool(node.args.get("safe"))),
                    exp.Literal.number(next(counter)),
                ],
            )
        return node

    return bottom_up(tree, rewrite)


#: DuckDB's UUID text: 32 hex digits, hyphens anywhere, the whole in one pair of braces or none
_UUID_TEXT = "^([{][0-9a-fA-F-]*[}]|[0-9a-fA-F-]*)$"


def uuid_cast(x: exp.Expr, lenient: bool) -> exp.Expr:
    """``CAST(x AS UUID)`` as DuckDB casts text: Spark keeps a UUID as text, so the cast checks and writes its
    canonical form (``'{A0EEBC99-9C0B4EF8BB6D6BB9BD380A11}'`` is ``'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'``);
    other text fails with DuckDB's error (NULL for ``TRY_CAST``). A literal is cast here.

    >>> uuid_cast(exp.Literal.string("{A0EEBC99-9C0B4EF8BB6D6BB9BD380A11}"), lenient=False).sql("spark")
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"
    >>> uuid_cast(exp.Literal.string("zz"), lenient=True).sql("spark")
    'CAST(NULL AS STRING)'
    >>> uuid_cast(exp.column("s"), lenient=False).sql("spark").startswith("CASE WHEN s IS NULL THEN NULL WHEN s RLIKE")
    True
    """
    failure = "CAST(NULL AS STRING)" if lenient else "RAISE_ERROR(CONCAT(_before, _x, _after))"
    message = {
        "_before": exp.Literal.string("Conversion Error: Could not convert string '"),
        "_after": exp.Literal.string("' to INT128"),
    }
    if isinstance(x, exp.Literal) and x.is_string:
        text = x.name
        digits = (text[1:-1] if text.startswith("{") and text.endswith("}") else text).replace("-", "")
        if re.fullmatch("[0-9a-fA-F]{32}", digits):
            return exp.Literal.string(str(uuid.UUID(digits)))
        return spark_expression(failure, _x=x, **message)
    # TRANSLATE deletes characters without a replacement, in DuckDB and in Spark alike (the rewriting of
    # DuckDB's functions leaves it as it is); the digits are checked hex, so upper to lower case is a TRANSLATE too
    return spark_expression(
        "CASE WHEN _x IS NULL THEN NULL "
        f"WHEN _x RLIKE '{_UUID_TEXT}' AND LENGTH(_d) = 32 THEN "
        "CONCAT_WS('-', SUBSTR(_d, 1, 8), SUBSTR(_d, 9, 4), SUBSTR(_d, 13, 4), SUBSTR(_d, 17, 4), "
        f"SUBSTR(_d, 21, 12)) ELSE {failure} END",
        _x=x,
        _d=spark_expression("TRANSLATE(_x, 'ABCDEF{}-', 'abcdef')", _x=x),
        **message,
    )


def _literal_places(node: exp.Round) -> bool:
    """``round(x)`` or ``round(x, <integer literal>)``, nothing else (Spark needs the places constant too)."""
    places = node.args.get("decimals")
    other = {k for k, v in node.args.items() if v is not None and k not in ("this", "decimals")}
    return not other and (places is None or int_literal(places) is not None)


_OPERATORS = (exp.Add, exp.Sub, exp.Mul)
_SYMBOLS: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Neg: "neg"}


def _type_literals_against(node: exp.Expr) -> None:
    """Turn, in place, the decimal literals of a comparison (``=``, ``<`` ..., ``BETWEEN``, ``IN`` a list) into
    markers typed against the operand they are compared with. DuckDB compares a FLOAT with ``0.1`` as FLOATs (``0.1::FLOAT = 0.1`` is
    true), where Spark widens both to DOUBLE (false; ``> 0.1`` true): against a FLOAT the literal becomes one.

    >>> import sqlglot
    >>> tree = duckdb_semantics(sqlglot.parse_one("SELECT * FROM t WHERE f > 0.5 AND n = 1", read="duckdb"))
    >>> "f > __LH_TYPED('literal_as', 0.5, f, " in tree.sql("spark").split("WHERE ")[1]
    True
    """
    pairs: list[tuple[str, exp.Expr]] = []
    if isinstance(node, COMPARISONS):
        pairs = [("this", node.expression), ("expression", node.this)]
    elif isinstance(node, exp.Between):
        pairs = [("low", node.this), ("high", node.this)]
    if isinstance(node, exp.In) and node.expressions and not is_literal(node.this):
        node.set(
            "expressions",
            [typed_call("literal_as", e, node.this) if _decimal_literal(e) else e for e in node.expressions],
        )
    for key, other in pairs:
        literal = node.args.get(key)
        if literal is not None and _decimal_literal(literal) and not is_literal(other):
            node.set(key, typed_call("literal_as", literal, other))


def _decimal_literal(node: exp.Expr) -> bool:
    """``0.5`` or ``-0.5``: a DECIMAL in DuckDB (``5e-1`` is a DOUBLE, ``5`` an integer)."""
    inner = node.this if isinstance(node, (exp.Neg, exp.Paren)) else node
    return isinstance(inner, exp.Literal) and inner.is_number and "." in inner.name and "e" not in inner.name.lower()


def arithmetic_markers(tree: exp.Expr) -> exp.Expr:
    """The script's own ``+``, ``-`` and ``*`` (as :func:`duckdb_semantics` found them) as markers, so that the
    driver casts those of decimals to DuckDB's type; arithmetic written by the other rewrites stays as it is.

    >>> import sqlglot
    >>> tree = duckdb_semantics(sqlglot.parse_one("SELECT price * qty + 1 FROM t", read="duckdb"))
    >>> arithmetic_markers(tree).sql("spark").startswith("SELECT __LH_ARITH('+', __LH_ARITH('*', price, qty, ")
    True
    """

    def mark(node: exp.Expr) -> exp.Expr:
        if not (isinstance(node, (*_OPERATORS, exp.Neg)) and node.meta.get(DUCKDB_ARITHMETIC)):
            return node
        return exp.Anonymous(
            this=ARITHMETIC,
            expressions=[
                exp.Literal.string(_SYMBOLS[type(node)]),
                node.this.copy(),
                exp.Null() if isinstance(node, exp.Neg) else node.expression.copy(),
                exp.Literal.number(next(marker_ids)),
            ],
        )

    return bottom_up(tree, mark)


def _operators_of_markers(tree: exp.Expr) -> tuple[exp.Expr, bool]:
    """``tree`` with its arithmetic markers back as operators, each numbered in its ``meta``; and whether there
    were any."""
    operators = {symbol: kind for kind, symbol in _SYMBOLS.items()}

    def unmark(marker: exp.Anonymous) -> exp.Expr:
        symbol, left, right, number = marker.expressions
        kind = operators[symbol.name]
        operator = kind(this=left.copy()) if kind is exp.Neg else kind(this=left.copy(), expression=right.copy())
        operator.meta[DUCKDB_ARITHMETIC] = int(number.name)
        return operator

    return replaced_markers(tree, ARITHMETIC, unmark)


def _with_unsigned_types(
    schemas: Mapping[str, Mapping[str, str]], lake_types: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str | exp.DataType]]:
    """``schemas`` with each column of an unsigned lake type typed as DuckDB's type (sqlglot has them), for
    typing the script's arithmetic as DuckDB does."""
    typed: dict[str, dict[str, str | exp.DataType]] = {}
    for view, columns in schemas.items():
        unsigned = {name: LAKE_TYPES[kind] for name, kind in lake_types.get(view, {}).items() if kind in LAKE_TYPES}
        typed[view] = {
            name: exp.DataType(this=unsigned[name]) if name in unsigned else spark for name, spark in columns.items()
        }
    return typed


def _duckdb_arithmetic(tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]]) -> exp.Expr:
    """The script's own arithmetic in ``tree`` as DuckDB types it, where Spark's type differs: decimals cast to
    DuckDB's type, FLOATs computed as FLOATs, integers of a narrow type checked against its range
    (:mod:`.integer_arithmetic`). Typed once, on a qualified copy, with each numbered operator typed as DuckDB
    types it (its parents see DuckDB's type)."""
    typed = typed_copy(tree, schemas, spark_expression_metadata(duckdb_arithmetic=True))
    if typed is None:  # a statement sqlglot cannot qualify keeps Spark's types
        return tree
    casts: dict[int, exp.DataType] = {}
    in_float: dict[int, tuple[bool, bool]] = {}  # which operands become FLOATs
    checks: dict[int, tuple[IntegerType, IntegerType]] = {}  # DuckDB's type, and the type it is compared in
    integers: dict[int, IntegerOperation] = {}
    day_counts: set[int] = set()  # date - date: DuckDB's BIGINT of days, Spark's INTERVAL DAY
    for node in typed.find_all(*_OPERATORS):
        number = node.meta.get(DUCKDB_ARITHMETIC)
        if number is None:
            continue
        if isinstance(node, exp.Sub) and _is_date(node.this) and _is_date(node.expression):
            day_counts.add(int(number))
            continue
        if computed_in_float((node.this, node.expression)):
            in_float[int(number)] = (operand_kind(node.this) != "float", operand_kind(node.expression) != "float")
            continue
        duckdbs = duckdb_decimal_type(node)
        if duckdbs is not None and duckdbs != spark_decimal_type(node):
            casts[int(number)] = duckdbs
        integer = duckdb_integer_operation(node)
        if integer is not None:
            integers[int(number)] = integer
        if integer is not None and integer.result.narrow:
            checks[int(number)] = (integer.result, compared_as(node, integer.result))
        elif integer is not None and integer.of_narrow_columns:  # Spark's type may be narrower than DuckDB's
            casts[int(number)] = exp.DataType.build(integer.result.spark)
    wrapped = {  # -x of an unsigned x: DuckDB wraps it around in x's type (-255::UTINYINT is 1)
        int(number): unsigned
        for node in typed.find_all(exp.Neg)
        if (number := node.meta.get(DUCKDB_ARITHMETIC)) is not None
        and (unsigned := integer_type(node.this.type)) is not None
        and unsigned.low == 0
    }
    # first, as DuckDB's optimizer does before anything is computed: i8 + 100 > 0 compares i8 > -100
    for comparison in reversed(list(tree.find_all(*MOVABLE_COMPARISONS))):
        moved = moved_constants(comparison, lambda node: integers.get(node.meta.get(DUCKDB_ARITHMETIC, 0)))
        if moved is not comparison:
            comparison.replace(moved)
    # innermost first: an operator's rewrite copies its operands, which must hold their own rewrites by then
    for operator in reversed(list(tree.find_all(*_OPERATORS, exp.Neg))):
        number = operator.meta.get(DUCKDB_ARITHMETIC, 0)
        if isinstance(operator, exp.Neg):
            if number in wrapped:
                operator.replace(negated_unsigned(operator.this, wrapped[number]))
            continue
        if number in day_counts:
            operator.replace(
                spark_expression("CAST(DATEDIFF(_a, _b) AS BIGINT)", _a=operator.this, _b=operator.expression)
            )
            continue
        for key, to_float in zip(("this", "expression"), in_float.get(number, ()), strict=False):
            if to_float:
                operator.set(key, exp.Cast(this=operator.args[key].copy(), to=exp.DataType.build("float")))
        to = casts.get(number)
        if to is not None:
            operator.replace(exp.Cast(this=operator.copy(), to=to.copy()))
        elif number in checks:
            operator.replace(checked(operator, *checks[number]))
    return tree


def _a_condition(node: exp.Expr) -> bool:
    """Whether ``node`` is a whole condition: of ``WHERE``, ``HAVING``, ``QUALIFY``, a ``CASE WHEN``, ``IF`` or a
    join's ``ON`` (a bare ``NULL`` there is false in DuckDB, a type error in Spark)."""
    parent, key = node.parent, node.arg_key
    return (isinstance(parent, (exp.Where, exp.Having, exp.Qualify, exp.If)) and key == "this") or (
        isinstance(parent, exp.Join) and key == "on"
    )


def _is_date(node: exp.Expr) -> bool:
    return node.type is not None and node.type.is_type(exp.DataType.Type.DATE)


def _blob_literal(text: str, lenient: bool) -> exp.Expr:
    r"""DuckDB's cast of a string literal to ``BLOB``: ASCII characters as their bytes and ``\xHH`` as the byte
    HH (``'\xAA\x00'::BLOB`` is two bytes, where Spark's cast gives the eight characters' bytes); anything else
    fails the statement with DuckDB's message (``NULL`` for ``TRY_CAST``).

    >>> _blob_literal("\\xAA\\x00A", lenient=False).sql("spark")
    "X'AA0041'"
    >>> _blob_literal("é", lenient=True).sql("spark")
    'NULL'
    """
    try:
        data = blob_from_text(text)
    except ValueError as exc:
        return exp.Null() if lenient else raise_error(f"Conversion Error: {exc}")
    return exp.HexString(this=data.hex().upper())


def has_markers(sql: str) -> bool:
    lowered = sql.lower()
    return any(marker in lowered for marker in MARKERS)


def spark_schema_of(frame: Any) -> dict[str, str]:
    """``{column: spark type}`` of a DataFrame, as :func:`resolve` takes it for each view (over Spark Connect, a
    round trip: Spark analyses the frame)."""
    return named_types(frame.schema)


def named_types(struct: Any) -> dict[str, str]:
    """``{column: spark type}`` of a Spark ``StructType``."""
    return {f.name: f.dataType.simpleString() for f in struct.fields}


def resolve(
    sql: str, schemas: Mapping[str, Mapping[str, str]], lake_types: Mapping[str, Mapping[str, str]] | None = None
) -> str:
    """Replace the markers in Spark SQL ``sql`` by DuckDB's semantics for their operands' types.

    :param schemas: ``{view: {column: spark type}}`` of the views the statement reads.
    :param lake_types: ``{view: {column: DuckLake type}}`` of their columns of an unsigned integer type (Spark
        reads ``uint8`` as ``smallint``), which DuckDB's arithmetic of them depends on.

    >>> resolve("SELECT __LH_CAST(d, 'INT', FALSE, 1) FROM v", {"v": {"d": "decimal(5,1)"}})
    'SELECT CAST(ROUND(d) AS INT) FROM v'
    >>> resolve("SELECT __LH_INT_DIV(a, b, 1) FROM v", {"v": {"a": "int", "b": "int"}})
    'SELECT CAST(CASE WHEN b = 0 THEN NULL ELSE a DIV b END AS INT) FROM v'
    >>> resolve("SELECT * FROM v WHERE g > __LH_TYPED('literal_as', 0.1, g, 1)", {"v": {"g": "float"}})
    'SELECT * FROM v WHERE g > CAST(0.1 AS FLOAT)'
    """
    tree, arithmetic = _operators_of_markers(parse_spark(sql))
    if may_have_star_expressions(sql):  # first: the columns they stand for have markers of their own types
        tree = star_expressions_written_out(tree, schemas)
    tree, operands_together = unwrapped(tree)
    tree = _resolve_markers(tree, schemas)
    if has_set_operation(sql):  # once its inputs' types are known; its to_text markers are resolved in turn
        if has_union_by_name(tree):
            tree = unions_by_position(tree, schemas)
        tree = _resolve_markers(text_where_duckdb_unites_with_text(tree, schemas), schemas)
    if arithmetic:  # last, so that it sees the operands' resolved types (sum(x) * 2)
        tree = _duckdb_arithmetic(tree, _with_unsigned_types(schemas, lake_types or {}))
    if operands_together and may_meet_a_float(sql, schemas):  # after arithmetic, which may make FLOATs
        tree = floats_as_duckdb(tree, schemas)
    return spark_text(_exact_log10(tree), duckdb_operators=True)  # markers come from DuckDB SQL only


def _resolve_markers(tree: exp.Expr, schemas: Mapping[str, Mapping[str, str]]) -> exp.Expr:
    """Innermost markers first, and the types inferred again after each round: a marker's operand may be another
    marker (CAST(1.5::FLOAT AS INTEGER)), whose type is known only once it is resolved."""
    while innermost := [
        m for m in _markers(tree) if not any(_is_marker(d) for d in m.find_all(exp.Anonymous) if d is not m)
    ]:
        categories = _marker_operand_categories(tree, schemas)
        for marker in innermost:
            resolved = _resolve_marker(marker, categories.get(int(marker.expressions[-1].name), ()))
            replaced, resolved = _with_its_aggregate_clauses(marker, resolved)
            if replaced is tree:
                tree = resolved
            else:
                replaced.replace(resolved)
    return tree


def duckdb_output_types(
    sql: str, schemas: Mapping[str, Mapping[str, str]], lake_types: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, str]:
    """The DuckLake type DuckDB gives each output column of the planned query ``sql`` whose Spark type would store
    another, for a ``CREATE TABLE ... AS``: a ``sum`` of integers or booleans (also under ``FILTER`` or ``OVER``)
    is a ``HUGEINT`` (``int128``; Spark's ``BIGINT`` or ``DECIMAL(38, 0)``), arithmetic or a cast whose DuckDB type
    is unsigned keeps it (``u8 + 1`` is a ``UTINYINT``, Spark's ``SMALLINT``). Columns passed through unchanged keep
    their type by their metadata (:mod:`.source_types`). The statement is parsed and typed once.

    :param lake_types: as for :func:`resolve`: a ``UBIGINT`` or ``HUGEINT`` column, which Spark reads as a
        ``DECIMAL``, sums into a ``HUGEINT`` too (a ``UHUGEINT`` into a ``DOUBLE``, kept as Spark's ``DECIMAL``).

    >>> duckdb_output_types("SELECT __LH_ARITH('+', u, 1, 1) AS a, __LH_CAST(i, 'USMALLINT', FALSE, 2) AS b, "
    ...                     "__LH_ARITH('+', i, 1, 3) AS c FROM v", {"v": {"u": "smallint", "i": "int"}},
    ...                     {"v": {"u": "uint8"}})
    {'a': 'uint8', 'b': 'uint16'}
    >>> duckdb_output_types("SELECT k, __LH_TYPED('sum', i, 1) AS total, __LH_TYPED('sum', d, 2) AS d, "
    ...                     "__LH_TYPED('sum', u, 3) AS u FROM v",
    ...                     {"v": {"k": "int", "i": "int", "d": "decimal(10,0)", "u": "decimal(20,0)"}},
    ...                     {"v": {"u": "uint64"}})
    {'total': 'int128', 'u': 'int128'}
    """
    lowered = sql.lower()
    if ARITHMETIC not in lowered and CAST not in lowered and "'sum'" not in lowered:
        return {}
    tree, _ = _operators_of_markers(parse_spark(sql))
    if not isinstance(tree, exp.Select):
        return {}
    typed_schemas = _with_unsigned_types(schemas, lake_types or {})
    for view, columns in (lake_types or {}).items():
        for name, kind in columns.items():
            if kind == "int128" and view in typed_schemas:
                typed_schemas[view][name] = exp.DataType(this=exp.DataType.Type.INT128)
    typed = typed_copy(tree, typed_schemas, spark_expression_metadata(duckdb_arithmetic=True))
    unsigned = {kind: lake_type for lake_type, kind in LAKE_TYPES.items()}
    found: dict[str, str] = {}
    for projection in typed.expressions if typed is not None else ():
        inner = aggregate = projection.unalias()
        while isinstance(aggregate, (exp.Window, exp.Filter)):
            aggregate = aggregate.this
        if _is_marker(aggregate) and aggregate.name.lower() == TYPED and aggregate.expressions[0].name.lower() == "sum":
            operand = aggregate.expressions[1]
            if _category(operand, operand.type) == "integer":  # booleans too
                found[projection.alias_or_name] = "int128"
            continue
        if isinstance(inner, exp.Column):
            continue
        dtype = inner.type
        if _is_marker(inner) and inner.name.lower() == CAST:
            dtype = exp.DataType.build(inner.expressions[1].name, dialect="duckdb")
            if dtype.is_type(exp.DataType.Type.TIME):  # Spark's text of a time (see time_text)
                found[projection.alias_or_name] = "time"
                continue
        if dtype is not None and dtype.this in unsigned:
            found[projection.alias_or_name] = unsigned[dtype.this]
    return found


def _exact_log10(tree: exp.Expr) -> exp.Expr:
    """sqlglot reads Spark's ``LOG10(x)`` as ``LOG(10, x)``, which Spark computes as a quotient of natural
    logarithms (``LOG(10, 0.1)`` is -0.9999999999999998): write the exact function back."""

    def exact(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Log) and node.expression is not None and _is_ten(node.this):
            return exp.Anonymous(this="LOG10", expressions=[node.expression.copy()])
        return node

    return bottom_up(tree, exact)


def _is_ten(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_number and node.name == "10"


def _is_marker(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() in MARKERS


def _markers(tree: exp.Expr) -> list[exp.Anonymous]:
    return [node for node in tree.find_all(exp.Anonymous) if _is_marker(node)]


def _with_its_aggregate_clauses(marker: exp.Expr, resolved: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
    """The node to replace and its replacement, for a marker of an aggregate under ``FILTER`` or ``OVER``.

    An aggregate marker may resolve to an expression over several aggregates (``avg`` of a DECIMAL is a sum over
    a count), which cannot take the clauses: each aggregate in it gets them instead, and the whole clause is
    replaced. ``sum(b) FILTER (WHERE id > 1)`` becomes ``... SUM(...) FILTER (WHERE id > 1) ...``.
    """
    clauses: list[exp.Expr] = []
    node = marker
    while isinstance(node.parent, (exp.Filter, exp.Window)) and node.parent.this is node:
        node = node.parent
        clauses.append(node)
    if not clauses or isinstance(resolved, exp.AggFunc):
        return marker, resolved
    outermost = [
        a for a in resolved.find_all(exp.AggFunc) if not isinstance(a.parent_select, exp.Select) and _outermost(a)
    ]
    for aggregate in outermost:
        wrapped: exp.Expr = aggregate.copy()
        for clause in clauses:  # innermost first: FILTER inside OVER
            copy = clause.copy()
            copy.set("this", wrapped)
            wrapped = copy
        aggregate.replace(wrapped)
    return node, resolved


def _outermost(aggregate: exp.Expr) -> bool:
    parent = aggregate.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            return False
        parent = parent.parent
    return True


def _resolve_marker(node: exp.Anonymous, operands: tuple[Operand, ...]) -> exp.Expr:
    args = node.expressions
    if node.name.lower() == INT_DIV:
        return _int_div(args[0], args[1], operands)
    if node.name.lower() == TYPED:
        if args[0].name == "divide":
            if in_float(operands):
                return _float_division(_ieee_division, args[1], args[2], operands)
            return _ieee_division(args[1], args[2])
        return resolve_typed(args[0].name, args[1:-1], operands)
    category, dtype = operands[0] if operands else ("unknown", None)
    if args[1].name.upper() in _UNSIGNED:
        return _unsigned_cast(args[0], args[1].name.upper(), bool(args[2].this), category, dtype)
    if args[1].name.upper() == "TIME":
        return time_text(args[0], bool(args[2].this), dtype)
    target = exp.DataType.build(args[1].name, dialect="spark")
    return _cast(args[0], target, bool(args[2].this), category)


def time_text(x: exp.Expr, safe: bool, dtype: exp.DataType | None) -> exp.Expr:
    """DuckDB's ``CAST(x AS TIME)`` on Spark, which has no time type: the text a lake ``TIME`` column holds there
    (``HH:MM:SS``, then ``.ffffff`` when there are microseconds; see :mod:`.source_types`), so that it compares
    with such columns and a ``CREATE TABLE ... AS`` stores a ``TIME`` (:func:`duckdb_output_types`). A timestamp
    gives its time of day; text is read as a time of day as DuckDB reads it (``'10:00'``, ``' 10:00:00.5 '``), and
    text that is no time fails (``TRY_CAST``: NULL).

    >>> time_text(exp.column("s"), False, exp.DataType.build("string")).sql("spark")[:60]
    "CASE WHEN DATE_FORMAT(CAST(CONCAT('1970-01-01 ', TRIM(CAST(s"
    """
    if dtype is not None and dtype.is_type(*TIMESTAMP_TYPES):
        moment: exp.Expr = x.copy()
    else:
        parse = "TRY_TO_TIMESTAMP" if safe else "TO_TIMESTAMP"
        moment = spark_expression(f"{parse}(CONCAT('1970-01-01 ', TRIM(CAST(_x AS STRING))))", _x=x)
    return spark_expression(
        "CASE WHEN DATE_FORMAT(_t, 'SSSSSS') = '000000' THEN DATE_FORMAT(_t, 'HH:mm:ss') "
        "ELSE DATE_FORMAT(_t, 'HH:mm:ss.SSSSSS') END",
        _t=moment,
    )


#: DuckDB's unsigned integer types: the Spark type that holds each (as the lake's columns are read), its largest
#: value, and DuckDB's name of it in errors
_UNSIGNED = {
    "UTINYINT": ("smallint", 2**8 - 1, "UINT8"),
    "USMALLINT": ("int", 2**16 - 1, "UINT16"),
    "UINTEGER": ("bigint", 2**32 - 1, "UINT32"),
    "UINT": ("bigint", 2**32 - 1, "UINT32"),
    "UBIGINT": ("decimal(20, 0)", 2**64 - 1, "UINT64"),
}
_UNSIGNED_TYPES = {
    exp.DataType.Type.UTINYINT,
    exp.DataType.Type.USMALLINT,
    exp.DataType.Type.UINT,
    exp.DataType.Type.UBIGINT,
}
#: cast targets whose marker keeps DuckDB's name of the type
_DUCKDB_NAMED = {*_UNSIGNED_TYPES, exp.DataType.Type.TIME}
#: DuckDB's names of the integer types it names in an out-of-range cast's error
_DUCKDB_INTEGER_NAMES = {"tinyint": "INT8", "smallint": "INT16", "int": "INT32", "bigint": "INT64"}


def _number_literal(node: exp.Expression) -> bool:
    """A number written without an exponent (possibly negated or in parentheses)."""
    while isinstance(node, (exp.Paren, exp.Neg)):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string and "e" not in node.name.lower()


def _unsigned_cast(x: exp.Expression, target: str, safe: bool, category: str, dtype: exp.DataType | None) -> exp.Expr:
    """DuckDB's cast to an unsigned integer type, which Spark lacks, into the Spark type that holds the lake's
    column of that type. A decimal or an integer rounds half away from zero and must then fit; text must not be
    negative (``'-0'`` is 0); a float must lie in [0, 2^bits) before it rounds half to even, and DuckDB then keeps
    the low bits (``255.5::DOUBLE::UTINYINT`` is 0 in DuckDB 1.5.5). Out of range it fails with DuckDB's error;
    ``TRY_CAST`` gives NULL."""
    spark_type, largest, duckdb_name = _UNSIGNED[target]
    if category == "float" and _number_literal(x):  # DuckDB reads -0.4 as a DECIMAL, not a DOUBLE
        category = "decimal"
    literal = int_literal(x)
    if literal is not None:  # DuckDB types an integer literal by its value
        source: str | None = "INT32" if -(2**31) <= literal < 2**31 else "INT64"
    elif category == "float":
        source = "FLOAT" if dtype is not None and dtype.is_type(exp.DataType.Type.FLOAT) else "DOUBLE"
    else:
        source = _DUCKDB_INTEGER_NAMES.get(dtype.sql("spark").lower()) if dtype is not None else None
    if category == "string":
        message = spark_expression(
            "CONCAT(_open, _x, _close)",
            _open=exp.Literal.string("Conversion Error: Could not convert string '"),
            _x=x,
            _close=exp.Literal.string(f"' to {duckdb_name}"),
        )
    elif source is not None:
        message = spark_expression(
            f"CONCAT('Conversion Error: Type {source} with value ', CAST(_x AS STRING), _m)",
            _x=x,
            _m=exp.Literal.string(
                f" can't be cast because the value is out of range for the destination type {duckdb_name}"
            ),
        )
    else:
        message = spark_expression(
            "CONCAT('Conversion Error: Could not convert ', CAST(_x AS STRING), _m)",
            _x=x,
            _m=exp.Literal.string(f" to {duckdb_name}: the value is out of range"),
        )
    fail: exp.Expr = exp.Null() if safe else exp.Anonymous(this="RAISE_ERROR", expressions=[message])
    if category == "float":
        return spark_expression(
            f"CASE WHEN _x IS NULL THEN CAST(NULL AS {spark_type}) "
            f"WHEN ISNAN(_x) OR _x < 0 OR _x >= CAST({largest + 1} AS DOUBLE) THEN _fail "
            f"ELSE CAST(CAST(BROUND(_x) AS DECIMAL(38, 0)) % {largest + 1} AS {spark_type}) END",
            _x=x,
            _fail=fail,
        )
    if category == "string":
        number = _cast(x, exp.DataType.build("decimal(38, 18)"), safe, category)
        whole: exp.Expr = exp.Round(this=number)
        negative: exp.Expr = spark_expression("_n < 0", _n=number)
    else:
        whole = _cast(x, exp.DataType.build("decimal(38, 0)"), safe, category)
        negative = spark_expression("_w < 0", _w=whole)
    return spark_expression(
        f"CASE WHEN _w IS NULL THEN CAST(NULL AS {spark_type}) WHEN _neg OR _w > {largest} THEN _fail "
        f"ELSE CAST(_w AS {spark_type}) END",
        _w=whole,
        _neg=negative,
        _fail=fail,
    )


def _marker_operand_categories(
    tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]]
) -> dict[int, tuple[Operand, ...]]:
    """Marker id -> the type categories of its operands, inferred on a qualified copy (the statement itself is
    not qualified, which would rename its output columns)."""
    typed = typed_copy(tree, schemas, spark_expression_metadata())
    if typed is None:  # a statement sqlglot cannot qualify keeps Spark's plain forms
        return {}
    found: dict[int, tuple[tuple[str, exp.DataType | None], ...]] = {}
    for node in typed.find_all(exp.Anonymous):
        if node.name.lower() in MARKERS:
            name = node.name.lower()
            operands = (
                node.expressions[:2]
                if name == INT_DIV
                else node.expressions[1:-1]
                if name == TYPED
                else node.expressions[:1]
            )
            found[int(node.expressions[-1].name)] = tuple((_category(o, o.type), o.type) for o in operands)
    return found


# -- the rewrites --------------------------------------------------------------------------------
def _double(node: exp.Expr) -> exp.Expression:
    return exp.Cast(this=node.copy(), to=_DOUBLE.copy())


def _ieee_division(a: exp.Expr, b: exp.Expr) -> exp.Expression:
    """DuckDB's ``/``: double division; a zero divisor gives ``a * inf`` (``inf``, ``-inf`` or ``nan``)."""
    infinity = exp.Cast(this=exp.Literal.string("Infinity"), to=_DOUBLE.copy())
    zero = exp.EQ(this=_double(b), expression=exp.Literal.number(0))
    return exp.Case(
        ifs=[exp.If(this=zero, true=exp.Mul(this=_double(a), expression=infinity))],
        default=exp.Div(this=_double(a), expression=_double(b)),
    )


def _double_division_or_null(a: exp.Expr, b: exp.Expr) -> exp.Expression:
    """DuckDB's ``//`` of non-integers: double division, NULL for a zero divisor."""
    return _null_if_zero(_double(b), exp.Div(this=_double(a), expression=_double(b)))


def _float_division(
    divide: Callable[[exp.Expr, exp.Expr], exp.Expression], a: exp.Expr, b: exp.Expr, operands: tuple[Operand, ...]
) -> exp.Expression:
    """``divide`` as DuckDB divides a FLOAT by anything no wider: the other operand cast to FLOAT first, the
    quotient a FLOAT (a DOUBLE division of two FLOATs rounded once to FLOAT is exactly FLOAT division)."""
    left, right = (as_float(x, category) for x, (category, _) in zip((a, b), operands, strict=True))
    return exp.Cast(this=divide(left, right), to=exp.DataType.build("float"))


def _null_if_zero(divisor: exp.Expr, value: exp.Expr) -> exp.Expression:
    zero = exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=zero, true=exp.Null())], default=value)


def _category(node: exp.Expression, dtype: exp.DataType | None) -> str:
    """integer / decimal / float / string / other / unknown, for the operand ``node`` typed ``dtype``.

    sqlglot types a literal ``2.5`` as DOUBLE where DuckDB and Spark read DECIMAL, and a CASE that mixes DOUBLE
    and DECIMAL branches as DECIMAL where both engines make it DOUBLE: those are decided here.
    """
    inner = node
    while isinstance(inner, (exp.Neg, exp.Paren)):  # (-2.5) is a DECIMAL literal too
        inner = inner.this
    if isinstance(inner, exp.Literal) and inner.is_number:
        return "decimal" if "." in inner.name and "e" not in inner.name.lower() else _type_category(dtype)
    if isinstance(inner, (exp.Case, exp.If, exp.Coalesce)):
        kinds = {_category(v, v.type) for v in _branches(inner) if not isinstance(v, exp.Null)}
        for kind in ("float", "decimal", "integer", "string"):  # the common type both engines choose
            if kind in kinds:
                return kind
    return _type_category(dtype)


def _branches(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Case):
        return [i.args["true"] for i in node.args.get("ifs") or []] + (
            [node.args["default"]] if node.args.get("default") else []
        )
    if isinstance(node, exp.If):
        return [node.args["true"]] + ([node.args["false"]] if node.args.get("false") else [])
    return [node.this, *node.expressions]


def _type_category(dtype: exp.DataType | None) -> str:
    if dtype is None or dtype.is_type(exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
        return "unknown"
    if dtype.is_type(*exp.DataType.INTEGER_TYPES) or dtype.is_type(exp.DataType.Type.BOOLEAN):
        return "integer"
    if dtype.is_type(exp.DataType.Type.DECIMAL):
        return "decimal"
    if dtype.is_type(*exp.DataType.REAL_TYPES):
        return "float"
    if dtype.is_type(*exp.DataType.TEXT_TYPES):
        return "string"
    return "other"


def _is_integer(dtype: exp.DataType) -> bool:
    return dtype.is_type(*exp.DataType.INTEGER_TYPES)


def _int_div(a: exp.Expr, b: exp.Expr, operands: tuple[Operand, ...]) -> exp.Expr:
    categories = {category for category, _ in operands} or {"unknown"}
    if not categories <= {"integer", "unknown"}:  # a decimal or double operand: DuckDB divides as doubles
        if in_float(operands):
            return _float_division(_double_division_or_null, a, b, operands)
        return _double_division_or_null(a, b)
    division = _null_if_zero(b, exp.IntDiv(this=a.copy(), expression=b.copy()))
    types = [t for _, t in operands if t is not None and t.is_type(*_INTEGER_WIDTH)]
    if len(types) == 2:  # Spark's DIV is always BIGINT; DuckDB keeps the operands' (wider) integer type
        return exp.Cast(this=division, to=max(types, key=lambda t: _INTEGER_WIDTH[t.this]).copy())
    return division


_INTEGER_WIDTH = {
    exp.DataType.Type.TINYINT: 1,
    exp.DataType.Type.SMALLINT: 2,
    exp.DataType.Type.INT: 4,
    exp.DataType.Type.BIGINT: 8,
}


def _cast(x: exp.Expression, target: exp.DataType, safe: bool, category: str) -> exp.Expression:
    def cast(this: exp.Expression, to: exp.DataType) -> exp.Expression:
        return exp.TryCast(this=this, to=to, safe=True) if safe else exp.Cast(this=this, to=to)

    if target.is_type(exp.DataType.Type.DECIMAL):
        if category != "float" or safe:  # Spark's TRY_CAST of NaN is NULL, as DuckDB's
            return cast(x.copy(), target)
        # Spark casts NaN and infinities to NULL, where DuckDB fails
        not_finite = spark_expression("ISNAN(_x) OR ABS(_x) = CAST('Infinity' AS DOUBLE)", _x=x)
        failure = raise_error(f"Conversion Error: Could not cast value NaN or Infinity to {target.sql('duckdb')}")
        return exp.Case(ifs=[exp.If(this=not_finite, true=failure)], default=cast(x.copy(), target))
    if target.is_type(exp.DataType.Type.DATE):
        if category == "string":  # DuckDB takes '2024-01-01 10:00:00' as a date; Spark's date cast does not
            return cast(cast(x.copy(), exp.DataType.build("timestamp")), target)
        return cast(x.copy(), target)
    if category == "decimal":
        rounded: exp.Expression = exp.Round(this=x.copy())
    elif category == "float":
        rounded = exp.Anonymous(this="BROUND", expressions=[x.copy()])
    elif category == "string":
        # numeric text rounds as a decimal does ('2.5' -> 3); 38 digits with 18 decimals hold any BIGINT
        rounded = exp.Round(this=cast(x.copy(), exp.DataType.build("decimal(38, 18)")))
    else:
        rounded = x.copy()
    return cast(rounded, target)
