"""Decoding the Parquet column chunks pyarrow refuses: DuckDB's ``DELTA_BINARY_PACKED`` 32-bit columns.

With ``parquet_version 2`` DuckDB encodes ``INTEGER``, ``UINTEGER`` and the other 32-bit columns with
``DELTA_BINARY_PACKED`` and computes the first value and the deltas in 64 bits: a ``UINTEGER`` of 2^31 or more, or
an ``INTEGER`` column whose values lie 2^31 or more apart, gives varints and bit widths wider than 32 bits. The
format means deltas to wrap around in 32 bits, and pyarrow (26) stops on them (``Unexpected end of stream:
InitHeader EOF`` / ``InitBlock EOF``); DuckDB and Spark's reader take the values in 64 bits and keep their low 32
bits. So does this module, for flat (not nested) 32-bit columns, page by page: Thrift page headers, data pages of
both versions, their definition levels, ``PLAIN``, dictionary and delta-packed values, any codec pyarrow has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: the Arrow types of 32-bit Parquet columns whose values are the column's integers as they are
_INT32_VIEWS = (pa.int32(), pa.uint32(), pa.date32(), pa.time32("ms"), pa.int16(), pa.int8(), pa.uint16(), pa.uint8())


class ParquetPageError(ValueError):
    """A column chunk this decoder cannot read either (nested, another physical type, a damaged page)."""


@dataclass(frozen=True)
class ColumnChunk:
    """One row group's chunk of a column: its bytes (from its first page on) and how to read them."""

    data: bytes
    codec: str
    max_definition_level: int
    arrow_type: pa.DataType
    name: str


@dataclass(frozen=True)
class _PageHeader:
    page_type: int
    uncompressed_size: int
    compressed_size: int
    num_values: int
    encoding: int
    # data pages of version 2 only: their levels stay uncompressed in front of the values
    levels_length: int = 0
    definition_levels_length: int = 0
    v2_compressed: bool = True


_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
_PLAIN, _PLAIN_DICTIONARY, _RLE_DICTIONARY, _DELTA_BINARY_PACKED = 0, 2, 8, 5


class _Cursor:
    """Reads Thrift's compact protocol and Parquet's varints from a buffer."""

    def __init__(self, data: bytes, position: int = 0) -> None:
        self.data = data
        self.position = position

    def byte(self) -> int:
        value = self.data[self.position]
        self.position += 1
        return value

    def take(self, length: int) -> bytes:
        if self.position + length > len(self.data):
            raise ParquetPageError("a page runs past the end of its column chunk")
        chunk = self.data[self.position : self.position + length]
        self.position += length
        return chunk

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def struct(self) -> dict[int, Any]:
        """A Thrift struct as {field id: value}; nested structs become dicts, lists are skipped."""
        fields: dict[int, Any] = {}
        field_id = 0
        while True:
            header = self.byte()
            if header == 0:
                return fields
            kind, delta = header & 0x0F, header >> 4
            field_id = field_id + delta if delta else self.zigzag()
            fields[field_id] = self._value(kind)

    def _value(self, kind: int) -> Any:
        if kind in (1, 2):  # booleans carry their value in the type
            return kind == 1
        if kind == 3:
            return self.byte()
        if kind in (4, 5, 6):
            return self.zigzag()
        if kind == 7:
            return self.take(8)
        if kind == 8:
            return self.take(self.varint())
        if kind in (9, 10):
            header = self.byte()
            size = header >> 4 if header >> 4 != 15 else self.varint()
            element = header & 0x0F
            for _ in range(size):
                self.byte() if element in (1, 2) else self._value(element)
            return None
        if kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self._value(types >> 4)
                    self._value(types & 0x0F)
            return None
        if kind == 12:
            return self.struct()
        raise ParquetPageError(f"unknown Thrift type {kind} in a page header")


def _page_header(cursor: _Cursor) -> _PageHeader:
    fields = cursor.struct()
    page_type, uncompressed, compressed = fields[1], fields[2], fields[3]
    if page_type == _DATA_PAGE:
        data = fields[5]
        return _PageHeader(page_type, uncompressed, compressed, data[1], data[2])
    if page_type == _DATA_PAGE_V2:
        data = fields[8]
        return _PageHeader(
            page_type, uncompressed, compressed, data[1], data[4], data[5] + data[6], data[5], data.get(7, True)
        )
    if page_type == _DICTIONARY_PAGE:
        return _PageHeader(page_type, uncompressed, compressed, fields[7][1], fields[7].get(2, _PLAIN))
    return _PageHeader(page_type, uncompressed, compressed, 0, -1)  # an index page: skipped


