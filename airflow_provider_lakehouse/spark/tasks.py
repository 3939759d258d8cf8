"""What Spark executors run: read a lake's files and write new ones, with pyarrow and the DuckLake core.

No PySpark here: these functions receive and yield Arrow record batches (``mapInArrow`` and the Python data
source hand them over), so they are testable without a JVM. Catalog credentials never reach executors; the
payloads carry only the storage location and, for S3, its credentials (inside the pickled task, never in a
Spark option or plan string).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_lakehouse.connections.lake import S3Spec
from airflow_provider_lakehouse.ducklake.defaults import insert_default
from airflow_provider_lakehouse.ducklake.implicit_casts import cast_as_duckdb, json_text_in_duckdb
from airflow_provider_lakehouse.ducklake.intervals import INTERVAL_TYPE, interval_text
from airflow_provider_lakehouse.ducklake.model import DataFileInfo, SortKey, TableInfo, WrittenFile
from airflow_provider_lakehouse.ducklake.partitioning import Partitioning
from airflow_provider_lakehouse.ducklake.reader import default_array, output_schema, read_data_file, uuid_strings
from airflow_provider_lakehouse.ducklake.storage import Storage, join_path
from airflow_provider_lakehouse.ducklake.types import Column, arrow_type
from airflow_provider_lakehouse.ducklake.writer import DEFAULT_TARGET_FILE_BYTES, write_partitioned
from airflow_provider_lakehouse.spark.steps import DEFAULT_FIELD

META_COLUMN = "lakehouse_written_file"
#: column types Spark cannot hold at full precision (its times are microseconds): writing them is refused
NANOSECOND_TYPES = frozenset({"timestamp_ns", "time_ns"})
ROW_ID_INPUT = "__lakehouse_row_id"


# -- types Spark can hold ------------------------------------------------------------------------
def spark_arrow_type(dtype: pa.DataType) -> pa.DataType:
    """The Arrow type Spark can carry for ``dtype`` (unsigned ints widen, extension types unwrap).

    >>> spark_arrow_type(pa.uint32()), spark_arrow_type(pa.list_(pa.uint64()))
    (DataType(int64), ListType(list<element: decimal128(20, 0)>))
    """
    if isinstance(dtype, pa.BaseExtensionType):
        return (
            pa.string()
            if dtype.extension_name in ("arrow.uuid", "arrow.json")
            else spark_arrow_type(dtype.storage_type)
        )
    widen = {
        pa.uint8(): pa.int16(),
        pa.uint16(): pa.int32(),
        pa.uint32(): pa.int64(),
        pa.uint64(): pa.decimal128(20, 0),
    }
    if dtype in widen:
        return widen[dtype]
    if pa.types.is_time(dtype) or dtype == INTERVAL_TYPE:
        return pa.string()  # Spark has no TIME type that survives Arrow conversion everywhere, and no interval
    if pa.types.is_large_string(dtype):
        return pa.string()
    if pa.types.is_timestamp(dtype) and dtype.unit != "us":
        return pa.timestamp("us", tz=dtype.tz)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(pa.field("element", spark_arrow_type(dtype.value_type)))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, spark_arrow_type(f.type)) for f in dtype])
    if pa.types.is_map(dtype):
        return pa.map_(spark_arrow_type(dtype.key_type), spark_arrow_type(dtype.item_type))
    return dtype


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type)) for f in schema])


def to_spark_batch(table: pa.Table, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Cast ``table`` to ``schema`` (from :func:`spark_arrow_schema`) and yield its batches."""
    arrays = [_cast(table.column(i), f.type) for i, f in enumerate(schema)]
    yield from pa.Table.from_arrays(arrays, schema=schema).to_batches(max_chunksize=65536)


def to_spark_table(table: pa.Table, schema: pa.Schema | None = None) -> pa.Table:
    """``table`` with the types Spark can take (``schema`` defaults to :func:`spark_arrow_schema` of it)."""
    schema = schema or spark_arrow_schema(table.schema)
    return pa.Table.from_batches(list(to_spark_batch(table, schema)), schema=schema)


