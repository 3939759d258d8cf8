"""Column statistics in the exact string forms DuckDB writes and parses (spec 7.6)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from airflow_provider_lakehouse.ducklake.geometry import InvalidGeometryError, geometry_stats
from airflow_provider_lakehouse.ducklake.model import ColumnStats
from airflow_provider_lakehouse.ducklake.pruning import parse_stat
from airflow_provider_lakehouse.ducklake.types import INFINITE_DAYS, INFINITE_MICROS, NESTED, WIDE_INTEGERS, Column


def format_stat(value: Any, column: Column) -> str | None:
    """One min/max value as DuckDB's text (None when DuckDB would store none)."""
    if value is None:
        return None
    kind = column.type
    if kind == "boolean":
        return "1" if value else "0"
    if kind == "float32":
        return _float_text(float(np.float32(value)), single=True)
    if kind == "float64":
        return _float_text(float(value))
    if kind.startswith("decimal"):
        scale = int(kind.split(",")[1].rstrip(")"))
        return f"{Decimal(value):.{scale}f}"
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond)
        return text + "+00" if kind == "timestamptz" else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S") + _fraction(value.microsecond)
    if kind == "blob":
        return bytes(value).hex().upper()
    if kind == "uuid":
        return str(
            value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=value) if isinstance(value, bytes) else value
        )
    text = str(value)
    return None if "\x00" in text else text


def _fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _float_text(value: float, *, single: bool = False) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return str(np.float32(value)) if single else repr(value)


def leaves(columns: Sequence[Column], table: pa.Table) -> Iterator[tuple[Column, pa.Array]]:
    """Every leaf column of ``columns`` with its values flattened out of structs, lists and maps."""
    for column in columns:
        yield from _leaves(column, table.column(column.name).combine_chunks())


def _leaves(column: Column, array: pa.Array) -> Iterator[tuple[Column, pa.Array]]:
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    if column.type == "struct":
        for child, values in zip(
            column.children, array.flatten(), strict=False
        ):  # flatten() applies the parent's nulls
            yield from _leaves(child, values)
    elif column.type == "list":
        yield from _leaves(column.children[0], array.flatten())
    elif column.type == "map":
        # keys/items of the entries that belong to non-null maps (offsets skip nothing for null maps)
        start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()
        yield from _leaves(column.children[0], array.keys.slice(start, end - start))
        yield from _leaves(column.children[1], array.items.slice(start, end - start))
    else:
        yield column, array


def compute_stats(
    columns: Sequence[Column], table: pa.Table, parquet_meta: pq.FileMetaData | None
) -> list[ColumnStats]:
    """Per-leaf stats of a file being written: counts, min/max (NaN excluded), NaN flag, compressed size."""
    sizes: list[int] = []
    if parquet_meta is not None and parquet_meta.num_row_groups:
        leaf_count = parquet_meta.num_columns
        sizes = [
            sum(parquet_meta.row_group(g).column(i).total_compressed_size for g in range(parquet_meta.num_row_groups))
            for i in range(leaf_count)
        ]
    result = []
    for index, (column, values) in enumerate(leaves(columns, table)):
        nulls = values.null_count
        non_null = len(values) - nulls
        contains_nan: bool | None = None
        lo = hi = None
        if column.type in ("float32", "float64"):
            nan_mask = pc.is_nan(values)
            contains_nan = bool(pc.any(nan_mask).as_py() or False)
            if contains_nan:
                values = values.filter(pc.invert(pc.fill_null(nan_mask, True)))
        extra_stats = _geometry_stats(column, values) if column.type == "geometry" else None
        if non_null and column.type not in NESTED | WIDE_INTEGERS | {"geometry"}:  # DuckDB writes no min/max for these
            if column.type == "uuid":
                present = [v for v in values.to_pylist() if v is not None]
                lo, hi = (min(present), max(present)) if present else (None, None)
            elif len(values) - values.null_count:
                minmax = pc.min_max(values)
                lo, hi = _bound(minmax["min"]), _bound(minmax["max"])
        result.append(
            ColumnStats(
                column_id=column.column_id,
                value_count=non_null,
                null_count=nulls,
                min_value=format_stat(lo, column),
                max_value=format_stat(hi, column),
                contains_nan=contains_nan,
                column_size_bytes=sizes[index] if index < len(sizes) else None,
                extra_stats=extra_stats,
            )
        )
    return result


def _bound(scalar: pa.Scalar) -> Any:
    """A min or max as Python, for :func:`format_stat`: DuckDB's infinite dates and timestamps (the largest and
    smallest but one of their integers, which Python's dates cannot hold) as DuckDB's text of them; a date or
    timestamp beyond Python's years as None (no bound, so nothing is pruned by it)."""
    if pa.types.is_date32(scalar.type) or pa.types.is_timestamp(scalar.type):
        days = pa.types.is_date32(scalar.type)
        raw = scalar.cast(pa.int32() if days else pa.int64()).as_py()
        if abs(raw) == (INFINITE_DAYS if days else INFINITE_MICROS):
            return "infinity" if raw > 0 else "-infinity"
        try:
            return scalar.as_py()
        except (OverflowError, ValueError):
            return None
    return scalar.as_py()


def _geometry_stats(column: Column, values: pa.Array) -> str:
    try:
        return geometry_stats(values.to_pylist())
    except InvalidGeometryError as exc:
        raise InvalidGeometryError(
            f"GEOMETRY column {column.name!r}: {exc}; it takes geometries and their well-known text"
        ) from None


def merge_bound(current: str | None, new: str | None, column: Column, *, take_max: bool) -> str | None:
    """Merge two stats strings with typed comparison (string order for types without one)."""
    if current is None or new is None:
        return None  # either side unknown -> unknown
    a, b = parse_stat(current, column), parse_stat(new, column)
    if a is None or b is None:
        a, b = current, new
    try:
        pick_new = (b > a) if take_max else (b < a)
    except TypeError:
        return None
    return new if pick_new else current
