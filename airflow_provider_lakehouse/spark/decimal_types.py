"""Spark's ``DECIMAL`` result types of ``+``, ``-`` and ``*``, for sqlglot's type annotation (pure: sqlglot only).

sqlglot types decimal arithmetic as its wider operand: ``DECIMAL(4, 2) * DECIMAL(4, 2)`` is ``DECIMAL(4, 2)``
there, ``DECIMAL(9, 4)`` in Spark. The typed DuckDB rewrites read a decimal's scale (``avg`` scales the sum by
``10^scale``, a quantile is cast back to its operand's type), so they need Spark's own: with DuckDB-dialect
scripts' ``allowPrecisionLoss=false`` (see ``driver.DIALECT_CONF``), Spark bounds the exact type at 38 digits:

- ``a + b``, ``a - b``: scale ``max(s1, s2)``, precision ``max(p1 - s1, p2 - s2) + scale + 1``;
- ``a * b``: scale ``s1 + s2``, precision ``p1 + p2 + 1``;

an integer operand counting as ``DECIMAL(3|5|10|20, 0)`` by its type, an integer literal as its digits.

DuckDB types the same operators differently (:func:`duckdb_decimal_type`), and the driver casts a script's own
``+``, ``-`` and ``*`` of decimals to DuckDB's type (see ``.semantics``): the column a ``CREATE TABLE AS`` makes
has DuckDB's type, and a value that does not fit it fails as it does in DuckDB.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from airflow_provider_lakehouse.spark.integer_arithmetic import duckdb_integer_type
from airflow_provider_lakehouse.spark.pattern_calls import pattern_call_type
from airflow_provider_lakehouse.spark.rewriting import int_literal

_MAX_DIGITS = 38
#: A sum of DECIMAL(p, s) values is below 10^(p + 10 - s); scaled by 10^s (to DuckDB's unscaled sum, which its
#: ``avg`` divides) it fits the DECIMAL(38, s) product Spark types it as when p + 10 <= 38 - s
EXACT_SCALING_DIGITS = 28
_INTEGER_DIGITS = {
    exp.DataType.Type.TINYINT: 3,
    exp.DataType.Type.SMALLINT: 5,
    exp.DataType.Type.INT: 10,
    exp.DataType.Type.BIGINT: 20,
    # an unsigned lake column (typed so for DuckDB's arithmetic) as the Spark type that holds it
    exp.DataType.Type.UTINYINT: 5,
    exp.DataType.Type.USMALLINT: 10,
    exp.DataType.Type.UINT: 20,
    exp.DataType.Type.UBIGINT: 20,
}


#: DuckDB's widths of its integer types as decimal operands (Spark has no HUGEINT)
_DUCKDB_INTEGER_DIGITS = {
    exp.DataType.Type.TINYINT: 3,
    exp.DataType.Type.SMALLINT: 5,
    exp.DataType.Type.INT: 10,
    exp.DataType.Type.BIGINT: 19,
    exp.DataType.Type.UTINYINT: 3,
    exp.DataType.Type.USMALLINT: 5,
    exp.DataType.Type.UINT: 10,
    exp.DataType.Type.UBIGINT: 20,
}
#: DuckDB computes decimals of up to 18 digits in 64-bit integers
_INT64_DIGITS = 18
#: ``node.meta`` key of the script's own ``+``, ``-`` and ``*`` (the driver numbers them); arithmetic the
#: rewrites write themselves keeps Spark's types
DUCKDB_ARITHMETIC = "lh_duckdb_arithmetic"


@functools.cache
def spark_expression_metadata(*, duckdb_arithmetic: bool = False) -> dict[Any, Any]:
    """sqlglot's Spark annotators, with ``+``, ``-`` and ``*`` of decimals typed as Spark types them (for
    ``annotate_types(..., expression_metadata=...)``); with ``duckdb_arithmetic``, the script's own arithmetic
    (nodes with :data:`DUCKDB_ARITHMETIC` in their ``meta``) is typed as DuckDB types it, the type the driver
    casts it to."""
    metadata = dict(Dialect.get_or_raise("spark").EXPRESSION_METADATA)
    # a list these return is typed like their list operand (sqlglot leaves them UNKNOWN): ``l[i]`` of one is then
    # known to index a list, not a map, and gets Spark's INT position (seed 5025 of the expression fuzzer)
    for list_function in (exp.ArrayAppend, exp.ArrayPrepend, exp.ArrayCompact, exp.ArrayRemove, exp.ArrayRemoveAt):
        metadata.setdefault(list_function, {"annotator": lambda self, e: self._annotate_by_args(e, "this")})
    metadata.setdefault(exp.Transform, {"annotator": _a_list})
    # list_concat (Spark's CONCAT of lists) is typed like its list operands, flatten as its list's element: a CAST of
    # either to VARCHAR is then known to write a list's NULLs as DuckDB does (seeds 22297, 22404)
    metadata[exp.Concat] = {"annotator": _lists_concatenated(metadata[exp.Concat]["annotator"])}
    metadata.setdefault(exp.Flatten, {"annotator": _flattened})
    # Spark rounds a DECIMAL to a DECIMAL and an integer to its own type (sqlglot says DOUBLE): a DuckDB % by a
    # rounded DECIMAL that is 0 is NULL, not a DOUBLE NaN (seed 22065)
    metadata[exp.Round] = {"annotator": _rounded}
    # greatest / least / coalesce of integers and decimals are Spark's wider DECIMAL (sqlglot says the largest
    # operand type): round(greatest(i, m), 1) of an INT i and a DECIMAL(10, 2) m is a DECIMAL(12, 1) in both
    # engines, not DECIMAL(10, 1), which overflows (seed 38022 of the expression fuzzer)
    for widened in (exp.Greatest, exp.Least, exp.Coalesce):
        metadata[widened] = {"annotator": _widest_decimal(metadata[widened]["annotator"])}
    # Spark's TIMESTAMPDIFF (DuckDB's date_diff) is a BIGINT (sqlglot says INT): date_diff(...) | 1 stays one, as in
    # DuckDB (seed 29251 of the expression fuzzer)
    metadata[exp.TimestampDiff] = {"returns": exp.DataType.Type.BIGINT}
    # the rewrites' RAISE_ERROR branches (DuckDB's range checks) return no value: a CASE with one has the type of
    # its other branches (a checked cast to FLOAT stays a FLOAT operand; seed 5088 of the expression fuzzer)
    metadata[exp.Anonymous] = {"annotator": _raising_as_null(metadata[exp.Anonymous]["annotator"])}
    for kind in (exp.Add, exp.Sub, exp.Mul):
        metadata[kind] = {
            "annotator": _with_sparks_decimal_type(metadata[kind]["annotator"], duckdb_marked=duckdb_arithmetic)
        }
    return metadata


def _a_list(annotator_self: Any, node: exp.Expr) -> Any:
    """A list whose element type is not inferred (``transform(l, x -> ...)``)."""
    annotator_self._set_type(
        node, exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[exp.DataType.build("unknown")], nested=True)
    )
    return node


def _lists_concatenated(annotate: Callable[[Any, exp.Expr], Any]) -> Callable[[Any, exp.Expr], Any]:
    """Spark's ``CONCAT`` of lists is a list of the first list operand's type; of anything else, what sqlglot
    says."""

    def annotator(annotator_self: Any, node: exp.Expr) -> Any:
        for operand in node.expressions:
            if isinstance(operand.type, exp.DataType) and operand.type.is_type(exp.DataType.Type.ARRAY):
                annotator_self._set_type(node, operand.type.copy())
                return node
        return annotate(annotator_self, node)

    return annotator


def _flattened(annotator_self: Any, node: exp.Expr) -> Any:
    """``flatten(l)``: the element type of the list of lists ``l``, or a list of unknown elements."""
    operand = node.this.type
    if isinstance(operand, exp.DataType) and operand.is_type(exp.DataType.Type.ARRAY) and operand.expressions:
        inner = operand.expressions[0]
        if isinstance(inner, exp.DataType) and inner.is_type(exp.DataType.Type.ARRAY):
            annotator_self._set_type(node, inner.copy())
            return node
    return _a_list(annotator_self, node)


def _rounded(annotator_self: Any, node: exp.Expr) -> Any:
    """Spark's type of ``round(x, d)`` (its ``RoundBase``): ``x``'s own type, except that a ``DECIMAL(p, s)`` becomes
    ``DECIMAL(min(p - s + 1 + min(s, d), 38), min(s, d))`` for ``d >= 0`` and ``DECIMAL(min(max(p - s + 1, 1 - d),
    38), 0)`` for ``d < 0``; DOUBLE where ``x``'s type is not known."""
    operand = node.this.type
    decimals = node.args.get("decimals")
    places = 0 if decimals is None else int_literal(decimals)
    digits = precision_and_scale(operand)
    if digits is not None and places is not None:
        precision, scale = digits
        if places < 0:
            typed = f"DECIMAL({min(max(precision - scale + 1, 1 - places), 38)}, 0)"
        else:
            kept = min(scale, places)
            typed = f"DECIMAL({min(precision - scale + 1 + kept, 38)}, {kept})"
        annotator_self._set_type(node, exp.DataType.build(typed))
    elif isinstance(operand, exp.DataType) and operand.is_type(*exp.DataType.INTEGER_TYPES, *exp.DataType.REAL_TYPES):
        annotator_self._set_type(node, operand.copy())
    else:
        annotator_self._set_type(node, exp.DataType.build("double"))
    return node


