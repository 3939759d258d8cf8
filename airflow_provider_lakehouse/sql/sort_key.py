"""One key of a DuckLake table's sort order (``SET SORTED BY``), as the catalog stores it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SortKey:
    """One key of a table's ``SET SORTED BY``: DuckDB sorts every file it writes by these.

    :param expression: the key's SQL text as DuckDB stores it (a column name, or any expression).
    """

    expression: str
    descending: bool = False
    nulls_first: bool = False
