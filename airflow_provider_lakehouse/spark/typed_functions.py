"""The Spark form of DuckDB functions whose result depends on their operands' types (pure: sqlglot only).

The planner writes such a function as a :func:`~.rewriting.typed_call` marker; the driver knows the types of the
views a statement reads and replaces each marker with :func:`resolve_typed` (see ``.semantics.resolve``).
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.decimal_types import (
    EXACT_SCALING_DIGITS,
    duckdb_digits,
    float_only,
    precision_and_scale,
)
from airflow_provider_lakehouse.spark.json_text import duckdb_json
from airflow_provider_lakehouse.spark.list_aggregates import resolve_list_average, resolve_list_sum
from airflow_provider_lakehouse.spark.moments import KINDS as MOMENTS
from airflow_provider_lakehouse.spark.moments import duckdb_moment
from airflow_provider_lakehouse.spark.nested_text import duckdb_nested_text, is_nested
from airflow_provider_lakehouse.spark.quantiles import continuous_quantile, discrete_quantile
from airflow_provider_lakehouse.spark.rewriting import int_literal, spark_expression
from airflow_provider_lakehouse.spark.top_values import KINDS as TOP_VALUES
from airflow_provider_lakehouse.spark.top_values import top_values
from airflow_provider_lakehouse.spark.value_counts import KINDS as VALUE_COUNTS
from airflow_provider_lakehouse.spark.value_counts import value_count_aggregate


def duckdb_element(container: exp.Expr, index: exp.Expr) -> exp.Expr:
    """DuckDB's ``l[i]``: 1-based, negative from the end, NULL when out of range or 0."""
    if (value := int_literal(index)) is not None:
        if value == 0:
            return exp.Null()
        # parsed, not built: sqlglot then types it as the list's element (a string's s[i] around it is typed so)
        return spark_expression("TRY_ELEMENT_AT(_l, _i)", _l=container, _i=index)
    return spark_expression("CASE WHEN _i = 0 THEN NULL ELSE TRY_ELEMENT_AT(_l, _i) END", _l=container, _i=index)


Operand = tuple[str, "exp.DataType | None"]  # (category: integer/decimal/float/string/other/unknown, type)

_FLOAT = exp.DataType.Type.FLOAT


def in_float(operands: tuple[Operand, ...]) -> bool:
    """Whether DuckDB computes over ``operands`` in FLOAT: one is a FLOAT (single precision) and none is wider than
    FLOAT (the others integers or DECIMALs, which DuckDB casts to FLOAT; a DOUBLE makes it DOUBLE). Spark widens a
    FLOAT with a DECIMAL to DOUBLE, and the provider's ``/`` divides DOUBLEs."""
    return float_only({_precision(category, dtype) for category, dtype in operands})


def as_float(node: exp.Expr, category: str) -> exp.Expr:
    """``node`` cast to FLOAT when it is a DECIMAL or an integer: DuckDB's operand of a FLOAT operation (Spark in
    ANSI mode widens both to DOUBLE)."""
    if category in ("decimal", "integer"):
        return exp.Cast(this=node.copy(), to=exp.DataType.build("float"))
    return node.copy()


def _as_whole_decimal(result: exp.Expr, operand: exp.Expr, dtype: exp.DataType | None) -> exp.Expr:
    """``result``, ``floor``, ``ceil`` or ``trunc`` of ``operand``, in DuckDB's type for a DECIMAL(p, s) operand:
    DECIMAL(p, 0) (Spark's floor is a DECIMAL(p - s + 1, 0), its ``x - x % 1`` keeps the scale).

    Not for an arithmetic operand: its DuckDB type is set after the markers (``semantics.resolve``), and
    ``dtype`` is Spark's (``i * 1.25`` is a DECIMAL(14, 2) there, DuckDB's DECIMAL(13, 2))."""
    digits = duckdb_digits(operand, dtype)
    inner = operand.this if isinstance(operand, exp.Paren) else operand
    if digits is None or not digits[2] or isinstance(inner, exp.Binary):
        return result
    return exp.Cast(this=result, to=exp.DataType.build(f"DECIMAL({digits[0]}, 0)"))


