"""DuckLake column types <-> Arrow types, and the column tree of a table.

Nested types are a tree: a ``struct`` column has one child per field, a ``list`` one child named
``element``, a ``map`` children ``key`` and ``value``. Every node has a ``column_id`` that is also
the Parquet ``field_id`` of that node in every data file (DuckDB's rule, spec section 7.2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.geometry import WKB
from airflow_provider_lakehouse.exceptions import TerminalError

FIELD_ID_KEY = b"PARQUET:field_id"
#: Arrow field metadata naming a column's DuckLake type where its Arrow type names another (a ``HUGEINT`` is
#: Arrow's ``decimal128(38, 0)``, as DuckDB hands it over); honoured for top-level columns
LAKE_TYPE_KEY = b"ducklake_type"
ROW_ID_FIELD_ID = 2147483540  # _ducklake_internal_row_id (Iceberg _row_id)
SNAPSHOT_ID_FIELD_ID = 2147483539  # _ducklake_internal_snapshot_id
ROW_ID_COLUMN = "_ducklake_internal_row_id"
SNAPSHOT_ID_COLUMN = "_ducklake_internal_snapshot_id"

_SCALARS: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
    # 128-bit integers as DuckDB hands them to Arrow; its Parquet writer stores them as DOUBLE (see
    # storage_arrow_type), so values beyond 2^53 come back as the nearest double, as in DuckDB
    "int128": pa.decimal128(38, 0),
    "uint128": pa.decimal128(38, 0),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "varchar": pa.string(),
    "json": pa.string(),
    "blob": pa.binary(),
    "date": pa.date32(),
    "time": pa.time64("us"),
    "time_ns": pa.time64("ns"),
    "timestamp": pa.timestamp("us"),
    "timestamp_us": pa.timestamp("us"),
    "timestamp_ms": pa.timestamp("ms"),
    "timestamp_ns": pa.timestamp("ns"),
    "timestamp_s": pa.timestamp("s"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    # UUIDs surface as canonical strings (what SQL engines and Spark show); files store FLBA(16)+UUID.
    "uuid": pa.string(),
    # a geometry's well-known binary, as DuckDB hands it to Arrow; files annotate it GEOMETRY (see .geometry)
    "geometry": pa.binary(),
}
#: DuckDB's 128-bit integers (``HUGEINT``, ``UHUGEINT``): DOUBLE in Parquet files, without min/max statistics
WIDE_INTEGERS = frozenset({"int128", "uint128"})
#: the nested types: stored as Parquet groups, inlined as text, without min/max statistics
NESTED = frozenset({"struct", "list", "map"})
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")


class UnsupportedTypeError(TerminalError, ValueError):
    """A type DuckLake (or this implementation) cannot store."""


@dataclass(frozen=True)
class Column:
    """One node of a table's column tree.

    :param column_id: stable id; the Parquet field id in data files.
    :param name: current name.
    :param type: DuckLake type string (``int64``, ``decimal(12,2)``, ``struct`` ...).
    :param initial_default: literal text used for rows in files written before the column existed.
    :param default_value: literal text of the column's default for new rows (None: no default).
    :param default_is_expression: DuckDB stored the default as an expression (``default_value_type``), such as a
        typed constant ``CAST('t' AS BOOLEAN)`` (see :func:`~.defaults.insert_default`).
    """

    column_id: int
    name: str
    type: str
    nullable: bool = True
    children: tuple[Column, ...] = ()
    initial_default: str | None = None
    default_value: str | None = None
    default_is_expression: bool = False

    def walk(self) -> Iterator[Column]:
        """This column and all its descendants, pre-order (the order ids are assigned in)."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def arrow_type(self) -> pa.DataType:
        return arrow_type(self)

    def arrow_field(self, *, with_ids: bool = True) -> pa.Field:
        """The Arrow field, with ``PARQUET:field_id`` metadata on it and every nested field."""
        return _arrow_field(self, self.name, with_ids)


