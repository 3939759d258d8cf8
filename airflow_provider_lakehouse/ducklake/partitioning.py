"""Partitioned writes, as DuckDB's ``ducklake`` extension makes them (spec section 6).

A table partitioned by keys (``identity``, ``year``/``month``/``day``/``hour`` calendar parts, ``bucket(N)``)
gets one data file per distinct combination of key values, under hive directories
(``year=2020/month=1/k=a%2Fb/ducklake-….parquet``), registered with the table's ``partition_id`` and one
``ducklake_file_partition_value`` row per key: the value's DuckDB text, NULL for NULL. DuckDB and this
provider's reader prune files by those rows, so a value must be the exact text DuckDB would have written.

Key types whose DuckDB text this module cannot reproduce exactly (intervals, nested values, …) make the write
unpartitioned instead: the files still read correctly everywhere, only without pruning.
"""

from __future__ import annotations

import datetime
import decimal
import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_lakehouse.ducklake.blob_text import blob_to_text
from airflow_provider_lakehouse.ducklake.geometry import wkt
from airflow_provider_lakehouse.ducklake.model import FilePartition, PartitionField
from airflow_provider_lakehouse.ducklake.murmur3 import murmur3_32, murmur3_32_float64, murmur3_32_int64
from airflow_provider_lakehouse.ducklake.types import Column, arrow_type
from airflow_provider_lakehouse.exceptions import LakehouseError

#: the directory name DuckDB (and Hive) give a NULL key value
NULL_DIRECTORY_VALUE = "__HIVE_DEFAULT_PARTITION__"
_EPOCH = datetime.datetime(1970, 1, 1)
CALENDAR_TRANSFORMS = ("year", "month", "day", "hour")
_BUCKET = re.compile(r"^bucket\((\d+)\)$")
_SIGNED = {"int8", "int16", "int32", "int64"}
_UNSIGNED = {"uint8", "uint16", "uint32", "uint64"}
_INTEGERS = _SIGNED | _UNSIGNED
#: DuckDB's 128-bit integers: arrays hold them as DECIMAL(38, 0) (or plain integers); keyed by their exact text
_WIDE = {"int128", "uint128"}
_TEMPORAL = {"date", "timestamp", "timestamp_us", "timestamp_ms", "timestamp_ns", "timestamp_s", "timestamptz"}
_IDENTITY_TYPES = (
    _INTEGERS
    | _WIDE
    | _TEMPORAL
    | {
        "blob",
        "geometry",
        "boolean",
        "float32",
        "float64",
        "varchar",
        "json",
        "uuid",
        "time",
    }
)
# DuckDB hashes these as 64-bit integers, and unsigned and 128-bit integers by their decimal text
_BUCKET_INT64 = _SIGNED | _TEMPORAL | {"boolean", "time", "time_ns"}
# a geometry hashes its well-known binary
_BUCKET_TEXT = _UNSIGNED | _WIDE | {"varchar", "json", "blob", "uuid", "geometry"}


class UnsupportedPartitioningError(ValueError):
    """A partition key this module cannot compute exactly as DuckDB does."""


@dataclass(frozen=True)
class PartitionKey:
    """One key of a partition spec: ``transform`` of a top-level ``column``, stored under ``directory_name``."""

    key_index: int
    column: Column
    transform: str  # identity | year | month | day | hour | bucket(N)
    directory_name: str

    @property
    def bucket_count(self) -> int | None:
        match = _BUCKET.match(self.transform)
        return int(match.group(1)) if match else None


@dataclass(frozen=True)
class PartitionSlice:
    """The rows of a write that share one combination of key values (all rows, for an unpartitioned table)."""

    partition: FilePartition | None  # None: an unpartitioned file
    directory: str  # relative to the table directory, e.g. ``year=2020/k=a``; "" for none
    rows: np.ndarray | None  # row positions in the written data; None: all of them

    def select(self, values: pa.Array | np.ndarray | None) -> np.ndarray | pa.Array | None:
        """This slice's part of per-row ``values`` (row ids, snapshot ids) of the written data."""
        if values is None or self.rows is None:
            return values
        return np.asarray(values)[self.rows]


_WHOLE = PartitionSlice(None, "", None)