#: Spark functions sqlglot does not know that return a TIMESTAMP_NTZ
_TIMESTAMP_FUNCTIONS = frozenset({"make_timestamp_ntz", "to_timestamp_ntz", "try_to_timestamp_ntz"})


def _widest_decimal(annotate: Callable[[Any, exp.Expr], Any]) -> Callable[[Any, exp.Expr], Any]:
    """Of operands that are all integers or decimals, one at least a decimal: the DECIMAL that holds each one's
    integer digits and scale (Spark's wider decimal type); otherwise what sqlglot says."""

    def annotator(annotator_self: Any, node: exp.Expr) -> Any:
        annotated = annotate(annotator_self, node)
        operands = [node.this, *node.expressions]
        digits = [_typed_digits(o.type, _INTEGER_DIGITS) for o in operands if not isinstance(o, exp.Null)]
        if digits and all(d is not None for d in digits) and any(d[2] for d in digits if d is not None):
            known = [d for d in digits if d is not None]
            scale = max(s for _, s, _ in known)
            whole = max(p - s for p, s, _ in known)
            precision = min(whole + scale, _MAX_DIGITS)
            annotator_self._set_type(node, exp.DataType.build(f"decimal({precision}, {min(scale, precision)})"))
        return annotated

    return annotator


def _raising_as_null(annotate: Callable[[Any, exp.Expr], Any]) -> Callable[[Any, exp.Expr], Any]:
    def annotator(annotator_self: Any, node: exp.Expr) -> Any:
        if isinstance(node, exp.Anonymous) and node.name.lower() == "raise_error":
            annotator_self._set_type(node, exp.DataType.Type.NULL)
            return node
        if (kept := pattern_call_type(node)) is not None:  # DATE_FORMAT read as written (.pattern_calls)
            annotator_self._set_type(node, kept)
            return node
        if isinstance(node, exp.Anonymous) and node.name.lower() in _TIMESTAMP_FUNCTIONS:
            # DuckDB's make_timestamp (Spark's MAKE_TIMESTAMP_NTZ): epoch_ms of one counts its milliseconds
            annotator_self._set_type(node, exp.DataType.Type.TIMESTAMPNTZ)
            return node
        return annotate(annotator_self, node)

    return annotator


