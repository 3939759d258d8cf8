"""DuckDB's text of a list, struct or map (``CAST(x AS VARCHAR)``) as a Spark expression (pure: sqlglot only).

Spark's own cast writes ``{1, x}`` for DuckDB's ``{'a': 1, 'b': x}``, ``{k -> 1}`` for ``{k=1}``, ``null`` for
``NULL``, and never quotes an element. DuckDB 1.5 (``NestedToVarcharCast``) writes:

- a list as ``[e, e]``, a map as ``{k=v, k=v}``, a struct as ``{'field': v, 'field': v}`` (its field names always
  quoted), a NULL element, value or field as ``NULL``;
- a scalar element as its own text, quoted with ``'`` when that text is empty, starts or ends with white space, is
  ``null`` in any case, or holds one of ``"'(),:=[]{}`` (a timestamp's ``:``; ``x y`` is not quoted; a number's or
  boolean's text never is); inside the quotes, and in a field name, ``'`` and ``\\`` get a backslash before them;
- a nested element as its own text, unquoted.

>>> from sqlglot import exp
>>> sql = duckdb_nested_text(exp.column("m"), exp.DataType.build("map<string, int>", dialect="spark")).sql("spark")
>>> sql.startswith("CASE WHEN m IS NULL THEN NULL ELSE CONCAT('{', ARRAY_JOIN(TRANSFORM(MAP_ENTRIES(m), _lh_v0 -> ")
True
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression, string_literal

#: characters that make DuckDB quote a scalar element's text
_SPECIAL = "\"'(),:=[]{}"
#: C's ``isspace``: the white space DuckDB tests the first and last character for
_SPACE_CODES = (32, 9, 10, 11, 12, 13)
_NESTED = (exp.DataType.Type.ARRAY, exp.DataType.Type.STRUCT, exp.DataType.Type.MAP)
#: types whose text never holds a character DuckDB quotes (digits, a point, a sign, ``e``, ``nan``, ``true``)
_NEVER_QUOTED = (*exp.DataType.NUMERIC_TYPES, exp.DataType.Type.BOOLEAN)

ScalarText = Callable[[exp.Expr, exp.DataType], exp.Expr]


def is_nested(dtype: exp.DataType | None) -> bool:
    return dtype is not None and dtype.is_type(*_NESTED)


def duckdb_nested_text(value: exp.Expr, dtype: exp.DataType, scalar_text: ScalarText | None = None) -> exp.Expr:
    """DuckDB's ``CAST(value AS VARCHAR)`` of ``value``, a list, struct or map of Spark type ``dtype``.

    :param scalar_text: DuckDB's text of a scalar element of a given type (default: Spark's cast to ``STRING``,
        which is DuckDB's for integers, decimals, booleans, dates, timestamps and text).
    """
    return _Writer(scalar_text or _spark_text).text(value, dtype, depth=0)


def _spark_text(value: exp.Expr, _dtype: exp.DataType) -> exp.Expr:
    return exp.Cast(this=value.copy(), to=exp.DataType.build("string"))


class _Writer:
    def __init__(self, scalar_text: ScalarText) -> None:
        self._scalar_text = scalar_text

    def text(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        """The text of ``value`` where it stands at the top or as a nested element (NULL for NULL)."""
        if dtype.is_type(exp.DataType.Type.ARRAY):
            body = self._listed(value, dtype, depth)
        elif dtype.is_type(exp.DataType.Type.MAP):
            body = self._mapped(value, dtype, depth)
        elif dtype.is_type(exp.DataType.Type.STRUCT):
            body = self._structured(value, dtype, depth)
        else:
            return self._scalar_text(value, dtype)
        return spark_expression("CASE WHEN _x IS NULL THEN NULL ELSE _body END", _x=value, _body=body)

    def _element(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        """An element's text inside a nested value: ``NULL`` for NULL, a scalar's text quoted as DuckDB quotes it."""
        text = self.text(value, dtype, depth)
        if not is_nested(dtype) and not dtype.is_type(*_NEVER_QUOTED):
            text = _quoted_where_duckdb_quotes(text)
        return exp.Coalesce(this=text, expressions=[string_literal("NULL")])

    def _listed(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        element_type = dtype.expressions[0] if dtype.expressions else exp.DataType.build("string")
        variable = f"_lh_v{depth}"
        element = self._element(exp.column(variable), element_type, depth + 1)
        return spark_expression(
            f"CONCAT('[', ARRAY_JOIN(TRANSFORM(_x, {variable} -> _e), ', '), ']')", _x=value, _e=element
        )

    def _mapped(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        key_type, value_type = dtype.expressions
        variable = f"_lh_v{depth}"
        key = self._element(exp.column("key", table=variable), key_type, depth + 1)
        item = self._element(exp.column("value", table=variable), value_type, depth + 1)
        entry = exp.func("CONCAT", key, string_literal("="), item)
        return spark_expression(
            f"CONCAT('{{', ARRAY_JOIN(TRANSFORM(MAP_ENTRIES(_x), {variable} -> _e), ', '), '}}')", _x=value, _e=entry
        )

    def _structured(self, value: exp.Expr, dtype: exp.DataType, depth: int) -> exp.Expr:
        parts: list[exp.Expr] = [string_literal("{")]
        for position, field in enumerate(dtype.expressions):
            name, field_type = field.name, field.args["kind"]
            prefix = ", " if position else ""
            parts.append(string_literal(f"{prefix}'{_escaped(name)}': "))
            member = exp.Dot(this=value.copy(), expression=exp.to_identifier(name, quoted=True))
            parts.append(self._element(member, field_type, depth))
        parts.append(string_literal("}"))
        return exp.func("CONCAT", *parts)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _quoted_where_duckdb_quotes(text: exp.Expr) -> exp.Expr:
    """``text`` in quotes (its ``'`` and ``\\`` escaped by a backslash) where DuckDB quotes a nested element.

    Backslashes and quotes are written as ``CHAR(92)`` and ``CHAR(39)``: Spark reads a backslash in a string
    literal as an escape unless told otherwise, and the SQL text should not depend on that setting."""
    spaces = ", ".join(f"CHAR({code})" for code in _SPACE_CODES)
    special = _SPECIAL.replace("'", "")  # and CHAR(39)
    return spark_expression(
        f"CASE WHEN _s IS NULL THEN NULL "
        f"WHEN _s = '' OR SUBSTRING(_s, 1, 1) IN ({spaces}) OR SUBSTRING(_s, -1, 1) IN ({spaces}) "
        f"OR LOWER(_s) = 'null' OR LENGTH(TRANSLATE(_s, CONCAT('{special}', CHAR(39)), '')) <> LENGTH(_s) "
        "THEN CONCAT(CHAR(39), REPLACE(REPLACE(_s, CHAR(92), CONCAT(CHAR(92), CHAR(92))), CHAR(39), "
        "CONCAT(CHAR(92), CHAR(39))), CHAR(39)) "
        "ELSE _s END",
        _s=text,
    )
