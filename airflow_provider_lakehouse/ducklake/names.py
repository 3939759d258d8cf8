"""How lake objects are named: ``schema.table`` strings.

A leaf module (it imports nothing of the lake) so that the catalog and the transaction can both use it without
importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.model import ViewInfo

#: the schema every lake has, and the one an unqualified table name refers to
DEFAULT_SCHEMA = "main"
#: how DuckDB writes the lake's catalog name into a stored view's SQL, replaced by the attach name when read
VIEW_CATALOG_PLACEHOLDER = "{DUCKLAKE_CATALOG}"


def split_name(name: str, default_schema: str = DEFAULT_SCHEMA) -> tuple[str, str]:
    """``"schema.table"`` or ``"table"`` -> (schema, table).

    :param name: a table name, qualified by its schema or not.
    :param default_schema: the schema of an unqualified name.

    >>> split_name("sales.orders"), split_name("orders")
    (('sales', 'orders'), ('main', 'orders'))
    """
    schema, dot, table = name.rpartition(".")
    return (schema if dot else default_schema), table


def find_view(views: Sequence[ViewInfo], name: str) -> ViewInfo | None:
    """The view of ``views`` named ``schema.view`` (or ``view`` in ``main``): the exact match, else the only one
    matching case-insensitively (tables resolve the same way); None when there is none.

    >>> from airflow_provider_lakehouse.ducklake.model import ViewInfo
    >>> v = ViewInfo(1, 0, "main", "Big", "SELECT 1")
    >>> find_view([v], "main.big") is v, find_view([v], "other.big")
    (True, None)
    """
    schema_name, view_name = split_name(name)
    exact = [v for v in views if (v.schema_name, v.name) == (schema_name, view_name)]
    loose = [v for v in views if (v.schema_name.lower(), v.name.lower()) == (schema_name.lower(), view_name.lower())]
    for candidates in (exact, loose):
        if len(candidates) == 1:
            return candidates[0]
    return None
