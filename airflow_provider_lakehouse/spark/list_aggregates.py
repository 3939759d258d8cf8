"""DuckDB's list aggregates in Spark SQL (pure: sqlglot only).

DuckDB runs ``list_sum(l)``, ``list_avg(l)``, ``list_aggregate(l, 'product')`` and the like as its aggregate over
the list's elements. Spark has no such functions: each becomes a lambda over the list (``AGGREGATE``,
``FILTER``). ``sum`` and ``avg`` depend on the elements' type (an ``INTEGER`` list sums to a ``BIGINT``, a
``DECIMAL(p, s)`` list to a ``DECIMAL(38, s)``, as the provider's ``sum`` aggregate does), so they are typed
markers (:func:`~.rewriting.typed_call`) that :func:`resolve_list_sum` and :func:`resolve_list_average` replace
once the driver knows the list's type.

An empty list literal ``[]`` is a list of ``VOID`` in Spark: the forms cast its (absent) elements, so that Spark
can type them, and return NULL as DuckDB does.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from airflow_provider_lakehouse.spark.decimal_types import EXACT_SCALING_DIGITS, duckdb_digits, precision_and_scale
from airflow_provider_lakehouse.spark.rewriting import spark_expression, string_literal, typed_call

#: Element types whose sum is a BIGINT (DuckDB: a HUGEINT, which Spark lacks; see the ``sum`` aggregate)
_SUMMED_AS_BIGINT = (
    exp.DataType.Type.BOOLEAN,
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.NULL,  # the elements of an empty list literal
)
_FLOATS = (exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE)


def non_null(items: exp.Expr) -> exp.Expr:
    """The list's elements that are not NULL: what DuckDB's aggregates see."""
    return spark_expression("FILTER(_l, e -> e IS NOT NULL)", _l=items)


def _folded(items: exp.Expr, start: str, step: str) -> exp.Expr:
    """NULL for a list without non-NULL elements, else ``step`` (over ``a``, ``x``) folded from ``start``."""
    return spark_expression(
        f"CASE WHEN SIZE(_f) = 0 THEN NULL ELSE AGGREGATE(_f, {start}, (a, x) -> {step}) END", _f=non_null(items)
    )


def array_to_string(items: exp.Expr, separator: exp.Expr) -> exp.Expr:
    """DuckDB's ``array_to_string``: NULL elements skipped, ``''`` for an empty list, NULL for one whose elements
    are all NULL."""
    joined = exp.ArrayToString(this=items.copy(), expression=separator.copy())
    return spark_expression(
        "CASE WHEN SIZE(_l) > 0 AND SIZE(_f) = 0 THEN NULL ELSE _joined END",
        _l=items,
        _f=non_null(items),
        _joined=joined,
    )


def _string_agg(items: exp.Expr, separator: exp.Expr | None = None) -> exp.Expr:
    """DuckDB's ``string_agg`` over the elements: NULL elements skipped, NULL when none is left."""
    kept = non_null(items)
    joined = exp.ArrayToString(this=kept, expression=(separator or string_literal(",")).copy())
    return spark_expression("CASE WHEN SIZE(_f) = 0 THEN NULL ELSE _joined END", _f=kept, _joined=joined)


def _product(items: exp.Expr) -> exp.Expr:
    """A DOUBLE, the elements multiplied in list order from 1 (DuckDB's ``product``)."""
    return _folded(items, "CAST(1 AS DOUBLE)", "a * CAST(x AS DOUBLE)")


def _first(items: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="TRY_ELEMENT_AT", expressions=[items.copy(), exp.Literal.number(1)])


def _last(items: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="TRY_ELEMENT_AT", expressions=[items.copy(), exp.Literal.number(-1)])


#: DuckDB's aggregate name -> the Spark form over a list and the aggregate's further arguments; None where the
#: arguments are not the aggregate's
_AGGREGATES: dict[str, Callable[..., exp.Expr | None]] = {
    "sum": lambda items: typed_call("list_sum", items),
    "avg": lambda items: typed_call("list_avg", items),
    "mean": lambda items: typed_call("list_avg", items),
    "product": _product,
    "count": lambda items: exp.Cast(
        this=spark_expression("SIZE(_f)", _f=non_null(items)), to=exp.DataType.build("bigint")
    ),
    "min": lambda items: exp.Anonymous(this="ARRAY_MIN", expressions=[items.copy()]),
    "max": lambda items: exp.Anonymous(this="ARRAY_MAX", expressions=[items.copy()]),
    "string_agg": _string_agg,
    "first": _first,
    "last": _last,
    "any_value": lambda items: _first(non_null(items)),
    "bool_and": lambda items: spark_expression(
        "CASE WHEN SIZE(_f) = 0 THEN NULL ELSE NOT ARRAY_CONTAINS(_f, FALSE) END", _f=non_null(items)
    ),
    "bool_or": lambda items: spark_expression(
        "CASE WHEN SIZE(_f) = 0 THEN NULL ELSE ARRAY_CONTAINS(_f, TRUE) END", _f=non_null(items)
    ),
}
#: ``list_<aggregate>`` functions DuckDB has for the aggregates above
FUNCTIONS = {f"list_{name}": name for name in _AGGREGATES if name != "mean"}