def _cast(array: pa.ChunkedArray | pa.Array, target: pa.DataType) -> pa.ChunkedArray | pa.Array:
    if array.type == target:
        return array
    if _held_as_text(array.type):
        # Spark holds UUIDs as their text (the lake's UUID columns too) and has no interval: DuckDB's text of each
        chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
        texts = [_as_text(c, target) for c in chunks]
        return pa.chunked_array(texts, target) if isinstance(array, pa.ChunkedArray) else texts[0]
    if isinstance(array.type, pa.BaseExtensionType):
        array = (
            array.cast(array.type.storage_type)
            if isinstance(array, pa.Array)
            else pa.chunked_array([c.storage for c in array.chunks], array.type.storage_type)
        )
    if pa.types.is_time(array.type) and pa.types.is_string(target):
        values = array.to_pylist()
        return pa.array([None if v is None else v.isoformat() for v in values], pa.string())
    return array.cast(target)


def _held_as_text(dtype: pa.DataType) -> bool:
    """A UUID or an interval, or a list of them: values Spark gets as DuckDB's text of each."""
    if pa.types.is_list(dtype):
        return _held_as_text(dtype.value_type)
    return isinstance(dtype, pa.UuidType) or dtype == INTERVAL_TYPE


def _as_text(array: pa.Array, target: pa.DataType) -> pa.Array:
    if isinstance(array, pa.ListArray):
        values = _as_text(array.values, target.value_type)
        return pa.ListArray.from_arrays(array.offsets, values, type=target, mask=array.is_null())
    if isinstance(array.type, pa.UuidType):
        return uuid_strings(array)
    return pa.array([None if v is None else interval_text(v) for v in array.to_pylist()], pa.string())


# -- reading -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScanTask:
    """Everything an executor needs to read (part of) one table at one snapshot."""

    data_path: str
    s3: S3Spec | None
    table: TableInfo
    snapshot_id: int
    columns: tuple[Column, ...]
    files: tuple[DataFileInfo, ...]
    virtual: tuple[str, ...] = ()
    name_maps: dict[int, Any] = field(default_factory=dict)
    inlined_ipc: bytes = b""

    def output_schema(self) -> pa.Schema:
        return spark_arrow_schema(output_schema(self.columns, self.virtual))

    def split(self, max_bytes: int = 128 * 1024 * 1024) -> list[ScanTask]:
        """One task per group of files of about ``max_bytes`` (Spark's default split), plus one for inlined rows."""
        groups: list[list[DataFileInfo]] = []
        size = 0
        for f in sorted(self.files, key=lambda f: f.data_file_id):
            if not groups or size + f.file_size_bytes > max_bytes:
                groups.append([])
                size = 0
            groups[-1].append(f)
            size += f.file_size_bytes
        tasks = [replace(self, files=tuple(g), inlined_ipc=b"") for g in groups]
        if self.inlined_ipc:
            tasks.append(replace(self, files=()))
        return tasks


def read_task(task: ScanTask) -> Iterator[pa.RecordBatch]:
    """Read a :class:`ScanTask`'s files (deletes, defaults and renames applied) and its inlined rows."""
    storage = Storage(task.data_path, task.s3)
    schema = task.output_schema()
    for f in task.files:
        table = read_data_file(
            storage,
            f,
            task.columns,
            task.snapshot_id,
            virtual=task.virtual,
            all_columns=task.table.columns,
            name_map=task.name_maps.get(f.mapping_id) if f.mapping_id is not None else None,
        )
        yield from to_spark_batch(table, schema)
    if task.inlined_ipc:
        yield from to_spark_batch(pa.ipc.open_stream(task.inlined_ipc).read_all(), schema)


def table_to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


# -- writing -------------------------------------------------------------------------------------
class WriteAbandonedError(RuntimeError):
    """An executor finished a file after the driver had given up on the write (the job failed meanwhile)."""


