"""DuckDB's quantiles on Spark: ``quantile_cont``, ``median``, ``quantile_disc``, ``quantile`` and
``percentile_cont``/``percentile_disc ... WITHIN GROUP`` (pure: sqlglot only).

DuckDB sorts a group's values and interpolates between the two around position ``(n - 1) * q``. How it
interpolates depends on the type, and so does the result's type:

=========================  ==========================================================  ==================
values                     interpolation between ``lo`` and ``hi`` (``d``: the fraction)  result
=========================  ==========================================================  ==================
integers, floats           ``lo * (1 - d) + hi * d`` in doubles                          ``DOUBLE``
``DECIMAL(p, s)``          ``lo + trunc((hi - lo) * d)`` in unscaled integers            ``DECIMAL(p, s)``
dates, timestamps          ``round(lo * (1 - d) + hi * d)`` in microseconds              ``TIMESTAMP``
=========================  ==========================================================  ==================

Spark's own ``percentile`` returns a ``DOUBLE`` for every numeric type and refuses dates, and sqlglot writes
``percentile_cont ... WITHIN GROUP`` as Spark's ``percentile_approx``, an estimate. The form here sorts the
group's values (``ARRAY_SORT(COLLECT_LIST(...))``: Spark's exact percentile keeps every value too) and
interpolates as DuckDB does.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression

#: DuckDB holds a DECIMAL of up to 18 digits in a 64-bit integer, which Spark's BIGINT holds too.
_MAX_INT64_PRECISION = 18

# In a lambda over the sorted values (``__lh_s``), so that they are sorted once per group
_POSITION = "(CAST(SIZE(__lh_s) - 1 AS DOUBLE) * _q)"
_LOW = f"ELEMENT_AT(__lh_s, CAST(FLOOR({_POSITION}) AS INT) + 1)"
_HIGH = f"ELEMENT_AT(__lh_s, CAST(CEIL({_POSITION}) AS INT) + 1)"
_FRACTION = f"({_POSITION} - FLOOR({_POSITION}))"
_BETWEEN = f"CAST({_LOW} AS DOUBLE) * (CAST(1 AS DOUBLE) - {_FRACTION}) + CAST({_HIGH} AS DOUBLE) * {_FRACTION}"


def discrete_quantile(value: exp.Expr, fraction: exp.Expr, descending: bool) -> exp.Expr:
    """DuckDB's ``quantile_disc(value, fraction)`` (and ``quantile``, ``percentile_disc ... WITHIN GROUP``): the
    value at 0-based position ``max(1, n - floor(n * (1 - q))) - 1`` of the sorted values, of any type that sorts.
    DuckDB computes ``n * q`` exactly for a decimal literal ``q`` (``0.3``), in doubles otherwise."""
    literal = fraction.this if isinstance(fraction, exp.Paren) else fraction
    if isinstance(literal, exp.Literal) and "." in literal.name and "e" not in literal.name.lower():
        below = f"FLOOR(CAST(SIZE(__lh_s) AS DECIMAL(20, 0)) * (1 - {literal.name}))"
    else:
        below = "FLOOR(CAST(SIZE(__lh_s) AS DOUBLE) - CAST(SIZE(__lh_s) AS DOUBLE) * _q)"
    ordered = "ARRAY_SORT(COLLECT_LIST(_x))"
    return spark_expression(
        "ELEMENT_AT(TRANSFORM(ARRAY(_s), __lh_s -> CASE WHEN SIZE(__lh_s) = 0 THEN NULL "
        f"ELSE ELEMENT_AT(__lh_s, CAST(GREATEST(1, SIZE(__lh_s) - {below}) AS INT)) END), 1)",
        _s=spark_expression(f"REVERSE({ordered})" if _descending(fraction, descending) else ordered, _x=value),
        _q=_double(fraction),
    )


def _descending(fraction: exp.Expr, descending: bool) -> bool:
    # DuckDB turns ``ORDER BY x DESC`` into a negative fraction: -0 is 0, so a fraction of 0 stays ascending
    value = quantile_fraction(fraction)
    return descending and value is not None and value > 0


def _double(fraction: exp.Expr) -> exp.Expr:
    return exp.Cast(this=fraction.copy(), to=exp.DataType.build("double"))


def quantile_fraction(node: exp.Expr) -> float | None:
    """The fraction of a ``quantile_cont``-like call when it is a number literal from 0 to 1 (None otherwise: a
    list of fractions, a negative one, which DuckDB reads as descending, or an expression)."""
    inner = node.this if isinstance(node, exp.Paren) else node
    if not (isinstance(inner, exp.Literal) and inner.is_number):
        return None
    value = float(inner.name)
    return value if 0 <= value <= 1 else None


def continuous_quantile(
    value: exp.Expr, fraction: exp.Expr, descending: bool, category: str, dtype: exp.DataType | None
) -> exp.Expr:
    """DuckDB's ``quantile_cont(value, fraction)`` of a ``category``/``dtype`` operand (see the module's table).
    For a type the table does not cover (a DECIMAL of more than 18 digits, a TIME), Spark's ``percentile``: a
    DOUBLE, where DuckDB keeps the type."""
    reverse = _descending(fraction, descending)
    sorted_values = _sorted_values(value, category, dtype, reverse)
    if sorted_values is None:
        spark_fraction = spark_expression("1 - _q", _q=fraction) if reverse else fraction.copy()
        return exp.Anonymous(this="PERCENTILE", expressions=[value.copy(), spark_fraction])
    interpolated = _interpolated(category, dtype)
    return spark_expression(
        f"ELEMENT_AT(TRANSFORM(ARRAY(_s), __lh_s -> CASE WHEN SIZE(__lh_s) = 0 THEN NULL ELSE {interpolated} END), 1)",
        _s=sorted_values,
        _q=_double(fraction),
    )


def _sorted_values(value: exp.Expr, category: str, dtype: exp.DataType | None, descending: bool) -> exp.Expr | None:
    if category in ("integer", "float"):
        key = "CAST(_x AS DOUBLE)"
    elif category == "decimal":
        digits = _decimal_digits(dtype)
        if digits is None:
            return None
        key = f"CAST(_x * {10 ** digits[1]} AS BIGINT)"  # the unscaled value: exact below 19 digits
    elif _temporal(dtype):
        key = "UNIX_MICROS(CAST(_x AS TIMESTAMP))"  # the session's zone is UTC: a naive value's own clock
    else:
        return None
    ordered = f"ARRAY_SORT(COLLECT_LIST({key}))"
    return spark_expression(f"REVERSE({ordered})" if descending else ordered, _x=value)


def _interpolated(category: str, dtype: exp.DataType | None) -> str:
    # At a whole position DuckDB takes the value itself (no arithmetic: an infinity stays one, a large unscaled
    # decimal stays exact)
    whole = f"FLOOR({_POSITION}) = CEIL({_POSITION})"
    if category in ("integer", "float"):
        return f"CASE WHEN {whole} THEN CAST({_LOW} AS DOUBLE) ELSE {_BETWEEN} END"
    if category == "decimal":
        digits = _decimal_digits(dtype)
        assert digits is not None
        precision, scale = digits
        # DuckDB adds the difference's fraction, cut toward zero, to the lower neighbour: in unscaled integers
        unscaled = f"{_LOW} + CAST(CAST({_HIGH} - {_LOW} AS DOUBLE) * {_FRACTION} AS BIGINT)"
        # DECIMAL(18, 0) / DECIMAL(s + 1, 0) is typed wide enough to be exact, with or without precision loss
        return (
            f"CAST(CAST({unscaled} AS DECIMAL(18, 0)) / CAST({10**scale} AS DECIMAL({scale + 1}, 0)) "
            f"AS DECIMAL({precision}, {scale}))"
        )
    micros = f"CASE WHEN {whole} THEN {_LOW} ELSE CAST(ROUND({_BETWEEN}) AS BIGINT) END"
    zoned = dtype is not None and dtype.is_type(exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ)
    return f"TIMESTAMP_MICROS({micros})" if zoned else f"CAST(TIMESTAMP_MICROS({micros}) AS TIMESTAMP_NTZ)"


def _decimal_digits(dtype: exp.DataType | None) -> tuple[int, int] | None:
    params = [p.this for p in dtype.expressions] if dtype is not None else []
    if len(params) != 2 or not all(isinstance(p, exp.Literal) and p.is_int for p in params):
        return None
    precision, scale = (int(p.name) for p in params)
    return (precision, scale) if precision <= _MAX_INT64_PRECISION else None


def _temporal(dtype: exp.DataType | None) -> bool:
    return dtype is not None and dtype.is_type(
        exp.DataType.Type.DATE,
        exp.DataType.Type.TIMESTAMP,
        exp.DataType.Type.TIMESTAMPNTZ,
        exp.DataType.Type.TIMESTAMPTZ,
        exp.DataType.Type.TIMESTAMPLTZ,
    )
