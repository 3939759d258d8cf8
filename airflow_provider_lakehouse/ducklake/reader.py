"""Read a table at a snapshot: data files (mapped by field id, deletes applied) plus inlined rows.

The pieces are separate so a distributed engine can run them itself: :func:`read_data_file` reads
one file task (what a Spark executor does), :func:`read_inlined_rows` reads the rows kept in the
catalog database (what the driver does), and :class:`ScanPlan` lists both.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_lakehouse.ducklake.deletion_vectors import deleted_positions_of, is_deletion_vector
from airflow_provider_lakehouse.ducklake.implicit_casts import cast_as_duckdb
from airflow_provider_lakehouse.ducklake.inline_codec import decode_value
from airflow_provider_lakehouse.ducklake.intervals import from_parquet
from airflow_provider_lakehouse.ducklake.model import DataFileInfo, TableInfo
from airflow_provider_lakehouse.ducklake.parquet_pages import read_columns
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, quote_ident
from airflow_provider_lakehouse.ducklake.types import (
    FIELD_ID_KEY,
    NESTED,
    ROW_ID_FIELD_ID,
    SNAPSHOT_ID_FIELD_ID,
    WIDE_INTEGERS,
    Column,
    arrow_type,
    readable_arrow_type,
)

# Virtual columns a scan can add (named so they cannot clash with user columns).
ROWID = "rowid"
FILE_ID = "__ducklake_file_id"
FILE_POS = "__ducklake_file_pos"
ROW_SNAPSHOT = "__ducklake_row_snapshot"
VIRTUAL_TYPES = {ROWID: pa.int64(), FILE_ID: pa.int64(), FILE_POS: pa.int64(), ROW_SNAPSHOT: pa.int64()}


@dataclass(frozen=True)
class ScanPlan:
    """Everything needed to read ``table`` at ``snapshot_id``: file tasks and the inlined rows.

    :param files: visible data files (after pruning), each with its deletes.
    :param inlined: visible inlined rows, already decoded, in the output schema.
    :param columns: the top-level columns to produce, in order.
    """

    table: TableInfo
    snapshot_id: int
    columns: tuple[Column, ...]
    files: tuple[DataFileInfo, ...]
    inlined: pa.Table
    virtual: tuple[str, ...] = ()
    pruned_files: int = 0
    stats: dict[str, int] = field(default_factory=dict)

    def output_schema(self) -> pa.Schema:
        return output_schema(self.columns, self.virtual)


def output_schema(columns: Sequence[Column], virtual: Sequence[str] = ()) -> pa.Schema:
    """The schema engines read ``columns`` in (the Spark engine: a type it cannot hold, an interval, is refused
    here, naming the column)."""
    return _schema(columns, virtual, arrow_type)


def read_schema(columns: Sequence[Column], virtual: Sequence[str] = ()) -> pa.Schema:
    """The schema of what this module reads: :func:`output_schema`, with intervals and TIMETZ (see
    :func:`~airflow_provider_lakehouse.ducklake.types.readable_arrow_type`)."""
    return _schema(columns, virtual, readable_arrow_type)


def _schema(columns: Sequence[Column], virtual: Sequence[str], type_of: Callable[[Column], pa.DataType]) -> pa.Schema:
    fields = [pa.field(c.name, type_of(c), nullable=True) for c in columns]
    fields += [pa.field(v, VIRTUAL_TYPES[v]) for v in virtual]
    return pa.schema(fields)


# -- data files -------------------------------------------------------------------------------


def _field_id(f: pa.Field) -> int | None:
    if f.metadata and FIELD_ID_KEY in f.metadata:
        value = int(f.metadata[FIELD_ID_KEY])
        return value if value >= 0 else None
    return None


def read_data_file(
    storage: Storage,
    file: DataFileInfo,
    columns: Sequence[Column],
    snapshot_id: int,
    *,
    virtual: Sequence[str] = (),
    all_columns: Sequence[Column] | None = None,
    name_map: dict[int, tuple[str, int, int | None, bool]] | None = None,
    max_rows: int | None = None,
) -> pa.Table:
    """Read one data file as the table's ``columns`` at ``snapshot_id``; with ``max_rows``, only the first row
    groups that hold that many rows (before deletions).

    Columns are matched by Parquet field id (= column id), or by a ``map_by_name`` mapping, or -
    for legacy files with neither - by position against ``all_columns``. Columns missing from the
    file read as their ``initial_default``. Deleted rows (delete file, inlined deletions, rows of a
    partial file newer than the snapshot) are dropped.
    """
    with storage.open_input(file.path) as handle:
        parquet = pq.ParquetFile(handle, pre_buffer=True)
        file_schema = parquet.schema_arrow
        by_id: dict[int, int] = {}
        for index, f in enumerate(file_schema):
            fid = _field_id(f)
            if fid is not None:
                by_id[fid] = index
        if name_map:
            names = {f.name: i for i, f in enumerate(file_schema)}
            for _local, (source, target, parent, _is_partition) in name_map.items():
                if parent is None and source in names:
                    by_id[target] = names[source]
        elif not by_id and all_columns is not None:
            # Legacy external file without field ids: DuckDB maps positionally.
            by_id = {c.column_id: i for i, c in enumerate(all_columns) if i < len(file_schema)}
        wanted = sorted(
            {by_id[c.column_id] for c in columns if c.column_id in by_id}
            | {by_id[x] for x in (ROW_ID_FIELD_ID, SNAPSHOT_ID_FIELD_ID) if x in by_id}
        )
        groups = None
        if max_rows is not None:  # a preview of a large file: its first row groups only
            counts = np.cumsum([parquet.metadata.row_group(g).num_rows for g in range(parquet.num_row_groups)])
            groups = list(range(min(len(counts), int(np.searchsorted(counts, max_rows)) + 1)))
        wanted_names = [file_schema[i].name for i in wanted]
        data = read_columns(handle, parquet, file.path, wanted_names, groups) if wanted else None
    num_rows = data.num_rows if data is not None else file.record_count
    by_index = {i: data.column(file_schema[i].name) for i in wanted} if data is not None else {}

    out: dict[str, pa.ChunkedArray | pa.Array] = {}
    for column in columns:
        position = by_id.get(column.column_id)
        if position is None:
            out[column.name] = default_array(column, num_rows)
        else:
            out[column.name] = _conform_chunked(by_index[position], file_schema[position], column)

    positions = np.arange(num_rows, dtype=np.int64)
    keep = np.ones(num_rows, dtype=bool)
    row_snapshots = None
    if SNAPSHOT_ID_FIELD_ID in by_id:
        row_snapshots = by_index[by_id[SNAPSHOT_ID_FIELD_ID]].to_numpy()
        if file.partial_max is not None and file.partial_max > snapshot_id:
            keep &= row_snapshots <= snapshot_id
    deleted = deleted_positions(storage, file, snapshot_id)
    if deleted.size:
        keep[deleted[deleted < num_rows]] = False

    if ROWID in virtual:
        if ROW_ID_FIELD_ID in by_id:
            out[ROWID] = by_index[by_id[ROW_ID_FIELD_ID]]
        elif file.row_id_start is None:
            out[ROWID] = pa.nulls(num_rows, pa.int64())  # a file staged in a transaction: numbered at commit
        else:
            out[ROWID] = pa.array(positions + file.row_id_start, pa.int64())
    if FILE_ID in virtual:
        out[FILE_ID] = pa.array(np.full(num_rows, file.data_file_id, dtype=np.int64))
    if FILE_POS in virtual:
        out[FILE_POS] = pa.array(positions)
    if ROW_SNAPSHOT in virtual:
        out[ROW_SNAPSHOT] = pa.array(
            row_snapshots if row_snapshots is not None else np.full(num_rows, file.begin_snapshot)
        )

    table = pa.Table.from_pydict(out, schema=read_schema(columns, virtual))
    return table if keep.all() else table.filter(pa.array(keep))


def read_delete_file(storage: Storage, path: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A delete file's positions and, when it records them (``_ducklake_internal_snapshot_id``, written by
    DuckDB when one file holds deletes of several snapshots), the snapshot of each. A deletion vector (catalog
    format ``puffin``, see :mod:`.deletion_vectors`) has positions only."""
    with storage.open_input(path) as handle:
        head = handle.read(8)
        if is_deletion_vector(head):
            return deleted_positions_of(head + handle.read(), path), None
        handle.seek(0)
        rows = pq.ParquetFile(handle).read()
    positions = rows.column(1).to_numpy().astype(np.int64)
    if rows.num_columns >= 3 and rows.schema.names[2] == "_ducklake_internal_snapshot_id":
        return positions, rows.column(2).to_numpy().astype(np.int64)
    return positions, None