@dataclass(frozen=True)
class Partitioning:
    """A table's partition spec, ready to split writes.

    :param partition_id: the spec's catalog id; None for a spec set in the same transaction.
    :param pending_spec: for a spec set in the same transaction, which of the table's specs set in it (0: the
        first).
    """

    partition_id: int | None
    keys: tuple[PartitionKey, ...]
    pending_spec: int | None = None

    @classmethod
    def of(
        cls,
        partition_id: int | None,
        fields: Sequence[PartitionField],
        columns: Sequence[Column],
        pending_spec: int | None = None,
    ) -> Partitioning | None:
        """The spec of ``fields`` over the table's ``columns``; None for an unpartitioned table.

        :raises UnsupportedPartitioningError: for a key this module cannot compute exactly.
        """
        if not fields:
            return None
        by_id = {c.column_id: c for c in columns}
        used: set[str] = set()
        keys = []
        for f in sorted(fields, key=lambda f: f.key_index):
            column = by_id.get(f.column_id)
            if column is None:
                raise UnsupportedPartitioningError(f"partition key {f.key_index} names no current column")
            _check_supported(column, f.transform)
            name = _directory_name(f.transform, column.name, used)
            used.add(name.lower())
            keys.append(PartitionKey(f.key_index, column, f.transform, name))
        return cls(partition_id, tuple(keys), pending_spec)

    def split(self, data: pa.Table) -> list[PartitionSlice]:
        """Group ``data``'s rows (table columns by name) by their key values, in order of first appearance."""
        codes = np.zeros(data.num_rows, dtype=np.int64)
        dictionaries = []
        for key in self.keys:
            values = key_values(key, data.column(key.column.name))
            encoded = values.dictionary_encode()
            indices = encoded.indices.cast(pa.int64()).fill_null(-1).to_numpy() + 1
            dictionaries.append((key, encoded.dictionary.to_pylist()))
            codes = codes * (len(encoded.dictionary) + 1) + indices.astype(np.int64)
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse))
        slices = []
        for group in np.argsort(first, kind="stable"):
            rows = order[(bounds[group - 1] if group else 0) : bounds[group]]
            row = int(rows[0])
            raw = _key_row(dictionaries, codes[row])
            texts = tuple(None if value is None else value_text(key, value) for key, value in raw)
            directory = "/".join(
                f"{quote(key.directory_name, safe='')}={NULL_DIRECTORY_VALUE if text is None else quote(text, safe='')}"
                for key, text in zip(self.keys, texts, strict=True)
            )
            partition = FilePartition(self.partition_id, texts, self.pending_spec)
            slices.append(PartitionSlice(partition, directory, rows))
        return slices


def _key_row(dictionaries: list[tuple[PartitionKey, list]], code: int) -> list[tuple[PartitionKey, object]]:
    """Decode one row's combined group code back into each key's value (None for NULL)."""
    values = []
    for key, dictionary in reversed(dictionaries):
        code, index = divmod(int(code), len(dictionary) + 1)
        values.append((key, None if index == 0 else dictionary[index - 1]))
    return list(reversed(values))


def check_transform(table: str, column: Column, transform: str) -> None:
    """Refuse a partition key DuckDB refuses: calendar parts of a non-temporal column (DuckDB only at the first
    insert), ``bucket(0)``, unknown transforms.

    :raises LakehouseError: naming the table, the column and the transform.
    """
    bucket = _BUCKET.match(transform)
    if transform == "identity" or bucket:
        ok = bucket is None or int(bucket.group(1)) > 0
    else:
        ok = transform in CALENDAR_TRANSFORMS and column.type in _TEMPORAL
    if not ok:
        raise LakehouseError(
            f"Cannot partition {table} by {transform}({column.name}) ({column.name} is {column.type}); "
            "partition keys are columns, year/month/day/hour of a date or timestamp, or bucket(N, column) with N > 0."
        )


def _directory_name(transform: str, column: str, used: set[str]) -> str:
    """DuckDB's key directory name: the column for identity, else the transform's name, suffixed on a clash."""
    prefix = column if transform == "identity" else transform.split("(")[0]
    if prefix.lower() not in used:
        return prefix
    base = f"{prefix}_{column}"
    candidate, counter = base, 2
    while candidate.lower() in used:
        candidate, counter = f"{base}_{counter}", counter + 1
    return candidate


def _check_supported(column: Column, transform: str) -> None:
    if transform == "identity":
        ok = column.type in _IDENTITY_TYPES or column.type.startswith("decimal(")
    elif transform in CALENDAR_TRANSFORMS:
        ok = column.type in _TEMPORAL
    elif _BUCKET.match(transform):
        ok = column.type in _BUCKET_INT64 | _BUCKET_TEXT | {"float32", "float64"} or column.type.startswith("decimal(")
    else:
        ok = False
    if not ok:
        raise UnsupportedPartitioningError(f"{transform}({column.name}) of a {column.type} column")


