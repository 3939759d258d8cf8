"""Write data and delete files exactly the way a DuckLake reader expects them.

Pure functions over :class:`~airflow_provider_lakehouse.ducklake.storage.Storage`, with no catalog
access, so Spark executors can call them and hand the results to the driver for the commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from airflow_provider_lakehouse.ducklake.geometry import WKB, well_known_binary
from airflow_provider_lakehouse.ducklake.implicit_casts import cast_as_duckdb
from airflow_provider_lakehouse.ducklake.model import FilePartition, SortKey, WrittenDeleteFile, WrittenFile
from airflow_provider_lakehouse.ducklake.partitioning import Partitioning, iter_slices
from airflow_provider_lakehouse.ducklake.sort_order import sort_order
from airflow_provider_lakehouse.ducklake.stats import compute_stats
from airflow_provider_lakehouse.ducklake.storage import Storage, data_file_name, delete_file_name, join_path
from airflow_provider_lakehouse.ducklake.types import (
    FIELD_ID_KEY,
    NESTED,
    ROW_ID_COLUMN,
    ROW_ID_FIELD_ID,
    SNAPSHOT_ID_COLUMN,
    SNAPSHOT_ID_FIELD_ID,
    WIDE_INTEGERS,
    Column,
    arrow_type,
    storage_arrow_type,
    storage_field,
)

DEFAULT_TARGET_FILE_BYTES = 512 * 1024 * 1024  # DuckDB's default target_file_size
_DELETE_PATH_ID = 2147483646
_DELETE_POS_ID = 2147483645


# Types whose storage form is built from the array's buffers (offsets, children); the rest are cast chunk by chunk,
# since copying every column into one chunk cost a third of a large write.
_NEEDS_ONE_CHUNK = NESTED | {"uuid", "json"}


def to_storage(columns: Sequence[Column], data: pa.Table) -> pa.Table:
    """Shape ``data`` (columns by name) into the file layout: storage types and field ids everywhere.

    :raises ValueError: if a non-nullable column receives NULLs or a column is missing.
    """
    arrays = []
    fields = []
    for column in columns:
        if column.name not in data.column_names:
            raise ValueError(f"Data has no column {column.name!r}.")
        array = data.column(column.name)
        if column.type in _NEEDS_ONE_CHUNK:
            array = array.combine_chunks()
        if not column.nullable and array.null_count:
            raise ValueError(f"Column {column.name!r} is NOT NULL but {array.null_count} value(s) are NULL.")
        arrays.append(_to_storage_array(array, column))
        fields.append(storage_field(column))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _to_storage_array(array: pa.Array | pa.ChunkedArray, column: Column) -> pa.Array | pa.ChunkedArray:
    target = storage_arrow_type(column)
    if column.type == "uuid":
        if isinstance(array.type, pa.BaseExtensionType):
            return array
        raw = [uuid.UUID(str(v)).bytes if v is not None else None for v in array.to_pylist()]
        return pa.ExtensionArray.from_storage(pa.uuid(), pa.array(raw, pa.binary(16)))
    if column.type in WIDE_INTEGERS and not pa.types.is_floating(array.type):
        # DuckDB's own HUGEINT-to-DOUBLE conversion, not always the nearest double: its files hold these doubles
        # (a BIGINT is a HUGEINT first, as DuckDB casts it into the column)
        wide = array.cast(pa.decimal128(38, 0)) if pa.types.is_integer(array.type) else array
        return cast_as_duckdb(wide, target)
    if column.type == "json":
        text = array.cast(pa.string()) if not isinstance(array.type, pa.BaseExtensionType) else array.storage
        return pa.ExtensionArray.from_storage(pa.json_(), text)
    if column.type == "struct":
        if not pa.types.is_struct(array.type):
            array = array.cast(pa.struct([(c.name, _logical(c)) for c in column.children]))
        children = [_to_storage_array(_child(array, c.name), c) for c in column.children]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if column.type == "list":
        if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
            array = array.cast(pa.list_(_logical(column.children[0])))
        values = _to_storage_array(array.values, column.children[0])
        mask = array.is_null() if array.null_count else None
        return pa.ListArray.from_arrays(array.offsets.cast(pa.int32()), values, type=target, mask=mask)
    if column.type == "map":
        keys = _to_storage_array(array.keys, column.children[0])
        items = _to_storage_array(array.items, column.children[1])
        mask = array.is_null() if array.null_count else None
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
    if column.type == "geometry":  # the WKB type, which files annotate GEOMETRY
        return well_known_binary(array, column.name).cast(WKB)
    return array if array.type == target else array.cast(target)


def _geometries_as_binary(columns: Sequence[Column], data: pa.Table) -> pa.Table:
    """``data`` with its geometry columns as well-known binary (text parsed), which is what they sort and
    partition by."""
    for column in columns:
        if column.type == "geometry" and column.name in data.column_names:
            index = data.column_names.index(column.name)
            data = data.set_column(index, column.name, well_known_binary(data.column(index), column.name))
    return data


def _logical(column: Column) -> pa.DataType:
    return arrow_type(column)


def _child(array: pa.StructArray, name: str) -> pa.Array:
    for index, f in enumerate(array.type):
        if f.name == name:
            return array.field(index)
    return pa.nulls(len(array))


def write_data_file(
    storage: Storage,
    table_dir: str,
    columns: Sequence[Column],
    data: pa.Table,
    *,
    row_ids: pa.Array | np.ndarray | None = None,
    row_snapshots: pa.Array | np.ndarray | None = None,
    compression: str = "snappy",
    tag: str = "",
    partition: FilePartition | None = None,
    directory: str = "",
) -> WrittenFile:
    """Write one Parquet data file under ``table_dir`` and return what the commit needs to register it.

    :param row_ids: original row ids to embed (``_ducklake_internal_row_id``), for rewritten rows.
    :param row_snapshots: per-row snapshot ids to embed (``_ducklake_internal_snapshot_id``), for partial files.
    :param tag: appended to the file name (see :func:`~airflow_provider_lakehouse.ducklake.storage.data_file_name`).
    :param partition: the partition every row of ``data`` belongs to (registered with the file).
    :param directory: a sub-directory of ``table_dir`` for the file (a partition's hive directory).
    """
    table = to_storage(columns, data)
    if row_ids is not None:
        table = table.append_column(_system_field(ROW_ID_COLUMN, ROW_ID_FIELD_ID), pa.array(row_ids, pa.int64()))
    if row_snapshots is not None:
        table = table.append_column(
            _system_field(SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID), pa.array(row_snapshots, pa.int64())
        )
    uri = join_path(join_path(table_dir, directory) if directory else table_dir, data_file_name(tag))
    size, footer, meta = storage.write_parquet(table, uri, compression=compression)
    partial_max = int(np.max(row_snapshots)) if row_snapshots is not None and len(row_snapshots) else None
    begin = int(np.min(row_snapshots)) if row_snapshots is not None and len(row_snapshots) else None
    return WrittenFile(
        path=uri,
        record_count=table.num_rows,
        file_size_bytes=size,
        footer_size=footer,
        column_stats=tuple(compute_stats(columns, table, meta)),
        has_row_ids=row_ids is not None,
        partial_max=partial_max,
        begin_snapshot=begin,
        partition=partition,
    )


def write_partitioned(
    storage: Storage,
    table_dir: str,
    columns: Sequence[Column],
    data: pa.Table,
    partitioning: Partitioning | None,
    *,
    row_ids: pa.Array | np.ndarray | None = None,
    row_snapshots: pa.Array | np.ndarray | None = None,
    tag: str = "",
    sort_keys: Sequence[SortKey] = (),
) -> list[WrittenFile]:
    """Write ``data`` as one file per partition (one file in all for an unpartitioned table), each in its
    partition's hive directory and in the table's sort order, as DuckDB does."""
    data = _geometries_as_binary(columns, data)
    order = sort_order(sort_keys, data)
    if order is not None:
        data = data.take(pa.array(order))
        row_ids = None if row_ids is None else np.asarray(row_ids)[order]
        row_snapshots = None if row_snapshots is None else np.asarray(row_snapshots)[order]
    return [
        write_data_file(
            storage,
            table_dir,
            columns,
            rows,
            row_ids=piece.select(row_ids),
            row_snapshots=piece.select(row_snapshots),
            tag=tag,
            partition=piece.partition,
            directory=piece.directory,
        )
        for piece, rows in iter_slices(partitioning, data)
    ]


def write_data_files(
    storage: Storage,
    table_dir: str,
    columns: Sequence[Column],
    data: pa.Table,
    *,
    row_ids: np.ndarray | None = None,
    target_file_bytes: int = DEFAULT_TARGET_FILE_BYTES,
    partitioning: Partitioning | None = None,
    sort_keys: Sequence[SortKey] = (),
) -> list[WrittenFile]:
    """Write ``data`` as one or more files of roughly ``target_file_bytes`` (in memory, uncompressed), split by
    ``partitioning`` when the table has one."""
    if data.num_rows == 0:
        return []
    per_row = max(1, data.nbytes // max(1, data.num_rows))
    rows_per_file = max(1, target_file_bytes // per_row)
    files = []
    for start in range(0, data.num_rows, rows_per_file):
        ids = row_ids[start : start + rows_per_file] if row_ids is not None else None
        files.extend(
            write_partitioned(
                storage,
                table_dir,
                columns,
                data.slice(start, rows_per_file),
                partitioning,
                row_ids=ids,
                sort_keys=sort_keys,
            )
        )
    return files


def _system_field(name: str, field_id: int) -> pa.Field:
    return pa.field(name, pa.int64(), nullable=False, metadata={FIELD_ID_KEY: str(field_id).encode()})


def write_delete_file(
    storage: Storage,
    table_dir: str,
    data_file_id: int,
    data_file_path: str,
    positions: np.ndarray,
    *,
    snapshots: np.ndarray | None = None,
) -> WrittenDeleteFile:
    """Write an Iceberg-style positional delete file (``file_path``, ``pos`` [, snapshot ids]), positions sorted."""
    order = np.argsort(positions, kind="stable")
    positions = np.asarray(positions, dtype=np.int64)[order]
    if np.any(np.diff(positions) == 0):
        raise ValueError("Delete positions must be unique.")
    arrays = [pa.array([data_file_path] * len(positions), pa.string()), pa.array(positions, pa.int64())]
    fields = [
        pa.field("file_path", pa.string(), nullable=False, metadata={FIELD_ID_KEY: str(_DELETE_PATH_ID).encode()}),
        pa.field("pos", pa.int64(), nullable=False, metadata={FIELD_ID_KEY: str(_DELETE_POS_ID).encode()}),
    ]
    partial_max = begin = None
    if snapshots is not None:
        snaps = np.asarray(snapshots, dtype=np.int64)[order]
        arrays.append(pa.array(snaps, pa.int64()))
        fields.append(_system_field(SNAPSHOT_ID_COLUMN, SNAPSHOT_ID_FIELD_ID))
        partial_max, begin = int(snaps.max()), int(snaps.min())
    uri = join_path(table_dir, delete_file_name())
    size, footer, _ = storage.write_parquet(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), uri)
    return WrittenDeleteFile(
        path=uri,
        data_file_id=data_file_id,
        delete_count=len(positions),
        file_size_bytes=size,
        footer_size=footer,
        partial_max=partial_max,
        begin_snapshot=begin,
    )