def signed_zero(result: exp.Expr, operand: exp.Expr, spark_type: str = "double") -> exp.Expr:
    """``result``, a rounding of the floating-point ``operand``, with a zero signed as the operand: DuckDB rounds
    with C's functions, whose zero keeps the sign (``round(-0.4)`` and ``ceil(-0.5)`` are -0.0, which DuckDB
    stores and prints as such); Spark's go through BIGINT or BigDecimal, which have no -0.0."""
    return spark_expression(
        f"CASE WHEN _r = 0 THEN CAST(SIGNUM(_x) * 0.0D AS {spark_type.upper()}) ELSE _r END", _r=result, _x=operand
    )


def _precision(category: str, dtype: exp.DataType | None) -> str:
    if category == "float":
        return "float" if dtype is not None and dtype.is_type(_FLOAT) else "double"
    return category


def duckdb_list_contains(container: exp.Expr, value: exp.Expr) -> exp.Expr:
    """DuckDB's ``list_contains``: false when the value is not in a list that holds a NULL (Spark: NULL); NULL
    for a NULL value (Spark refuses a NULL literal there)."""
    if isinstance(value, exp.Null):
        return exp.cast(exp.null(), "boolean")
    return spark_expression(
        "CASE WHEN _l IS NULL OR _x IS NULL THEN NULL ELSE COALESCE(ARRAY_CONTAINS(_l, _x), FALSE) END",
        _l=container,
        _x=value,
    )