def key_values(key: PartitionKey, array: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The key's transformed values (NULL where the column is NULL)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if key.transform == "identity":
        # nanoseconds as integers: Python's datetime, which the text is written from, stops at microseconds
        return array.cast(pa.timestamp("ns")).cast(pa.int64()) if key.column.type == "timestamp_ns" else array
    if key.transform in CALENDAR_TRANSFORMS:
        if key.transform == "hour" and pa.types.is_date(array.type):  # DuckDB: a date's hour is 0
            array = array.cast(pa.timestamp("s"))
        return getattr(pc, key.transform)(array).cast(pa.int64())
    count = key.bucket_count
    assert count is not None
    hashes = _hashes(key.column, array)
    buckets = pa.array((hashes & 0x7FFFFFFF) % count, pa.int32())
    return pc.if_else(array.is_null(), pa.scalar(None, pa.int32()), buckets)


def _hashes(column: Column, array: pa.Array) -> np.ndarray:
    """murmur3_32 of every value as DuckDB hashes it (NULLs hash to anything: they are masked later)."""
    kind = column.type
    if kind in _BUCKET_INT64:
        if pa.types.is_boolean(array.type):
            array = array.cast(pa.int8())
        elif not pa.types.is_integer(array.type):
            array = array.view(pa.int64()) if array.type.bit_width == 64 else array.cast(pa.int32(), safe=False)
        return murmur3_32_int64(array.fill_null(0).to_numpy(zero_copy_only=False))
    if kind in ("float32", "float64"):
        return murmur3_32_float64(array.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False))
    logical = arrow_type(column)
    if pa.types.is_decimal(logical) and logical.precision <= 18:  # stored as an int64: hashed unscaled
        scale = logical.scale
        unscaled = [0 if v is None else int(v.scaleb(scale)) for v in array.to_pylist()]
        return murmur3_32_int64(np.array(unscaled, dtype=np.int64))
    out = np.zeros(len(array), dtype=np.uint64)
    for index, value in enumerate(array.to_pylist()):
        if value is None:
            continue
        if isinstance(value, bytes):
            raw = value
        elif kind in ("varchar", "json"):
            raw = str(value).encode()
        else:
            raw = _identity_text(column, value).encode()
        out[index] = murmur3_32(raw)
    return out


def value_text(key: PartitionKey, value: object) -> str:
    """A key value as DuckDB's ``Value::ToString`` writes it into ``ducklake_file_partition_value``."""
    if key.transform != "identity":
        return str(int(value))  # type: ignore[call-overload]
    return _identity_text(key.column, value)


def _identity_text(column: Column, value: object) -> str:
    kind = column.type
    if kind == "timestamp_ns":  # nanoseconds since the epoch, see key_values
        seconds, nanos = divmod(int(value), 1_000_000_000)  # type: ignore[call-overload]
        text = (_EPOCH + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")
        return f"{text}.{nanos:09d}".rstrip("0") if nanos else text
    if kind == "blob":
        return _blob_text(column, value)  # type: ignore[arg-type]
    if kind == "geometry":  # DuckDB's text of it (WKT), once its bytes passed the same UTF-8 check as a blob's
        _require_utf8(column, value)  # type: ignore[arg-type]
        return wkt(value)  # type: ignore[arg-type]
    if kind == "uuid":  # DuckDB's canonical text, whichever form the value was written in (no hyphens, braces)
        return str(uuid.UUID(str(value)))
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "float32":
        return str(np.float32(value))  # type: ignore[arg-type]  # shortest text of the float, as DuckDB prints it
    if kind == "float64":
        return repr(float(value))  # type: ignore[arg-type]
    if isinstance(value, decimal.Decimal):
        return f"{value:.{arrow_type(column).scale}f}"
    if isinstance(value, datetime.datetime):
        text = _timestamp_text(value)
        return text + "+00" if kind == "timestamptz" else text
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.time):
        return _time_text(value.hour, value.minute, value.second, value.microsecond)
    return str(value)


def _blob_text(column: Column, value: bytes) -> str:
    """DuckDB's text of a BLOB key (see :func:`_require_utf8`)."""
    _require_utf8(column, value)
    return blob_to_text(value)


def _require_utf8(column: Column, value: bytes) -> None:
    """DuckDB fails the write of a BLOB or GEOMETRY key whose bytes are not UTF-8, and so do we."""
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        raise LakehouseError(
            "Invalid Input Error: Invalid unicode (byte sequence mismatch) detected in value construction "
            f"(DuckDB's error for a value of partition key {column.name!r}: the bytes of a {column.type.upper()} key "
            "must be UTF-8 text)"
        ) from None


def _timestamp_text(value: datetime.datetime) -> str:
    return value.strftime("%Y-%m-%d ") + _time_text(value.hour, value.minute, value.second, value.microsecond)


def _time_text(hour: int, minute: int, second: int, micros: int) -> str:
    """``HH:MM:SS`` and the fraction without trailing zeros (``13:04:05.1``), as DuckDB prints times."""
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{micros:06d}".rstrip("0") if micros else text


def iter_slices(partitioning: Partitioning | None, data: pa.Table) -> Iterator[tuple[PartitionSlice, pa.Table]]:
    """``data`` as one piece per partition (the whole of it, as one unpartitioned piece, for a table without
    partitioning)."""
    if partitioning is None or data.num_rows == 0:
        yield _WHOLE, data
        return
    for piece in partitioning.split(data):
        yield piece, data.take(pa.array(piece.rows))
