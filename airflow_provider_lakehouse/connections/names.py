"""Parse the names DAG authors write: ``"main"``, ``"main:analytics"``, ``":analytics"``."""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_NAME = "main"

# Connection ids become environment variable names (AIRFLOW_CONN_DATATABLE_<NAME>), so keep
# names to characters that survive that mapping.
_NAME = re.compile(r"^[A-Za-z0-9_]{1,200}$")


@dataclass(frozen=True)
class DataTableName:
    """A Data Table reference: the data table's name and an optional schema (search path).

    >>> parse_datatable_name("main:analytics")
    DataTableName(name='main', schema='analytics')
    >>> parse_datatable_name(":analytics").conn_id
    'datatable_main'
    """

    name: str
    schema: str | None = None

    @property
    def conn_id(self) -> str:
        """The Airflow connection id this name resolves to."""
        return datatable_conn_id(self.name)

    def __str__(self) -> str:
        return f"{self.name}:{self.schema}" if self.schema else self.name


def datatable_conn_id(name: str) -> str:
    """Return the connection id of Data Table ``name``.

    >>> datatable_conn_id("main")
    'datatable_main'
    """
    return f"datatable_{name}"


def parse_datatable_name(ref: str | None) -> DataTableName:
    """Parse ``NAME``, ``NAME:SCHEMA`` or ``:SCHEMA`` (the default data table ``main``).

    :param ref: the reference as written in a DAG; ``None`` or ``""`` mean ``main``.
    :raises ValueError: if the name has characters a connection id cannot carry, or the schema is empty.

    >>> parse_datatable_name(None)
    DataTableName(name='main', schema=None)
    >>> parse_datatable_name("sales")
    DataTableName(name='sales', schema=None)
    """
    ref = (ref or "").strip()
    name, sep, schema = ref.partition(":")
    name = name or DEFAULT_NAME
    if not _NAME.match(name):
        raise ValueError(f"Invalid data table name {name!r}: use letters, digits and underscores.")
    if sep and not schema:
        raise ValueError(f"Invalid data table reference {ref!r}: the schema after ':' is empty.")
    return DataTableName(name=name, schema=schema or None)
