"""DuckDB's ``to_json(x)`` as a Spark expression, built from x's type (pure: sqlglot only).

Spark's ``TO_JSON`` leaves out a struct's NULL fields, refuses a number or a string, and writes numbers and times
its own way. DuckDB 1.5's JSON (its ``yyjson`` writer) is, by type:

- a struct an object in field order (``{"a":1,"b":null}``), a list an array, a map an object whose keys are the
  keys' text (``{"1":2}``), a NULL inside them ``null``; a NULL argument is NULL;
- integers and booleans as they print; a ``DOUBLE``, a ``FLOAT`` (widened: ``0.10000000149011612``) and a
  ``DECIMAL`` of up to 15 digits as a double: its shortest digits, fixed from 1e-6 up to 1e21 with at least one
  decimal (``100.0``, ``0.000001``), otherwise ``1e-7``, ``1.5e21``; ``NaN``, ``Infinity``, ``-Infinity``;
- a wider ``DECIMAL`` as its text (``12.3450000000``);
- anything else (text, dates, timestamps, UUIDs) as a JSON string of DuckDB's text of it.

The digits come from Java's text of the double, which Java 17 does not always make the shortest (see
docs/ducklake.md, "Known limits").

>>> from sqlglot import exp
>>> duckdb_json(exp.column("i"), exp.DataType.build("int")).sql("spark")
'CASE WHEN i IS NULL THEN NULL ELSE CAST(i AS STRING) END'
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression, string_literal

#: DuckDB writes a DECIMAL of up to this many digits as a double, a wider one as its text
_DOUBLE_DECIMAL_DIGITS = 15

ScalarText = Callable[[exp.Expr, exp.DataType], exp.Expr]

_T = "CAST(ABS(_x) AS STRING)"  # Java's text of |x|: 1.234E-7, 0.00123, 1234567.0
_INTEGER_PART = f"SUBSTRING_INDEX({_T}, '.', 1)"
_FRACTION = f"SUBSTRING_INDEX({_T}, '.', -1)"
_SCIENTIFIC = f"CONTAINS({_T}, 'E')"
#: the significant digits of |x| and the power of ten of the first, from either form of Java's text
_DIGITS = (
    f"(CASE WHEN {_SCIENTIFIC} THEN TRIM(TRAILING '0' FROM REPLACE(SUBSTRING_INDEX({_T}, 'E', 1), '.', '')) "
    f"ELSE TRIM(TRAILING '0' FROM TRIM(LEADING '0' FROM CONCAT({_INTEGER_PART}, {_FRACTION}))) END)"
)
_EXPONENT = (
    f"(CASE WHEN {_SCIENTIFIC} THEN CAST(SUBSTRING_INDEX({_T}, 'E', -1) AS INT) "
    f"WHEN {_INTEGER_PART} <> '0' THEN LENGTH({_INTEGER_PART}) - 1 "
    f"ELSE -(LENGTH({_FRACTION}) - LENGTH(TRIM(LEADING '0' FROM {_FRACTION})) + 1) END)"
)
_DOUBLE_JSON = f"""
CASE
  WHEN ISNAN(_x) THEN 'NaN'
  WHEN _x = CAST('Infinity' AS DOUBLE) THEN 'Infinity'
  WHEN _x = CAST('-Infinity' AS DOUBLE) THEN '-Infinity'
  WHEN _x = 0 THEN IF(CAST(_x AS STRING) = '-0.0', '-0.0', '0.0')
  ELSE CONCAT(
    IF(_x < 0, '-', ''),
    CASE
      WHEN {_EXPONENT} BETWEEN 0 AND 20 THEN CONCAT(
        SUBSTRING(RPAD({_DIGITS}, {_EXPONENT} + 1, '0'), 1, {_EXPONENT} + 1), '.',
        IF(LENGTH({_DIGITS}) > {_EXPONENT} + 1, SUBSTRING({_DIGITS}, {_EXPONENT} + 2), '0'))
      WHEN {_EXPONENT} BETWEEN -6 AND -1 THEN CONCAT('0.', REPEAT('0', -{_EXPONENT} - 1), {_DIGITS})
      ELSE CONCAT(
        SUBSTRING({_DIGITS}, 1, 1), IF(LENGTH({_DIGITS}) > 1, CONCAT('.', SUBSTRING({_DIGITS}, 2)), ''),
        'e', CAST({_EXPONENT} AS STRING))
    END)