@dataclass(frozen=True)
class WriteTask:
    """Where and how executors write a table's new data files.

    Each write has a *lease*, a small marker object the driver creates before the Spark job and deletes after it.
    Spark fails a job as soon as one task fails while other tasks may still be finishing a file, so an executor
    checks the lease after every file it writes and deletes the file itself when the lease is gone: with the
    driver's sweep of the tagged files right after it deletes the lease, no file of a failed write survives,
    however late its task ends (see :class:`WriteLease`).

    :param columns: the table's columns; incoming batches name their columns after them (any case).
    :param target_file_bytes: roll over to a new file past this many (in-memory) bytes.
    :param tag: in every file name and in the lease's, so the driver can find the files of a failed write.
    :param partitioning: the table's partition spec: rows are split into one file per partition, as DuckDB does.
    :param sort_keys: the table's sort order (``SET SORTED BY``): each file is written sorted, as DuckDB does.
    :param by_kind: the (lower-case) names of incoming columns that hold an ``INSERT``'s values in one struct field
        per kind of value, each cast to the column's type on its own (see :mod:`.insert_values`).
    """

    data_path: str
    s3: S3Spec | None
    table_dir: str
    columns: tuple[Column, ...]
    tag: str
    target_file_bytes: int = DEFAULT_TARGET_FILE_BYTES
    partitioning: Partitioning | None = None
    sort_keys: tuple[SortKey, ...] = ()
    by_kind: frozenset[str] = frozenset()

    @property
    def lease_uri(self) -> str:
        return join_path(self.table_dir, f"ducklake-write-{self.tag}.lease")

    def is_own_file(self, uri: str) -> bool:
        return uri.endswith(f"-{self.tag}.parquet")


class WriteLease:
    """The driver's side of a write's lease: :meth:`take` before the Spark job, :meth:`release` after it, and
    :meth:`abandon` instead when the job failed.

    Why it is safe: an executor checks the lease *after* its file is complete. A file completed before the
    lease was deleted is found by the sweep that follows the deletion; a file completed after it is deleted by
    its executor. A driver killed mid-write leaves the lease and the unregistered files, which
    ``ducklake_delete_orphaned_files`` removes like any orphan.
    """

    def __init__(self, task: WriteTask) -> None:
        self.task = task
        self._storage = Storage(task.data_path, task.s3)

    def take(self) -> None:
        self._storage.write_bytes(self.task.lease_uri, b"")

    def release(self) -> None:
        self._storage.delete(self.task.lease_uri)

    def abandon(self) -> int:
        """Delete the lease, then every file of the write already complete; return how many files were removed."""
        self.release()
        removed = 0
        for entry in self._storage.list_files(self.task.table_dir):
            if self.task.is_own_file(entry.uri) and self._storage.delete(entry.uri):
                removed += 1
        return removed