def deleted_positions(storage: Storage, file: DataFileInfo, snapshot_id: int) -> np.ndarray:
    """Positions of ``file`` deleted as of ``snapshot_id``."""
    parts = []
    for delete_file in file.live_delete_files:
        positions, snapshots = read_delete_file(storage, delete_file.path)
        parts.append(positions if snapshots is None else positions[snapshots <= snapshot_id])
    if file.inlined_deletes:
        parts.append(np.array([p for p, s in file.inlined_deletes if s <= snapshot_id], dtype=np.int64))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def conform(array: pa.Array, file_field: pa.Field, column: Column) -> pa.Array:
    """Reshape a file's array into ``column``'s current type: nested fields by field id, renames, widening."""
    target = readable_arrow_type(column)
    kind = column.type
    if kind == "struct" and pa.types.is_struct(array.type):
        file_children = {(_field_id(f) or -1): (i, f) for i, f in enumerate(array.type)}
        by_name = {f.name: (i, f) for i, f in enumerate(array.type)}
        children = []
        for child in column.children:
            found = file_children.get(child.column_id) or (
                by_name.get(child.name) if not file_children.keys() - {-1} else None
            )
            if found is None:
                children.append(default_array(child, len(array)))
            else:
                children.append(conform(array.field(found[0]), found[1], child))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_null_mask(array))
    if kind == "list" and (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
        values = conform(array.values, array.type.value_field, column.children[0])
        return pa.ListArray.from_arrays(array.offsets.cast(pa.int32()), values, type=target, mask=_null_mask(array))
    if kind == "map" and pa.types.is_map(array.type):
        keys = conform(array.keys, array.type.key_field, column.children[0])
        items = conform(array.items, array.type.item_field, column.children[1])
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=_null_mask(array))
    if kind == "uuid":
        return uuid_strings(array)
    if kind == "interval" and pa.types.is_fixed_size_binary(array.type):
        return from_parquet(array)
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    if array.type == target:
        return array
    return widened(array, target)


