"""DuckDB types a statement may cast to that Spark has no counterpart for (pure: sqlglot only).

sqlglot's Spark SQL writes DuckDB's ``BIT`` (a string of bits, ``'0101'::BIT``) as ``BOOLEAN``: ``x::BIT`` of 10
would be ``true`` where DuckDB gives the bits ``00000000000000000000000000001010``. Such a statement is refused
by name instead.
"""

from __future__ import annotations

from sqlglot import exp

#: DuckDB's name for each refused type, by sqlglot's
_REFUSED = {exp.DataType.Type.BIT: "BIT"}


def type_refusal(tree: exp.Expr) -> str | None:
    """Why a type ``tree`` names cannot be had on Spark, or None.

    >>> import sqlglot
    >>> type_refusal(sqlglot.parse_one("SELECT x::BIT FROM t", read="duckdb"))
    'the type BIT (a bit string) has no Spark counterpart; cast to another type, or run the task with engine="duckdb".'
    """
    for dtype in tree.find_all(exp.DataType):
        for kind, name in _REFUSED.items():
            if dtype.is_type(kind):
                return (
                    f"the type {name} (a bit string) has no Spark counterpart; cast to another type, or run the task "
                    'with engine="duckdb".'
                )
    return None