def _decompress(codec: str, data: bytes, size: int) -> bytes:
    if codec == "UNCOMPRESSED" or not data:
        return data
    # pyarrow names Parquet's LZ4_RAW (what DuckDB writes for lz4) "LZ4"; Arrow's "lz4" codec is the frame format
    name = "lz4_raw" if codec.upper().startswith("LZ4") else codec.lower()
    return bytes(pa.Codec(name).decompress(data, decompressed_size=size))


def _unpack(data: bytes, count: int, bit_width: int) -> list[int]:
    """``count`` little-endian bit-packed unsigned integers of ``bit_width`` bits."""
    if bit_width == 0:
        return [0] * count
    packed = int.from_bytes(data, "little")
    mask = (1 << bit_width) - 1
    return [(packed >> (i * bit_width)) & mask for i in range(count)]


def _hybrid(cursor: _Cursor, end: int, bit_width: int, count: int) -> list[int]:
    """``count`` values of the RLE / bit-packed hybrid (definition levels, dictionary indices)."""
    values: list[int] = []
    while len(values) < count and cursor.position < end:
        header = cursor.varint()
        if header & 1:  # groups of eight bit-packed values
            groups = header >> 1
            values += _unpack(cursor.take(groups * bit_width), groups * 8, bit_width)
        else:
            run = header >> 1
            values += [int.from_bytes(cursor.take((bit_width + 7) // 8), "little")] * run
    if len(values) < count:
        raise ParquetPageError("definition levels or dictionary indices end early")
    return values[:count]


def _delta_packed(cursor: _Cursor) -> list[int]:
    """A ``DELTA_BINARY_PACKED`` run, its arithmetic in Python integers (wider than the column's 32 bits)."""
    block_size, miniblocks, total = cursor.varint(), cursor.varint(), cursor.varint()
    value = cursor.zigzag()
    values = [value] if total else []
    per_miniblock = block_size // miniblocks if miniblocks else 0
    while len(values) < total:
        min_delta = cursor.zigzag()
        widths = cursor.take(miniblocks)
        for width in widths:
            if len(values) >= total:
                break  # the rest of the block's miniblocks are not written
            for delta in _unpack(cursor.take(per_miniblock * width // 8), per_miniblock, width):
                value += min_delta + delta
                values.append(value)
    return values[:total]


def _plain_int32(data: bytes, count: int) -> list[int]:
    return np.frombuffer(data[: count * 4], dtype="<u4").astype(np.int64).tolist()


def _values(encoding: int, cursor: _Cursor, end: int, count: int, dictionary: list[int] | None) -> list[int]:
    if encoding == _DELTA_BINARY_PACKED:
        return _delta_packed(cursor)[:count]
    if encoding == _PLAIN:
        return _plain_int32(cursor.take(end - cursor.position), count)
    if encoding in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
        if dictionary is None:
            raise ParquetPageError("a dictionary-encoded page without a dictionary page")
        bit_width = cursor.byte()
        return [dictionary[i] for i in _hybrid(cursor, end, bit_width, count)]
    raise ParquetPageError(f"Parquet encoding {encoding} of a 32-bit column")


def decode_int32_chunk(chunk: ColumnChunk) -> pa.Array:
    """The column chunk's values (with their nulls) as an Arrow array of ``chunk.arrow_type``, each value's low 32
    bits taken as the type takes them.

    :raises ParquetPageError: for columns outside this decoder's reach (nested or not 32-bit).
    """
    if chunk.max_definition_level > 1 or chunk.arrow_type not in _INT32_VIEWS:
        raise ParquetPageError(f"column {chunk.name!r}: only flat 32-bit integer columns are decoded here")
    cursor = _Cursor(chunk.data)
    dictionary: list[int] | None = None
    values: list[int] = []
    present: list[int] = []
    while cursor.position < len(chunk.data):
        header = _page_header(cursor)
        body = cursor.take(header.compressed_size)
        if header.page_type == _DICTIONARY_PAGE:
            dictionary = _plain_int32(_decompress(chunk.codec, body, header.uncompressed_size), header.num_values)
            continue
        if header.page_type not in (_DATA_PAGE, _DATA_PAGE_V2):
            continue
        if header.page_type == _DATA_PAGE_V2:
            levels = body[: header.levels_length]
            rest = body[header.levels_length :]
            if header.v2_compressed:
                rest = _decompress(chunk.codec, rest, header.uncompressed_size - header.levels_length)
            # repetition levels come first (none in a flat column), then the definition levels
            page = _Cursor(levels + rest, header.levels_length - header.definition_levels_length)
            defined = (
                _hybrid(page, header.levels_length, 1, header.num_values)
                if chunk.max_definition_level
                else [1] * header.num_values
            )
            page.position = header.levels_length
        else:
            page = _Cursor(_decompress(chunk.codec, body, header.uncompressed_size))
            if chunk.max_definition_level:
                length = int.from_bytes(page.take(4), "little")
                defined = _hybrid(page, page.position + length, 1, header.num_values)
                page.position = 4 + length
            else:
                defined = [1] * header.num_values
        non_null = sum(defined)
        values += _values(header.encoding, page, len(page.data), non_null, dictionary)
        present += defined
    return _arrow(values, present, chunk.arrow_type)


def _arrow(values: list[int], present: list[int], arrow_type: pa.DataType) -> pa.Array:
    mask = np.array(present, dtype=bool) if present else np.zeros(0, dtype=bool)
    low_bits = np.zeros(len(mask), dtype=np.uint32)
    low_bits[mask] = np.array([v & 0xFFFFFFFF for v in values], dtype=np.uint64).astype(np.uint32)
    signed = arrow_type in (pa.int32(), pa.date32(), pa.time32("ms"), pa.int16(), pa.int8())
    numbers = low_bits.view(np.int32) if signed else low_bits
    storage = pa.array(numbers, mask=~mask)
    if arrow_type in (pa.int16(), pa.int8(), pa.uint16(), pa.uint8()):
        return storage.cast(arrow_type)
    return storage if storage.type == arrow_type else storage.view(arrow_type)


def read_refused_column(
    handle: Any, parquet: pq.ParquetFile, name: str, row_groups: Sequence[int] | None = None
) -> pa.ChunkedArray:
    """Top-level column ``name`` of an open Parquet file (``handle`` seekable, ``parquet`` its reader), decoded
    here, over ``row_groups`` (all by default).

    :raises ParquetPageError: when the column is nested or not a 32-bit integer column.
    """
    leaves = [i for i in range(parquet.metadata.num_columns) if parquet.schema.column(i).path == name]
    if len(leaves) != 1:
        raise ParquetPageError(f"column {name!r} is nested")
    leaf = parquet.schema.column(leaves[0])
    if leaf.physical_type != "INT32" or leaf.max_repetition_level:
        raise ParquetPageError(f"column {name!r} is {leaf.physical_type}, not a flat 32-bit column")
    arrow_type = parquet.schema_arrow.field(name).type
    pieces = []
    for group in range(parquet.num_row_groups) if row_groups is None else row_groups:
        meta = parquet.metadata.row_group(group).column(leaves[0])
        start = meta.dictionary_page_offset if meta.has_dictionary_page else meta.data_page_offset
        handle.seek(start)
        chunk = ColumnChunk(
            bytes(handle.read(meta.total_compressed_size)),
            meta.compression,
            leaf.max_definition_level,
            arrow_type,
            name,
        )
        pieces.append(decode_int32_chunk(chunk))
    return pa.chunked_array(pieces, type=arrow_type)


def read_columns(
    handle: Any,
    parquet: pq.ParquetFile,
    path: str,
    names: Sequence[str] | None = None,
    row_groups: Sequence[int] | None = None,
) -> pa.Table:
    """Columns ``names`` (all by default) of an open Parquet file over ``row_groups`` (all by default), read by
    pyarrow; a 32-bit column pyarrow refuses is decoded here instead (see the module's text).

    :raises OSError: naming the file and the column, when neither can read a column.
    """
    try:
        if row_groups is not None:
            return parquet.read_row_groups(row_groups, columns=names, use_threads=True)
        return parquet.read(columns=names, use_threads=True)
    except OSError as refused:
        columns = {}
        for name in parquet.schema_arrow.names if names is None else names:
            try:
                columns[name] = (
                    parquet.read_row_groups(row_groups, columns=[name])
                    if row_groups is not None
                    else parquet.read(columns=[name])
                ).column(0)
            except OSError:
                try:
                    columns[name] = read_refused_column(handle, parquet, name, row_groups)
                except ParquetPageError as reason:
                    raise OSError(f"{path}: cannot read column {name!r}: {refused}; {reason}") from refused
        return pa.table(columns)


def has_delta_packed_32_bit_columns(parquet: pq.ParquetFile) -> bool:
    """Whether any 32-bit column chunk is ``DELTA_BINARY_PACKED``: the ones DuckDB may have written with 64-bit
    deltas, which a streaming pyarrow read could fail on halfway (see :func:`read_columns`)."""
    meta = parquet.metadata
    return any(
        meta.row_group(g).column(c).physical_type == "INT32"
        and "DELTA_BINARY_PACKED" in meta.row_group(g).column(c).encodings
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    )
