"""Rows between Postgres and Arrow: the column types a Data Table table reads as, and the Postgres types a table
created from a lake query (``CREATE TABLE dt.x AS SELECT ...``) gets.

Both follow DuckDB's ``postgres`` extension, so a Data Table reads the same on the Spark and DuckDB engines:
``numeric`` without a precision reads as DOUBLE, ``json``/``jsonb`` as text, ``uuid`` as Arrow's UUID and
``interval`` as months, days and nanoseconds (DuckDB's ``UUID`` and ``INTERVAL``).

>>> import pyarrow as pa
>>> postgres_type(pa.decimal128(12, 2)), postgres_type(pa.list_(pa.int32())), postgres_type(pa.timestamp("us", "UTC"))
('NUMERIC(12, 2)', 'INTEGER[]', 'TIMESTAMPTZ')
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.intervals import INTERVAL_TYPE, parse_interval
from airflow_provider_lakehouse.ducklake.types import INFINITE_DAYS, INFINITE_MICROS
from airflow_provider_lakehouse.exceptions import UnsupportedStatementError

# Postgres type OIDs (pg_type) and how they read
_ARROW_OF_OID: dict[int, pa.DataType] = {
    16: pa.bool_(),
    17: pa.binary(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    26: pa.uint32(),  # oid: DuckDB's UINTEGER
    700: pa.float32(),
    701: pa.float64(),
    1082: pa.date32(),
    1083: pa.time64("us"),
    1114: pa.timestamp("us"),
    1184: pa.timestamp("us", "UTC"),
}
_NUMERIC = 1700
_BPCHAR = 1042  # char(n): blank-padded by Postgres, read without the padding (as DuckDB reads it)
_UUID = 2950
_INTERVAL = 1186
_BPCHAR_ARRAY = 1014
#: array type OID: its element's OID (an array reads as a list of what its element reads as, as in DuckDB)
_ARRAY_ELEMENT = {
    199: 114,  # json[]
    1000: 16,
    1001: 17,  # bytea[]
    1005: 21,
    1007: 23,
    1009: 25,
    1014: _BPCHAR,
    1015: 25,
    1016: 20,
    1021: 700,
    1022: 701,
    1028: 26,  # oid[]
    1115: 1114,  # timestamp[]
    1182: 1082,
    1183: 1083,  # time[]
    1185: 1184,  # timestamptz[]
    1187: 1186,  # interval[]
    1231: 1700,  # numeric[]: its precision is the column's
    2951: 2950,  # uuid[]
    3807: 3802,  # jsonb[]
}


def arrow_type_of(type_code: int, precision: int | None, scale: int | None) -> pa.DataType:
    """The Arrow type a Postgres column (``cursor.description`` entry) reads as."""
    if type_code == _NUMERIC:
        if precision is not None and 0 < precision <= 38:
            return pa.decimal128(precision, scale or 0)
        return pa.float64()
    if type_code in _ARRAY_ELEMENT:
        return pa.list_(arrow_type_of(_ARRAY_ELEMENT[type_code], precision, scale))
    if type_code == _UUID:
        return pa.uuid()
    if type_code == _INTERVAL:
        return INTERVAL_TYPE
    return _ARROW_OF_OID.get(type_code, pa.string())


#: date, timestamp and timestamptz: the raw Arrow value of DuckDB's ``infinity`` in each (its negation: ``-infinity``)
_INFINITE = {1082: INFINITE_DAYS, 1114: INFINITE_MICROS, 1184: INFINITE_MICROS}


def prepare_cursor(cursor: Any) -> None:
    """Have ``cursor`` (before its ``execute``) load values as DuckDB's ``postgres`` extension reads them:
    ``interval`` as Postgres's text (psycopg's own ``timedelta`` has no months, so ``1 mon`` would come back as
    days), and the dates and timestamps ``infinity`` and ``-infinity`` as DuckDB's (psycopg refuses them)."""
    from psycopg.types.datetime import DateLoader, TimestampLoader, TimestamptzLoader
    from psycopg.types.string import TextLoader

    cursor.adapters.register_loader(_INTERVAL, TextLoader)
    for oid, loader in ((1082, DateLoader), (1114, TimestampLoader), (1184, TimestamptzLoader)):
        cursor.adapters.register_loader(oid, _with_infinities(loader, _INFINITE[oid]))