def list_aggregate(name: str, items: exp.Expr, arguments: list[exp.Expr]) -> exp.Expr | None:
    """The Spark form of DuckDB's ``list_aggregate(items, name, *arguments)``; None for an aggregate not listed
    here or arguments it does not take (Spark then fails the statement, as it knows no such function)."""
    rewrite = _AGGREGATES.get(name.lower())
    if rewrite is None:
        return None
    try:
        return rewrite(items, *arguments)
    except TypeError:  # more arguments than the aggregate takes
        return None


def element_type(items: exp.Expr, dtype: exp.DataType | None) -> exp.DataType | None:
    """The type of a list's elements: from ``dtype`` (the list's type), or from the literals of a list literal
    of numbers, which sqlglot types as DOUBLEs or INTs where Spark and DuckDB read ``[1, 2.25]`` as DECIMAL(12, 2)s
    and ``[1, 2^40]`` as BIGINTs."""
    literals = items.expressions if isinstance(items, exp.Array) else []
    digits = [duckdb_digits(e) if _is_number(e) else None for e in literals]
    if digits and all(d is not None for d in digits):
        known = [d for d in digits if d is not None]
        scale = max(d[1] for d in known)
        integral = max(d[0] - d[1] for d in known)
        if not any(d[2] for d in known) and integral in _INTEGER_DIGITS:
            return exp.DataType.build(_INTEGER_DIGITS[integral])
        return exp.DataType.build(f"DECIMAL({min(integral + scale, 38)}, {scale})")
    if dtype is None or not dtype.is_type(exp.DataType.Type.ARRAY) or not dtype.expressions:
        return None
    element = dtype.expressions[0]
    return element if isinstance(element, exp.DataType) else None


#: The integer type of a list of integer literals, by the digits DuckDB gives the widest
_INTEGER_DIGITS = {10: "int", 19: "bigint"}


def _is_number(node: exp.Expr) -> bool:
    """A number literal (a negative one too) without an exponent."""
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and inner.is_number and "e" not in inner.name.lower()


def _sum_type(element: exp.DataType) -> exp.DataType | None:
    """The provider's ``sum`` type of ``element`` values (DuckDB's but for its HUGEINT); None when Spark sums
    no such elements."""
    if element.is_type(*_SUMMED_AS_BIGINT):
        return exp.DataType.build("bigint")
    if element.is_type(exp.DataType.Type.BIGINT):
        return exp.DataType.build("DECIMAL(38, 0)")
    decimal = precision_and_scale(element)
    if decimal is not None:
        return exp.DataType.build(f"DECIMAL(38, {decimal[1]})")
    if element.is_type(*_FLOATS):
        return exp.DataType.build("double")
    return None


def resolve_list_sum(items: exp.Expr, dtype: exp.DataType | None) -> exp.Expr:
    """DuckDB's ``list_sum``: the non-NULL elements' sum from 0 in list order, NULL when there is none; summed in
    the sum's type, so that an INTEGER list does not overflow and a DECIMAL list keeps its scale."""
    element = element_type(items, dtype)
    summed = _sum_type(element) if element is not None else None
    if summed is None:  # a type sqlglot could not infer: Spark sums in the elements' own type
        return spark_expression(
            "CASE WHEN SIZE(_f) = 0 THEN NULL "
            "ELSE AGGREGATE(SLICE(_f, 2, SIZE(_f)), ELEMENT_AT(_f, 1), (a, x) -> a + x) END",
            _f=non_null(items),
        )
    spelled = summed.sql("spark")
    return _folded(items, f"CAST(0 AS {spelled})", f"CAST(a + CAST(x AS {spelled}) AS {spelled})")


def resolve_list_average(items: exp.Expr, dtype: exp.DataType | None) -> exp.Expr:
    """DuckDB's ``list_avg``: a DOUBLE, the exact sum divided by the count of non-NULL elements (for a DECIMAL
    list the unscaled sum divided by ``count * 10^scale``, as DuckDB's ``avg`` of a DECIMAL)."""
    element = element_type(items, dtype)
    decimal = precision_and_scale(element)
    count = spark_expression("CAST(SIZE(_f) AS DOUBLE)", _f=non_null(items))
    if decimal is not None and decimal[0] + decimal[1] <= EXACT_SCALING_DIGITS:
        power = 10 ** decimal[1]
        unscaled = _folded(
            items, "CAST(0 AS DECIMAL(38, 0))", f"CAST(a + CAST(x * {power} AS DECIMAL(38, 0)) AS DECIMAL(38, 0))"
        )
        return spark_expression(f"CAST(_sum AS DOUBLE) / (_count * {power}D)", _sum=unscaled, _count=count)
    total = resolve_list_sum(items, dtype) if element is not None and _sum_type(element) is not None else None
    if total is None:
        total = _folded(items, "CAST(0 AS DOUBLE)", "a + CAST(x AS DOUBLE)")
    return spark_expression("CAST(_sum AS DOUBLE) / _count", _sum=total, _count=count)