def _with_sparks_decimal_type(
    annotate: Callable[[Any, exp.Expr], Any], *, duckdb_marked: bool = False
) -> Callable[[Any, exp.Expr], Any]:
    def annotator(annotator_self: Any, node: exp.Expr) -> Any:
        result = annotate(annotator_self, node)
        if node.meta.get(DUCKDB_ARITHMETIC) is not None and computed_in_float((node.this, node.expression)):
            # the driver casts the DECIMAL operand to FLOAT (see semantics), in either pass
            node.type = exp.DataType.build("float")
            return result
        duckdbs = duckdb_marked and node.meta.get(DUCKDB_ARITHMETIC) is not None
        typed = duckdb_decimal_type(node) if duckdbs else spark_decimal_type(node)
        if typed is not None:
            node.type = typed
        elif duckdbs and (integer := duckdb_integer_type(node)) is not None:
            node.type = integer.sqlglot_type()  # (a + 1) * 2 of a TINYINT a is a TINYINT product
        return result

    return annotator


def operand_kind(node: exp.Expr) -> str:
    """How DuckDB sees a typed operand of arithmetic or a comparison: ``float`` (a FLOAT), ``double``, ``decimal``
    (a DECIMAL, or a literal such as ``0.1``, which sqlglot types DOUBLE), ``integer`` or ``other``.

    >>> import sqlglot
    >>> node = sqlglot.parse_one("0.5", read="spark")
    >>> operand_kind(node)
    'decimal'
    """
    digits = _digits(node)
    if digits is not None:
        return "decimal" if digits[2] else "integer"
    if node.type is not None and node.type.is_type(exp.DataType.Type.FLOAT):
        return "float"
    if node.type is not None and node.type.is_type(exp.DataType.Type.DOUBLE):
        return "double"
    return "other"


