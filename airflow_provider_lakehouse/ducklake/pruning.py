"""Skip data files whose column statistics prove a predicate false (DuckDB's rules, spec 4.7)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_lakehouse.ducklake.inline_codec import parse_time, parse_timestamp
from airflow_provider_lakehouse.ducklake.model import DataFileInfo, TableInfo
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.exceptions import LakehouseError

#: ``(column, op, value)``; op is one of ``= != < <= > >= in is_null is_not_null``
Predicate = tuple[str, str, Any]
OPS = frozenset({"=", "==", "!=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"})


def parse_stat(text: str | None, column: Column) -> Any:
    """A stats string as a comparable Python value, or None when unknown or not comparable."""
    if text is None:
        return None
    kind = column.type
    try:
        if kind.startswith(("int", "uint")):
            return int(text)
        if kind in ("float32", "float64"):
            return float(text)
        if kind.startswith("decimal"):
            return Decimal(text)
        if kind == "date":
            return dt.date.fromisoformat(text)
        if kind in ("timestamp", "timestamp_us", "timestamp_ms", "timestamp_ns", "timestamp_s", "timestamptz"):
            return parse_timestamp(text, with_tz=kind == "timestamptz")
        if kind == "time":
            return parse_time(text)
        if kind == "varchar":
            return text
    except (ValueError, InvalidOperation):
        return None
    return None


def _coerce(value: Any, column: Column) -> Any:
    kind = column.type
    if value is None:
        return None
    if kind == "timestamptz" and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    if kind.startswith("decimal") and isinstance(value, (int, float, str)):
        return Decimal(str(value))
    if kind == "date" and isinstance(value, str):
        return dt.date.fromisoformat(value)
    if kind.startswith("timestamp") and isinstance(value, str):
        return parse_timestamp(value, with_tz=kind == "timestamptz")
    return value


def may_match(stats: tuple[Any, ...] | None, column: Column, op: str, value: Any) -> bool:
    """False only when the file's stats prove no row of it satisfies ``column op value``."""
    if stats is None:
        return True  # no stats row: never pruned
    value_count, null_count, min_text, max_text, _nan = stats
    if str(value_count) == "0" and str(null_count) == "0":
        # every data file has a row: no values and no NULLs is DuckDB writing no counts (INTERVAL, TIMETZ)
        return True
    if op == "is_null":
        return null_count is None or int(null_count) > 0
    if op == "is_not_null":
        return value_count is None or int(value_count) > 0
    lo, hi = parse_stat(min_text, column), parse_stat(max_text, column)
    if lo is None or hi is None:
        return True
    try:
        if op == "in":
            return any(may_match(stats, column, "=", v) for v in value)
        v = _coerce(value, column)
        if v is None:
            return True
        if op in ("=", "=="):
            return lo <= v <= hi
        if op == "<":
            return lo < v
        if op == "<=":
            return lo <= v
        if op == ">":
            return hi > v
        if op == ">=":
            return hi >= v
    except TypeError:
        return True  # incomparable types: keep the file
    return True


def prune_files(
    files: Sequence[DataFileInfo],
    table: TableInfo,
    stats: dict[int, dict[int, tuple[Any, ...]]],
    predicates: Sequence[Predicate],
) -> list[DataFileInfo]:
    """Files that may hold rows matching all ``predicates``."""
    resolved = []
    for name, op, value in predicates:
        if op not in OPS:
            raise ValueError(f"Unsupported filter operator {op!r}; use one of {', '.join(sorted(OPS))}.")
        try:
            resolved.append((table.schema.by_name(name), op, value))
        except KeyError:
            raise ValueError(f"Filter on unknown column {name!r} of {table.qualified_name}.") from None
    # a promoted column's statistics may be in an earlier type's spelling: its predicates skip no file
    resolved = [(c, op, v) for c, op, v in resolved if not set(table.retyped_columns) & {n.column_id for n in c.walk()}]
    return [
        f
        for f in files
        if all(may_match(stats.get(f.data_file_id, {}).get(c.column_id), c, op, v) for c, op, v in resolved)
    ]


def filter_expression(predicates: Sequence[Predicate]) -> pc.Expression:
    """The same predicates as a pyarrow expression, to filter rows."""
    expression = None
    for name, op, value in predicates:
        term = _ROW_FILTERS[op](pc.field(name), value)
        expression = term if expression is None else expression & term
    return expression


def filter_rows(table: pa.Table, predicates: Sequence[Predicate], name: str) -> pa.Table:
    """The rows of ``table`` (read from ``name``) that meet every predicate.

    :raises LakehouseError: naming the table and the predicates, for a comparison Arrow has no kernel for (an
        ``INTERVAL`` column compared with ``=`` or ``<``), where pyarrow would raise its own error.
    """
    if not predicates:
        return table
    try:
        return table.filter(filter_expression(predicates))
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise LakehouseError(f"Cannot filter {name} by {list(predicates)!r}: {exc}") from None


# One pyarrow expression builder per predicate operator (the same operators :func:`prune_files` understands).
_ROW_FILTERS: dict[str, Callable[[pc.Expression, Any], pc.Expression]] = {
    "=": lambda field, value: field == value,
    "==": lambda field, value: field == value,
    "!=": lambda field, value: field != value,
    "<": lambda field, value: field < value,
    "<=": lambda field, value: field <= value,
    ">": lambda field, value: field > value,
    ">=": lambda field, value: field >= value,
    "in": lambda field, value: field.isin(list(value)),
    "is_null": lambda field, _value: field.is_null(),
    "is_not_null": lambda field, _value: field.is_valid(),
}
