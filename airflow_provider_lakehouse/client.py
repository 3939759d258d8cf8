"""A small Python API for TaskFlow code: ``datatable("main").query(sql, *args).fetch()``.

>>> q = datatable("main:analytics").query("SELECT $1::int + $2::int AS total", 1, 2)
>>> q  # nothing runs until a terminal method is called
SqlQuery(datatable='main:analytics', statements=1, parameters=2)
"""

from __future__ import annotations

from typing import Any

from airflow_provider_lakehouse.connections.names import parse_datatable_name
from airflow_provider_lakehouse.sql.split import split_statements


class SqlQuery:
    """A prepared script with its parameters; one of the terminal methods runs it."""

    def __init__(self, datatable: str, sql: str, parameters: list[Any] | dict[str, Any]) -> None:
        self._datatable = datatable
        self._sql = sql
        self._parameters = parameters

    def __repr__(self) -> str:  # never shows values: they may be personal data
        count = len(self._parameters)
        return f"SqlQuery(datatable={self._datatable!r}, statements={len(split_statements(self._sql))}, parameters={count})"

    def _run(self, fetch: str) -> Any:
        from airflow_provider_lakehouse.hooks.datatable import DataTableHook

        return DataTableHook(datatable=self._datatable).run(self._sql, self._parameters, fetch=fetch)  # type: ignore[arg-type]

    def fetch(self) -> list[dict[str, Any]]:
        """All rows of the last statement, as JSON-safe dicts."""
        return list(self._run("all").result)

    def fetch_one(self) -> dict[str, Any] | None:
        """The first row of the last statement, or None."""
        return self._run("one").result

    def fetch_one_scalar(self) -> Any:
        """The first column of the first row of the last statement, or None."""
        return self._run("scalar").result

    def execute(self) -> int:
        """Run for effect; return the row count of the last statement (affected or returned)."""
        return self._run("none").statements[-1].rowcount


class DataTableClient:
    """Handle on one Data Table. Create it with :func:`datatable`."""

    def __init__(self, name: str) -> None:
        self.name = str(parse_datatable_name(name))

    def __repr__(self) -> str:
        return f"DataTableClient({self.name!r})"

    def query(self, sql: str, *args: Any, **kwargs: Any) -> SqlQuery:
        """Prepare ``sql``; positional ``args`` bind ``$1, $2, ...``, keyword ``kwargs`` bind ``$name``.

        :raises ValueError: if both positional and keyword parameters are given.
        """
        if args and kwargs:
            raise ValueError("Pass either positional parameters ($1, $2, ...) or keyword parameters ($name), not both.")
        return SqlQuery(self.name, sql, dict(kwargs) if kwargs else list(args))


def datatable(name: str = "main") -> DataTableClient:
    """Return a client for Data Table ``name`` (``NAME``, ``NAME:SCHEMA`` or ``:SCHEMA``)."""
    return DataTableClient(name)
