"""DuckDB's casts of a value into a column of another numeric type, for the values a statement stores.

An ``INSERT``, ``UPDATE`` or ``MERGE`` hands the writer values typed by the statement (``3.14159`` is a
``DECIMAL(6, 5)``, ``2.5::DOUBLE`` a ``DOUBLE``), and the writer stores them as the column's type. pyarrow's casts
differ from DuckDB's on exactly the inputs users write: it multiplies a decimal by a rounded ``10^-scale`` (so
``3.14159`` became ``3.1415900000000003``), and it refuses any cast that drops digits where DuckDB rounds (``1.005``
into ``DECIMAL(10, 2)`` is ``1.01``; ``2.5`` into ``INTEGER`` is ``3``, ``2.5::DOUBLE`` is ``2``). These are
DuckDB 1.5's rules, from its source (``TryCastDecimalToFloatingPoint``, ``TryCastToDecimal``, the
``std::nearbyint`` of its float-to-integer casts):

- decimal to ``FLOAT``/``DOUBLE``: the unscaled integer divided by ``10^scale`` in the target type when the integer
  converts exactly (or the scale is 0), otherwise its quotient plus its remainder over ``10^scale``; not always the
  nearest float, and the same float DuckDB stores;
- decimal to a decimal of a smaller scale, or to an integer: rounded half away from zero;
- ``FLOAT``/``DOUBLE`` to an integer: rounded half to even; NaN and infinities fail;
- ``DOUBLE`` to ``FLOAT``: a finite value beyond ``FLOAT``'s range fails instead of becoming an infinity;
- ``FLOAT``/``DOUBLE`` to a decimal: times ``10^scale`` in double precision, rounded half away from zero (a
  ``FLOAT``'s product back to ``FLOAT`` after rounding).

Text is parsed and printed by DuckDB's own casts where the ``duckdb`` package is installed: DuckDB's text forms
are too many to copy (``' 42 '`` and ``'4.2'`` are integers, ``'yes'`` a boolean, a double prints as
``123456789.0`` and ``1.5e-07``, a list as ``[1, 2]``), and pyarrow's differ or fail. Without ``duckdb`` (an
executor without the ``duckdb`` extra), text goes through pyarrow. So do lists, structs and maps whose element
types change (``[2.5]`` into ``INTEGER[]`` is ``[3]``, where pyarrow refuses to drop the digit). A value that does not fit the column fails as
in DuckDB (:class:`pyarrow.ArrowInvalid`); other pairs are pyarrow's casts, which agree with DuckDB's.
"""

from __future__ import annotations

from decimal import Context, Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_FLOAT32_MAX = float(np.finfo(np.float32).max)
_EXACT = Context(prec=80)  # wide enough for any 38-digit decimal: scaleb must not round