def computed_in_float(operands: tuple[exp.Expr, ...]) -> bool:
    """Whether DuckDB computes ``+``, ``-`` or ``*`` of ``operands`` in FLOAT: a FLOAT with FLOATs, integers or
    DECIMALs (nothing wider). DuckDB casts the others to FLOAT (``0.1::FLOAT + 0.1`` is a FLOAT, 0.2 in single
    precision); Spark in ANSI mode widens a FLOAT with a DECIMAL or an integer to DOUBLE (0.2000000014901161), so
    the driver casts those operands to FLOAT first."""
    return float_only({operand_kind(o) for o in operands})


def float_only(kinds: set[str]) -> bool:
    """DuckDB's rule over the operand kinds of :func:`operand_kind`: FLOAT when one is a FLOAT and none is wider
    (the others integers or DECIMALs)."""
    return "float" in kinds and kinds <= {"float", "decimal", "integer"}


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


def duckdb_decimal_type(node: exp.Expr) -> exp.DataType | None:
    """DuckDB 1.5's type of the ``+``/``-``/``*`` ``node`` whose operands are already typed, when one of them is
    a DECIMAL and the other a DECIMAL or an integer; None otherwise.

    - ``a * b``: scale ``s1 + s2``, precision ``p1 + p2``;
    - ``a + b``, ``a - b``: scale ``max(s1, s2)``, precision ``max(p1 - s1, p2 - s2) + scale + 1``;

    at most 38 digits, and at most 18 when both operands have 18 or fewer (a product only while its scale is
    under 18): DuckDB then computes in 64-bit integers and fails a result of more digits. An integer operand
    counts as ``DECIMAL(3|5|10|19, 0)`` by its type, an integer literal as an INTEGER or a BIGINT by its value.

    >>> import sqlglot
    >>> node = sqlglot.parse_one("CAST(a AS DECIMAL(10, 2)) * CAST(b AS INT)", read="spark")
    >>> for operand in (node.this, node.expression):
    ...     operand.type = operand.to
    >>> duckdb_decimal_type(node).sql("spark"), spark_decimal_type(node).sql("spark")
    ('DECIMAL(18, 2)', 'DECIMAL(21, 2)')
    """
    left, right = duckdb_digits(node.this), duckdb_digits(node.expression)
    if left is None or right is None or not (left[2] or right[2]):
        return None
    (p1, s1, _), (p2, s2, _) = left, right
    in_int64 = p1 <= _INT64_DIGITS and p2 <= _INT64_DIGITS
    if isinstance(node, exp.Mul):
        precision, scale = p1 + p2, s1 + s2
        if scale > _MAX_DIGITS:
            return None  # DuckDB refuses the statement; Spark bounds the scale (left as it is)
        if precision > _INT64_DIGITS and in_int64 and scale < _INT64_DIGITS:
            precision = _INT64_DIGITS
    else:
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
        if precision > _INT64_DIGITS and in_int64:
            precision = _INT64_DIGITS
    return exp.DataType.build(f"DECIMAL({min(precision, _MAX_DIGITS)}, {scale})")


#: where a number must stay a literal, or is no value of its own: left as written
_LITERAL_PLACES = (exp.TableSample, exp.Limit, exp.Offset, exp.Interval, exp.WindowSpec, exp.DataType)