def arrow_type(column: Column, *, with_ids: bool = False) -> pa.DataType:
    """Arrow type of ``column`` (nested children carry field ids when ``with_ids``)."""
    kind = column.type
    if kind in _SCALARS:
        return _SCALARS[kind]
    match = _DECIMAL.match(kind)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if kind == "struct":
        return pa.struct([_arrow_field(c, c.name, with_ids) for c in column.children])
    if kind == "list":
        (element,) = column.children
        return pa.list_(_arrow_field(element, "element", with_ids))
    if kind == "map":
        key, value = column.children
        return pa.map_(_arrow_field(key, "key", with_ids).with_nullable(False), _arrow_field(value, "value", with_ids))
    raise UnsupportedTypeError(f"DuckLake type {kind!r} (column {column.name!r}) is not supported.")


def readable_arrow_type(column: Column) -> pa.DataType:
    """The Arrow type the Python reader gives ``column``: :func:`arrow_type`, Arrow's month-day-nanosecond
    interval for a top-level ``interval`` column and a time of day for a ``timetz`` one (as DuckDB hands them to
    Arrow; see :mod:`.intervals`). Writers and the Spark engine have neither: :func:`arrow_type` refuses them,
    naming the column."""
    if column.type == "interval":
        return pa.month_day_nano_interval()
    if column.type == "timetz":  # as DuckDB hands it to Arrow: the time of day, its offset dropped
        return pa.time64("us")
    return arrow_type(column)


def _arrow_field(column: Column, name: str, with_ids: bool) -> pa.Field:
    metadata = {FIELD_ID_KEY: str(column.column_id).encode()} if with_ids else None
    return pa.field(name, arrow_type(column, with_ids=with_ids), nullable=column.nullable, metadata=metadata)


def arrow_schema(columns: Sequence[Column], *, with_ids: bool = False) -> pa.Schema:
    """Arrow schema of a table's top-level columns."""
    return pa.schema([_arrow_field(c, c.name, with_ids) for c in columns])


#: DuckDB's ``infinity`` date and timestamp: the largest day and microsecond counts but one (``-infinity`` is their
#: negation). Arrow, Parquet and Spark hold them as these integers, which Python's dates cannot.
INFINITE_DAYS = 2**31 - 1
INFINITE_MICROS = 2**63 - 1


def ducklake_type(dtype: pa.DataType) -> str:
    """DuckLake type string for an Arrow type (nested types give just ``struct``/``list``/``map``).

    >>> ducklake_type(pa.decimal128(12, 2)), ducklake_type(pa.large_string()), ducklake_type(pa.timestamp("us", "UTC"))
    ('decimal(12,2)', 'varchar', 'timestamptz')
    """
    if pa.types.is_boolean(dtype):
        return "boolean"
    if pa.types.is_integer(dtype):
        return f"{'u' if pa.types.is_unsigned_integer(dtype) else ''}int{dtype.bit_width}"
    if pa.types.is_floating(dtype):
        if dtype.bit_width == 16:
            return "float32"
        return f"float{dtype.bit_width}"
    if pa.types.is_decimal(dtype):
        return f"decimal({dtype.precision},{dtype.scale})"
    if isinstance(dtype, pa.BaseExtensionType):
        if dtype.extension_name == "arrow.uuid":
            return "uuid"
        if dtype.extension_name == "arrow.json":
            return "json"
        if dtype.extension_name == "geoarrow.wkb":  # DuckDB's Arrow export of a GEOMETRY column
            return "geometry"
        return ducklake_type(dtype.storage_type)
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return "varchar"
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_fixed_size_binary(dtype):
        return "blob"
    if pa.types.is_date(dtype):
        return "date"
    if pa.types.is_time(dtype):
        return "time_ns" if dtype.unit == "ns" else "time"
    if pa.types.is_timestamp(dtype):
        if dtype.tz is not None:
            return "timestamptz"
        return {"s": "timestamp_s", "ms": "timestamp_ms", "us": "timestamp", "ns": "timestamp_ns"}[dtype.unit]
    if pa.types.is_struct(dtype):
        return "struct"
    if pa.types.is_map(dtype):
        return "map"
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return "list"
    raise UnsupportedTypeError(f"Arrow type {dtype} has no DuckLake equivalent.")