END
"""


def duckdb_json(value: exp.Expr, dtype: exp.DataType, scalar_text: ScalarText | None = None) -> exp.Expr:
    """DuckDB's ``to_json(value)`` for ``value`` of Spark type ``dtype``.

    :param scalar_text: DuckDB's text of a scalar of a given type, for those written as JSON strings and for a
        map's keys (default: Spark's cast to ``STRING``).
    """
    writer = _JsonWriter(scalar_text or (lambda v, _t: exp.Cast(this=v.copy(), to=exp.DataType.build("string"))))
    return spark_expression("CASE WHEN _x IS NULL THEN NULL ELSE _j END", _x=value, _j=writer.json(value, dtype, 0))


def json_string(text: exp.Expr) -> exp.Expr:
    """``text`` as a JSON string (quoted, ``"`` and ``\\`` and control characters escaped), by Spark's writer."""
    return spark_expression("SUBSTRING(TO_JSON(ARRAY(_s)), 2, LENGTH(TO_JSON(ARRAY(_s))) - 2)", _s=text)


class _JsonWriter:
    def __init__(self, scalar_text: ScalarText) -> None:
        self._scalar_text = scalar_text

    def json(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        """The JSON of a value known not to be NULL at this point (an element's NULL is handled by the caller)."""
        kinds = exp.DataType.Type
        if dtype.is_type(kinds.ARRAY):
            element_type = dtype.expressions[0] if dtype.expressions else exp.DataType.build("string")
            variable = f"_lh_j{depth}"
            element = self._element(exp.column(variable), element_type, depth + 1)
            return spark_expression(
                f"CONCAT('[', ARRAY_JOIN(TRANSFORM(_x, {variable} -> _e), ','), ']')", _x=value, _e=element
            )
        if dtype.is_type(kinds.MAP):
            key_type, value_type = dtype.expressions
            variable = f"_lh_j{depth}"
            key = json_string(self._scalar_text(exp.column("key", table=variable), key_type))
            item = self._element(exp.column("value", table=variable), value_type, depth + 1)
            entry = exp.func("CONCAT", key, string_literal(":"), item)
            return spark_expression(
                f"CONCAT('{{', ARRAY_JOIN(TRANSFORM(MAP_ENTRIES(_x), {variable} -> _e), ','), '}}')", _x=value, _e=entry
            )
        if dtype.is_type(kinds.STRUCT):
            parts: list[exp.Expr] = [string_literal("{")]
            for position, field in enumerate(dtype.expressions):
                prefix = "," if position else ""
                parts.append(string_literal(f"{prefix}{json.dumps(field.name, ensure_ascii=False)}:"))
                member = exp.Dot(this=value.copy(), expression=exp.to_identifier(field.name, quoted=True))
                parts.append(self._element(member, field.args["kind"], depth))
            parts.append(string_literal("}"))
            return exp.func("CONCAT", *parts)
        if dtype.is_type(kinds.BOOLEAN, *exp.DataType.INTEGER_TYPES):
            return exp.Cast(this=value.copy(), to=exp.DataType.build("string"))
        if dtype.is_type(kinds.DECIMAL):
            digits = dtype.expressions[0].name if dtype.expressions else "10"
            if int(digits) > _DOUBLE_DECIMAL_DIGITS:
                return exp.Cast(this=value.copy(), to=exp.DataType.build("string"))
            return spark_expression(_DOUBLE_JSON, _x=exp.Cast(this=value.copy(), to=exp.DataType.build("double")))
        if dtype.is_type(kinds.FLOAT, kinds.DOUBLE):
            return spark_expression(_DOUBLE_JSON, _x=exp.Cast(this=value.copy(), to=exp.DataType.build("double")))
        return json_string(self._scalar_text(value, dtype))

    def _element(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        return spark_expression(
            "CASE WHEN _x IS NULL THEN 'null' ELSE _j END", _x=value, _j=self.json(value, dtype, depth)
        )
