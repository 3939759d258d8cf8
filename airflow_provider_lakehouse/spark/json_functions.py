"""DuckDB's JSON functions that Spark lacks or answers otherwise, in Spark SQL (pure: sqlglot only).

========================================  ======================================  ==============================
DuckDB                                    DuckDB's result                         Spark's for the same text
========================================  ======================================  ==============================
``json_object('k', v, ...)``              ``{"k":v,...}``, a NULL value ``null``  ``:v`` read as a parameter
``json_array(a, ...)``                    ``[a,...]`` of values of any types      one element type only
``json_quote(x)``                         ``to_json(x)``                          not a function
``json_array_length(j[, path])``          0 for a value that is no array          NULL
``json_keys(j[, path])``                  ``[]`` for a value that is no object    NULL
``json_type(j[, path])``                  ``OBJECT``, ``ARRAY``, ``VARCHAR``,     not a function
                                          ``UBIGINT`` (``BIGINT`` if negative),
                                          ``DOUBLE``, ``BOOLEAN``, ``NULL``
``json_valid(s)``                         whether ``s`` is JSON                   not a function
========================================  ======================================  ==============================

Values go through DuckDB's ``to_json`` (a typed marker, see :mod:`.json_text`). ``json_type`` and ``json_valid``
read the text with Spark's JSON parser (``PARSE_JSON``), which refuses the trailing commas and ``NaN`` DuckDB's
takes (docs/ducklake.md, "Known limits").
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression, string_literal, typed_call

#: ``meta`` key of an expression whose value is JSON text (a JSON function's result): an object or array that
#: holds it embeds it as it is, as DuckDB embeds a JSON value, where text would be quoted
JSON_VALUE = "lh_json_value"


def json_valued(node: exp.Expr) -> exp.Expr:
    """``node``, marked as an expression whose value is JSON (see :data:`JSON_VALUE`)."""
    node.meta[JSON_VALUE] = True
    return node


def _json_of(value: exp.Expr) -> exp.Expr:
    """A value's JSON inside an object or array: ``null`` for NULL; a JSON function's result as it is."""
    json = value.copy() if value.meta.get(JSON_VALUE) else typed_call("to_json", value)
    return exp.Coalesce(this=json, expressions=[string_literal("null")])


def _object(node: exp.JSONObject) -> exp.Expr | None:
    pairs = node.expressions
    if not all(isinstance(p, exp.JSONKeyValue) for p in pairs) or node.args.get("null_handling"):
        return None
    parts: list[exp.Expr] = [string_literal("{")]
    for position, pair in enumerate(pairs):
        if position:
            parts.append(string_literal(","))
        parts += [typed_call("to_json", pair.this), string_literal(":"), _json_of(pair.expression)]
    parts.append(string_literal("}"))
    return json_valued(exp.func("CONCAT", *parts))


def _array(node: exp.JSONArray) -> exp.Expr | None:
    if node.args.get("null_handling") or node.args.get("return_type"):
        return None
    parts: list[exp.Expr] = [string_literal("[")]
    for position, value in enumerate(node.expressions):
        if position:
            parts.append(string_literal(","))
        parts.append(_json_of(value))
    parts.append(string_literal("]"))
    return json_valued(exp.func("CONCAT", *parts))


def _at_path(arguments: list[exp.Expr]) -> exp.Expr | None:
    """The JSON text a function of ``(json[, path])`` reads: the document, or the value at the path."""
    if len(arguments) == 1:
        return arguments[0].copy()
    if len(arguments) == 2:
        return exp.Anonymous(this="GET_JSON_OBJECT", expressions=[a.copy() for a in arguments])
    return None


def _array_length(node: exp.Anonymous) -> exp.Expr | None:
    value = _at_path(node.expressions)
    if value is None:
        return None
    return spark_expression("CAST(COALESCE(JSON_ARRAY_LENGTH(_j), IF(_j IS NULL, NULL, 0)) AS BIGINT)", _j=value)


def _path_text(path: exp.Expr) -> exp.Expr:
    """A path argument as the text Spark's ``GET_JSON_OBJECT`` takes (sqlglot reads a literal path as a tree)."""
    if isinstance(path, exp.JSONPath):
        return exp.Literal.string(path.sql("duckdb")[1:-1])
    return path


def _keys(node: exp.JSONKeys) -> exp.Expr | None:
    path = node.args.get("expression")
    value = _at_path([node.this, *([_path_text(path)] if path is not None else []), *node.expressions])
    if value is None:
        return None
    return spark_expression(
        "COALESCE(JSON_OBJECT_KEYS(_j), IF(_j IS NULL, NULL, CAST(ARRAY() AS ARRAY<STRING>)))", _j=value
    )


def _type(node: exp.JSONType) -> exp.Expr | None:
    path = node.args.get("expression")
    arguments = [node.this, *([_path_text(path)] if path is not None else [])]
    # built by name: sqlglot's Spark SQL writes its own PARSE_JSON node as the bare text
    variant: exp.Expr = exp.Anonymous(this="PARSE_JSON", expressions=[arguments[0].copy()])
    if len(arguments) == 2:
        variant = spark_expression("VARIANT_GET(_v, _p)", _v=variant, _p=arguments[1])
    return spark_expression(
        "CASE WHEN _v IS NULL THEN NULL "
        "WHEN STARTSWITH(SCHEMA_OF_VARIANT(_v), 'OBJECT') THEN 'OBJECT' "
        "WHEN STARTSWITH(SCHEMA_OF_VARIANT(_v), 'ARRAY') THEN 'ARRAY' "
        "WHEN SCHEMA_OF_VARIANT(_v) = 'STRING' THEN 'VARCHAR' "
        "WHEN SCHEMA_OF_VARIANT(_v) = 'VOID' THEN 'NULL' "
        "WHEN SCHEMA_OF_VARIANT(_v) = 'BOOLEAN' THEN 'BOOLEAN' "
        "WHEN SCHEMA_OF_VARIANT(_v) = 'BIGINT' THEN IF(VARIANT_GET(_v, '$', 'BIGINT') < 0, 'BIGINT', 'UBIGINT') "
        "ELSE 'DOUBLE' END",
        _v=variant,
    )


def _valid(node: exp.Anonymous) -> exp.Expr | None:
    if len(node.expressions) != 1:
        return None
    parsed = exp.Anonymous(this="TRY_PARSE_JSON", expressions=[node.expressions[0].copy()])
    return spark_expression("IF(_s IS NULL, NULL, _p IS NOT NULL)", _s=node.expressions[0], _p=parsed)


def to_json(node: exp.Anonymous) -> exp.Expr | None:
    """``to_json(x)`` (and ``json_quote``): DuckDB's JSON of x by its type, a typed marker (see :mod:`.json_text`)."""
    return json_valued(typed_call("to_json", node.expressions[0])) if len(node.expressions) == 1 else None


#: rewrites by sqlglot's node type
REWRITES: dict[type[exp.Expr], Callable[..., exp.Expr | None]] = {
    exp.JSONObject: _object,
    exp.JSONArray: _array,
    exp.JSONKeys: _keys,
    exp.JSONType: _type,
}
#: rewrites of calls sqlglot leaves by name
BY_NAME: dict[str, Callable[[exp.Anonymous], exp.Expr | None]] = {
    "json_array_length": _array_length,
    "json_valid": _valid,
    "json_quote": to_json,
    "to_json": to_json,
}
