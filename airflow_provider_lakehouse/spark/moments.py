"""DuckDB's third and fourth moments in Spark SQL (pure: sqlglot only).

Spark's ``skewness`` and ``kurtosis`` are the population's: m3 / m2^1.5 and m4 / m2^2 - 3. DuckDB's ``skewness``
and ``kurtosis`` correct them for the sample, as spreadsheets do, and its ``kurtosis_pop`` is Spark's
``kurtosis``. The corrections are functions of the count, so DuckDB's values come from Spark's aggregates:

=====================  =======================================================  ==============================
DuckDB                 its value (n values, g1/g2 Spark's skewness/kurtosis)    NULL when
=====================  =======================================================  ==============================
``skewness(x)``        g1 * sqrt(n (n - 1)) / (n - 2); NaN if all are equal     n <= 2
``kurtosis(x)``        (n - 1) ((n + 1) (g2 + 3) - 3 (n - 1)) / ((n - 2)(n - 3))  n <= 3, or all are equal
``kurtosis_pop(x)``    g2                                                       all are equal (one value too)
=====================  =======================================================  ==============================
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression

_N = "COUNT(_x)"
_FORMS = {
    "skewness": (
        f"CASE WHEN {_N} <= 2 THEN CAST(NULL AS DOUBLE) WHEN VAR_POP(_x) = 0 THEN CAST('NaN' AS DOUBLE) "
        f"ELSE SKEWNESS(_x) * SQRT({_N} * ({_N} - 1)) / ({_N} - 2) END"
    ),
    "kurtosis": (
        f"CASE WHEN {_N} <= 3 OR VAR_POP(_x) = 0 THEN CAST(NULL AS DOUBLE) "
        f"ELSE ({_N} - 1) * (({_N} + 1) * (KURTOSIS(_x) + 3) - 3 * ({_N} - 1)) / (({_N} - 2) * ({_N} - 3)) END"
    ),
}
#: the moments whose DuckDB value is an expression over several Spark aggregates
KINDS = frozenset(_FORMS)


def duckdb_moment(kind: str, value: exp.Expr) -> exp.Expr:
    """DuckDB's ``skewness`` or ``kurtosis`` (``kind``) of ``value`` from Spark's aggregates.

    >>> duckdb_moment("skewness", exp.column("x")).sql("spark")[:46]
    'CASE WHEN COUNT(CAST(x AS DOUBLE)) <= 2 THEN C'
    """
    return spark_expression(_FORMS[kind], _x=exp.Cast(this=value.copy(), to=exp.DataType.build("double")))