def widened(values: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values`` cast to a type a column was promoted to (``ALTER COLUMN ... TYPE``), as DuckDB casts them: an
    integer or decimal becomes the nearest float (an unchecked cast, since most 64-bit integers have no exact
    float), every other promotion DuckLake allows is exact and stays checked."""
    if pa.types.is_floating(target) and (pa.types.is_integer(values.type) or pa.types.is_decimal(values.type)):
        return values.cast(target, safe=False)
    return values.cast(target)


def _conform_chunked(chunked: pa.ChunkedArray, file_field: pa.Field, column: Column) -> pa.ChunkedArray | pa.Array:
    """Like :func:`conform`, without copying: plain columns of the right type stay as they were read."""
    target = readable_arrow_type(column)
    if column.type not in NESTED | {"uuid", "json", "interval"} and not isinstance(chunked.type, pa.BaseExtensionType):
        return chunked if chunked.type == target else widened(chunked, target)
    return conform(chunked.combine_chunks(), file_field, column)


def _null_mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def uuid_strings(array: pa.Array) -> pa.Array:
    """UUIDs (Arrow's ``arrow.uuid``, 16-byte binaries or text) as their canonical text, as DuckDB prints them."""
    if isinstance(array.type, pa.BaseExtensionType):
        array = array.storage
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array.cast(pa.string())
    return pa.array([str(uuid.UUID(bytes=b)) if b is not None else None for b in array.to_pylist()], pa.string())


def default_array(column: Column, length: int) -> pa.Array:
    """``length`` copies of the column's ``initial_default`` (NULL when it has none)."""
    target = readable_arrow_type(column)
    if column.initial_default is None or column.initial_default == "NULL":
        return pa.nulls(length, target)
    text = _unquote(column.initial_default)
    try:
        return pa.array([decode_value(text, column)] * length, target)
    except (ValueError, ArithmeticError, pa.ArrowInvalid):
        # a default DuckDB casts into the column's type ('2.5' into INTEGER is 3, '1.25' into DECIMAL(4, 1) 1.3)
        value = cast_as_duckdb(pa.array([text], pa.string()), target)[0].as_py()
        return pa.array([value] * length, target)


def wide_integer_array(values: Sequence[int | None]) -> pa.Array:
    """128-bit integers as the ``decimal128(38, 0)`` array DuckDB hands to Arrow: stored unchecked, so the 39-digit
    values of ``HUGEINT`` (up to 2^127 - 1) are kept as DuckDB keeps them, where pyarrow's own conversion refuses
    more than 38 digits.

    >>> wide_integer_array([2**127 - 1, None, -5]).to_pylist()
    [Decimal('170141183460469231731687303715884105727'), None, Decimal('-5')]

    :raises ValueError: for a value beyond a signed 128-bit integer (a ``UHUGEINT`` from 2^127).
    """
    for value in values:
        if value is not None and not -(2**127) <= value < 2**127:
            raise ValueError(f"{value} does not fit a 128-bit decimal")
    data = b"".join(((value or 0) % 2**128).to_bytes(16, "little") for value in values)
    validity = pa.array([value is not None for value in values], pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(pa.decimal128(38, 0), len(values), [validity, pa.py_buffer(data)])


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


# -- inlined rows -----------------------------------------------------------------------------


def read_inlined_rows(
    conn: CatalogConnection,
    table: TableInfo,
    columns: Sequence[Column],
    snapshot_id: int,
    *,
    virtual: Sequence[str] = (),
    schema_at_version: Mapping[int, Sequence[Column]] | None = None,
) -> pa.Table:
    """Rows of ``table`` kept in the catalog database (``ducklake_inlined_data_<T>_<sv>``), visible at the snapshot.

    :param schema_at_version: the table's columns at each inlined table's schema version (to map renamed
        or dropped columns by id); defaults to the current columns matched by name.
    """
    return _inlined_rows(
        conn,
        table,
        columns,
        "begin_snapshot",
        "? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)",
        (snapshot_id, snapshot_id),
        virtual,
        schema_at_version,
    )


def read_inlined_changes(
    conn: CatalogConnection,
    table: TableInfo,
    columns: Sequence[Column],
    bound: Literal["begin_snapshot", "end_snapshot"],
    start: int,
    end: int,
    *,
    virtual: Sequence[str] = (),
    schema_at_version: Mapping[int, Sequence[Column]] | None = None,
) -> pa.Table:
    """Inlined rows inserted (``bound="begin_snapshot"``) or deleted (``"end_snapshot"``) in snapshots
    ``start``..``end``; their ``__ducklake_row_snapshot`` (when in ``virtual``) is that snapshot."""
    if bound not in ("begin_snapshot", "end_snapshot"):
        raise ValueError(f"bound must be begin_snapshot or end_snapshot, not {bound!r}")
    return _inlined_rows(
        conn, table, columns, bound, f"{bound} >= ? AND {bound} <= ?", (start, end), virtual, schema_at_version
    )


def _inlined_value(column: Column) -> str:
    """The catalog's select of one inlined column: an interval as text (Postgres hands its ``interval`` to Python
    as a timedelta, which has no months), every other value as stored."""
    name = quote_ident(column.name)
    return f"CAST({name} AS TEXT)" if column.type == "interval" else name


def _inlined_rows(
    conn: CatalogConnection,
    table: TableInfo,
    columns: Sequence[Column],
    label: str,
    where: str,
    params: Sequence[int],
    virtual: Sequence[str],
    schema_at_version: Mapping[int, Sequence[Column]] | None,
) -> pa.Table:
    """The inlined rows matching ``where``, with ``label`` (a snapshot column) as their row snapshot."""
    pieces = []
    for name, version in table.inlined_tables:
        if not conn.table_exists(name):
            continue
        old_columns = list((schema_at_version or {}).get(version) or table.columns)
        old_by_id = {c.column_id: c for c in old_columns}
        select = ", ".join(_inlined_value(c) for c in old_columns)
        rows = conn.query(
            f"SELECT row_id, {label}{', ' + select if select else ''} FROM {{M}}{quote_ident(name)} "
            f"WHERE {where} ORDER BY row_id",
            list(params),
        )
        if not rows:
            continue
        data: dict[str, list[Any] | pa.Array] = {}
        for column in columns:
            old = old_by_id.get(column.column_id)
            if old is None:
                default = default_array(column, len(rows))
                data[column.name] = default.to_pylist()
                continue
            position = 2 + old_columns.index(old)
            values = [decode_value(row[position], old) for row in rows]
            if old.type in WIDE_INTEGERS:
                data[column.name] = wide_integer_array(values)
                continue
            if old.type != column.type:  # rows inlined before the column's type was promoted
                values = widened(pa.array(values, arrow_type(old)), arrow_type(column)).to_pylist()
            data[column.name] = values
        if ROWID in virtual:
            data[ROWID] = [int(r[0]) for r in rows]
        if FILE_ID in virtual:
            data[FILE_ID] = [None] * len(rows)
        if FILE_POS in virtual:
            data[FILE_POS] = [None] * len(rows)
        if ROW_SNAPSHOT in virtual:
            data[ROW_SNAPSHOT] = [int(r[1]) for r in rows]
        pieces.append(pa.Table.from_pydict(data, schema=read_schema(columns, virtual)))
    if not pieces:
        return read_schema(columns, virtual).empty_table()
    return pa.concat_tables(pieces)
