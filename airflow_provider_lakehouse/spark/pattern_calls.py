"""Spark SQL read by sqlglot with its datetime patterns kept as written (pure: sqlglot only).

sqlglot reads ``DATE_FORMAT(ts, pattern)`` (and ``TO_TIMESTAMP``, ``TO_DATE``, ``UNIX_TIMESTAMP``,
``FROM_UNIXTIME`` with a pattern) into its own time-format nodes, converting the Java pattern to strftime codes and
back when it writes Spark SQL. The conversion ignores Java's quoting, so the letters of quoted text are read as
pattern letters: ``date_format(d, "'Today' EEEE")`` came back as ``'Todayyyy' EEEE``, and the planner's own
``'\\'Day \\'D'`` (DuckDB's ``strftime(d, 'Day %-j')``) as ``'\\'Dayyyy \\'D'`` once the driver re-read it
(expression fuzzer, seed 26441). :func:`parse_spark` reads those calls as plain calls, which sqlglot writes back
unchanged, and :func:`pattern_call_type` types them for the type annotation.

(sqlglot's parser classes are compiled, so a dialect of our own cannot change how it reads these calls: the
calls are renamed in the text before sqlglot reads it, by their tokens, and named back in the tree.)
"""

from __future__ import annotations

import itertools
import re

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from airflow_provider_lakehouse.spark.rewriting import spark_expression

#: Spark's functions that take a datetime pattern as their second argument, and their result type
_PATTERN_FUNCTIONS = {
    "DATE_FORMAT": "varchar",
    "FROM_UNIXTIME": "varchar",
    "TO_TIMESTAMP": "timestamp",
    "TRY_TO_TIMESTAMP": "timestamp",
    "TO_DATE": "date",
    "UNIX_TIMESTAMP": "bigint",
    "TO_UNIX_TIMESTAMP": "bigint",
}
#: a cheap test of whether a statement may have such a call at all
_MENTIONED = re.compile("|".join(_PATTERN_FUNCTIONS), re.IGNORECASE)
#: the name a pattern call has while sqlglot reads the text (no function of Spark's or sqlglot's)
_RENAMED = "__lh_pattern_"


def parse_spark(sql: str) -> exp.Expr:
    """``sql`` read as Spark SQL, with the calls of :data:`_PATTERN_FUNCTIONS` that pass a pattern kept as
    written (plain calls); without a pattern they are sqlglot's own nodes (``TO_DATE(s)`` is a cast).

    >>> parse_spark("SELECT date_format(d, \\"'Today' EEEE\\") AS r, to_date(s) AS t FROM v").sql("spark")
    "SELECT DATE_FORMAT(d, '\\\\'Today\\\\' EEEE') AS r, TO_DATE(s) AS t FROM v"
    """
    if not _MENTIONED.search(sql):  # most statements: no second tokenization
        return sqlglot.parse_one(sql, read="spark")
    tokens = Dialect.get_or_raise("spark").tokenize(sql)
    renamed, at = [], 0
    for token, following in itertools.pairwise(tokens):
        if (
            token.token_type == TokenType.VAR
            and token.text.upper() in _PATTERN_FUNCTIONS
            and following.token_type == TokenType.L_PAREN
        ):
            renamed += [sql[at : token.start], _RENAMED, token.text]
            at = token.end + 1
    tree = sqlglot.parse_one("".join(renamed) + sql[at:], read="spark")
    return tree.transform(_named_back)


def _named_back(node: exp.Expr) -> exp.Expr:
    if not (isinstance(node, exp.Anonymous) and node.name.startswith(_RENAMED)):
        return node
    name = node.name[len(_RENAMED) :]
    if len(node.expressions) > 1:
        return exp.Anonymous(this=name, expressions=node.expressions)
    # without a pattern sqlglot's own node: its type and its Spark spelling are right
    if not node.expressions:
        return spark_expression(f"{name}()")
    return spark_expression(f"{name}(_a)", _a=node.expressions[0])


def pattern_call_type(node: exp.Expr) -> exp.DataType | None:
    """The result type of a call :func:`parse_spark` kept as written; None for any other node."""
    if isinstance(node, exp.Anonymous) and len(node.expressions) > 1 and node.name.upper() in _PATTERN_FUNCTIONS:
        return exp.DataType.build(_PATTERN_FUNCTIONS[node.name.upper()])
    return None
