"""DuckDB's ``max(x, n)``, ``min(x, n)``, ``arg_max(a, v, n)`` and ``arg_min(a, v, n)`` from Spark's aggregates
(pure: sqlglot only).

DuckDB returns a list of the ``n`` largest (smallest) values, largest (smallest) first, NULLs left out; and for
``arg_max``/``arg_min`` the ``a`` of the rows with the ``n`` largest (smallest) ``v``, rows with a NULL ``a`` or
``v`` left out. NULL where no row counts. Spark's ``MAX`` takes one argument, and sqlglot's Spark SQL drops the
count of ``arg_max`` (a single value instead of DuckDB's list). Rows whose ``v`` tie may come in another order
than DuckDB's.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression

KINDS = frozenset({"max_n", "min_n", "arg_max_n", "arg_min_n"})


def top_values(kind: str, args: list[exp.Expr]) -> exp.Expr:
    """The Spark form of ``kind`` (one of :data:`KINDS`): ``(x, n)`` for ``max_n``/``min_n``, ``(a, v, n)`` for
    the others.

    >>> top_values("min_n", [exp.column("x"), exp.Literal.number(2)]).sql("spark")
    'CASE WHEN COUNT(x) = 0 THEN NULL ELSE SLICE(ARRAY_SORT(COLLECT_LIST(x)), 1, 2) END'
    """
    if kind in ("max_n", "min_n"):
        value, count = args
        ordered = "REVERSE(ARRAY_SORT(COLLECT_LIST(_x)))" if kind == "max_n" else "ARRAY_SORT(COLLECT_LIST(_x))"
        return spark_expression(
            f"CASE WHEN COUNT(_x) = 0 THEN NULL ELSE SLICE({ordered}, 1, _n) END", _x=value, _n=count
        )
    argument, key, count = args
    first, then = ("-1", "1") if kind == "arg_max_n" else ("1", "-1")
    return spark_expression(
        "CASE WHEN COUNT(IF(_a IS NULL, NULL, _v)) = 0 THEN NULL ELSE TRANSFORM(SLICE(ARRAY_SORT("
        "COLLECT_LIST(IF(_a IS NULL OR _v IS NULL, NULL, NAMED_STRUCT('v', _v, 'a', _a))), "
        f"(_lh_l, _lh_r) -> CASE WHEN _lh_l.v > _lh_r.v THEN {first} WHEN _lh_l.v < _lh_r.v THEN {then} ELSE 0 END), "
        "1, _n), _lh_p -> _lh_p.a) END",
        _a=argument,
        _v=key,
        _n=count,
    )
