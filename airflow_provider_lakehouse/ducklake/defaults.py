"""The value an insert gives a column it does not name: the column's default, as DuckDB stores it."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.implicit_casts import cast_in_duckdb
from airflow_provider_lakehouse.ducklake.type_promotion import duckdb_type_name
from airflow_provider_lakehouse.ducklake.types import NESTED, Column, arrow_type
from airflow_provider_lakehouse.exceptions import LakehouseError

#: DuckDB stores a typed constant default as a cast of its text: ``CAST('t' AS BOOLEAN)``, ``CAST('2020-01-02' AS
#: "DATE")``, ``CAST('1.5' AS DECIMAL(10,2))``
_CAST_OF_TEXT = re.compile(r"""^CAST\('((?:[^']|'')*)' AS "?[A-Za-z_][A-Za-z_0-9 ]*"?(\(\d+(,\s*\d+)?\))?\)$""")


def insert_default(column: Column) -> str | None:
    """The constant text of ``column``'s default (None: no default, the rows get NULL).

    >>> insert_default(Column(1, "b", "boolean", default_value="CAST('t' AS BOOLEAN)", default_is_expression=True))
    't'
    >>> insert_default(Column(1, "d", "date", default_value='CAST(\\'2020-01-02\\' AS "DATE")', default_is_expression=True))
    '2020-01-02'
    >>> insert_default(Column(1, "s", "varchar", default_value="it's"))
    "it's"

    A list, struct or map column's default (only ``ALTER COLUMN … SET DEFAULT`` gives one) is recorded, but
    DuckDB 1.5.5's inserts store NULL for it, and so do ours:

    >>> insert_default(Column(1, "l", "list", default_value="main.list_value(1, 2)", default_is_expression=True))

    :raises LakehouseError: for a default DuckDB evaluates per insert (``now()``, ``nextval(...)``): this
        implementation fills defaults from constants only.
    """
    if column.type in NESTED:
        return None
    text = _constant_text(column)
    if text is None and column.default_value is not None:
        raise LakehouseError(
            f"Column {column.name!r} has the default {column.default_value}, an expression DuckDB evaluates per "
            "insert: this engine fills only constant defaults. Give the column's value in the INSERT, or run the "
            'task with engine="duckdb".'
        )
    return text


def _constant_text(column: Column) -> str | None:
    """The text of ``column``'s constant default; None when it has none or DuckDB evaluates it per insert."""
    text = column.default_value
    if text is None or not column.default_is_expression:
        return text
    cast = _CAST_OF_TEXT.match(text)
    return None if cast is None else cast.group(1).replace("''", "'")


def stored_default(value: Any) -> tuple[str, bool]:
    """How DuckDB stores a constant default: its text, and whether it records it as an expression (a boolean is
    ``CAST('t' AS BOOLEAN)``; a typed constant such as ``DATE '2020-01-02'`` reaches here as its cast).

    >>> stored_default(True), stored_default(-5), stored_default("CAST('2020-01-02' AS DATE)")
    (("CAST('t' AS BOOLEAN)", True), ('-5', False), ("CAST('2020-01-02' AS DATE)", True))
    """
    if isinstance(value, bool):
        return f"CAST('{'t' if value else 'f'}' AS BOOLEAN)", True
    text = repr(value) if isinstance(value, (int, float)) else str(value)
    return text, _CAST_OF_TEXT.match(text) is not None


def check_default(column: Column) -> None:
    """Fail as DuckDB fails a ``DEFAULT`` its column's type cannot hold (``UINTEGER DEFAULT -344``, ``TINYINT
    DEFAULT 300``, ``DATE DEFAULT 'x'``): when the table is created or altered, not at the first insert that uses
    it. The check is DuckDB's own cast of the default's text, so it runs where the ``duckdb`` package is installed
    (pyarrow's stricter parsing would refuse defaults DuckDB takes, ``'2.5'`` for an ``INTEGER``); a default DuckDB
    evaluates per insert is not checked.

    >>> check_default(Column(1, "n", "int8", default_value="300"))
    Traceback (most recent call last):
    ...
    airflow_provider_lakehouse.exceptions.LakehouseError: Column 'n': its default 300 does not fit TINYINT: ...
    >>> check_default(Column(1, "n", "int32", default_value="2.5"))  # DuckDB rounds it at each insert
    """
    if column.type in NESTED and column.default_value is not None:
        raise LakehouseError(
            f"Column {column.name!r} of type {duckdb_type_name(column.type)} cannot have a default (as in DuckDB): "
            f"DuckLake in DuckDB 1.5 supports no {column.type.upper()} default."
        )
    text = _constant_text(column)
    if text is None or column.type in _TAKES_ANY_TEXT:
        return
    try:
        cast_in_duckdb(pa.array([text], pa.string()), arrow_type(column))
    except pa.ArrowInvalid as exc:
        raise LakehouseError(
            f"Column {column.name!r}: its default {column.default_value} does not fit "
            f"{duckdb_type_name(column.type)}: {exc}"
        ) from None


#: types whose column takes a default's text as it is (the writer turns it into the stored form)
_TAKES_ANY_TEXT = frozenset({"uuid", "json", "geometry", "varchar", "blob"})