def duckdb_literal_types(tree: exp.Expr, markers: tuple[str, ...]) -> exp.Expr:
    """``tree`` with each decimal literal whose type DuckDB gives more digits than Spark cast to DuckDB's type, in
    place. DuckDB counts every digit written (``0.5`` is ``DECIMAL(2, 1)``, ``0.05`` ``DECIMAL(3, 2)``), Spark
    only the significant ones (``DECIMAL(1, 1)``, ``DECIMAL(2, 2)``): a ``CREATE TABLE AS SELECT 0.5 AS x`` made a
    column that cannot hold 1.5, where DuckDB's can. Literals inside ``markers`` calls are left to them (the driver
    types those by their text, DuckDB's way); so are numbers Spark needs as literals (``TABLESAMPLE``, ``LIMIT``).
    sqlglot reads ``.5`` as ``0.5``, so ``.5`` gets ``0.5``'s type (DuckDB: ``DECIMAL(1, 1)``).

    >>> import sqlglot
    >>> duckdb_literal_types(sqlglot.parse_one("SELECT 0.5, -0.05, 10.5, 1e-1"), ()).sql("spark")
    'SELECT CAST(0.5 AS DECIMAL(2, 1)), -CAST(0.05 AS DECIMAL(3, 2)), 10.5, 1e-1'
    """
    for literal in list(tree.find_all(exp.Literal)):
        if not literal.is_number or literal.is_string:
            continue
        duckdbs, sparks = duckdb_digits(literal), _digits(literal)
        if duckdbs is None or sparks is None or not duckdbs[2] or duckdbs[:2] == sparks[:2]:
            continue
        if duckdbs[0] > _MAX_DIGITS or _left_as_written(literal, markers):
            continue
        literal.replace(exp.Cast(this=literal.copy(), to=exp.DataType.build(f"DECIMAL({duckdbs[0]}, {duckdbs[1]})")))
    return tree


def _left_as_written(literal: exp.Expr, markers: tuple[str, ...]) -> bool:
    node = literal.parent
    while node is not None:
        if isinstance(node, _LITERAL_PLACES) or (isinstance(node, exp.Anonymous) and node.name.lower() in markers):
            return True
        node = node.parent
    return False


def duckdb_digits(node: exp.Expr, dtype: exp.DataType | None = None) -> tuple[int, int, bool] | None:
    """(precision, scale, is a decimal) of an operand DuckDB computes as a decimal, or None: a number literal by its
    text, anything else by ``dtype`` (default: the type annotated on ``node``)."""
    inner = node.this if isinstance(node, (exp.Paren, exp.Neg)) else node
    if isinstance(inner, exp.Literal) and inner.is_number and "e" not in inner.name.lower():
        whole, _, fraction = inner.name.lstrip("-").partition(".")
        if fraction:  # DuckDB: every digit written counts (0.05 is DECIMAL(3, 2), .5 DECIMAL(1, 1))
            return len(whole + fraction), len(fraction), True
        value = int(whole)
        return (10 if value < 2**31 else 19 if value < 2**63 else _MAX_DIGITS), 0, False
    return _typed_digits(node.type if dtype is None else dtype, _DUCKDB_INTEGER_DIGITS)


def _typed_digits(dtype: exp.DataType | None, integer_digits: dict[Any, int]) -> tuple[int, int, bool] | None:
    """(precision, scale, is a decimal) of an operand of type ``dtype``, integers counted as ``integer_digits``."""
    if dtype is None:
        return None
    if dtype.is_type(exp.DataType.Type.DECIMAL):
        params = precision_and_scale(dtype)
        return None if params is None else (*params, True)
    for kind, digits in integer_digits.items():
        if dtype.is_type(kind):
            return digits, 0, False
    return None


def precision_and_scale(dtype: exp.DataType | None) -> tuple[int, int] | None:
    """(precision, scale) of a ``DECIMAL(p, s)`` type; None for any other type or a DECIMAL without both."""
    if dtype is None or not dtype.is_type(exp.DataType.Type.DECIMAL):
        return None
    params = [p.this for p in dtype.expressions]
    if len(params) == 2 and all(isinstance(p, exp.Literal) and p.is_int for p in params):
        return int(params[0].name), int(params[1].name)
    return None


def _digits(node: exp.Expr) -> tuple[int, int, bool] | None:
    """(precision, scale, is a decimal) of an operand Spark computes as a decimal, or None."""
    inner = node.this if isinstance(node, (exp.Paren, exp.Neg)) else node
    if isinstance(inner, exp.Literal) and inner.is_number and "e" not in inner.name.lower():
        whole, _, fraction = inner.name.lstrip("-").partition(".")
        digits = len((whole + fraction).lstrip("0")) or 1
        return max(digits, len(fraction)), len(fraction), bool(fraction)  # Spark: 1.5 DECIMAL(2, 1), 7 DECIMAL(1, 0)
    return _typed_digits(node.type, _INTEGER_DIGITS)
