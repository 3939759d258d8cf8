"""A table's row changes between two snapshots, exactly as DuckDB's ``ducklake_table_changes`` lists them.

DuckDB defines the feed physically, not as a difference of table states, and we follow its definition step by
step (DuckDB 1.5.5, ducklake extension d8a1881e), because the Lakehouse UI and ``ducklake_table_changes`` in lake
SQL promise DuckDB's answer:

* **insertions** are the rows of every data file written in the range (rows of files holding several snapshots:
  those whose recorded snapshot is in the range) and every inlined row inserted in it, whether or not they were
  deleted since;
* **deletions** come from each delete file of the table (its positions less those of the last delete file
  before the range, unless it records a snapshot per position), each file that ended in the range (all its rows
  less the last delete file before its end) and inlined deletions, labelled with the delete file's snapshot,
  the file's end, or the snapshot recorded for the row;
* an insertion and a deletion with the same snapshot and row id are an update's post- and pre-image, once per
  match (an outer join).

So a row inserted and deleted within one snapshot, or updated twice by one script, is listed step by step, and
a row can be listed more than once, exactly as DuckDB lists it. Rows are read with the table's columns at the
end snapshot, matched by column id.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.model import DataFileInfo
from airflow_provider_lakehouse.ducklake.reader import (
    ROW_SNAPSHOT,
    ROWID,
    read_data_file,
    read_delete_file,
    read_inlined_changes,
)
from airflow_provider_lakehouse.ducklake.std_hash_order import iteration_order

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.ducklake.model import Column, TableInfo
    from airflow_provider_lakehouse.ducklake.storage import Storage
    from airflow_provider_lakehouse.ducklake.store import CatalogConnection

#: what each insertion or deletion carries besides the columns: its row id and the snapshot of the change
_VIRTUAL = (ROWID, ROW_SNAPSHOT)
#: read as a file's begin snapshot, to tell files that record a snapshot per row from those that do not
_NOT_RECORDED = -1


def table_changes(lake: DuckLake, name: str, start: int, end: int) -> pa.Table:
    """Rows inserted, deleted and updated in snapshots ``start``..``end`` (inclusive), like
    ``ducklake_table_changes``: columns ``snapshot_id``, ``rowid``, ``change_type`` (``insert``, ``delete``,
    ``update_preimage``, ``update_postimage``), then the table's columns at ``end``.

    :raises LookupError: when the table does not exist at ``end``, or either snapshot does not exist.
    :raises ValueError: for a negative snapshot id.
    """
    if start < 0 or end < 0:
        raise ValueError(f"Snapshot ids are not negative: start {start}, end {end}.")
    table = lake.table(name, version=end)
    columns = list(table.columns)
    with lake.store.connection() as conn:
        lake.snapshot(start, conn=conn)  # raises, as DuckDB does, when the start snapshot does not exist
        history = _FileHistory.load(conn, table, lake.table_dir(table), start, end)
        files = _RawFiles(lake, conn, columns, end)
        schemas = lake.inlined_schemas(conn, table)
        inserted = [
            read_inlined_changes(
                conn, table, columns, "begin_snapshot", start, end, virtual=_VIRTUAL, schema_at_version=schemas
            )
        ]
        for file in history.files_inserted():
            rows = files.rows(file)
            born = np.where(files.recorded(rows), rows.column(ROW_SNAPSHOT).to_numpy(), file.begin_snapshot)
            rows = _with_snapshots(rows, born)
            if file.partial_max is not None:  # rows of many snapshots: only those in the range
                rows = rows.filter(pa.array((born >= start) & (born <= end)))
            inserted.append(rows)
        deleted = [
            read_inlined_changes(
                conn, table, columns, "end_snapshot", start, end, virtual=_VIRTUAL, schema_at_version=schemas
            )
        ]
        for entry in history.deletion_entries():
            rows = files.rows(entry.file)
            # DuckDB labels a deleted row of a file that records a snapshot per row with that (its insertion)
            # snapshot, unless the deletion itself records one; we do the same so both feeds agree
            recorded = files.recorded(rows)
            labels = np.where(recorded, rows.column(ROW_SNAPSHOT).to_numpy(), entry.snapshot)
            positions, snapshots = entry.deleted_rows(lake.storage, labels, rows.column(ROWID).to_numpy())
            deleted.append(_with_snapshots(rows, snapshots, positions))
    return _pair_up(pa.concat_tables(inserted), pa.concat_tables(deleted), columns)


@dataclass(frozen=True)
class _DeleteFile:
    delete_file_id: int
    data_file_id: int
    path: str
    begin_snapshot: int
    partial_max: int | None

    def read(
        self, storage: Storage, start: int | None = None, end: int | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Its positions and, when it records them (``_ducklake_internal_snapshot_id``), each one's snapshot;
        with ``start``/``end``, only the positions whose recorded snapshot is in that range."""
        positions, snapshots = read_delete_file(storage, self.path)
        if snapshots is None:
            return positions, None
        keep = np.ones(len(positions), dtype=bool)
        if start is not None:
            keep &= snapshots >= start
        if end is not None:
            keep &= snapshots <= end
        return positions[keep], snapshots[keep]