def cast_as_duckdb(array: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``array`` as ``target``, with DuckDB's result where DuckDB's cast differs from pyarrow's.

    >>> cast_as_duckdb(pa.array([Decimal("3.14159"), Decimal("1.5")]), pa.float64()).to_pylist()
    [3.14159, 1.5]
    >>> cast_as_duckdb(pa.array([Decimal("1.005"), Decimal("-1.005")]), pa.decimal128(10, 2)).to_pylist()
    [Decimal('1.01'), Decimal('-1.01')]
    >>> cast_as_duckdb(pa.array([2.5, 3.5, -2.5]), pa.int32()).to_pylist()
    [2, 4, -2]

    :raises pyarrow.ArrowInvalid: a value does not fit ``target`` (DuckDB's conversion error).
    """
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([_cast(chunk, target) for chunk in array.chunks], type=target)
    return _cast(array, target)


def _cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    source = array.type
    # text, and nested values whose elements may change type (a list of decimals into INTEGER[] rounds each),
    # go through DuckDB's own casts
    through_duckdb = _is_text(source) != _is_text(target) or (_is_nested(source) and source != target)
    if through_duckdb and not pa.types.is_null(source):
        converted = cast_in_duckdb(array, target)
        if converted is not None:
            return converted
    if pa.types.is_decimal(source):
        if pa.types.is_floating(target):
            return _decimal_to_float(array, target)
        if pa.types.is_boolean(target):  # DuckDB: any value but zero is true (pyarrow has no such cast)
            return pc.not_equal(array, pa.scalar(0, array.type))
        if pa.types.is_decimal(target) and target.scale < source.scale:
            array = _round_decimal(array, target.scale)
        elif pa.types.is_integer(target) and source.scale > 0:
            array = _round_decimal(array, 0)
    elif pa.types.is_integer(source) and pa.types.is_floating(target):
        # DuckDB takes the nearest float (979483675 into FLOAT is 979483648); pyarrow refuses inexact integers
        return array.cast(target, safe=False)
    elif pa.types.is_floating(source):
        if pa.types.is_decimal(target):
            return _float_to_decimal(array, target)
        if pa.types.is_integer(target):
            _refuse_non_finite(array, target)
            array = pc.round(array, ndigits=0, round_mode="half_to_even")
        elif pa.types.is_float32(target) and pa.types.is_float64(source):
            _refuse_beyond_float32(array)
    return array.cast(target)


def _round_decimal(array: pa.Array, scale: int) -> pa.Array:
    """``array`` rounded half away from zero to ``scale`` digits, one digit wider first: pyarrow rounds within the
    input's precision, and a carry (``9.995`` to ``10.00``) would not fit it."""
    wider = pa.decimal256(array.type.precision + 1, array.type.scale)
    return pc.round(array.cast(wider), ndigits=scale, round_mode="half_towards_infinity")


def _float_to_decimal(array: pa.Array, target: pa.DataType) -> pa.Array:
    """DuckDB's cast of a ``FLOAT`` or ``DOUBLE`` to ``DECIMAL(p, s)`` (``TryCastToDecimal``): the value times
    ``10^s`` in double precision, rounded half away from zero (and, for a ``FLOAT``, back to a ``FLOAT``), is the
    unscaled decimal; it must stay below
    ``10^p``. Where the product is inexact its rounding shows in the last digits (``-267139128129.22836`` into
    ``DECIMAL(38, 10)`` is ``-267139128129.2283740160``), which pyarrow's exact conversion does not reproduce.

    >>> _float_to_decimal(pa.array([0.125, -267139128129.22836, None]), pa.decimal128(38, 10)).to_pylist()
    [Decimal('0.1250000000'), Decimal('-267139128129.2283740160'), None]
    """
    _refuse_non_finite(array, target)
    values = array.to_numpy(zero_copy_only=False).astype(np.float64)
    with np.errstate(all="ignore"):
        scaled = values * float(10**target.scale)
        whole = np.trunc(scaled)
        rounded = whole + np.sign(scaled) * (np.abs(scaled - whole) >= 0.5)
    valid = ~np.isnan(rounded)  # nulls
    limit = float(10**target.precision)
    beyond = valid & (np.abs(rounded) >= limit)
    if beyond.any():
        bad = values[beyond][0]
        raise pa.ArrowInvalid(f"Could not cast value {bad:f} to DECIMAL({target.precision},{target.scale})")
    if pa.types.is_float32(array.type):
        # DuckDB converts the rounded product back to the source type before the integer: for a FLOAT that
        # rounds again (0.125 into DECIMAL(20, 15) is 0.124999998373888)
        rounded = rounded.astype(np.float32).astype(np.float64)
    if pa.types.is_decimal128(target) and not (valid & (np.abs(rounded) >= 2.0**63)).any():
        # every unscaled value fits 64 bits: Arrow's 128-bit decimal is its two little-endian halves, the upper
        # one the sign; built without a Python object per value
        lower = np.where(valid, rounded, 0).astype(np.int64)
        words = np.column_stack([lower, lower >> 63]).ravel()
        validity = pa.array(valid).buffers()[1] if not valid.all() else None
        return pa.Array.from_buffers(target, len(array), [validity, pa.py_buffer(words.tobytes())])
    unscaled = [int(v) if ok else None for v, ok in zip(rounded.tolist(), valid.tolist(), strict=True)]
    return pa.array([None if u is None else Decimal(u).scaleb(-target.scale, _EXACT) for u in unscaled], type=target)


def _decimal_to_float(array: pa.Array, target: pa.DataType) -> pa.Array:
    numpy_type = np.float32 if pa.types.is_float32(target) else np.float64
    exact_below = 2**24 if numpy_type is np.float32 else 2**53
    scale = array.type.scale
    power = 10**scale
    # DuckDB converts the power through a double first (DOUBLE_POWERS_OF_TEN), then to the target type.
    divisor = numpy_type(float(power))
    if pa.types.is_decimal128(array.type) and array.type.precision <= 18:
        return _small_decimal_to_float(array, target, numpy_type, exact_below, power, divisor)
    values: list[float | None] = []
    for value in array.to_pylist():
        if value is None:
            values.append(None)
            continue
        unscaled = _unscaled(value, scale)
        if abs(unscaled) <= exact_below or scale == 0:
            values.append(float(numpy_type(_integer_to_float(unscaled)) / divisor))
        else:
            # C++ division and remainder: both truncate toward zero
            quotient = abs(unscaled) // power * (1 if unscaled >= 0 else -1)
            remainder = unscaled - quotient * power
            whole = numpy_type(_integer_to_float(quotient))
            values.append(float(whole + numpy_type(_integer_to_float(remainder)) / divisor))
    return pa.array(values, type=target)


def _small_decimal_to_float(
    array: pa.Array, target: pa.DataType, numpy_type: type, exact_below: int, power: int, divisor: np.floating
) -> pa.Array:
    """:func:`_decimal_to_float` for up to 18 digits, whose unscaled value DuckDB keeps in 64 bits (and so does
    Arrow's 128-bit decimal in its lower, little-endian half), without a Python object per value."""
    words = np.frombuffer(array.buffers()[1], dtype=np.int64)
    unscaled = words[2 * array.offset : 2 * (array.offset + len(array)) : 2]
    with np.errstate(all="ignore"):
        result = unscaled.astype(numpy_type) / divisor
        slow = np.abs(unscaled) > exact_below
        if power > 1 and slow.any():
            quotient = np.abs(unscaled) // power * np.sign(unscaled)
            remainder = unscaled - quotient * power
            result = np.where(slow, quotient.astype(numpy_type) + remainder.astype(numpy_type) / divisor, result)
    mask = array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None
    return pa.array(result.astype(numpy_type), type=target, mask=mask)


def _unscaled(value: Decimal, scale: int) -> int:
    sign, digits, exponent = value.as_tuple()
    magnitude = int("".join(map(str, digits)) or "0") * 10 ** (int(exponent) + scale)
    return -magnitude if sign else magnitude


def _integer_to_float(value: int) -> float:
    """DuckDB's conversion of a 128-bit integer to double (``Hugeint::Cast``, ``CastBigintToFloating``): the
    lower 64-bit half converted and the upper one scaled by 2^64, with its own case for an upper half of -1; not
    always the nearest double (exact below 2^53)."""
    upper, lower = divmod(value, 2**64)
    if upper == -1:
        return -float(2**64 - 1 - lower) - 1.0
    return float(lower) + float(upper) * float(2**64)


def _refuse_non_finite(array: pa.Array, target: pa.DataType) -> None:
    finite = pc.is_finite(array)
    if pc.any(pc.invert(finite.fill_null(True))).as_py():
        bad = array.filter(pc.invert(finite.fill_null(True)))[0].as_py()
        raise pa.ArrowInvalid(f"Type {array.type} with value {bad} can't be cast to {target}: it is not finite")


def _refuse_beyond_float32(array: pa.Array) -> None:
    finite = pc.is_finite(array).fill_null(False)
    too_big = pc.and_(finite, pc.greater(pc.abs(array), _FLOAT32_MAX)).fill_null(False)
    if pc.any(too_big).as_py():
        bad = array.filter(too_big)[0].as_py()
        raise pa.ArrowInvalid(f"Type DOUBLE with value {bad} can't be cast because the value is out of range for FLOAT")


def _is_nested(dtype: pa.DataType) -> bool:
    return (
        pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_struct(dtype) or pa.types.is_map(dtype)
    )


def _is_text(dtype: pa.DataType) -> bool:
    return pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype)


def _duckdb_type(dtype: pa.DataType) -> str | None:
    """The DuckDB type of a column stored as ``dtype``; ``None`` for those left to pyarrow."""
    if _is_text(dtype):
        return "VARCHAR"
    if pa.types.is_decimal(dtype):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if pa.types.is_timestamp(dtype):
        return "TIMESTAMPTZ" if dtype.tz else "TIMESTAMP"
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        element = _duckdb_type(dtype.value_type)
        return None if element is None else f"{element}[]"
    if pa.types.is_map(dtype):
        key, value = _duckdb_type(dtype.key_type), _duckdb_type(dtype.item_type)
        return None if key is None or value is None else f"MAP({key}, {value})"
    if pa.types.is_struct(dtype):
        fields = [(f.name, _duckdb_type(f.type)) for f in dtype]
        if not fields or any(kind is None for _name, kind in fields):
            return None
        quoted = ", ".join('"' + name.replace('"', '""') + f'" {kind}' for name, kind in fields)
        return f"STRUCT({quoted})"
    return _SIMPLE_TYPES.get(dtype)


_SIMPLE_TYPES = {
    pa.bool_(): "BOOLEAN",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.uint8(): "UTINYINT",
    pa.uint16(): "USMALLINT",
    pa.uint32(): "UINTEGER",
    pa.uint64(): "UBIGINT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.date32(): "DATE",
    pa.time64("us"): "TIME",
    pa.binary(): "BLOB",
}


def cast_in_duckdb(array: pa.Array, target: pa.DataType, duckdb_type: str | None = None) -> pa.Array | None:
    """``array`` cast by an in-memory DuckDB; ``None`` when ``duckdb`` is not installed or the target has no
    DuckDB type here.

    :param duckdb_type: the DuckDB type to cast to when it is not ``target``'s own (``JSON``, stored as text).
    :raises pyarrow.ArrowInvalid: DuckDB refused a value (its message, which quotes the value).
    """
    duckdb_type = duckdb_type or _duckdb_type(target)
    if duckdb_type is None:
        return None
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    try:
        # Times with a zone print and parse in UTC, the zone the lake's Spark sessions run in.
        con.execute("SET TimeZone = 'UTC'")
        con.register("cast_input", pa.table({"v": array}))
        result = con.sql(f"SELECT CAST(v AS {duckdb_type}) AS v FROM cast_input").to_arrow_table().column("v")
    except duckdb.Error as exc:
        raise pa.ArrowInvalid(str(exc).split("\n", 1)[0]) from None
    finally:
        con.close()
    return result.combine_chunks().cast(target)


def json_text_in_duckdb(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Values that are not text as DuckDB stores them in a ``JSON`` column: its ``CAST(v AS JSON)`` (a struct is an
    object, keeping its NULL fields; a list an array; a date a quoted string). Text is returned as it is, to be
    checked as JSON; without ``duckdb`` the values are returned unchanged.

    :raises pyarrow.ArrowInvalid: DuckDB refused a value.
    """
    if _is_text(array.type) or pa.types.is_null(array.type):
        return array
    chunk = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    converted = cast_in_duckdb(chunk, pa.string(), duckdb_type="JSON")
    return array if converted is None else converted
