"""DuckDB's functions in Spark SQL, where sqlglot's transpilation keeps a name Spark reads differently (pure:
sqlglot only).

sqlglot translates DuckDB SQL to Spark SQL function by function, but some functions exist in both engines under
one name with different results, and sqlglot writes them unchanged. Each rewrite here returns what DuckDB 1.5
returns (checked against DuckDB itself in ``tests/integration/test_duckdb_functions.py``). Where the operands'
types decide (a string or a list under ``[...]``, a TIMESTAMPTZ under ``date_trunc``, a DOUBLE cast to text), the
rewrite is a typed marker that :mod:`.typed_functions` resolves once the driver knows the types:

=====================================  ===================================  ==================================
DuckDB                                 DuckDB's result                      Spark's result for the same text
=====================================  ===================================  ==================================
``log(x)``                             base-10 logarithm                    natural logarithm
``ln``/``log``/``sqrt`` of x < 0, 0    fails (Out of Range Error)           NULL or NaN
``dayofweek``, ``dow``                 0 (Sunday) .. 6                      1 (Sunday) .. 7
``isodow``, ``week``                   1 (Monday) .. 7, ISO week            not a function
``dayname``, ``monthname``             ``Wednesday``, ``January``           ``Wed``, ``Jan``
``regexp_replace(s, p, r)``            first match only (``'g'``: all)      every match
``date_diff('month', a, b)``           part boundaries crossed              whole months elapsed
``format('{}-{}', a, b)``              fmt placeholders; NULL in, NULL out  ``{}`` kept literally
``list(x ORDER BY k)``                 ordered, NULLs kept                  order dropped, NULLs dropped
``first(x ORDER BY k)``                the first row's x                    a syntax error
``list_concat(a, NULL)``               ``a`` (NULL is an empty list)        NULL
``list_distinct(l)``                   without NULL, last seen first        with NULL, first seen first
``substring(s, 3, -2)``                the characters before the start      ``''``
``list_sum(l)``, ``list_avg(l)``       the ``sum``/``avg`` aggregates over  not functions
                                       the elements (.list_aggregates)
``l[i]``, ``list_extract(l, i)``       1-based, from the end if i < 0,      0-based for a column index, out of
                                       NULL when out of range               range fails
``quantile_cont(x, p)``                interpolated quantile                a wrong-arity error
``median``, ``percentile_cont ...      x's type for a DECIMAL (the           a DOUBLE; an estimate
WITHIN GROUP (ORDER BY x)``            interpolation floored), a TIMESTAMP  (``percentile_approx``); dates
                                       for dates                            refused
``product(x)``, ``isinf(x)``,          as named                             not functions
``list_reverse``, ``list_position``
``trunc(x)``                           x's type, toward zero                cast to BIGINT (overflows)
``sign(x)``                            TINYINT                              DOUBLE
``date_add(d, INTERVAL ...)``          ``d + INTERVAL ...``                 a type error
``s SIMILAR TO p``, ``s GLOB p``       whole-string regex / glob match      not Spark syntax
``upper('ß')``, ``lower('İ')``         ``ẞ``, ``i`` (one for one)           ``SS``, ``i̇`` (.case_mapping)
=====================================  ===================================  ==================================
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from airflow_provider_lakehouse.spark.case_mapping import duckdb_lower, duckdb_upper
from airflow_provider_lakehouse.spark.json_functions import BY_NAME as JSON_BY_NAME
from airflow_provider_lakehouse.spark.json_functions import REWRITES as JSON_REWRITES
from airflow_provider_lakehouse.spark.list_aggregates import FUNCTIONS as LIST_FUNCTIONS
from airflow_provider_lakehouse.spark.list_aggregates import array_to_string, list_aggregate
from airflow_provider_lakehouse.spark.quantified_comparisons import COMPARISONS as QUANTIFIED
from airflow_provider_lakehouse.spark.quantified_comparisons import quantified_comparison
from airflow_provider_lakehouse.spark.quantiles import quantile_fraction
from airflow_provider_lakehouse.spark.rewriting import (
    bottom_up,
    int_literal,
    literal_text,
    raise_error,
    rows_where,
    spark_expression,
    string_literal,
    typed_call,
)
from airflow_provider_lakehouse.spark.strftime import duckdb_strftime
from airflow_provider_lakehouse.spark.typed_functions import duckdb_list_contains

_LOG_NEGATIVE = "Out of Range Error: cannot take logarithm of a negative number"
_LOG_ZERO = "Out of Range Error: cannot take logarithm of zero"
_SQRT_NEGATIVE = "Out of Range Error: cannot take square root of a negative number"
#: DuckDB's date_diff units (and their spellings) counted as boundaries crossed, as Spark's date_trunc names them
_BOUNDARY_UNITS = {
    "YEAR": "YEAR", "YEARS": "YEAR", "Y": "YEAR", "YR": "YEAR", "YRS": "YEAR",
    "QUARTER": "QUARTER", "QUARTERS": "QUARTER",
    "MONTH": "MONTH", "MONTHS": "MONTH", "MON": "MONTH", "MONS": "MONTH",
    "DAY": "DAY", "DAYS": "DAY", "D": "DAY",
    "HOUR": "HOUR", "HOURS": "HOUR", "H": "HOUR", "HR": "HOUR", "HRS": "HOUR",
    "MINUTE": "MINUTE", "MINUTES": "MINUTE", "M": "MINUTE", "MIN": "MINUTE", "MINS": "MINUTE",
    "SECOND": "SECOND", "SECONDS": "SECOND", "S": "SECOND", "SEC": "SECOND", "SECS": "SECOND",
    "MILLISECOND": "MILLISECOND", "MILLISECONDS": "MILLISECOND", "MS": "MILLISECOND", "MSEC": "MILLISECOND",
    "MICROSECOND": "MICROSECOND", "MICROSECONDS": "MICROSECOND", "US": "MICROSECOND", "USEC": "MICROSECOND",
}  # fmt: skip
_WEEK_UNITS = {"WEEK", "WEEKS", "W", "WK", "WKS"}


def duckdb_functions(tree: exp.Expr) -> exp.Expr:
    """Rewrite the DuckDB functions in ``tree`` whose Spark namesakes differ (see the module's table).

    >>> import sqlglot
    >>> sql = lambda s: duckdb_functions(sqlglot.parse_one(s, read="duckdb")).sql("spark")
    >>> sql("SELECT dayofweek(d), monthname(d)")
    "SELECT CAST(DAYOFWEEK(d) - 1 AS BIGINT), DATE_FORMAT(d, 'MMMM')"
    """
    return bottom_up(tree, _rewrite)


def _rewrite(node: exp.Expr) -> exp.Expr:
    rewrite = _REWRITES.get(type(node))
    if rewrite is None and isinstance(node, exp.Anonymous):
        rewrite = _ANONYMOUS.get(node.name.lower())
    result = rewrite(node) if rewrite else None
    return node if result is None else result


def _aggregate_position(node: exp.Expr) -> bool:
    """Whether an aggregate can be replaced by an expression around aggregates: not under ``FILTER`` or ``OVER``,
    which must wrap the aggregate itself."""
    return not isinstance(node.parent, (exp.Filter, exp.Window, exp.WithinGroup))


# -- arithmetic ----------------------------------------------------------------------------------
def _logarithm(node: exp.Log | exp.Ln) -> exp.Expr:
    computed: exp.Expr
    if isinstance(node, exp.Ln):
        value, computed = node.this, exp.Ln(this=node.this.copy())
    elif node.expression is None or int_literal(node.this) == 10:
        # DuckDB's one-argument log is base 10 (Spark's is natural); Spark's LOG(10, x) divides two natural
        # logarithms (log(0.1) is -0.9999999999999998), its LOG10 is exact at powers of ten as DuckDB's is
        value = node.this if node.expression is None else node.expression
        computed = exp.Anonymous(this="LOG10", expressions=[value.copy()])
    else:
        value, computed = node.expression, exp.Log(this=node.this.copy(), expression=node.expression.copy())
    return exp.Case(
        ifs=[
            exp.If(this=exp.LT(this=value.copy(), expression=exp.Literal.number(0)), true=raise_error(_LOG_NEGATIVE)),
            exp.If(this=exp.EQ(this=value.copy(), expression=exp.Literal.number(0)), true=raise_error(_LOG_ZERO)),
        ],
        default=computed,
    )


def _sqrt(node: exp.Sqrt) -> exp.Expr:
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.LT(this=node.this.copy(), expression=exp.Literal.number(0)), true=raise_error(_SQRT_NEGATIVE)
            )
        ],
        default=exp.Sqrt(this=node.this.copy()),
    )


def _trunc(node: exp.Trunc) -> exp.Expr | None:
    if node.args.get("decimals") is not None or node.args.get("unit") is not None:
        return None
    return typed_call("trunc", node.this)


def _rounding(node: exp.Floor | exp.Ceil) -> exp.Expr | None:
    if node.args.get("decimals") is not None or node.args.get("to") is not None:
        return None
    return typed_call("floor" if isinstance(node, exp.Floor) else "ceil", node.this)


def _even(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``even(x)``: x rounded away from zero to the next even integer, a DOUBLE, computed in DOUBLE.

    Spark's ``CEIL`` and ``FLOOR`` of a DOUBLE are BIGINTs, which overflow beyond 2^63 (``even(1e300)``) and drop
    the sign of -0.0: a half at or beyond 2^52 is already an integer, and a zero, NaN or infinity is its own
    answer, so those skip them."""
    if len(node.expressions) != 1:
        return None
    return spark_expression(
        "CASE WHEN ISNAN(_h) OR ABS(_h) >= 4503599627370496 OR _h = 0 THEN _h * 2 "
        "WHEN _h > 0 THEN CAST(CEIL(_h) AS DOUBLE) * 2 ELSE CAST(FLOOR(_h) AS DOUBLE) * 2 END",
        _h=spark_expression("CAST(_x AS DOUBLE) / 2", _x=node.expressions[0]),
    )


def _window(node: exp.Window) -> exp.Expr | None:
    """Row numbers, ranks and tiles are BIGINT in DuckDB (INT in Spark)."""
    if not isinstance(node.this, (exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile)):
        return None
    return exp.Cast(this=node.copy(), to=exp.DataType.build("bigint"))


def _avg(node: exp.Avg) -> exp.Expr | None:
    # under FILTER or OVER too: the driver gives each aggregate of the resolved form the clauses
    if isinstance(node.parent, exp.WithinGroup) or isinstance(node.this, exp.Distinct):
        return None
    return typed_call("avg", node.this)  # DuckDB averages a DECIMAL as a DOUBLE


def _sign(node: exp.Sign) -> exp.Expr:
    return spark_expression("CAST(SIGN(_x) AS TINYINT)", _x=node.this)


def _is_nan(node: exp.IsNan) -> exp.Expr:
    return spark_expression("IF(_x IS NULL, NULL, ISNAN(_x))", _x=node.this)  # Spark's isnan(NULL) is false


def _is_inf(node: exp.IsInf) -> exp.Expr:
    return spark_expression(
        "(CAST(_x AS DOUBLE) IN (CAST('Infinity' AS DOUBLE), CAST('-Infinity' AS DOUBLE)))", _x=node.this
    )


# -- dates ---------------------------------------------------------------------------------------
def _day_of_week(value: exp.Expr) -> exp.Expr:
    return spark_expression("CAST(DAYOFWEEK(_x) - 1 AS BIGINT)", _x=value)


def _iso_day_of_week(value: exp.Expr) -> exp.Expr:
    return spark_expression("CAST(WEEKDAY(_x) + 1 AS BIGINT)", _x=value)


def _part_function(name: str) -> Callable[[exp.Expr], exp.Expr]:
    """A date part as DuckDB gives it, a BIGINT (Spark's are INT; ``second`` is whole seconds, where Spark's
    ``EXTRACT(SECOND ...)`` keeps the fraction)."""
    return lambda value: spark_expression(f"CAST({name}(_x) AS BIGINT)", _x=value)


def _epoch(value: exp.Expr) -> exp.Expr:
    """DuckDB's ``epoch``: seconds since 1970 as a DOUBLE, with the fraction."""
    return spark_expression("(UNIX_MICROS(CAST(_x AS TIMESTAMP)) / 1000000D)", _x=value)


def _fraction_of_minute(scale: int) -> Callable[[exp.Expr], exp.Expr]:
    """DuckDB's ``millisecond``/``microsecond``: the seconds of the minute in that unit, a BIGINT (12.345 s is
    12345 ms). Spark's ``EXTRACT(SECOND ...)`` of a timestamp is a DECIMAL(8, 6) of them."""
    return lambda value: spark_expression(
        f"CAST(FLOOR(EXTRACT(SECOND FROM CAST(_x AS TIMESTAMP)) * {scale}) AS BIGINT)", _x=value
    )


_PARTS: dict[str, Callable[[exp.Expr], exp.Expr]] = {
    "DOW": _day_of_week,
    "DAYOFWEEK": _day_of_week,
    "WEEKDAY": _day_of_week,
    "ISODOW": _iso_day_of_week,
    "WEEK": _part_function("WEEKOFYEAR"),
    "WEEKS": _part_function("WEEKOFYEAR"),
    "YEAR": _part_function("YEAR"),
    "QUARTER": _part_function("QUARTER"),
    "MONTH": _part_function("MONTH"),
    "DAY": _part_function("DAYOFMONTH"),
    "DAYOFMONTH": _part_function("DAYOFMONTH"),
    "DOY": _part_function("DAYOFYEAR"),
    "DAYOFYEAR": _part_function("DAYOFYEAR"),
    "HOUR": _part_function("HOUR"),
    "MINUTE": _part_function("MINUTE"),
    "SECOND": _part_function("SECOND"),
    **dict.fromkeys(("MILLISECOND", "MILLISECONDS", "MS", "MSEC"), _fraction_of_minute(1000)),
    **dict.fromkeys(("MICROSECOND", "MICROSECONDS", "US", "USEC"), _fraction_of_minute(1000000)),
    "EPOCH": _epoch,
}


def _extract(node: exp.Extract) -> exp.Expr | None:
    part = _PARTS.get(node.name.upper())
    return part(node.expression) if part else None


def _date_part(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 2 or (name := literal_text(node.expressions[0])) is None:
        return None
    part = _PARTS.get(name.upper())
    return part(node.expressions[1]) if part else None


def _date_diff(node: exp.DateDiff) -> exp.Expr | None:
    """DuckDB's ``date_diff(part, start, end)`` counts the part's boundaries between the two (a year from
    2023-12-31 to 2024-01-01); weeks are whole 7-day spans between the dates."""
    unit = node.args.get("unit")
    name = (unit.name if unit is not None else "DAY").upper()
    end, start = node.this, node.expression
    if name in _WEEK_UNITS:
        return spark_expression("(DATEDIFF(CAST(_e AS DATE), CAST(_s AS DATE)) DIV 7)", _e=end, _s=start)
    spark_unit = _BOUNDARY_UNITS.get(name)
    if spark_unit is None:
        return None
    if spark_unit == "DAY":
        return spark_expression("CAST(DATEDIFF(CAST(_e AS DATE), CAST(_s AS DATE)) AS BIGINT)", _e=end, _s=start)
    return spark_expression(
        f"TIMESTAMPDIFF({spark_unit}, DATE_TRUNC('{spark_unit}', _s), DATE_TRUNC('{spark_unit}', _e))",
        _e=end,
        _s=start,
    )


def _timestamp_trunc(node: exp.TimestampTrunc | exp.DateTrunc) -> exp.Expr:
    """``date_trunc`` is TIMESTAMP in DuckDB for a DATE or TIMESTAMP and TIMESTAMPTZ for a TIMESTAMPTZ: which one
    the operand is, the driver decides (a typed marker); sqlglot's ``DateTrunc`` (a DATE
    operand it could type) is Spark's ``trunc``, a DATE."""
    unit = node.args.get("unit")
    name = (unit.name if unit is not None else "DAY").upper()
    truncated = exp.TimestampTrunc(this=node.this.copy(), unit=exp.Var(this=name))
    if isinstance(node, exp.DateTrunc):
        return exp.Cast(this=truncated, to=exp.DataType.build("timestamp_ntz"))
    return typed_call("naive", truncated, node.this)


def _of_two(template: str) -> Callable[[exp.Anonymous], exp.Expr]:
    """A DuckDB function of two arguments as the Spark ``template`` of ``_a`` and ``_b``."""
    return lambda node: spark_expression(template, _a=node.expressions[0], _b=node.expressions[1])


def _of_doubles(function: str) -> Callable[[exp.Anonymous], exp.Expr]:
    """The Spark aggregate ``function`` of its operand as a DOUBLE."""
    return lambda node: spark_expression(f"{function}(CAST(_x AS DOUBLE))", _x=node.expressions[0])


def _arg_extreme(node: exp.ArgMax | exp.ArgMin, spark_name: str) -> exp.Expr | None:
    """DuckDB's ``arg_max(a, v)`` / ``arg_min`` skip the rows whose ``a`` is NULL (``arg_max_null`` keeps them);
    Spark's ``MAX_BY`` / ``MIN_BY`` skip only those whose ``v`` is: a NULL ``a`` hides its ``v``. With a count
    ``n``, a list of the ``n`` first (see .top_values)."""
    if (count := node.args.get("count")) is not None:
        kind = "arg_max_n" if isinstance(node, exp.ArgMax) else "arg_min_n"
        return typed_call(kind, node.this, node.expression, count)
    value, key = node.this, node.expression
    return spark_expression(f"{spark_name}(_a, IF(_a IS NULL, NULL, _v))", _a=value, _v=key)


def _strptime(node: exp.StrToTime) -> exp.Expr | None:
    """DuckDB's ``strptime(text, format)`` is a TIMESTAMP (Spark's ``TO_TIMESTAMP``: a TIMESTAMP WITH TIME ZONE),
    unless its format reads a zone (``%z``, ``%Z``)."""
    pattern = node.args.get("format")
    if not isinstance(pattern, exp.Literal) or "%z" in pattern.name.lower():
        return None
    return exp.Cast(this=node.copy(), to=exp.DataType.build("timestamp_ntz"))


def _try_strptime(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``try_strptime(text, format)``: :func:`_strptime`'s TIMESTAMP, NULL where the text does not match
    (Spark's ``TRY_TO_TIMESTAMP`` with the format sqlglot translates for ``strptime``)."""
    if len(node.expressions) != 2 or not isinstance(node.expressions[1], exp.Literal):
        return None
    text, pattern = node.expressions
    parsed = _strptime(exp.StrToTime(this=exp.column("_lh_text"), format=pattern.copy()))
    if parsed is None:
        return None
    spark = parsed.sql("spark")
    return spark_expression(spark.replace("TO_TIMESTAMP(", "TRY_TO_TIMESTAMP(", 1), _lh_text=text)


def _from_epoch(node: exp.UnixToTime) -> exp.Expr | None:
    """``epoch_ms(n)`` is a TIMESTAMP in DuckDB, and ``epoch_ms(timestamp)`` the milliseconds since 1970: the
    operand's type decides (``to_timestamp(n)``, a TIMESTAMPTZ, stays as sqlglot writes it)."""
    scale = node.args.get("scale")
    if scale is None or int_literal(scale) != 3:
        return None
    return typed_call("epoch_ms", node.this)


def _date_sub(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``date_sub(part, start, end)``: whole parts elapsed, as Spark's ``timestampdiff`` counts them."""
    if len(node.expressions) != 3 or (name := literal_text(node.expressions[0])) is None:
        return None
    unit = _BOUNDARY_UNITS.get(name.upper()) or ("WEEK" if name.upper() in _WEEK_UNITS else None)
    if unit is None:
        return None
    return spark_expression(f"TIMESTAMPDIFF({unit}, _s, _e)", _s=node.expressions[1], _e=node.expressions[2])


def _checked_spread(spark_name: str, duckdb_name: str) -> Callable[[exp.Expr], exp.Expr | None]:
    """Variance and standard deviation as DuckDB finishes them: a result that is not finite (an overflow, or a NaN
    among the values) fails, where Spark gives Infinity or NaN; of one value, a population spread is 0 whatever
    the value (Spark: NaN for Infinity) and a sample spread NULL, as in Spark."""

    def rewrite(node: exp.Expr) -> exp.Expr | None:
        if not _aggregate_position(node) or node.expression is not None:
            return None
        one_value = "0.0D" if spark_name.endswith("_POP") else "CAST(NULL AS DOUBLE)"
        return spark_expression(
            f"CASE WHEN COUNT(_x) = 1 THEN {one_value} "
            f"WHEN ISNAN({spark_name}(_x)) OR ABS({spark_name}(_x)) = CAST('Infinity' AS DOUBLE) "
            f"THEN RAISE_ERROR('Out of Range Error: {duckdb_name} is out of range!') ELSE {spark_name}(_x) END",
            _x=node.this,
        )

    return rewrite


def _date_add(node: exp.DateAdd) -> exp.Expr | None:
    if not isinstance(node.expression, exp.Interval):
        return None
    return _interval_arithmetic(exp.Add(this=node.this.copy(), expression=node.expression.copy()))


def _interval_arithmetic(node: exp.Add | exp.Sub) -> exp.Expr | None:
    """``DATE ± INTERVAL`` is a TIMESTAMP in DuckDB (a DATE in Spark). Left alone inside a comparison, where the
    value compares the same and a cast would keep Spark from pushing the filter down."""
    if not _is_interval(node.expression) or _is_interval(node.this):
        return None
    if any(isinstance(ancestor, (exp.Predicate, exp.Where, exp.Having, exp.Join)) for ancestor in _ancestors(node)):
        return None
    return typed_call("naive", node.copy(), node.this)


#: DuckDB's ``to_<unit>(n)`` interval constructors: a Spark ANSI interval of one unit and the factor of ``n``
_INTERVAL_UNITS: dict[str, tuple[str, float]] = {
    "to_years": ("YEAR", 1),
    "to_decades": ("YEAR", 10),
    "to_centuries": ("YEAR", 100),
    "to_millennia": ("YEAR", 1000),
    "to_months": ("MONTH", 1),
    "to_weeks": ("DAY", 7),
    "to_days": ("DAY", 1),
    "to_hours": ("HOUR", 1),
    "to_minutes": ("MINUTE", 1),
    "to_seconds": ("SECOND", 1),
    "to_milliseconds": ("SECOND", 1e-3),
    "to_microseconds": ("SECOND", 1e-6),
}


def _interval_of(count: exp.Expr, name: str) -> exp.Expr:
    """``count`` units of ``to_<unit>`` as Spark's ``INTERVAL 1 <UNIT> * count`` (Spark has no interval of an
    expression, ``INTERVAL (n) DAY``, nor DuckDB's ``to_days``)."""
    unit, factor = _INTERVAL_UNITS[name]
    scaled: exp.Expr = exp.Paren(this=count.copy())
    if factor != 1:
        scaled = exp.Mul(this=scaled, expression=exp.Literal.number(repr(factor) if factor < 1 else int(factor)))
    one = exp.Interval(this=exp.Literal.string("1"), unit=exp.var(unit))
    return exp.Mul(this=one, expression=scaled)


def _interval_function(name: str) -> Callable[[exp.Anonymous], exp.Expr | None]:
    """The rewrite of DuckDB's ``to_<unit>(n)`` called ``name``."""
    return lambda node: _interval_of(node.expressions[0], name) if len(node.expressions) == 1 else None


def _list_apply(node: exp.Anonymous) -> exp.Expr:
    """``list_apply(l, x -> ...)`` (and ``array_apply``, ``apply``) is ``list_transform``: Spark's ``transform``."""
    return exp.Anonymous(this="TRANSFORM", expressions=[e.copy() for e in node.expressions])


def _interval(node: exp.Interval) -> exp.Expr | None:
    """``INTERVAL (expr) DAY``: an interval of an expression, not a literal."""
    unit = node.unit.name.upper() if node.unit is not None else ""
    name = {"YEAR": "to_years", "MONTH": "to_months", "WEEK": "to_weeks", "DAY": "to_days", "HOUR": "to_hours"}.get(
        unit, {"MINUTE": "to_minutes", "SECOND": "to_seconds"}.get(unit, "")
    )
    if isinstance(node.this, exp.Literal) or not name or node.this is None:
        return None
    return _interval_of(node.this, name)


def _equals_any(node: exp.EQ) -> exp.Expr | None:
    """``x = ANY (subquery)`` (how DuckDB stores ``x IN (subquery)`` in a view) as ``x IN (subquery)``."""
    if not isinstance(node.expression, exp.Any) or not isinstance(node.expression.this, exp.Subquery):
        return quantified_comparison(node)
    select = node.expression.this.this
    value = _row_as_tuple(node.this)
    if isinstance(value, exp.Tuple) and isinstance(select, exp.Query):
        return _in_subquery(exp.In(this=value, query=node.expression.this.copy()))
    if _in_filter_position(node) or not isinstance(select, exp.Query) or len(select.selects) != 1:
        return exp.In(this=node.this.copy(), query=node.expression.this.copy())
    return _null_aware_in(node.this, select)


def _row_as_tuple(value: exp.Expr) -> exp.Expr:
    """DuckDB's ``row(a, b)`` (how it stores the row of ``(a, b) IN (subquery)`` in a view) as the tuple."""
    if isinstance(value, exp.Anonymous) and value.name.lower() == "row":
        return exp.Tuple(expressions=[e.copy() for e in value.expressions])
    return value


def _in_subquery(node: exp.In) -> exp.Expr | None:
    """``x IN (subquery)`` is NULL in DuckDB (and SQL) when ``x`` is NULL and the subquery has rows, or when no
    row matches and the subquery holds a NULL; Spark answers FALSE in a projection (its existence join). Left to
    Spark where only TRUE counts: a WHERE, HAVING, QUALIFY or join condition, or a CASE condition, directly or
    under AND/OR/NOT (Spark's null-aware anti join answers NOT IN there). A row ``(a, b) IN (subquery)`` is
    rewritten everywhere (:func:`_null_aware_in`)."""
    query = node.args.get("query")
    select = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(select, exp.Query):
        return None
    if isinstance(node.this, exp.Tuple) and len(node.this.expressions) == len(select.selects) > 1:
        # in a filter too: under NOT, Spark's row NOT IN keeps the rows DuckDB's NULL drops
        return _null_aware_in(node.this, select)
    if len(select.selects) != 1 or _in_filter_position(node):
        return None
    return _null_aware_in(node.this, select)


def _null_aware_in(value: exp.Expr, select: exp.Query) -> exp.Expr:
    """``value IN (select)`` as DuckDB answers it, from Spark's TRUE/FALSE ``IN`` and two ``EXISTS``: TRUE where a
    row equals it; else NULL where it (a field of a row ``(a, b)``) is NULL and the subquery has rows, or where a
    subquery row holds a NULL; else FALSE. (For a row that is not the standard's comparison: DuckDB's ``(1, NULL)
    IN (SELECT 2, 3)`` is NULL.)"""
    fields = value.expressions if isinstance(value, exp.Tuple) else [value]
    names = [f"__in_v{i}" for i in range(len(fields))]
    null_field = exp.or_(*(field.copy().is_(exp.null()) for field in fields))
    null_row = rows_where(select, names, exp.or_(*(exp.column(n).is_(exp.null()) for n in names)))
    return exp.Case(
        ifs=[
            exp.If(this=exp.In(this=value.copy(), query=exp.Subquery(this=select.copy())), true=exp.true()),
            exp.If(
                this=null_field,
                true=exp.Case(ifs=[exp.If(this=exp.Exists(this=select.copy()), true=exp.null())], default=exp.false()),
            ),
            exp.If(this=null_row, true=exp.null()),
        ],
        default=exp.false(),
    )


def _in_filter_position(node: exp.Expr) -> bool:
    """Whether ``node``'s value is only tested for TRUE: it sits, through AND, OR, NOT and parentheses, in a
    WHERE, HAVING, QUALIFY or join condition, or is a CASE branch's condition."""
    child, parent = node, node.parent
    while isinstance(parent, (exp.And, exp.Or, exp.Not, exp.Paren)):
        child, parent = parent, parent.parent
    if isinstance(parent, exp.If):
        return parent.this is child
    return isinstance(parent, (exp.Where, exp.Having, exp.Qualify, exp.Join))


def _is_interval(node: exp.Expr) -> bool:
    """An interval literal, or one of an expression as :func:`_interval_of` writes it."""
    return isinstance(node, exp.Interval) or (isinstance(node, exp.Mul) and isinstance(node.this, exp.Interval))


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    found, parent = [], node.parent
    while parent is not None and not isinstance(parent, exp.Query):
        found.append(parent)
        parent = parent.parent
    return found


# -- text ----------------------------------------------------------------------------------------
def _regexp_replace(node: exp.RegexpReplace) -> exp.Expr | None:
    """DuckDB replaces the first match unless the options hold ``g``; ``i`` ignores case; ``\\1`` in the
    replacement is a group (Spark's ``$1``)."""
    if node.args.get("position") is not None or node.args.get("occurrence") is not None:
        return None
    options = node.args.get("modifiers")
    flags = literal_text(options) if options is not None else ""
    if flags is None or set(flags) - set("gicl"):
        return None  # options Spark has no equivalent for keep Spark's plain form
    pattern, replacement = node.expression, node.args.get("replacement") or string_literal("")
    literal_pattern = literal_text(pattern)
    if "l" in flags and literal_pattern is not None:
        literal_pattern = re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", literal_pattern)
    case = "(?i)" if "i" in flags and "c" not in flags else ""
    every = "g" in flags
    literal_replacement = literal_text(replacement)
    if literal_replacement is not None:
        replacement = string_literal(_java_replacement(literal_replacement, group_shift=0 if every else 1))
    elif not every:
        replacement = exp.Anonymous(this="concat", expressions=[string_literal("$1"), replacement.copy()])
    if every:
        new_pattern = string_literal(case + literal_pattern) if literal_pattern is not None else pattern.copy()
        if case and literal_pattern is None:
            new_pattern = exp.Anonymous(this="concat", expressions=[string_literal(case), pattern.copy()])
    elif literal_pattern is not None:
        new_pattern = string_literal(
            f"^([\\s\\S]*?)(?{case[2:-1]}:{literal_pattern})" if case else f"^([\\s\\S]*?)(?:{literal_pattern})"
        )
    else:
        new_pattern = exp.Anonymous(
            this="concat", expressions=[string_literal(f"^([\\s\\S]*?){case}(?:"), pattern.copy(), string_literal(")")]
        )
    return exp.RegexpReplace(this=node.this.copy(), expression=new_pattern, replacement=replacement)


def _java_replacement(text: str, group_shift: int) -> str:
    """A DuckDB (RE2) replacement as Java's: ``\\N`` is group N (shifted past a leading group of our own), a
    ``$`` is literal."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            out.append(f"${int(following) + group_shift}" if following.isdigit() else "\\" + following)
            index += 2
            continue
        out.append("\\$" if char == "$" else char)
        index += 1
    return ("$1" if group_shift else "") + "".join(out)


def _format(node: exp.Format) -> exp.Expr | None:
    """DuckDB's ``format`` (fmt syntax) as Spark's ``format_string``: ``{}``, ``{:d}`` and ``{:.Nf}``; NULL when an
    argument is NULL, as DuckDB returns."""
    text = literal_text(node.this)
    if text is None:
        return None
    pieces, index = [], 0
    for match in re.finditer(r"\{\{|\}\}|\{(:d|:\.\d+f)?\}|%", text):
        pieces.append(text[index : match.start()])
        token, spec = match.group(0), match.group(1)
        pieces.append({"{{": "{", "}}": "}", "%": "%%"}.get(token) or ("%s" if not spec else "%" + spec[1:]))
        index = match.end()
    rest = text[index:]
    if "{" in rest or "}" in rest or any("{" in p or "}" in p for p in pieces[::2]):
        return None  # a format Spark cannot spell keeps Spark's plain form
    arguments = [a.copy() for a in node.expressions]
    formatted = exp.Anonymous(this="format_string", expressions=[string_literal("".join(pieces) + rest), *arguments])
    if not arguments:
        return formatted
    nulls: list[exp.Expr] = [exp.Is(this=a.copy(), expression=exp.Null()) for a in arguments]
    any_null = functools.reduce(lambda a, b: exp.Or(this=a, expression=b), nulls)
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=formatted)


#: DuckDB's bound on a substring's offset and length (``AssertInSupportedRange``: a ``uint32`` either way)
_SUBSTRING_BOUND = 2**32 - 1
_SUBSTRING_CHECKS = " ".join(
    f"WHEN {operand} {sign} {bound} THEN RAISE_ERROR('Out of Range Error: Substring {name} outside of supported "
    f"range ({sign} {bound})')"
    for operand, name in (("_o", "offset"), ("_l", "length"))
    for sign, bound in ((">", _SUBSTRING_BOUND), ("<", -_SUBSTRING_BOUND - 1))
)
#: DuckDB's ``SubstringUnicode`` in 0-based characters of a string ``_n`` long, from offset ``_o`` and length
#: ``_l``. An offset of 0 or more counts forward: characters ``[st, en)``, empty once ``st`` is past the end
#: (also with a negative length). A negative offset counts back from the end, ``1 - _o`` characters: a range
#: that begins before the string is cut at its first character, one that ends before it is empty.
_SUBSTRING_FORWARD = (
    "CASE WHEN {st} >= _n OR {en} <= {st} THEN '' "
    "ELSE SUBSTRING(_s, CAST({st} + 1 AS INT), CAST(LEAST({en}, _n) - {st} AS INT)) END"
).format(st="IF(_l < 0, GREATEST(0, _o - 1 + _l), GREATEST(0, _o - 1))", en="IF(_l < 0, _o - 1, _o - 1 + _l)")
#: (counted back from the end: the range's first and last character)
_BACK_START, _BACK_END = "IF(_l < 0, 1 - _o - _l, 1 - _o)", "IF(_l < 0, 1 - _o, 1 - _o - _l)"
_SUBSTRING_BACKWARD = (
    "CASE WHEN {en} > _n THEN '' ELSE SUBSTRING(_s, CAST({begin} + 1 AS INT), CAST({finish} - {begin} AS INT)) END"
).format(
    en=_BACK_END,
    begin=f"IF({_BACK_START} > _n, 0, _n - {_BACK_START} + 1)",
    finish=f"IF({_BACK_END} <= 0, _n, _n - {_BACK_END} + 1)",
)
_SUBSTRING = (
    f"CASE WHEN _s IS NULL OR _o IS NULL OR _l IS NULL THEN NULL {_SUBSTRING_CHECKS} "
    f"WHEN _l = 0 THEN '' WHEN _o >= 0 THEN {_SUBSTRING_FORWARD} ELSE {_SUBSTRING_BACKWARD} END"
)


def _substring(node: exp.Substring) -> exp.Expr | None:
    """DuckDB's ``substring(s, start[, length])`` where Spark's differs: position 0 is the one before the first
    character (``substr('hello', 0, 3)`` is ``'he'``; Spark reads 0 as 1), a negative length takes the characters
    before the start (``substring('hello', 3, -2)`` is ``'he'``; Spark gives ``''``), a start before the string
    cuts the range at its first character, and an offset or length beyond 32 bits fails with DuckDB's message.

    A literal start after 0 with a literal length of 0 or more, or with none, keeps Spark's plain form, which
    agrees there (TPC-DS's ``substr(s, 1, 30)``).
    """
    start, length = node.args.get("start"), node.args.get("length")
    if start is None:
        return None
    first = int_literal(start)
    if length is None and first is not None:
        return None
    count = int_literal(length) if length is not None else None
    if first is not None and 0 < first < 2**31 and count is not None and 0 <= count < 2**31:
        return None
    return spark_expression(
        _SUBSTRING,
        _s=node.this,
        _o=_as_bigint(start),
        _l=_as_bigint(length) if length is not None else exp.Literal.number(_SUBSTRING_BOUND),
        _n=spark_expression("CAST(CHAR_LENGTH(_s) AS BIGINT)", _s=node.this),
    )


def _as_bigint(node: exp.Expr) -> exp.Expr:
    return node.copy() if int_literal(node) is not None else exp.Cast(this=node.copy(), to=exp.DataType.build("bigint"))


def _left_or_right(node: exp.Left | exp.Right) -> exp.Expr | None:
    """A negative count keeps all but that many characters at the other end in DuckDB (Spark gives '')."""
    count = node.expression
    if int_literal(count) is not None and int_literal(count) >= 0:  # type: ignore[operator]
        return None
    plain = type(node)(this=node.this.copy(), expression=count.copy())
    rest = "SUBSTRING(_s, 1, GREATEST(LENGTH(_s) + _n, 0))" if isinstance(node, exp.Left) else "SUBSTRING(_s, 1 - _n)"
    return spark_expression(f"CASE WHEN _n < 0 THEN {rest} ELSE _plain END", _s=node.this, _n=count, _plain=plain)


def _ord(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 1:
        return None
    return spark_expression(
        "CASE WHEN _s = '' THEN -1 ELSE ASCII(_s) END", _s=node.expressions[0]
    )  # code point; -1 for ''


def _monthname(node: exp.Monthname) -> exp.Expr:
    return spark_expression("DATE_FORMAT(_x, 'MMMM')", _x=node.this)


def _dayname(node: exp.Dayname) -> exp.Expr:
    return spark_expression("DATE_FORMAT(_x, 'EEEE')", _x=node.this)


def _similar_to(node: exp.SimilarTo) -> exp.Expr | None:
    pattern = literal_text(node.expression)
    if pattern is None:
        return None
    return exp.RegexpLike(this=node.this.copy(), expression=string_literal(f"^(?:{pattern})$"))


def _glob(node: exp.Glob) -> exp.Expr | None:
    pattern = literal_text(node.expression)
    if pattern is None:
        return None
    regex, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            regex.append("[\\s\\S]*")
        elif char == "?":
            regex.append("[\\s\\S]")
        elif char == "[" and (close := pattern.find("]", index + 2)) != -1:
            inner = pattern[index + 1 : close]
            regex.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner).replace("\\", "\\\\") + "]")
            index = close
        else:
            regex.append(re.escape(char))
        index += 1
    return exp.RegexpLike(this=node.this.copy(), expression=string_literal("^" + "".join(regex) + "$"))


# -- lists ---------------------------------------------------------------------------------------
def _ordered_values(value: exp.Expr, order: list[exp.Ordered]) -> exp.Expr:
    """The group's values of ``value`` in DuckDB's ``ORDER BY`` order, NULLs kept (``collect_list`` drops them)."""
    fields: list[exp.Expr] = []
    for position, ordered in enumerate(order):
        fields += [string_literal(f"k{position}"), ordered.this.copy()]
    rows: exp.Expr = exp.Anonymous(
        this="collect_list",
        expressions=[exp.Anonymous(this="named_struct", expressions=[*fields, string_literal("v"), value.copy()])],
    )
    if order:
        comparison: exp.Expr = exp.Literal.number(0)
        for position, ordered in reversed(list(enumerate(order))):
            nulls = 1 if not ordered.args.get("nulls_first") else -1
            direction = -1 if ordered.args.get("desc") else 1
            comparison = spark_expression(
                f"CASE WHEN l.k{position} IS NULL AND r.k{position} IS NULL THEN _next "
                f"WHEN l.k{position} IS NULL THEN {nulls} WHEN r.k{position} IS NULL THEN {-nulls} "
                f"WHEN l.k{position} < r.k{position} THEN {-direction} "
                f"WHEN l.k{position} > r.k{position} THEN {direction} ELSE _next END",
                _next=comparison,
            )
        rows = spark_expression("ARRAY_SORT(_rows, (l, r) -> _cmp)", _rows=rows, _cmp=comparison)
    return spark_expression("TRANSFORM(_rows, e -> e.v)", _rows=rows)


def _split_order(node: exp.Expr) -> tuple[exp.Expr, list[exp.Ordered]] | None:
    inner = node.this
    if isinstance(inner, exp.Order):
        return inner.this, list(inner.expressions)
    if isinstance(inner, exp.Distinct):
        return None
    return inner, []


def _list_aggregate(node: exp.ArrayAgg) -> exp.Expr | None:
    distinct = node.this
    if isinstance(distinct, exp.Distinct) and len(distinct.expressions) == 1 and _aggregate_position(node):
        # list(DISTINCT x) keeps one NULL, as DuckDB's does (Spark's collect_set drops it)
        return spark_expression(
            "CASE WHEN COUNT(1) = 0 THEN NULL ELSE ARRAY_DISTINCT(_values) END",
            _values=_ordered_values(distinct.expressions[0], []),
        )
    parts = _split_order(node)
    if parts is None or not _aggregate_position(node):
        return None
    value, order = parts
    if isinstance(value, exp.Distinct) and len(value.expressions) == 1:
        # list(DISTINCT x ORDER BY x): the ordered values, each kept where it first comes (DuckDB orders a DISTINCT
        # aggregate by its arguments only, and fails another key: its Binder Error is Spark's analysis error here)
        return spark_expression(
            "CASE WHEN COUNT(1) = 0 THEN NULL ELSE ARRAY_DISTINCT(_values) END",
            _values=_ordered_values(value.expressions[0], order),
        )
    return spark_expression("CASE WHEN COUNT(1) = 0 THEN NULL ELSE _values END", _values=_ordered_values(value, order))


def _first_or_last(node: exp.First | exp.Last, standing: exp.Expr | None = None) -> exp.Expr | None:
    """``first(x ORDER BY k)`` / ``last``: the first (last) of the ordered values; ``standing`` is the node whose
    place in the tree ``node`` takes, where that is another."""
    if not isinstance(node.this, exp.Order) or not _aggregate_position(standing or node):
        return None
    value, order = node.this.this, list(node.this.expressions)
    index = 1 if isinstance(node, exp.First) else -1
    return spark_expression(f"TRY_ELEMENT_AT(_values, {index})", _values=_ordered_values(value, order))


def _arbitrary(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``arbitrary`` is its ``first`` (NULLs included); Spark has no ``arbitrary``."""
    if len(node.expressions) != 1:
        return None
    first = exp.First(this=node.expressions[0].copy())
    return _first_or_last(first, standing=node) or first


def _concatenated_as_text(node: exp.Concat | exp.ConcatWs | exp.DPipe) -> exp.Expr | None:
    """``concat(a, ...)``, ``concat_ws`` and ``||`` join DuckDB's text of each operand: a NULL date in ``concat``
    is '' (Spark's ``COALESCE(d, '')`` casts '' to a date and fails), a DOUBLE ``1e+300``, a TIMESTAMPTZ ends in
    ``+00``. Each operand that is not text is a marker the driver resolves by its type (lists stay lists)."""

    def operand(value: exp.Expr) -> exp.Expr:
        if isinstance(value, exp.Literal) and value.is_string:
            return value
        return typed_call("concat_operand", value)

    if isinstance(node, exp.DPipe):
        node.set("this", operand(node.this))
        node.set("expression", operand(node.expression))
        return node
    values = node.expressions
    keep = 1 if isinstance(node, exp.ConcatWs) else 0  # concat_ws's separator
    node.set("expressions", [*values[:keep], *(operand(v) for v in values[keep:])])
    return node


def _list_concat(node: exp.ArrayConcat) -> exp.Expr:
    lists = [node.this, *node.expressions]
    return exp.Anonymous(
        this="concat", expressions=[spark_expression("COALESCE(_l, ARRAY())", _l=item) for item in lists]
    )


def _flatten(node: exp.Flatten) -> exp.Expr:
    return spark_expression("FLATTEN(FILTER(_l, e -> e IS NOT NULL))", _l=node.this)  # DuckDB skips NULL inner lists


def _split_part(node: exp.SplitPart) -> exp.Expr | None:
    index = node.args.get("part_index")
    if index is None:
        return None
    if int_literal(index) not in (0, None):
        return None
    split = exp.SplitPart(this=node.this.copy(), delimiter=node.args["delimiter"].copy(), part_index=index.copy())
    return spark_expression(  # Spark fails on part 0, DuckDB gives ''
        "CASE WHEN _i <> 0 THEN _split WHEN _s IS NOT NULL AND _d IS NOT NULL THEN '' END",
        _i=index,
        _split=split,
        _s=node.this,
        _d=node.args["delimiter"],
    )


def _list_contains(node: exp.ArrayContains) -> exp.Expr:
    return duckdb_list_contains(node.this, node.expression)


def _list_unique(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 1:
        return None
    return spark_expression(
        "CAST(SIZE(ARRAY_DISTINCT(FILTER(_l, e -> e IS NOT NULL))) AS BIGINT)", _l=node.expressions[0]
    )


def _aggregate_of_list(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) < 2 or (name := literal_text(node.expressions[1])) is None:
        return None
    return list_aggregate(name, node.expressions[0], node.expressions[2:])


def _list_function(aggregate: str) -> Callable[[exp.Anonymous], exp.Expr | None]:
    """``list_<aggregate>(l, ...)``, DuckDB's ``list_aggregate(l, '<aggregate>', ...)``."""

    def rewrite(node: exp.Anonymous) -> exp.Expr | None:
        if not node.expressions:
            return None
        return list_aggregate(aggregate, node.expressions[0], node.expressions[1:])

    return rewrite


def _commons_math(method: str) -> Callable[[exp.Anonymous], exp.Expr | None]:
    """``gcd`` and ``lcm`` through Spark's ``reflect`` of commons-math3 (on Spark's classpath), NULL in, NULL out."""

    def rewrite(node: exp.Anonymous) -> exp.Expr | None:
        if len(node.expressions) != 2:
            return None
        return spark_expression(
            "CASE WHEN _a IS NULL OR _b IS NULL THEN NULL ELSE CAST(REFLECT('org.apache.commons.math3.util.ArithmeticUtils', "
            f"'{method}', CAST(_a AS BIGINT), CAST(_b AS BIGINT)) AS BIGINT) END",
            _a=node.expressions[0],
            _b=node.expressions[1],
        )

    return rewrite


def _printf(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``printf`` is NULL when an argument is NULL (Spark's prints ``null``)."""
    if not node.expressions:
        return None
    formatted = exp.Anonymous(this="FORMAT_STRING", expressions=[e.copy() for e in node.expressions])
    nulls: list[exp.Expr] = [exp.Is(this=a.copy(), expression=exp.Null()) for a in node.expressions[1:]]
    if not nulls:
        return formatted
    any_null = functools.reduce(lambda a, b: exp.Or(this=a, expression=b), nulls)
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=formatted)


def _list_distinct(node: exp.ArrayDistinct) -> exp.Expr:
    # DuckDB 1.5 drops NULLs and lists the values in the reverse order of their first appearance
    return spark_expression("REVERSE(ARRAY_DISTINCT(FILTER(_l, e -> e IS NOT NULL)))", _l=node.this)


#: ``meta`` key of a ``Bracket`` whose index sqlglot moved to 0-based when it read DuckDB (see
#: :func:`mark_moved_indexes`)
INDEX_MOVED = "lh_index_moved"


def mark_moved_indexes(tree: exp.Expr) -> exp.Expr:
    """Mark (in ``meta``) each ``l[i]`` of ``tree`` whose index sqlglot moved to 0-based, before other rewrites
    change its index.

    Reading DuckDB, sqlglot subtracts one from an index it types as an integer without a schema (a literal,
    ``year(d) - 2022``, ``CAST(s AS INTEGER)``; not a bare column) when the container may be a list. The decision
    is taken again here the way sqlglot took it (on an untyped copy): once the index's ``CAST`` has become a
    marker, its type is no longer known, and the one subtracted would stay subtracted.

    >>> import sqlglot
    >>> tree = mark_moved_indexes(sqlglot.parse_one("SELECT l[2], l[year(d) - 2022], l[i], m['k']", read="duckdb"))
    >>> [b.meta.get(INDEX_MOVED) for b in tree.find_all(exp.Bracket)]
    [True, True, False, False]
    """
    for bracket in tree.find_all(exp.Bracket):
        if len(bracket.expressions) == 1:
            bracket.meta[INDEX_MOVED] = _index_moved(bracket)
    return tree


def _index_moved(bracket: exp.Bracket) -> bool:
    container = annotate_types(_untyped(bracket.this), dialect="duckdb")
    index = annotate_types(_untyped(bracket.expressions[0]), dialect="duckdb")
    return container.is_type(exp.DataType.Type.UNKNOWN, exp.DataType.Type.ARRAY) and index.is_type(
        *exp.DataType.INTEGER_TYPES
    )


def _untyped(node: exp.Expr) -> exp.Expr:
    copy = node.copy()
    for part in copy.walk():
        part.type = None
    return copy


def _duckdb_index(index: exp.Expr) -> exp.Expr:
    """The index as written in DuckDB, given one sqlglot moved: the one it subtracted added back."""
    if (value := int_literal(index)) is not None:
        return exp.Literal.number(value + 1)
    if isinstance(index, exp.Add) and int_literal(index.expression) == -1:  # sqlglot's own shape: exp + -1
        return index.this.copy()
    return exp.Add(this=index.copy(), expression=exp.Literal.number(1))


def _bracket(node: exp.Bracket) -> exp.Expr | None:
    if len(node.expressions) != 1 or node.args.get("offset") or node.args.get("safe"):
        return None
    index = node.expressions[0]
    if isinstance(index, exp.Literal) and index.is_string:
        return None  # struct fields and map keys by name keep sqlglot's form
    if isinstance(index, exp.Slice):
        return typed_call("slice", node.this, index.this or exp.Null(), index.expression or exp.Null())
    moved = node.meta.get(INDEX_MOVED)
    if moved is None:  # a tree not marked by mark_moved_indexes: nothing has rewritten its index yet
        moved = _index_moved(node)
    return typed_call("element", node.this, _duckdb_index(index) if moved else index)


def _list_slice(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 3:
        return None
    return typed_call("slice", *node.expressions)


def _length(node: exp.Length) -> exp.Expr:
    return typed_call("length", node.this)  # DuckDB's length also counts a list's elements


def _array_length(node: exp.ArraySize) -> exp.Expr | None:
    """DuckDB's ``array_length(l)`` and ``array_length(l, 1)``: Spark's ``size``; another dimension is left to
    Spark."""
    if node.expression is not None and int_literal(node.expression) != 1:
        return None
    return exp.Anonymous(this="SIZE", expressions=[node.this.copy()])


def _byte_levenshtein(node: exp.Levenshtein) -> exp.Expr | None:
    """DuckDB's ``levenshtein(a, b)`` counts edits of UTF-8 bytes (``'héllo'`` is 6 long), Spark's of characters:
    each byte is read back as one ISO-8859-1 character, so Spark's distance is DuckDB's."""
    if node.expression is None or any(node.args.get(k) for k in node.args if k not in ("this", "expression")):
        return None
    as_bytes = "DECODE(ENCODE(_s, 'UTF-8'), 'ISO-8859-1')"
    return exp.Anonymous(
        this="LEVENSHTEIN",
        expressions=[spark_expression(as_bytes, _s=node.this), spark_expression(as_bytes, _s=node.expression)],
    )


def _with_duckdb_type(
    duckdb_type: str, rewrite: Callable[[Any], exp.Expr | None] | None = None
) -> Callable[[Any], exp.Expr | None]:
    """A rewrite that casts ``rewrite``'s form (or the node itself) to ``duckdb_type``: functions whose values
    Spark computes as DuckDB does, in another integer type (``strpos`` and ``levenshtein`` are a BIGINT in
    DuckDB, an INT in Spark)."""

    def cast(node: Any) -> exp.Expr | None:
        form = rewrite(node) if rewrite is not None else node
        return None if form is None else exp.Cast(this=form.copy(), to=exp.DataType.build(duckdb_type))

    return cast


def _cast(node: exp.Cast) -> exp.Expr | None:
    """Casts of a DOUBLE to FLOAT (DuckDB fails out of FLOAT's range) and to text (DuckDB spells ``1e+300`` where
    Spark spells ``1.0E300``): typed, as only a floating-point operand differs."""
    safe = isinstance(node, exp.TryCast) or bool(node.args.get("safe"))
    if node.to.is_type(exp.DataType.Type.FLOAT):
        return typed_call("to_float", node.this, exp.Boolean(this=safe))
    if node.to.is_type(*exp.DataType.TEXT_TYPES) and not node.to.expressions:
        return typed_call("to_text", node.this, exp.Boolean(this=safe))
    return None


def _sum(node: exp.Sum) -> exp.Expr | None:
    if isinstance(node.this, exp.Distinct):  # under FILTER or OVER too, as for avg
        return None
    return typed_call("sum", node.this)


def _list_extract(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 2:
        return None
    return typed_call("element", node.expressions[0], node.expressions[1])


def _list_position(node: exp.Anonymous) -> exp.Expr | None:
    return _position(*node.expressions) if len(node.expressions) == 2 else None


def _position(container: exp.Expr, value: exp.Expr) -> exp.Expr:
    """DuckDB's 1-based position of ``value`` in a list, NULL where it is not there (Spark's is 0)."""
    return spark_expression("NULLIF(ARRAY_POSITION(_l, _x), 0)", _l=container, _x=value)


def _list_reverse(node: exp.Anonymous) -> exp.Expr | None:
    return exp.Anonymous(this="reverse", expressions=[e.copy() for e in node.expressions])


def _product(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 1 or not _aggregate_position(node):
        return None
    return spark_expression(
        "CASE WHEN COUNT(_x) = 0 THEN NULL "
        "ELSE AGGREGATE(COLLECT_LIST(CAST(_x AS DOUBLE)), CAST(1 AS DOUBLE), (acc, v) -> acc * v) END",
        _x=node.expressions[0],
    )


def _quantile(node: exp.PercentileCont) -> exp.Expr | None:
    """``quantile_cont(x, q)``: DuckDB's interpolation and result type (a typed marker, see .quantiles), under
    ``FILTER`` and ``OVER`` too; a list of fractions is Spark's ``percentile`` (DOUBLEs)."""
    if node.expression is None or isinstance(node.parent, exp.WithinGroup):
        return None
    if quantile_fraction(node.expression) is None:
        if not _aggregate_position(node):
            return None
        return exp.Anonymous(this="percentile", expressions=[node.this.copy(), node.expression.copy()])
    return typed_call("quantile_cont", node.this, node.expression, exp.false())


def _median(node: exp.Median) -> exp.Expr | None:
    return typed_call("quantile_cont", node.this, exp.Literal.number("0.5"), exp.false())


def _discrete_quantile(node: exp.PercentileDisc | exp.Quantile) -> exp.Expr | None:
    """``quantile_disc(x, q)`` and DuckDB's ``quantile(x, q)``, which is discrete too (sqlglot writes Spark's
    interpolating ``percentile`` for it): DuckDB's position (see .quantiles), under ``FILTER`` and ``OVER`` too."""
    fraction = node.args.get("quantile") if isinstance(node, exp.Quantile) else node.expression
    if fraction is None or isinstance(node.parent, exp.WithinGroup) or quantile_fraction(fraction) is None:
        return None
    return typed_call("quantile_disc", node.this, fraction, exp.false())


def _within_group(node: exp.WithinGroup) -> exp.Expr | None:
    """``percentile_cont(q)`` and ``percentile_disc(q) WITHIN GROUP (ORDER BY x [DESC])``: DuckDB's quantiles
    (sqlglot would write Spark's percentile_approx, an estimate, and drop ``DESC``)."""
    order = node.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    kinds = {exp.PercentileCont: "quantile_cont", exp.PercentileDisc: "quantile_disc"}
    kind = kinds.get(type(node.this))
    if kind is None or len(keys) != 1 or quantile_fraction(node.this.this) is None:
        return None
    key = keys[0]
    value = key.this if isinstance(key, exp.Ordered) else key
    descending = bool(key.args.get("desc")) if isinstance(key, exp.Ordered) else False
    return typed_call(kind, value, node.this.this, exp.Boolean(this=descending))


def _extreme_values(node: exp.Max | exp.Min) -> exp.Expr | None:
    """DuckDB's ``max(x, n)`` / ``min(x, n)``: a list of the ``n`` largest / smallest (see .top_values)."""
    count = node.expressions[0] if node.expressions else node.args.get("count")
    if count is None:
        return None
    return typed_call("max_n" if isinstance(node, exp.Max) else "min_n", node.this, count)


def _list_reduce(node: exp.Anonymous) -> exp.Expr | None:
    """DuckDB's ``list_reduce(l, (acc, x[, i]) -> ..., [initial])`` as Spark's ``AGGREGATE``: without an initial
    value the first element starts and an empty list fails with DuckDB's message; ``i`` is the 1-based position of
    ``x``. NULL for a NULL list."""
    if len(node.expressions) not in (2, 3) or not isinstance(node.expressions[1], exp.Lambda):
        return None
    items, function = node.expressions[0], node.expressions[1]
    parameters = function.expressions
    if len(parameters) not in (2, 3):
        return None
    body = function.this.copy()
    initial = node.expressions[2] if len(node.expressions) == 3 else None
    offset = 0 if initial is not None else 1  # the elements folded start after the first without an initial value
    if len(parameters) == 3:  # fold (element, position) pairs: the position of x in the list, 1-based
        pair, index = "_lh_pair", parameters[2].name
        element = parameters[1].name
        for name in list(body.find_all(exp.Identifier)):  # a lambda's body names its parameters bare
            if name.name in (element, index) and not isinstance(name.parent, (exp.Column, exp.Dot, exp.Table)):
                field = "x" if name.name == element else "i"
                name.replace(exp.column(field, table=pair))
        folded = spark_expression(
            f"TRANSFORM(SLICE(_l, {1 + offset}, SIZE(_l)), (_lh_x, _lh_i) -> "
            f"NAMED_STRUCT('x', _lh_x, 'i', _lh_i + {1 + offset}))",
            _l=items,
        )
        step = exp.Lambda(this=body, expressions=[parameters[0].copy(), exp.to_identifier(pair)])
    else:
        folded = spark_expression(f"SLICE(_l, {1 + offset}, SIZE(_l))", _l=items)
        step = function.copy()
    start = (
        initial.copy()
        if initial is not None
        else spark_expression(
            "IF(SIZE(_l) = 0, RAISE_ERROR('Cannot perform list_reduce on an empty input list'), ELEMENT_AT(_l, 1))",
            _l=items,
        )
    )
    return spark_expression(
        "CASE WHEN _l IS NULL THEN NULL ELSE AGGREGATE(_f, _s, _step) END", _l=items, _f=folded, _s=start, _step=step
    )


_REWRITES: dict[type[exp.Expr], Callable[[Any], exp.Expr | None]] = {
    exp.Upper: duckdb_upper,
    exp.Lower: duckdb_lower,
    exp.Log: _logarithm,
    exp.Ln: _logarithm,
    exp.Sqrt: _sqrt,
    exp.Trunc: _trunc,
    exp.Sign: _sign,
    exp.IsInf: _is_inf,
    exp.IsNan: _is_nan,
    exp.Window: _window,
    exp.Avg: _avg,
    exp.Floor: _rounding,
    exp.Ceil: _rounding,
    exp.Substring: _substring,
    exp.Left: _left_or_right,
    exp.Right: _left_or_right,
    exp.ArrayContains: _list_contains,
    # DuckDB's contains takes a string or a list (list_contains): the operand's type decides
    exp.Contains: lambda node: typed_call("contains", node.this, node.expression),
    exp.ArrayToString: lambda node: array_to_string(node.this, node.expression),
    exp.DayOfWeek: lambda node: _day_of_week(node.this),
    exp.Year: lambda node: _PARTS["YEAR"](node.this),
    exp.Quarter: lambda node: _PARTS["QUARTER"](node.this),
    exp.Month: lambda node: _PARTS["MONTH"](node.this),
    exp.Day: lambda node: _PARTS["DAY"](node.this),
    exp.DayOfMonth: lambda node: _PARTS["DAY"](node.this),
    exp.DayOfYear: lambda node: _PARTS["DAYOFYEAR"](node.this),
    exp.Hour: lambda node: _PARTS["HOUR"](node.this),
    exp.Minute: lambda node: _PARTS["MINUTE"](node.this),
    exp.Second: lambda node: _PARTS["SECOND"](node.this),
    exp.TimeToUnix: lambda node: _epoch(node.this),
    exp.UnixToTime: _from_epoch,
    exp.StrToTime: lambda node: _strptime(node),
    exp.ArgMax: lambda node: _arg_extreme(node, "MAX_BY"),
    # DuckDB's list_has_any / &&: false where only NULLs could match (Spark's ARRAYS_OVERLAP: NULL)
    exp.ArrayOverlaps: lambda node: spark_expression(
        "CASE WHEN _a IS NULL OR _b IS NULL THEN NULL ELSE COALESCE(ARRAYS_OVERLAP(_a, _b), FALSE) END",
        _a=node.this,
        _b=node.expression,
    ),
    exp.ArgMin: lambda node: _arg_extreme(node, "MIN_BY"),
    exp.Max: _extreme_values,
    exp.Min: _extreme_values,
    # DuckDB's sample moments from Spark's (.moments); a marker, so that FILTER and OVER reach each aggregate
    exp.Skewness: lambda node: typed_call("skewness", node.this),
    exp.Kurtosis: lambda node: typed_call("kurtosis", node.this),
    exp.Variance: _checked_spread("VAR_SAMP", "VARSAMP"),
    exp.VariancePop: _checked_spread("VAR_POP", "VARPOP"),
    exp.Stddev: _checked_spread("STDDEV_SAMP", "STDDEV_SAMP"),
    exp.StddevSamp: _checked_spread("STDDEV_SAMP", "STDDEV_SAMP"),
    exp.StddevPop: _checked_spread("STDDEV_POP", "STDDEV_POP"),
    exp.DayOfWeekIso: lambda node: _iso_day_of_week(node.this),
    exp.Week: lambda node: _PARTS["WEEK"](node.this),
    exp.Extract: _extract,
    exp.DateDiff: _date_diff,
    exp.DateAdd: _date_add,
    exp.Add: _interval_arithmetic,
    exp.Sub: _interval_arithmetic,
    exp.Length: _length,
    exp.ArraySize: _with_duckdb_type("bigint", _array_length),
    exp.BitLength: _with_duckdb_type("bigint"),
    exp.StrPosition: _with_duckdb_type("bigint"),
    exp.Levenshtein: _with_duckdb_type("bigint", _byte_levenshtein),
    exp.ArrayPosition: _with_duckdb_type("int", lambda node: _position(node.this, node.expression)),
    exp.Cast: _cast,
    exp.TryCast: _cast,
    exp.Sum: _sum,
    exp.RegexpReplace: _regexp_replace,
    exp.Format: _format,
    exp.Monthname: _monthname,
    exp.TimeToStr: duckdb_strftime,
    exp.Dayname: _dayname,
    exp.SimilarTo: _similar_to,
    # how DuckDB stores ``SIMILAR TO`` in a view; with a third argument (options) it is left to fail
    exp.RegexpFullMatch: lambda node: (
        _similar_to(exp.SimilarTo(this=node.this.copy(), expression=node.expression.copy()))
        if node.args.get("options") is None
        else None
    ),
    exp.Glob: _glob,
    exp.ArrayAgg: _list_aggregate,
    exp.First: _first_or_last,
    exp.Last: _first_or_last,
    exp.ArrayConcat: _list_concat,
    exp.Concat: _concatenated_as_text,
    exp.ConcatWs: _concatenated_as_text,
    exp.DPipe: _concatenated_as_text,
    exp.ArrayDistinct: _list_distinct,
    exp.Flatten: _flatten,
    exp.SplitPart: _split_part,
    exp.TimestampTrunc: _timestamp_trunc,
    exp.DateTrunc: _timestamp_trunc,
    exp.TimestampFromParts: lambda node: exp.Anonymous(
        this="make_timestamp_ntz", expressions=[e.copy() for e in node.iter_expressions()]
    ),
    exp.Bracket: _bracket,
    exp.PercentileCont: _quantile,
    exp.Median: _median,
    exp.PercentileDisc: _discrete_quantile,
    exp.Quantile: _discrete_quantile,
    exp.WithinGroup: _within_group,
    exp.Interval: _interval,
    exp.ToDays: lambda node: _interval_of(node.this, "to_days"),
    **dict.fromkeys((c for c in QUANTIFIED if c is not exp.EQ), quantified_comparison),
    exp.EQ: _equals_any,
    exp.In: _in_subquery,
    **JSON_REWRITES,
}
_ANONYMOUS: dict[str, Callable[[exp.Anonymous], exp.Expr | None]] = {
    "date_part": _date_part,
    "datepart": _date_part,
    "weekday": lambda node: _day_of_week(node.expressions[0]) if len(node.expressions) == 1 else None,
    "list_extract": _list_extract,
    "list_element": _list_extract,
    "array_extract": _list_extract,
    # an INTEGER in DuckDB (Spark's array_position is a BIGINT)
    **dict.fromkeys(
        ("list_position", "list_indexof", "array_position", "array_indexof"),
        _with_duckdb_type("int", _list_position),
    ),
    "bit_count": lambda node: typed_call("bit_count", *node.expressions) if len(node.expressions) == 1 else None,
    "list_reverse": _list_reverse,
    "array_reverse": _list_reverse,
    "product": _product,
    **{function: _list_function(aggregate) for function, aggregate in LIST_FUNCTIONS.items()},
    "list_aggregate": _aggregate_of_list,
    "array_aggregate": _aggregate_of_list,
    "list_aggr": _aggregate_of_list,
    "gcd": _commons_math("gcd"),
    "greatest_common_divisor": _commons_math("gcd"),
    "lcm": _commons_math("lcm"),
    "least_common_multiple": _commons_math("lcm"),
    "printf": _printf,
    "even": _even,
    "ord": _ord,
    "strlen": _with_duckdb_type(
        "bigint", lambda node: exp.Anonymous(this="OCTET_LENGTH", expressions=[e.copy() for e in node.expressions])
    ),
    "round_even": lambda node: typed_call("round_even", *node.expressions),
    "list_unique": _list_unique,
    "array_unique": _list_unique,
    "date_sub": _date_sub,
    "datesub": _date_sub,
    "century": lambda node: spark_expression("CAST((YEAR(_d) - 1) DIV 100 + 1 AS BIGINT)", _d=node.expressions[0]),
    "yearweek": lambda node: spark_expression(
        "CAST(EXTRACT(YEAROFWEEK FROM _d) * 100 + WEEKOFYEAR(_d) AS BIGINT)", _d=node.expressions[0]
    ),
    "list_slice": _list_slice,
    "array_slice": _list_slice,
    # DuckDB's list_has_all ignores the NULLs of its second list; a NULL list is NULL
    "list_has_all": _of_two(
        "CASE WHEN _a IS NULL OR _b IS NULL THEN NULL "
        "ELSE SIZE(ARRAY_EXCEPT(FILTER(_b, _lh_e -> _lh_e IS NOT NULL), _a)) = 0 END"
    ),
    "regexp_split_to_array": _of_two("SPLIT(_a, _b, -1)"),
    # DuckDB's arbitrary is its first (NULLs included), Spark's FIRST; Spark has no arbitrary
    "arbitrary": lambda node: _arbitrary(node),
    "millisecond": lambda node: _PARTS["MILLISECOND"](node.expressions[0]),
    "microsecond": lambda node: _PARTS["MICROSECOND"](node.expressions[0]),
    "isfinite": lambda node: spark_expression(
        "IF(_x IS NULL, NULL, NOT (ISNAN(_x) OR ABS(_x) = CAST('Infinity' AS DOUBLE)))", _x=node.expressions[0]
    ),
    "kurtosis_pop": lambda node: spark_expression("KURTOSIS(CAST(_x AS DOUBLE))", _x=node.expressions[0]),
    # DuckDB's compensated (Kahan) sums and averages: Spark's of DOUBLEs
    **{name: _of_doubles("SUM") for name in ("fsum", "sumkahan", "kahan_sum")},
    "favg": _of_doubles("AVG"),
    # DuckDB's map_extract is a list of the key's value ([] without the key, NULL for a NULL map)
    # DuckDB's element_at is its map_extract (a list of the value), of maps only
    **dict.fromkeys(
        ("map_extract", "element_at"),
        _of_two(
            "CASE WHEN _a IS NULL THEN NULL WHEN MAP_CONTAINS_KEY(_a, _b) THEN ARRAY(ELEMENT_AT(_a, _b)) "
            "ELSE SLICE(ARRAY(TRY_ELEMENT_AT(_a, _b)), 1, 0) END"
        ),
    ),
    "map_contains": _of_two("MAP_CONTAINS_KEY(_a, _b)"),
    "try_strptime": _try_strptime,
    **JSON_BY_NAME,
    # DuckDB's counts of values (.value_counts) and its fold of a list
    "histogram": lambda node: typed_call("histogram", node.expressions[0]) if len(node.expressions) == 1 else None,
    "entropy": lambda node: typed_call("entropy", node.expressions[0]) if len(node.expressions) == 1 else None,
    **dict.fromkeys(("list_reduce", "array_reduce", "reduce"), _list_reduce),
    "map_extract_value": _of_two("TRY_ELEMENT_AT(_a, _b)"),
    # DuckDB's microseconds and nanoseconds since 1970 of a timestamp or date (Spark keeps microseconds)
    "epoch_us": lambda node: spark_expression("UNIX_MICROS(CAST(_x AS TIMESTAMP))", _x=node.expressions[0]),
    "epoch_ns": lambda node: spark_expression("UNIX_MICROS(CAST(_x AS TIMESTAMP)) * 1000", _x=node.expressions[0]),
    **{name: _interval_function(name) for name in _INTERVAL_UNITS},
    **dict.fromkeys(("list_apply", "array_apply", "apply"), _list_apply),
}
