"""The columns of a ``UNION``, ``INTERSECT`` or ``EXCEPT`` typed as DuckDB types them (pure: sqlglot only).

DuckDB gives each column of a set operation the larger of its inputs' types, and text is larger than numbers,
booleans, dates, times and timestamps: ``SELECT 1 UNION ALL SELECT '2'`` is a ``VARCHAR`` column of ``'1'`` and
``'2'``. Spark casts the text to the other type instead: a ``BIGINT`` there, and ``SELECT 'a' UNION ALL SELECT 1``
fails casting ``'a'``. So where one input of a column is text and another such a scalar, the planned Spark SQL
writes the scalar inputs as DuckDB's text of their values (:func:`text_where_duckdb_unites_with_text`), once the
driver knows the types (the statement's reads are registered then).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sqlglot import exp

from airflow_provider_lakehouse.spark.decimal_types import spark_expression_metadata
from airflow_provider_lakehouse.spark.rewriting import TIMESTAMP_TYPES, spark_expression, typed_call, typed_copy

#: input types whose values DuckDB turns into text when a set operation's column unites them with text
_SCALARS = (
    *exp.DataType.INTEGER_TYPES,
    *exp.DataType.REAL_TYPES,
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.BOOLEAN,
    exp.DataType.Type.DATE,
    *TIMESTAMP_TYPES,
)
#: Spark's ``TIMESTAMP``, DuckDB's ``TIMESTAMP WITH TIME ZONE``: its text names the zone (``+00``, the sessions' UTC)
_ZONED = (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ)


def has_set_operation(sql: str) -> bool:
    """Whether Spark SQL ``sql`` may hold a set operation (a word test: the parse comes later).

    >>> has_set_operation("SELECT 1 UNION ALL SELECT 2"), has_set_operation("SELECT reunion FROM t")
    (True, False)
    """
    return _SET_OPERATION.search(sql) is not None


_SET_OPERATION = re.compile(r"\b(UNION|INTERSECT|EXCEPT|MINUS)\b", re.IGNORECASE)


def text_where_duckdb_unites_with_text(
    tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]]
) -> exp.Expr:
    """``tree`` (Spark SQL) with each set operation's scalar inputs of a column that also has a text input written
    as DuckDB's text (``to_text`` markers, resolved with the others); ``tree`` unchanged where sqlglot cannot type
    it or an input selects ``*``."""
    chains = [node for node in tree.find_all(exp.SetOperation) if not isinstance(node.parent, exp.SetOperation)]
    if not chains:
        return tree
    typed = typed_copy(tree, schemas, spark_expression_metadata())
    if typed is None:
        return tree
    typed_chains = [node for node in typed.find_all(exp.SetOperation) if not isinstance(node.parent, exp.SetOperation)]
    if len(typed_chains) != len(chains):
        return tree
    for chain, typed_chain in zip(chains, typed_chains, strict=True):
        _unite(_inputs(chain), _inputs(typed_chain))
    return tree


def _inputs(chain: exp.Expr) -> list[exp.Expr]:
    """The ``SELECT``s a chain of set operations (``a UNION b EXCEPT c``) unites, in order."""
    if isinstance(chain, exp.SetOperation):
        return _inputs(chain.this) + _inputs(chain.expression)
    return [chain.unnest()]


def _unite(inputs: list[exp.Expr], typed_inputs: list[exp.Expr]) -> None:
    if not all(isinstance(s, exp.Select) for s in (*inputs, *typed_inputs)):
        return
    if any(isinstance(item, exp.Star) or item.find(exp.Star) for s in inputs for item in s.expressions):
        return
    widths = {len(s.expressions) for s in (*inputs, *typed_inputs)}
    if len(widths) != 1:
        return
    for position in range(widths.pop()):
        types = [s.expressions[position].type for s in typed_inputs]
        known = [t for t in types if t is not None and not t.is_type(exp.DataType.Type.NULL, exp.DataType.Type.UNKNOWN)]
        if any(t.is_type(*exp.DataType.TEXT_TYPES) for t in known):
            for index, (select, dtype) in enumerate(zip(inputs, types, strict=True)):
                if dtype is not None and dtype.is_type(*_SCALARS):
                    _as_text(select.expressions[position], dtype, name_it=index == 0)
        elif (
            any(t.is_type(exp.DataType.Type.BOOLEAN) for t in known)
            and any(t.is_type(*exp.DataType.INTEGER_TYPES) for t in known)
            and all(t.is_type(exp.DataType.Type.BOOLEAN, *exp.DataType.INTEGER_TYPES) for t in known)
        ):
            # DuckDB casts booleans to the integers they meet (true is 1); Spark refuses the pair
            for select, dtype in zip(inputs, types, strict=True):
                if dtype is not None and dtype.is_type(exp.DataType.Type.BOOLEAN):
                    _retyped(
                        select.expressions[position],
                        exp.Cast(this=_value(select.expressions[position]).copy(), to=exp.DataType.build("INT")),
                    )


def _as_text(item: exp.Expr, dtype: exp.DataType, name_it: bool) -> None:
    """``item`` (a ``SELECT`` item) as DuckDB's text of its value, keeping the column's name in the first input."""
    value = _value(item)
    if dtype.is_type(*_ZONED):
        text = spark_expression("CONCAT(CAST(_x AS STRING), '+00')", _x=value)
    else:
        text = typed_call("to_text", value, exp.false())
    _retyped(item, text, name_it)


def _value(item: exp.Expr) -> exp.Expr:
    return item.this if isinstance(item, exp.Alias) else item


def _retyped(item: exp.Expr, value: exp.Expr, name_it: bool = True) -> None:
    """``item`` computing ``value`` instead, under the name it had where that decides the column's name."""
    if isinstance(item, exp.Alias):
        item.set("this", value)
    elif name_it:
        item.replace(exp.alias_(value, item.alias_or_name or item.sql("spark"), quoted=True))
    else:
        item.replace(value)