def columns_from_arrow(schema: pa.Schema, first_id: int = 1) -> tuple[Column, ...]:
    """Assign column ids pre-order (DuckDB's order: a parent, then its children, then the next column).

    >>> cols = columns_from_arrow(pa.schema([("a", pa.int32()), ("b", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.int32()))])), ("c", pa.int32())]))
    >>> [(c.column_id, c.name) for top in cols for c in top.walk()]
    [(1, 'a'), (2, 'b'), (3, 'x'), (4, 'y'), (5, 'element'), (6, 'c')]
    """
    counter = iter(range(first_id, 1 << 62))
    columns = []
    for f in schema:
        column = _column_from_field(f.name, f.type, f.nullable, counter)
        lake_type = (f.metadata or {}).get(LAKE_TYPE_KEY)
        columns.append(replace(column, type=lake_type.decode()) if lake_type else column)
    return tuple(columns)


def _column_from_field(name: str, dtype: pa.DataType, nullable: bool, counter: Iterator[int]) -> Column:
    column_id = next(counter)
    kind = ducklake_type(dtype)
    children: tuple[Column, ...] = ()
    if kind == "struct":
        children = tuple(_column_from_field(f.name, f.type, f.nullable, counter) for f in dtype)
    elif kind == "list":
        children = (_column_from_field("element", dtype.value_type, True, counter),)
    elif kind == "map":
        children = (
            _column_from_field("key", dtype.key_type, False, counter),
            _column_from_field("value", dtype.item_type, True, counter),
        )
    return Column(column_id=column_id, name=name, type=kind, nullable=nullable, children=children)


def renumber(column: Column, counter: Iterator[int]) -> Column:
    """A copy of ``column`` with fresh ids from ``counter`` (pre-order), for ADD COLUMN."""
    new_id = next(counter)
    return replace(column, column_id=new_id, children=tuple(renumber(c, counter) for c in column.children))


def storage_arrow_type(column: Column) -> pa.DataType:
    """The Arrow type written to Parquet: like :func:`arrow_type`, but UUID/JSON as their extension types
    so the files carry the UUID / JSON / GEOMETRY logical types DuckDB writes, and 128-bit integers as the DOUBLE
    DuckDB 1.5 writes for them."""
    if column.type == "uuid":
        return pa.uuid()
    if column.type == "geometry":
        return WKB
    if column.type == "json":
        return pa.json_()
    if column.type in WIDE_INTEGERS:
        return pa.float64()
    if column.type == "struct":
        return pa.struct([storage_field(c, c.name) for c in column.children])
    if column.type == "list":
        return pa.list_(storage_field(column.children[0], "element"))
    if column.type == "map":
        key, value = column.children
        return pa.map_(storage_field(key, "key").with_nullable(False), storage_field(value, "value"))
    return arrow_type(column)


def storage_field(column: Column, name: str | None = None) -> pa.Field:
    return pa.field(
        name or column.name,
        storage_arrow_type(column),
        nullable=column.nullable,
        metadata={FIELD_ID_KEY: str(column.column_id).encode()},
    )


@dataclass(frozen=True)
class TableSchema:
    """The visible columns of a table at one snapshot."""

    columns: tuple[Column, ...] = field(default=())

    def by_name(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        lowered = [c for c in self.columns if c.name.lower() == name.lower()]
        if len(lowered) == 1:
            return lowered[0]
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def max_column_id(self) -> int:
        return max((c.column_id for top in self.columns for c in top.walk()), default=0)

    def arrow_schema(self) -> pa.Schema:
        return arrow_schema(self.columns)