def write_batches(task: WriteTask, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Write the batches of one Spark partition as DuckLake data files; yield one row per file written
    (the pickled :class:`WrittenFile`), which the driver registers in the commit.

    A task attempt that fails removes the files it wrote (Spark may retry it, and the retry writes new ones);
    a file finished after the driver abandoned the write is removed too (see :class:`WriteTask`).

    :raises WriteAbandonedError: when the write's lease is gone.
    """
    storage = Storage(task.data_path, task.s3)
    written_paths: list[str] = []
    pending: list[pa.RecordBatch] = []
    pending_bytes = 0

    def flush() -> Iterator[pa.RecordBatch]:
        nonlocal pending, pending_bytes
        if not pending:
            return
        data = pa.Table.from_batches(pending)
        pending, pending_bytes = [], 0
        if data.num_rows == 0:
            return
        for part, row_ids in _split_by_row_ids(data):
            files = write_partitioned(
                storage,
                task.table_dir,
                task.columns,
                conform_to_table(task.columns, part, task.by_kind),
                task.partitioning,
                row_ids=row_ids,
                tag=task.tag,
                sort_keys=task.sort_keys,
            )
            written_paths.extend(f.path for f in files)
            if not storage.exists(task.lease_uri):
                raise WriteAbandonedError(f"The write to {task.table_dir} was abandoned by the driver.")
            yield pa.RecordBatch.from_pydict(
                {META_COLUMN: [pickle.dumps(f) for f in files]}, schema=pa.schema([(META_COLUMN, pa.binary())])
            )

    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            pending_bytes += batch.nbytes
            if pending_bytes >= task.target_file_bytes:
                yield from flush()
        yield from flush()
    except BaseException:
        for path in written_paths:
            storage.delete(path)
        raise


def _split_by_row_ids(data: pa.Table) -> Iterator[tuple[pa.Table, Any]]:
    """An UPDATE's new rows keep the row ids of the rows they replace; rows the same transaction inserted have
    none yet (they are numbered at commit), so they go to a file of their own.

    >>> t = pa.table({"a": [1, 2, 3], ROW_ID_INPUT: pa.array([7, None, 9], pa.int64())})
    >>> [(part.column("a").to_pylist(), None if ids is None else ids.tolist()) for part, ids in _split_by_row_ids(t)]
    [([1, 3], [7, 9]), ([2], None)]
    """
    if ROW_ID_INPUT not in data.column_names:
        yield data, None
        return
    row_ids = data.column(ROW_ID_INPUT).combine_chunks()
    data = data.drop_columns([ROW_ID_INPUT])
    if row_ids.null_count == 0:
        yield data, row_ids.to_numpy()
        return
    known = row_ids.is_valid()
    if row_ids.null_count < len(row_ids):
        yield data.filter(known), row_ids.filter(known).to_numpy()
    yield data.filter(pc.invert(known)), None


def written_files(rows: Iterable[bytes]) -> list[WrittenFile]:
    return [pickle.loads(raw) for raw in rows]


def _store_as(array: pa.ChunkedArray | pa.Array, target: pa.DataType) -> pa.ChunkedArray | pa.Array:
    """Cast a value column to its table column's type as DuckDB would (:mod:`~airflow_provider_lakehouse.ducklake.
    implicit_casts`: rounding where digits are dropped), failing (not wrapping) where a value does not fit.

    Integers reach decimals through the widest decimal of the target's scale: pyarrow would otherwise refuse any
    ``int32`` into ``DECIMAL(10, 2)`` for want of precision, even 0 (DuckDB stores it; an overflow still fails).

    >>> _store_as(pa.array([0, 7], pa.int32()), pa.decimal128(10, 2)).to_pylist()
    [Decimal('0.00'), Decimal('7.00')]

    A boolean is 1 or 0 in a decimal column, as DuckDB casts it (pyarrow has no such cast):

    >>> _store_as(pa.array([True, False, None]), pa.decimal128(10, 2)).to_pylist()
    [Decimal('1.00'), Decimal('0.00'), None]
    """
    if pa.types.is_boolean(array.type) and (pa.types.is_decimal(target) or pa.types.is_floating(target)):
        array = array.cast(pa.int8())
    if pa.types.is_decimal(target) and pa.types.is_integer(array.type):
        array = array.cast(pa.decimal128(38, target.scale))
    return cast_as_duckdb(array, target)


def _collapse_kinds(array: pa.ChunkedArray, column: Column, target: pa.DataType) -> pa.Array:
    """One column from an ``INSERT``'s values planned by kind (see :mod:`.insert_values`): each struct field cast to
    ``column``'s type as DuckDB casts it (to text where the writer takes text: UUIDs, JSON, geometries), each row's
    value taken from the one field that holds it.

    >>> kinds = pa.chunked_array([pa.array([{"k0": 1, "k1": None}, {"k0": None, "k1": "2"}, {"k0": None, "k1": None}])])
    >>> _collapse_kinds(kinds, Column(1, "x", "int64"), pa.int64()).to_pylist()
    [1, 2, None]

    A row whose :data:`~.steps.DEFAULT_FIELD` is true takes the column's default (NULL when it has none):

    >>> kinds = pa.chunked_array([pa.array([{"k0": 1, "default": None}, {"k0": None, "default": True}])])
    >>> _collapse_kinds(kinds, Column(1, "x", "int64", default_value="7"), pa.int64()).to_pylist()
    [1, 7]
    """
    stored = pa.string() if column.type in _STORED_AS_TEXT else target
    structs = array.combine_chunks()
    names = [structs.type.field(i).name for i in range(structs.type.num_fields)]
    kinds = [structs.field(i) for i, name in enumerate(names) if name != DEFAULT_FIELD]
    if column.type == "json":  # JSON of a struct or a number, not its text
        kinds = [_as_json_text(column, kind) for kind in kinds]
    fields = [_stored(kind, column, stored) for kind in kinds]
    if not fields:
        values = pa.nulls(len(structs), stored)
    else:
        values = fields[0] if len(fields) == 1 else pc.coalesce(*fields)
    if DEFAULT_FIELD not in names:
        return values
    literal = insert_default(column)
    filler = replace(column, initial_default=literal) if literal is not None else column
    defaults = _stored(default_array(filler, len(structs)), column, stored)
    return pc.if_else(pc.fill_null(structs.field(DEFAULT_FIELD), False), defaults, values)


def _stored(array: pa.Array | pa.ChunkedArray, column: Column, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``array`` as ``target`` (:func:`_store_as`); a value that does not fit fails naming ``column``."""
    if array.type == target:
        return array
    try:
        return _store_as(array, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"Column {column.name!r}: cannot store {array.type} values as {column.type}: {exc}") from None


#: column types the writer takes as text (a geometry's WKT, as DuckDB casts it) and turns into the storage form
_STORED_AS_TEXT = frozenset({"uuid", "json", "geometry"})


def _as_json_text(column: Column, array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A ``JSON`` column's values as the text DuckDB stores: a struct, list, number or date becomes its JSON
    (DuckDB's ``CAST(v AS JSON)``; the DuckDB text of a struct is no JSON), text stays text."""
    try:
        return json_text_in_duckdb(array)
    except pa.ArrowInvalid as exc:
        raise ValueError(f"Column {column.name!r}: cannot store {array.type} values as JSON: {exc}") from None


def _check_json(column: Column, array: pa.Array | pa.ChunkedArray) -> None:
    """Text stored in a ``JSON`` column must be one JSON value, as DuckDB checks it: a quoted ``'null'`` fails
    there with a Conversion Error. DuckDB's reader also takes trailing commas, NaN and Infinity."""
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        return
    for value in array.to_pylist():
        if value is None:
            continue
        try:
            json.loads(value)  # NaN and Infinity included, as in DuckDB
        except ValueError:
            try:
                json.loads(_without_trailing_commas(value))
            except ValueError:
                shown = value if len(value) <= 60 else value[:57] + "..."
                raise ValueError(
                    f"Conversion Error: Malformed JSON in column {column.name!r}. Input: {json.dumps(shown)}"
                ) from None


def _without_trailing_commas(text: str) -> str:
    """``text`` without the commas that close an array or object (``[1, 2,]``), outside strings."""
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            in_string = ch != '"' or escaped
            escaped = ch == "\\" and not escaped
        elif ch == '"':
            in_string = True
        elif ch in "]}":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
        out.append(ch)
    return "".join(out)


def conform_to_table(columns: Sequence[Column], data: pa.Table, by_kind: frozenset[str] = frozenset()) -> pa.Table:
    """Match ``data``'s columns to the table's by name (any case), fill missing ones with their default and
    cast to the table's types (a failing cast names the column).

    :param by_kind: lower-case names of ``data``'s columns that hold one struct field per kind of value: each field
        is cast on its own, and each row takes its value from its field (see :mod:`.insert_values`).

    :raises ValueError: for a column the table does not have, or a value that does not fit.
    """
    by_lower = {n.lower(): n for n in data.column_names}
    known = {c.name.lower() for c in columns}
    unknown = [n for n in data.column_names if n.lower() not in known]
    if unknown:
        raise ValueError(f"The table has no column(s) {', '.join(unknown)}.")
    arrays = []
    for column in columns:
        source = by_lower.get(column.name.lower())
        if source is None:
            literal = insert_default(column)
            filler = replace(column, initial_default=literal) if literal is not None else column
            arrays.append(default_array(filler, data.num_rows))
            continue
        array = data.column(source)
        target = arrow_type(column)
        if source.lower() in by_kind:
            array = _collapse_kinds(array, column, target)
        if column.type in NANOSECOND_TYPES and array.null_count < len(array):
            # Spark holds times in microseconds: the values reached us without their nanoseconds
            raise ValueError(
                f"Column {column.name!r} is {column.type.upper()}: Spark keeps times in microseconds, so writing "
                "it would drop the nanoseconds of its values. Write this table with engine='duckdb'."
            )
        if column.type in _STORED_AS_TEXT:
            if column.type == "json":
                array = _as_json_text(column, array)
                _check_json(column, array)
            arrays.append(array)  # the writer turns the text into the storage form
            continue
        arrays.append(_stored(array, column, target))
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])
