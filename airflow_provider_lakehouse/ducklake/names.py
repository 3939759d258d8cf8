"""How lake objects are named: ``schema.table`` strings.

A leaf module (it imports nothing of the lake) so that the catalog and the transaction can both use it without
importing each other.
"""

from __future__ import annotations

#: the schema every lake has, and the one an unqualified table name refers to
DEFAULT_SCHEMA = "main"


def split_name(name: str, default_schema: str = DEFAULT_SCHEMA) -> tuple[str, str]:
    """``"schema.table"`` or ``"table"`` -> (schema, table).

    :param name: a table name, qualified by its schema or not.
    :param default_schema: the schema of an unqualified name.

    >>> split_name("sales.orders"), split_name("orders")
    (('sales', 'orders'), ('main', 'orders'))
    """
    schema, dot, table = name.rpartition(".")
    return (schema if dot else default_schema), table