def _with_infinities(loader: type, infinite: int) -> type:
    infinities = {b"infinity": infinite, b"-infinity": -infinite}

    class InfinityLoader(loader):
        def load(self, data: Any) -> Any:
            value = infinities.get(bytes(data))
            return value if value is not None else super().load(data)

    return InfinityLoader


@dataclass(frozen=True)
class ResultColumns:
    """How the columns of a Postgres result (a psycopg ``cursor.description``) become Arrow.

    >>> from types import SimpleNamespace as Column
    >>> columns = ResultColumns.of([Column(name="c", type_code=1042, precision=None, scale=None)])
    >>> columns.batch([("ab  ",), (None,)]).to_pylist()
    [{'c': 'ab'}, {'c': None}]
    """

    schema: pa.Schema
    trimmed: tuple[bool, ...]

    @classmethod
    def of(cls, description: Sequence[Any]) -> ResultColumns:
        types = [arrow_type_of(c.type_code, c.precision, c.scale) for c in description]
        schema = pa.schema([pa.field(c.name, t) for c, t in zip(description, types, strict=True)])
        return cls(schema, tuple(c.type_code in (_BPCHAR, _BPCHAR_ARRAY) for c in description))

    def batch(self, rows: Sequence[Sequence[Any]]) -> pa.RecordBatch:
        columns = []
        for i, (field, trimmed) in enumerate(zip(self.schema, self.trimmed, strict=True)):
            values = [python_value(row[i], field.type) for row in rows]
            try:
                columns.append(_array([_unpadded(v) for v in values] if trimmed else values, field.type))
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                # Postgres's result says an array, not how deep: int[][] comes as int[] holding lists
                nested = any(isinstance(v, list) and any(isinstance(e, list) for e in v) for v in values)
                reason = "multi-dimensional arrays are not read" if nested else str(exc)
                raise UnsupportedStatementError(f"Data Table column {field.name!r} cannot be read: {reason}") from None
        return pa.record_batch(columns, schema=self.schema)