@dataclass(frozen=True)
class _DeletionEntry:
    """One unit of DuckDB's deletion scan: a data file with the deletes that count in the range.

    ``current`` is a delete file in the range, or ``None`` when the whole file ended (``snapshot`` is then its
    end snapshot) or only inlined deletions apply; ``previous`` holds deletes that happened before and are left
    out (unless ``current`` records a snapshot per position, then it is already filtered to the range).
    """

    file: DataFileInfo
    current: _DeleteFile | None
    previous: _DeleteFile | None
    snapshot: int
    whole_file: bool
    inlined: dict[int, int]
    start: int
    end: int

    def deleted_rows(self, storage: Storage, labels: np.ndarray, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions deleted in the range and the snapshot each is listed with: its ``labels`` entry, unless the
        deletion records its own (a delete file with snapshots, an inlined deletion, the whole file ending).

        DuckDB looks recorded snapshots up by row id. A flushed file of inlined rows can hold several versions of
        one row id; then one recorded snapshot labels them all: the last one written while DuckDB walks its map
        of positions in libstdc++'s hash order (:mod:`.std_hash_order`; we checked its answers on such files, see
        tests/integration/test_change_feed.py).
        """
        num_rows = len(labels)
        scan = np.zeros(num_rows, dtype=bool)
        recorded: dict[int, int] = {}  # position -> snapshot, in the order DuckDB records them
        keeps_previous = True
        if self.current is not None:
            positions, snapshots = self.current.read(storage, self.start, self.end)
            _check_positions(positions, num_rows, self.current.path)
            scan[positions] = True
            if snapshots is not None:
                keeps_previous = False  # it lists only this range's deletes already
                recorded.update(zip(positions.tolist(), snapshots.tolist(), strict=True))
        elif self.whole_file and not self.inlined:
            scan[:] = True
            recorded.update((position, self.snapshot) for position in range(num_rows))
        # DuckDB keeps the inlined deletions in a hash map too, and adds them to the positions in its order
        for position in iteration_order(self.inlined):
            if position < num_rows:
                scan[position] = True
                recorded[position] = self.inlined[position]
        if self.previous is not None and keeps_previous:
            positions, _ = self.previous.read(storage)
            _check_positions(positions, num_rows, self.previous.path)
            scan[positions] = False
        by_rowid = _snapshots_by_rowid(recorded, rowids)
        chosen = np.flatnonzero(scan)
        snapshots = np.array([by_rowid.get(int(rowids[p]), int(labels[p])) for p in chosen], dtype=np.int64)
        return chosen, snapshots


def _snapshots_by_rowid(recorded: dict[int, int], rowids: np.ndarray) -> dict[int, int]:
    """DuckDB's row id -> snapshot map of one deletion scan, from its position -> snapshot map (in insertion order).

    Only when a row id sits at several recorded positions does the order DuckDB walks the map in matter; the hash
    order is replayed then alone (the map can hold every position of a file that ended).
    """
    by_rowid = {int(rowids[position]): deleted_at for position, deleted_at in recorded.items()}
    if len(by_rowid) == len(recorded):
        return by_rowid
    return {int(rowids[position]): recorded[position] for position in iteration_order(recorded)}


@dataclass
class _FileHistory:
    """The catalog rows the feed needs: data files changed in the range, their delete files, inlined deletions."""

    start: int
    end: int
    data_files: dict[int, tuple[DataFileInfo, int | None]]  # id -> (file, end snapshot)
    delete_files: dict[int, list[_DeleteFile]]  # data file id -> its delete files up to ``end``, oldest first
    inlined_deletes: dict[int, dict[int, int]]  # data file id -> {position: snapshot} in the range

    @classmethod
    def load(cls, conn: CatalogConnection, table: TableInfo, table_dir: str, start: int, end: int) -> _FileHistory:
        delete_files: dict[int, list[_DeleteFile]] = defaultdict(list)
        # oldest first; of two with the same snapshot the lower id counts as the later one, as DuckDB picks it
        for delete_id, file_id, path, relative, begin, partial_max in conn.query(
            "SELECT delete_file_id, data_file_id, path, path_is_relative, begin_snapshot, partial_max "
            "FROM {M}ducklake_delete_file WHERE table_id = ? AND begin_snapshot <= ? "
            "ORDER BY begin_snapshot, delete_file_id DESC",
            (table.table_id, end),
        ):
            delete_files[int(file_id)].append(
                _DeleteFile(
                    int(delete_id),
                    int(file_id),
                    metadata.resolve_path(table_dir, path, relative),
                    int(begin),
                    _int(partial_max),
                )
            )
        inlined_deletes: dict[int, dict[int, int]] = defaultdict(dict)
        inlined_table = f"ducklake_inlined_delete_{table.table_id}"
        if conn.table_exists(inlined_table):
            for file_id, position, begin in conn.query(
                f"SELECT file_id, row_id, begin_snapshot FROM {{M}}{inlined_table} "
                "WHERE begin_snapshot >= ? AND begin_snapshot <= ?",
                (start, end),
            ):
                inlined_deletes[int(file_id)][int(position)] = int(begin)
        data_files = {}
        for row in conn.query(
            f"SELECT {metadata.DATA_FILE_COLUMNS}, end_snapshot FROM {{M}}ducklake_data_file "
            "WHERE table_id = ? AND begin_snapshot <= ? ORDER BY data_file_id",
            (table.table_id, end),
        ):
            file = metadata.data_file_from_row(row, table, table_dir)
            data_files[file.data_file_id] = (file, _int(row[-1]))
        return cls(start, end, data_files, dict(delete_files), dict(inlined_deletes))

    def files_inserted(self) -> list[DataFileInfo]:
        """Files written in the range, or holding rows of several snapshots some of which are in it."""
        return [
            f
            for f, _ in self.data_files.values()
            if f.begin_snapshot >= self.start or (f.partial_max is not None and f.partial_max >= self.start)
        ]

    def deletion_entries(self) -> list[_DeletionEntry]:
        """DuckDB's three kinds: each delete file up to ``end`` (against the last one before ``start``), each file
        that ended in the range (against the last delete before its end), and files with only inlined deletions."""
        entries = []
        for file_id, deletes in self.delete_files.items():
            if file_id not in self.data_files:
                continue
            file, _ = self.data_files[file_id]
            inlined = self.inlined_deletes.get(file_id, {})
            previous = self._last_delete_before(file_id, self.start)
            for delete in deletes:
                # every one, even those older than the range: a delete file can record later snapshots than its
                # own (seen in DuckDB's, with no partial_max to say so)
                entries.append(
                    _DeletionEntry(file, delete, previous, delete.begin_snapshot, False, inlined, self.start, self.end)
                )
        for file_id, (file, ended) in self.data_files.items():
            if ended is not None and self.start <= ended <= self.end:
                entries.append(
                    _DeletionEntry(
                        file,
                        None,
                        self._last_delete_before(file_id, ended),
                        ended,
                        True,
                        self.inlined_deletes.get(file_id, {}),
                        self.start,
                        self.end,
                    )
                )
        for file_id, inlined in self.inlined_deletes.items():
            if file_id not in self.data_files or file_id in self.delete_files:
                continue
            file, ended = self.data_files[file_id]
            if ended is None or ended < self.start or ended > self.end:
                entries.append(
                    _DeletionEntry(file, None, None, min(inlined.values()), False, inlined, self.start, self.end)
                )
        return entries

    def _last_delete_before(self, file_id: int, snapshot: int) -> _DeleteFile | None:
        earlier = [d for d in self.delete_files.get(file_id, ()) if d.begin_snapshot < snapshot]
        return earlier[-1] if earlier else None


class _RawFiles:
    """Data files read whole (no deletions applied) with row ids and row snapshots, each read once per feed."""

    def __init__(self, lake: DuckLake, conn: CatalogConnection, columns: list[Column], end: int) -> None:
        self._lake = lake
        self._conn = conn
        self._columns = columns
        self._end = end
        self._read: dict[int, pa.Table] = {}
        self._name_maps: dict[int, Any] = {}

    def rows(self, file: DataFileInfo) -> pa.Table:
        if file.data_file_id not in self._read:
            name_map = None
            if file.mapping_id is not None:
                if file.mapping_id not in self._name_maps:
                    self._name_maps[file.mapping_id] = metadata.name_mapping(self._conn, file.mapping_id)
                name_map = self._name_maps[file.mapping_id]
            whole = dataclasses.replace(
                file, delete_file=None, inlined_deletes=(), partial_max=None, begin_snapshot=_NOT_RECORDED
            )
            self._read[file.data_file_id] = read_data_file(
                self._lake.storage,
                whole,
                self._columns,
                self._end,
                virtual=_VIRTUAL,
                all_columns=self._columns,
                name_map=name_map,
            )
        return self._read[file.data_file_id]

    @staticmethod
    def recorded(rows: pa.Table) -> bool:
        """Whether the file records a snapshot per row (``_ducklake_internal_snapshot_id``)."""
        return rows.num_rows > 0 and rows.column(ROW_SNAPSHOT)[0].as_py() != _NOT_RECORDED


def _with_snapshots(rows: pa.Table, snapshots: np.ndarray, positions: np.ndarray | None = None) -> pa.Table:
    """``rows`` (those at ``positions``, if given) with ``snapshots`` as their change snapshot."""
    if positions is not None:
        rows = rows.take(pa.array(positions, pa.int64()))
    return rows.set_column(rows.schema.get_field_index(ROW_SNAPSHOT), ROW_SNAPSHOT, pa.array(snapshots, pa.int64()))


def _check_positions(positions: np.ndarray, num_rows: int, path: str) -> None:
    if positions.size and (positions.max() >= num_rows or positions.min() < 0):
        raise ValueError(
            f"Invalid delete data: a position in {path} is out of range for its data file ({num_rows} rows)"
        )


def _pair_up(inserted: pa.Table, deleted: pa.Table, columns: list[Column]) -> pa.Table:
    """The ``ducklake_table_changes`` macro: an insertion and a deletion with the same snapshot and row id are an
    update's post- and pre-image; each side is listed once per match on the other (an outer join)."""

    def keys(rows: pa.Table) -> list[tuple[int, int]]:
        return list(zip(rows.column(ROW_SNAPSHOT).to_pylist(), rows.column(ROWID).to_pylist(), strict=True))

    inserted_keys, deleted_keys = keys(inserted), keys(deleted)
    inserted_count, deleted_count = Counter(inserted_keys), Counter(deleted_keys)
    pieces = []
    for rows, own_keys, other, matched, unmatched in (
        (inserted, inserted_keys, deleted_count, "update_postimage", "insert"),
        (deleted, deleted_keys, inserted_count, "update_preimage", "delete"),
    ):
        take, kinds = [], []
        for index, key in enumerate(own_keys):
            repeat = other.get(key, 0)
            take.extend([index] * max(repeat, 1))
            kinds.extend([matched] * repeat or [unmatched])
        chosen = rows.take(pa.array(take, pa.int64())) if take else rows.slice(0, 0)
        pieces.append(
            pa.table(
                {
                    "snapshot_id": chosen.column(ROW_SNAPSHOT),
                    "rowid": chosen.column(ROWID),
                    "change_type": pa.array(kinds, pa.string()),
                    **{c.name: chosen.column(c.name) for c in columns},
                }
            )
        )
    return pa.concat_tables(pieces)


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None
