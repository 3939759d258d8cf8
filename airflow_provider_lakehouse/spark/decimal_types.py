"""Spark's ``DECIMAL`` result types of ``+``, ``-`` and ``*``, for sqlglot's type annotation (pure: sqlglot only).

sqlglot types decimal arithmetic as its wider operand: ``DECIMAL(4, 2) * DECIMAL(4, 2)`` is ``DECIMAL(4, 2)``
there, ``DECIMAL(9, 4)`` in Spark. The typed DuckDB rewrites read a decimal's scale (``avg`` scales the sum by
``10^scale``, a quantile is cast back to its operand's type), so they need Spark's own: with DuckDB-dialect
scripts' ``allowPrecisionLoss=false`` (see ``driver.DIALECT_CONF``), Spark bounds the exact type at 38 digits:

- ``a + b``, ``a - b``: scale ``max(s1, s2)``, precision ``max(p1 - s1, p2 - s2) + scale + 1``;
- ``a * b``: scale ``s1 + s2``, precision ``p1 + p2 + 1``;

an integer operand counting as ``DECIMAL(3|5|10|20, 0)`` by its type, an integer literal as its digits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

_MAX_DIGITS = 38
_INTEGER_DIGITS = {
    exp.DataType.Type.TINYINT: 3,
    exp.DataType.Type.SMALLINT: 5,
    exp.DataType.Type.INT: 10,
    exp.DataType.Type.BIGINT: 20,
}


@functools.cache
def spark_expression_metadata() -> dict[Any, Any]:
    """sqlglot's Spark annotators, with ``+``, ``-`` and ``*`` of decimals typed as Spark types them (for
    ``annotate_types(..., expression_metadata=...)``)."""
    metadata = dict(Dialect.get_or_raise("spark").EXPRESSION_METADATA)
    for kind in (exp.Add, exp.Sub, exp.Mul):
        metadata[kind] = {"annotator": _with_sparks_decimal_type(metadata[kind]["annotator"])}
    return metadata


def _with_sparks_decimal_type(annotate: Callable[[Any, exp.Expr], Any]) -> Callable[[Any, exp.Expr], Any]:
    def annotator(annotator_self: Any, node: exp.Expr) -> Any:
        result = annotate(annotator_self, node)
        typed = spark_decimal_type(node)
        if typed is not None:
            node.type = typed
        return result

    return annotator


def spark_decimal_type(node: exp.Expr) -> exp.DataType | None:
    """Spark's type of the ``+``/``-``/``*`` ``node`` whose operands are already typed, when one of them is a
    DECIMAL and the other a DECIMAL or an integer; None otherwise (sqlglot's type stands).

    >>> import sqlglot
    >>> node = sqlglot.parse_one("CAST(a AS DECIMAL(4, 2)) * CAST(b AS DECIMAL(4, 2))", read="spark")
    >>> for operand in (node.this, node.expression):
    ...     operand.type = operand.to
    >>> spark_decimal_type(node).sql("spark")
    'DECIMAL(9, 4)'
    """
    left, right = _digits(node.this), _digits(node.expression)
    if left is None or right is None or not (left[2] or right[2]):
        return None
    (p1, s1, _), (p2, s2, _) = left, right
    if isinstance(node, exp.Mul):
        precision, scale = p1 + p2 + 1, s1 + s2
    else:
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
    return exp.DataType.build(f"DECIMAL({min(precision, _MAX_DIGITS)}, {min(scale, _MAX_DIGITS)})")


def _digits(node: exp.Expr) -> tuple[int, int, bool] | None:
    """(precision, scale, is a decimal) of an operand Spark computes as a decimal, or None."""
    inner = node.this if isinstance(node, (exp.Paren, exp.Neg)) else node
    if isinstance(inner, exp.Literal) and inner.is_number and "e" not in inner.name.lower():
        whole, _, fraction = inner.name.lstrip("-").partition(".")
        digits = len((whole + fraction).lstrip("0")) or 1
        return max(digits, len(fraction)), len(fraction), bool(fraction)  # Spark: 1.5 DECIMAL(2, 1), 7 DECIMAL(1, 0)
    dtype = node.type
    if dtype is None:
        return None
    if dtype.is_type(exp.DataType.Type.DECIMAL):
        params = [p.this for p in dtype.expressions]
        if len(params) == 2 and all(isinstance(p, exp.Literal) and p.is_int for p in params):
            return int(params[0].name), int(params[1].name), True
        return None
    for kind, digits in _INTEGER_DIGITS.items():
        if dtype.is_type(kind):
            return digits, 0, False
    return None