def _array(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """``values`` as an array of ``arrow_type``: a list of UUIDs through its 16-byte storage (pyarrow builds no
    nested extension type from Python values)."""
    if pa.types.is_list(arrow_type) and isinstance(arrow_type.value_type, pa.UuidType):
        return pa.array(values, pa.list_(pa.binary(16))).cast(arrow_type)
    return pa.array(values, arrow_type)


def _unpadded(value: Any) -> Any:
    """A ``char(n)`` value, or a list of them, without Postgres's blank padding."""
    if isinstance(value, list):
        return [_unpadded(v) for v in value]
    return value.rstrip(" ") if value is not None else None


def python_value(value: Any, arrow_type: pa.DataType) -> Any:
    """``value`` as psycopg returned it, in a form Arrow takes for ``arrow_type``."""
    if value is None:
        return None
    if pa.types.is_list(arrow_type) and isinstance(value, list):
        return [python_value(v, arrow_type.value_type) for v in value]
    if isinstance(arrow_type, pa.UuidType):
        return value.bytes
    if arrow_type == INTERVAL_TYPE:
        return parse_interval(value)
    if pa.types.is_string(arrow_type) and not isinstance(value, str):
        # a type without an Arrow counterpart (inet, money, bit, an enum) reads as text, as DuckDB reads it
        return json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
    if pa.types.is_floating(arrow_type) and not isinstance(value, float):
        return float(value)
    return value


def postgres_type(arrow_type: pa.DataType) -> str:
    """The Postgres column type for values of ``arrow_type`` (a created table's columns).

    :raises TypeError: Postgres has no column type for it (a union).
    """
    if isinstance(arrow_type, pa.UuidType):
        return "UUID"
    if pa.types.is_dictionary(arrow_type):  # DuckDB's ENUM: its values
        return postgres_type(arrow_type.value_type)
    if pa.types.is_boolean(arrow_type):
        return "BOOLEAN"
    if pa.types.is_int8(arrow_type) or pa.types.is_int16(arrow_type) or pa.types.is_uint8(arrow_type):
        return "SMALLINT"
    if pa.types.is_int32(arrow_type) or pa.types.is_uint16(arrow_type):
        return "INTEGER"
    if pa.types.is_int64(arrow_type) or pa.types.is_uint32(arrow_type):
        return "BIGINT"
    if pa.types.is_uint64(arrow_type):
        return "NUMERIC(20, 0)"
    if pa.types.is_float16(arrow_type) or pa.types.is_float32(arrow_type):
        return "REAL"
    if pa.types.is_float64(arrow_type):
        return "DOUBLE PRECISION"
    if pa.types.is_decimal(arrow_type):
        return f"NUMERIC({arrow_type.precision}, {arrow_type.scale})"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_null(arrow_type):
        return "TEXT"
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "BYTEA"
    if pa.types.is_date(arrow_type):
        return "DATE"
    if pa.types.is_time(arrow_type):
        return "TIME"
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMPTZ" if arrow_type.tz else "TIMESTAMP"
    if pa.types.is_duration(arrow_type) or pa.types.is_interval(arrow_type):
        return "INTERVAL"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"{postgres_type(arrow_type.value_type)}[]"
    if pa.types.is_struct(arrow_type) or pa.types.is_map(arrow_type):
        return "JSONB"
    raise TypeError(f"no Postgres type for Arrow type {arrow_type}")


def retyped(schema: pa.Schema, types: Mapping[int, pa.DataType]) -> pa.Schema:
    """``schema`` with the columns at the positions in ``types`` given those types: the columns a created table
    gets where an engine knows more than its rows' Arrow type says (DuckDB hands a ``UUID`` to Arrow as text).

    >>> retyped(pa.schema([("u", pa.string()), ("n", pa.int64())]), {0: pa.uuid()}).types[0]
    UuidType(extension<arrow.uuid>)
    """
    return pa.schema([f.with_type(types[i]) if i in types else f for i, f in enumerate(schema)])


def csv_writable(schema: pa.Schema) -> bool:
    """Every column is one Arrow's CSV writer spells as Postgres reads it (numbers, text, booleans, dates, times
    and timestamps); lists, structs, maps and bytes go row by row instead."""
    simple = (
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_decimal,
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_boolean,
        pa.types.is_date,
        pa.types.is_timestamp,
        pa.types.is_null,
    )
    return all(any(check(f.type) for check in simple) for f in schema)


def csv_chunks(table: pa.Table, batch_rows: int = 65_536) -> Iterator[bytes]:
    """``table`` as CSV for ``COPY ... (FORMAT csv)``, no header. Every value is quoted, so an empty string stays
    an empty string and only a missing value (an empty field) reads as NULL.

    >>> b"".join(csv_chunks(pa.table({"s": ["", None, 'a"b'], "n": [1, None, 3]}))).decode().splitlines()
    ['"","1"', ',', '"a""b","3"']
    """
    import io

    import pyarrow.csv as pacsv

    options = pacsv.WriteOptions(include_header=False, quoting_style="all_valid")
    for batch in table.to_batches(max_chunksize=batch_rows):
        sink = io.BytesIO()
        pacsv.write_csv(batch, sink, write_options=options)
        yield sink.getvalue()


def rows_of(table: pa.Table, batch_rows: int = 10_000) -> Iterator[Sequence[Any]]:
    """The rows of ``table`` as tuples of Python values (struct and map values as JSON, intervals as Postgres's
    text of them), batch by batch."""
    converters = [(i, convert) for i, f in enumerate(table.schema) if (convert := _postgres_value_of(f.type))]
    for batch in table.to_batches(max_chunksize=batch_rows):
        columns = [column.to_pylist() for column in batch.columns]
        for i, convert in converters:
            columns[i] = [None if v is None else convert(v) for v in columns[i]]
        yield from zip(*columns, strict=True)


def _postgres_value_of(arrow_type: pa.DataType) -> Any:
    """How a value of ``arrow_type`` goes to psycopg, where its Python form is not what Postgres takes (None:
    as it is)."""
    if pa.types.is_struct(arrow_type) or pa.types.is_map(arrow_type):
        return _jsonb
    if arrow_type == INTERVAL_TYPE:
        return interval_literal
    return None


def interval_literal(value: pa.MonthDayNano) -> str:
    """An interval as text Postgres reads exactly (to its microseconds, as DuckDB keeps them): Arrow's months, days
    and nanoseconds (psycopg would send the triple as a record).

    >>> interval_literal(pa.MonthDayNano([14, -3, -1_500_000_000]))
    '14 mons -3 days -1500000 microseconds'
    """
    micros = abs(value.nanoseconds) // 1000 * (-1 if value.nanoseconds < 0 else 1)  # toward zero, as DuckDB
    return f"{value.months} mons {value.days} days {micros} microseconds"


def _jsonb(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(dict(value) if isinstance(value, list) else value)
