"""DuckDB's aggregates of how often each value occurs, ``histogram(x)`` and ``entropy(x)``, from Spark's
aggregates (pure: sqlglot only). Spark has neither.

- ``histogram(x)``: a map from each value to its count, the keys in ascending order, NULLs not counted; NULL when
  no value is (DuckDB's counts are ``UBIGINT``, here ``BIGINT``).
- ``entropy(x)``: ``sum(c / n * log2(n / c))`` over the values' counts ``c`` of the ``n`` values that are not
  NULL, as DuckDB computes it; 0 when there are none.

Both are written as typed markers by the planner so that ``FILTER`` and ``OVER`` reach each of the aggregates
they are made of.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression

KINDS = frozenset({"histogram", "entropy"})

_COUNTS = (
    "TRANSFORM(ARRAY_SORT(ARRAY_DISTINCT(COLLECT_LIST(_x))), _lh_v -> "
    "NAMED_STRUCT('key', _lh_v, 'value', CAST(SIZE(FILTER(COLLECT_LIST(_x), _lh_e -> _lh_e = _lh_v)) AS BIGINT)))"
)


def value_count_aggregate(kind: str, value: exp.Expr) -> exp.Expr:
    """The Spark form of DuckDB's aggregate ``kind`` (one of :data:`KINDS`) of ``value``.

    >>> value_count_aggregate("entropy", exp.column("x")).sql("spark")[:60]
    'CASE WHEN COUNT(x) = 0 THEN CAST(0 AS DOUBLE) ELSE AGGREGATE'
    """
    if kind == "histogram":
        return spark_expression(f"CASE WHEN COUNT(_x) = 0 THEN NULL ELSE MAP_FROM_ENTRIES({_COUNTS}) END", _x=value)
    return spark_expression(
        f"CASE WHEN COUNT(_x) = 0 THEN CAST(0 AS DOUBLE) ELSE AGGREGATE({_COUNTS}, CAST(0 AS DOUBLE), "
        "(_lh_sum, _lh_c) -> _lh_sum + _lh_c.value / CAST(COUNT(_x) AS DOUBLE) "
        "* LOG2(CAST(COUNT(_x) AS DOUBLE) / _lh_c.value)) END",
        _x=value,
    )