def resolve_typed(kind: str, args: list[exp.Expr], operands: tuple[Operand, ...]) -> exp.Expr:
    """The Spark form of a :func:`typed_call` marker, given its operands' categories and types (empty when they
    could not be inferred)."""
    category = operands[0][0] if operands else "unknown"
    dtype = operands[0][1] if operands else None
    if kind == "naive":  # (value, operand): DuckDB keeps a TIMESTAMPTZ operand's type, makes any other a TIMESTAMP
        operand_type = operands[1][1] if len(operands) > 1 else None
        zoned = operand_type is not None and operand_type.is_type(
            exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ
        )
        return args[0].copy() if zoned else exp.Cast(this=args[0].copy(), to=exp.DataType.build("timestamp_ntz"))
    if kind == "element":
        if category == "string":  # DuckDB's s[i]: the i-th character, '' out of range or at 0
            return spark_expression(
                "CASE WHEN _s IS NULL THEN NULL WHEN _i = 0 THEN '' ELSE SUBSTRING(_s, _i, 1) END",
                _s=args[0],
                _i=args[1],
            )
        if dtype is not None and dtype.is_type(exp.DataType.Type.MAP):  # a key, not a position
            return exp.Anonymous(this="TRY_ELEMENT_AT", expressions=[args[0].copy(), args[1].copy()])
        if dtype is not None and dtype.is_type(exp.DataType.Type.ARRAY) and int_literal(args[1]) is None:
            # Spark takes an INT position only; a BIGINT beyond it is out of range, so NULL as in DuckDB
            return duckdb_element(args[0], exp.TryCast(this=args[1].copy(), to=exp.DataType.build("int"), safe=True))
        return duckdb_element(args[0], args[1])
    if kind == "slice":
        return _slice(args[0], args[1], args[2], text=category == "string")
    if kind == "length":  # a BIGINT in DuckDB, of a string or a list
        counted = "LENGTH(_l)" if category in ("string", "unknown") else "SIZE(_l)"
        return spark_expression(f"CAST({counted} AS BIGINT)", _l=args[0])
    if kind == "bit_count":  # a TINYINT in DuckDB, of the operand's own width (Spark counts a negative INT in 64 bits)
        bits = _bits(dtype)
        operand = args[0].copy() if bits in (None, 64) else spark_expression(f"_x & {2**bits - 1}", _x=args[0])
        return exp.Cast(this=exp.Anonymous(this="BIT_COUNT", expressions=[operand]), to=exp.DataType.build("tinyint"))
    if kind == "round_even":  # half to even, as Spark's BROUND; a DOUBLE in DuckDB unless the operand is a FLOAT
        half_even = exp.Anonymous(this="BROUND", expressions=[a.copy() for a in args])
        if dtype is not None and dtype.is_type(exp.DataType.Type.FLOAT):
            return signed_zero(half_even, args[0], "float")
        double = exp.Cast(this=half_even, to=exp.DataType.build("double"))
        return signed_zero(double, args[0]) if category == "float" else double
    if kind == "contains":  # DuckDB's contains of a list is list_contains
        if dtype is not None and dtype.is_type(exp.DataType.Type.ARRAY):
            return duckdb_list_contains(args[0], args[1])
        return exp.Anonymous(this="CONTAINS", expressions=[args[0].copy(), args[1].copy()])
    if kind in MOMENTS:
        return duckdb_moment(kind, args[0])
    if kind in VALUE_COUNTS:
        return value_count_aggregate(kind, args[0])
    if kind in TOP_VALUES:
        return top_values(kind, args)
    if kind == "avg":
        return _decimal_average(args[0], dtype) if category == "decimal" else exp.Avg(this=args[0].copy())
    if kind == "quantile_disc":  # (value, fraction, descending)
        return discrete_quantile(args[0], args[1], bool(args[2].this))
    if kind == "quantile_cont":
        return continuous_quantile(args[0], args[1], bool(args[2].this), category, dtype)
    if kind == "list_sum":
        return resolve_list_sum(args[0], dtype)
    if kind == "list_avg":
        return resolve_list_average(args[0], dtype)
    if kind == "sum":  # DuckDB sums BIGINT into a 128-bit integer: no overflow
        if dtype is not None and dtype.is_type(exp.DataType.Type.BOOLEAN):  # DuckDB counts the trues; Spark refuses
            return exp.Sum(this=exp.Cast(this=args[0].copy(), to=exp.DataType.build("INT")))
        if dtype is not None and dtype.is_type(exp.DataType.Type.BIGINT):
            # Summed as two BIGINTs, the high and the low 32 bits, and joined once per group: exact, where a
            # DECIMAL(38, 0) sum of every row takes Java's BigDecimal (about 3 times slower, measured)
            return spark_expression(
                "CAST(CAST(SUM(SHIFTRIGHT(_x, 32)) AS DECIMAL(38, 0)) * 4294967296 + SUM(_x & 4294967295) "
                "AS DECIMAL(38, 0))",
                _x=args[0],
            )
        decimal = precision_and_scale(dtype)
        if decimal is not None:
            # DuckDB's sum of a DECIMAL(p, s) is a DECIMAL(38, s); Spark's a DECIMAL(p + 10, s), summed as
            # fast (64-bit integers up to 18 digits) and cast once per group
            return exp.Cast(this=exp.Sum(this=args[0].copy()), to=exp.DataType.build(f"DECIMAL(38, {decimal[1]})"))
        return exp.Sum(this=args[0].copy())
    if kind == "literal_as":  # (literal, what it is compared with): a FLOAT against a FLOAT, as DuckDB compares
        other = operands[1][1] if len(operands) > 1 else None
        if other is not None and other.is_type(_FLOAT):
            return exp.Cast(this=args[0].copy(), to=exp.DataType.build("float"))
        return args[0].copy()
    if kind == "mod":  # NULL for a zero divisor, NaN when either operand is a DOUBLE or FLOAT
        floats = any(c == "float" for c, _ in operands)
        single = in_float(operands)  # FLOAT % DECIMAL is a FLOAT in DuckDB (Spark: DOUBLE)
        left, right = args[0].copy(), args[1].copy()
        if single:
            left, right = (as_float(a, c) for a, (c, _) in zip(args[:2], operands, strict=True))
        nan = "FLOAT" if single else "DOUBLE"
        zero = spark_expression(f"IF(_a IS NULL, NULL, CAST('NaN' AS {nan}))", _a=left) if floats else exp.Null()
        remainder = exp.Case(
            ifs=[exp.If(this=exp.EQ(this=right.copy(), expression=exp.Literal.number(0)), true=zero)],
            default=exp.Mod(this=left, expression=right),
        )
        duckdbs = _duckdb_remainder_type(args, operands)
        return remainder if duckdbs is None else exp.Cast(this=remainder, to=duckdbs)
    if kind in ("floor", "ceil"):  # DuckDB keeps a DOUBLE a DOUBLE (Spark's is a BIGINT, which overflows)
        rounded: exp.Expr = exp.Floor(this=args[0].copy()) if kind == "floor" else exp.Ceil(this=args[0].copy())
        if category == "integer":  # DuckDB makes an integer's floor and ceiling a DOUBLE
            return spark_expression("CAST(_x AS DOUBLE)", _x=args[0])
        if category != "float":
            return _as_whole_decimal(rounded, args[0], dtype)
        return spark_expression(
            "CASE WHEN ABS(_x) >= 4503599627370496D OR ISNAN(_x) THEN _x ELSE CAST(_plain AS DOUBLE) END",
            _x=args[0],
            _plain=signed_zero(exp.Cast(this=rounded, to=exp.DataType.build("double")), args[0]),
        )
    if kind == "trunc":  # toward zero in x's type (a cast to BIGINT overflows for DOUBLEs)
        truncated = spark_expression("(_x - _x % 1)", _x=args[0])
        if category != "float":
            return _as_whole_decimal(truncated, args[0], dtype)
        return spark_expression(  # an infinity's remainder is NaN
            "CASE WHEN ABS(_x) >= 4503599627370496D OR ISNAN(_x) THEN _x ELSE _plain END",
            _x=args[0],
            _plain=signed_zero(truncated, args[0]),
        )
    if kind == "epoch_ms":
        if dtype is not None and dtype.is_type(*exp.DataType.TEMPORAL_TYPES):
            return spark_expression("UNIX_MILLIS(CAST(_x AS TIMESTAMP))", _x=args[0])
        return spark_expression("CAST(TIMESTAMP_MILLIS(_x) AS TIMESTAMP_NTZ)", _x=args[0])
    if kind == "concat_operand":  # DuckDB's text of a scalar that is not text; a list or an unknown type as it is
        if dtype is None or is_nested(dtype) or category in ("string", "unknown"):
            return args[0].copy()
        return resolve_typed("to_text", [args[0], exp.false()], operands)
    if kind == "to_json":  # DuckDB's JSON of any value (Spark's TO_JSON drops NULL fields, refuses scalars)
        if dtype is None or dtype.is_type(exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
            return spark_expression("TO_JSON(_x, MAP('ignoreNullFields', 'false'))", _x=args[0])
        return duckdb_json(args[0], dtype, _element_text)
    if kind in ("to_float", "to_text"):
        safe = bool(args[1].this)
        to = exp.DataType.build("float" if kind == "to_float" else "string")
        plain = exp.TryCast(this=args[0].copy(), to=to, safe=True) if safe else exp.Cast(this=args[0].copy(), to=to)
        if kind == "to_text" and dtype is not None and is_nested(dtype):
            # DuckDB's text of a list, struct or map (Spark's: {1, x} for {'a': 1, 'b': x})
            return duckdb_nested_text(args[0], dtype, _element_text)
        if kind == "to_text" and (text := _zoned_or_blob_text(args[0], dtype)) is not None:
            return text
        if category != "float":
            return plain
        if kind == "to_text":
            return spark_expression(_DOUBLE_AS_DUCKDB_TEXT, _x=args[0])
        too_large = spark_expression(
            "ABS(_x) > 3.4028234663852886E38D AND ABS(_x) <> CAST('Infinity' AS DOUBLE)", _x=args[0]
        )
        problem = (
            exp.Null()
            if safe
            else spark_expression(
                "RAISE_ERROR(CONCAT('Conversion Error: Type DOUBLE with value ', CAST(_x AS STRING), "
                "' can''t be cast because the value is out of range for the destination type FLOAT'))",
                _x=args[0],
            )
        )
        return exp.Case(ifs=[exp.If(this=too_large, true=problem)], default=plain)
    if kind == "round":  # a DECIMAL(p, s) rounded to d places is DuckDB's DECIMAL(p, min(s, d)), Spark's wider
        rounded = exp.Round(this=args[0].copy(), decimals=args[1].copy())
        digits, places = precision_and_scale(dtype), int_literal(args[1])
        if category == "float":
            return signed_zero(rounded, args[0], _precision(category, dtype))
        if digits is None or places is None:
            return rounded
        precision, scale = digits
        return exp.Cast(this=rounded, to=exp.DataType.build(f"DECIMAL({precision}, {min(scale, max(places, 0))})"))
    if kind in ("shift_left", "shift_right"):
        return _shift(kind, args[0], args[1], operands)
    if kind in _BITWISE:  # DuckDB's type: TINYINT | 1 is a TINYINT (Spark: INT)
        operation = _BITWISE[kind](this=args[0].copy(), expression=args[1].copy())
        bits = _duckdb_integer_bits(args[:2], operands)
        return operation if bits is None else exp.Cast(this=operation, to=exp.DataType.build(_SPARK_INTEGER[bits]))
    raise ValueError(f"unknown typed marker {kind!r}")


def _zoned_or_blob_text(value: exp.Expr, dtype: exp.DataType | None) -> exp.Expr | None:
    """DuckDB's text of a ``TIMESTAMPTZ`` (its zone's offset after it: ``+00``, the sessions' zone being UTC) or
    of a ``BLOB`` (printable ASCII as itself, any other byte, the quotes and the backslash as ``\\xHH``; Spark's
    cast decodes the bytes as UTF-8); None for another type."""
    if dtype is None:
        return None
    if dtype.is_type(exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ):
        return spark_expression("CONCAT(CAST(_x AS STRING), '+00')", _x=value)
    if dtype.is_type(exp.DataType.Type.BINARY, exp.DataType.Type.VARBINARY):
        byte = "SUBSTRING(_b, _lh_i, 1)"
        code = f"CAST(CONV(HEX({byte}), 16, 10) AS INT)"
        return spark_expression(
            "CASE WHEN _b IS NULL THEN NULL WHEN LENGTH(_b) = 0 THEN '' ELSE ARRAY_JOIN(TRANSFORM("
            f"SEQUENCE(1, LENGTH(_b)), _lh_i -> CASE WHEN {code} BETWEEN 32 AND 126 AND {code} NOT IN (34, 39, 92) "
            f"THEN CHR({code}) ELSE CONCAT(CHR(92), 'x', HEX({byte})) END), '') END",
            _b=value,
        )
    return None


def _element_text(value: exp.Expr, dtype: exp.DataType) -> exp.Expr:
    """DuckDB's text of a scalar element of a list, struct or map: a top-level value's (a DOUBLE's digits)."""
    category = "float" if dtype.is_type(_FLOAT, exp.DataType.Type.DOUBLE) else "other"
    return resolve_typed("to_text", [value, exp.false()], ((category, dtype),))


#: The bits of DuckDB's signed integer types, which Spark has too
_SIGNED_BITS = {
    exp.DataType.Type.TINYINT: 8,
    exp.DataType.Type.SMALLINT: 16,
    exp.DataType.Type.INT: 32,
    exp.DataType.Type.BIGINT: 64,
}


_SPARK_INTEGER = {bits: kind.value for kind, bits in _SIGNED_BITS.items()}
#: typed markers of DuckDB's &, | and xor(), by kind
_BITWISE: dict[str, type[exp.Binary]] = {
    "bitwise_and": exp.BitwiseAnd,
    "bitwise_or": exp.BitwiseOr,
    "bitwise_xor": exp.BitwiseXor,
}


def _duckdb_remainder_type(args: list[exp.Expr], operands: tuple[Operand, ...]) -> exp.DataType | None:
    """DuckDB's type of ``a % b`` where one is a DECIMAL and the other a DECIMAL or an integer: the larger number of
    integer digits plus the larger scale, at most 38 (``DECIMAL(10, 2) % INTEGER`` is ``DECIMAL(12, 2)``; Spark's
    is ``DECIMAL(3, 2)`` for ``% 3``, too narrow for a table's later rows). None otherwise: Spark's type is DuckDB's."""
    if len(operands) < 2:
        return None
    left, right = (duckdb_digits(arg, dtype) for arg, (_category, dtype) in zip(args[:2], operands[:2], strict=True))
    if left is None or right is None or not (left[2] or right[2]):
        return None
    scale = max(left[1], right[1])
    return exp.DataType.build(f"DECIMAL({min(max(left[0] - left[1], right[0] - right[1]) + scale, 38)}, {scale})")


def _bits(dtype: exp.DataType | None) -> int | None:
    return next((n for type_, n in _SIGNED_BITS.items() if dtype is not None and dtype.is_type(type_)), None)


def _duckdb_integer_bits(args: list[exp.Expr], operands: tuple[Operand, ...]) -> int | None:
    """The bits of DuckDB's type for a shift or a bitwise operation: its operands' common integer type, where an integer literal takes
    the other operand's type when its value fits (``smallint_column << 2`` is a SMALLINT) and is otherwise an
    INTEGER or a BIGINT. None for any other operand (an unsigned or 128-bit integer, an unknown type)."""
    typed, literals = [], []
    for arg, (_category, dtype) in zip(args, operands, strict=False):
        value = int_literal(arg)
        if value is not None:
            literals.append(value)
        elif (bits := _bits(dtype)) is not None:
            typed.append(bits)
        else:
            return None
    if len(typed) + len(literals) != 2:
        return None
    bits = max(typed, default=0)
    for value in literals:
        if bits == 0 or not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            natural = 32 if -(2**31) <= value < 2**31 else 64 if -(2**63) <= value < 2**63 else None
            if natural is None:
                return None
            bits = max(bits, natural)
    return bits


def _shift(kind: str, value: exp.Expr, shift: exp.Expr, operands: tuple[Operand, ...]) -> exp.Expr:
    """DuckDB's ``<<`` and ``>>`` (its ``BitwiseShiftLeftOperator``/``BitwiseShiftRightOperator``): a left shift
    fails for a negative value, a negative shift, a shift of the type's width or more (unless the value is 0) and
    a result that overflows the type; a right shift by a negative amount or by the width or more is 0. Spark
    shifts by the amount modulo the width and wraps around instead. Of DuckDB's type (see :func:`_duckdb_integer_bits`)."""
    bits = _duckdb_integer_bits([value, shift], operands)
    if bits is None:  # not a signed integer type both engines have: Spark's own shift
        plain = exp.BitwiseLeftShift if kind == "shift_left" else exp.BitwiseRightShift
        return plain(this=value.copy(), expression=shift.copy())
    spark_type = _SPARK_INTEGER[bits]
    if kind == "shift_right":
        return spark_expression(
            f"CASE WHEN _a IS NULL OR _b IS NULL THEN CAST(NULL AS {spark_type}) "
            f"WHEN _b < 0 OR _b >= {bits} THEN CAST(0 AS {spark_type}) "
            f"ELSE CAST(SHIFTRIGHT(CAST(_a AS BIGINT), CAST(_b AS INT)) AS {spark_type}) END",
            _a=value,
            _b=shift,
        )

    def failure(*parts: str) -> str:  # DuckDB's message, from SQL string literals and values
        return "RAISE_ERROR(CONCAT('Out of Range Error: ', " + ", ".join(parts) + "))"

    a, b = "CAST(_a AS STRING)", "CAST(_b AS STRING)"
    negative = failure("'Cannot left-shift negative number '", a)
    negative_shift = failure("'Cannot left-shift by negative number '", b)
    too_far = failure("'Left-shift value '", b, "' is out of range'")
    overflow = failure("'Overflow in left shift ('", a, "' << '", b, "')'")
    return spark_expression(
        f"CASE WHEN _a IS NULL OR _b IS NULL THEN CAST(NULL AS {spark_type}) "
        f"WHEN _a < 0 THEN {negative} "
        f"WHEN _b < 0 THEN {negative_shift} "
        f"WHEN _b >= {bits} THEN IF(_a = 0, CAST(0 AS {spark_type}), {too_far}) "
        f"WHEN _b = 0 THEN CAST(_a AS {spark_type}) "
        f"WHEN _a >= SHIFTLEFT(CAST(1 AS BIGINT), {bits - 1} - CAST(_b AS INT)) THEN {overflow} "
        f"ELSE CAST(SHIFTLEFT(CAST(_a AS BIGINT), CAST(_b AS INT)) AS {spark_type}) END",
        _a=value,
        _b=shift,
    )


# A DOUBLE as DuckDB writes it (Python's repr: the shortest digits, fixed notation from 1e-4 to 1e16, else
# ``1.5e+300``), from Spark's text of it (Java's: the same digits, fixed from 1e-3 to 1e7, else ``1.5E300``).
_DOUBLE_AS_DUCKDB_TEXT = """
CASE
  WHEN ISNAN(_x) THEN 'nan'
  WHEN _x = CAST('Infinity' AS DOUBLE) THEN 'inf'
  WHEN _x = CAST('-Infinity' AS DOUBLE) THEN '-inf'
  WHEN NOT CONTAINS(CAST(_x AS STRING), 'E') THEN CAST(_x AS STRING)
  ELSE CONCAT(
    CASE WHEN _x < 0 THEN '-' ELSE '' END,
    CASE
      WHEN CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) = -4 THEN CONCAT('0.000',
        REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', ''))
      WHEN CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) BETWEEN 7 AND 15 THEN
        CASE
          WHEN LENGTH(REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', ''))
               <= CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) + 1
          THEN CONCAT(RPAD(REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', ''),
                           CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) + 1, '0'), '.0')
          ELSE CONCAT(
            SUBSTRING(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), 1,
                      CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) + 1),
            '.',
            SUBSTRING(REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', ''),
                      CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) + 2))
        END
      ELSE CONCAT(
        SUBSTRING(CAST(ABS(_x) AS STRING), 1, 1),
        CASE WHEN LENGTH(REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', '')) > 1
             THEN CONCAT('.', SUBSTRING(REGEXP_REPLACE(REGEXP_REPLACE(SUBSTRING_INDEX(CAST(ABS(_x) AS STRING), 'E', 1), '[.]', ''), '0+$', ''), 2))
             ELSE '' END,
        'e',
        CASE WHEN CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT) < 0 THEN '-' ELSE '+' END,
        CASE WHEN ABS(CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT)) < 10 THEN '0' ELSE '' END,
        CAST(ABS(CAST(SUBSTRING_INDEX(CAST(_x AS STRING), 'E', -1) AS INT)) AS STRING))
    END)
END
"""


def _decimal_average(value: exp.Expr, dtype: exp.DataType | None) -> exp.Expr:
    """DuckDB's average of a DECIMAL: a DOUBLE, the exact sum of the unscaled values as a double divided by
    ``count * 10^scale`` (a sum of doubles would round differently: 56.755 is not 56.75).

    The sum is Spark's own DECIMAL sum (exact, and on 64-bit integers up to 18 digits), scaled to the unscaled
    sum once per group: scaling every row first made it a DECIMAL(38, 0) sum in Java's BigDecimal, about 3
    times slower over 20 million DECIMAL(7, 2) values."""
    decimal = precision_and_scale(dtype)
    if decimal is None:
        return spark_expression("AVG(CAST(_x AS DOUBLE))", _x=value)
    precision, scale = decimal
    if precision + scale > EXACT_SCALING_DIGITS:
        # Spark's sum is a DECIMAL(38, scale), which keeps only 38 - scale integer digits (DuckDB-dialect
        # scripts run without precision loss, see driver.DIALECT_CONF): scaling it could overflow
        return spark_expression(
            "CASE WHEN COUNT(_x) = 0 THEN NULL ELSE CAST(SUM(_x) AS DOUBLE) / CAST(COUNT(_x) AS DOUBLE) END", _x=value
        )
    power = 10**scale
    return spark_expression(
        f"CASE WHEN COUNT(_x) = 0 THEN NULL ELSE CAST(CAST(SUM(_x) * {power} AS DECIMAL(38, 0)) AS DOUBLE) "
        f"/ (CAST(COUNT(_x) AS DOUBLE) * {power}D) END",
        _x=value,
    )


def _slice(container: exp.Expr, start: exp.Expr, end: exp.Expr, text: bool) -> exp.Expr:
    """DuckDB's ``x[a:b]`` and ``list_slice``: 1-based and inclusive, 0 is 1, negative counts from the end, out of
    range clamps; a string slices its characters."""
    size = "LENGTH(_x)" if text else "SIZE(_x)"
    first = (
        "1"
        if isinstance(start, exp.Null)
        else f"GREATEST(CASE WHEN _a < 0 THEN {size} + _a + 1 WHEN _a = 0 THEN 1 ELSE _a END, 1)"
    )
    last = size if isinstance(end, exp.Null) else f"LEAST(CASE WHEN _b < 0 THEN {size} + _b + 1 ELSE _b END, {size})"
    function = "SUBSTRING" if text else "SLICE"
    return spark_expression(
        f"{function}(_x, {first}, GREATEST({last} - {first} + 1, 0))", _x=container, _a=start, _b=end
    )
