"""What a transaction has staged for one table's rows, and how its own reads see it.

A transaction writes Parquet while it stages (never inside a commit attempt, so a retried commit cannot leave a
file behind) and keeps, per table, the *net* effect of every append, delete and update so far, as DuckDB's
transaction-local storage does:

- files appended in this transaction, each with the positions deleted from it since (one cumulative delete
  file per appended file: DuckDB commits a data file and its delete file in the same snapshot);
- for each data file of the base snapshot, the positions deleted in this transaction, written as **one**
  cumulative delete file that replaces the file's current one at commit (two delete files for one data file
  in one snapshot is what corrupted tables before);
- base files every row of which is deleted (dropped whole, as DuckDB does);
- row ids of rows inlined in the catalog that were deleted.

Appended files are named by negative temporary ids until the commit gives them catalog ids, so a later
statement of the same transaction can read them and delete from them like any other file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from airflow_provider_lakehouse.ducklake.model import (
    DataFileInfo,
    DeleteFileInfo,
    PartitionField,
    SortKey,
    TableInfo,
    WrittenDeleteFile,
    WrittenFile,
)
from airflow_provider_lakehouse.ducklake.partitioning import Partitioning, UnsupportedPartitioningError
from airflow_provider_lakehouse.ducklake.types import Column

log = logging.getLogger(__name__)


@dataclass
class StagedFile:
    """A data file written by this transaction, not yet in the catalog.

    :param temp_id: negative; names the file in scans (``__ducklake_file_id``) and in deletes until the commit.
    :param deleted: positions deleted from it later in the same transaction.
    :param delete_file: the cumulative delete file for ``deleted`` (None when nothing is deleted).
    """

    temp_id: int
    file: WrittenFile
    deleted: frozenset[int] = frozenset()
    delete_file: WrittenDeleteFile | None = None


@dataclass
class BaseFileDeletes:
    """Rows of one base-snapshot data file deleted by this transaction.

    :param before: positions already deleted at the base snapshot (delete file and inlined deletions).
    :param new: positions this transaction deleted.
    :param delete_file: one file holding ``before | new`` minus the inlined deletions; it replaces the data
        file's current delete file at commit. None when the whole file is dropped.
    """

    before: frozenset[int]
    new: frozenset[int] = frozenset()
    delete_file: WrittenDeleteFile | None = None


@dataclass
class TableChanges:
    """The net row changes a transaction staged for one table."""

    appended: list[StagedFile] = field(default_factory=list)
    base_deletes: dict[int, BaseFileDeletes] = field(default_factory=dict)
    dropped_files: set[int] = field(default_factory=set)
    inlined_deleted: set[int] = field(default_factory=set)

    @property
    def inserts(self) -> bool:
        return bool(self.appended)

    @property
    def deletes_files(self) -> bool:
        """True when a base data file gets a new delete file or is dropped (what DuckDB's conflict rules check)."""
        return bool(self.dropped_files) or any(d.delete_file is not None for d in self.base_deletes.values())

    def deleted_base_files(self) -> set[int]:
        return set(self.dropped_files) | {fid for fid, d in self.base_deletes.items() if d.new}

    def staged(self, temp_id: int) -> StagedFile | None:
        return next((s for s in self.appended if s.temp_id == temp_id), None)

    def referenced_paths(self) -> set[str]:
        """Files the commit will register (anything else this transaction wrote for the table is garbage)."""
        paths = set()
        for staged in self.appended:
            paths.add(staged.file.path)
            if staged.delete_file is not None:
                paths.add(staged.delete_file.path)
        for fid, deletes in self.base_deletes.items():
            if deletes.delete_file is not None and fid not in self.dropped_files:
                paths.add(deletes.delete_file.path)
        return paths

    def visible_files(
        self, base_files: dict[int, DataFileInfo], base_snapshot: int, table_id: int
    ) -> list[DataFileInfo]:
        """The table's data files as this transaction sees them: base files (minus dropped ones, with this
        transaction's delete files in place of their own) and the appended files under their temporary ids."""
        files = []
        for fid, info in base_files.items():
            if fid in self.dropped_files:
                continue
            deletes = self.base_deletes.get(fid)
            if deletes is not None and deletes.delete_file is not None:
                info = replace(info, delete_file=_delete_info(deletes.delete_file, fid, base_snapshot))
            files.append(info)
        for staged in self.appended:
            written = staged.file
            files.append(
                DataFileInfo(
                    data_file_id=staged.temp_id,
                    table_id=table_id,
                    path=written.path,
                    record_count=written.record_count,
                    file_size_bytes=written.file_size_bytes,
                    footer_size=written.footer_size,
                    row_id_start=None,  # row ids are given at commit; the reader yields NULL rowids until then
                    begin_snapshot=base_snapshot,
                    delete_file=(
                        _delete_info(staged.delete_file, staged.temp_id, base_snapshot)
                        if staged.delete_file is not None
                        else None
                    ),
                )
            )
        return files


def _delete_info(written: WrittenDeleteFile, data_file_id: int, base_snapshot: int) -> DeleteFileInfo:
    return DeleteFileInfo(
        delete_file_id=-1,
        data_file_id=data_file_id,
        path=written.path,
        format="parquet",
        delete_count=written.delete_count,
        file_size_bytes=written.file_size_bytes,
        footer_size=written.footer_size,
        begin_snapshot=base_snapshot,
    )


@dataclass
class TableState:
    """The transaction's view of one table: as of the base snapshot (or created here), plus what it staged.

    :param table_id: None until the commit allocates it (a table created in this transaction).
    :param files: the table's visible data files at the base snapshot, by id; None until something needs them
        (an append does not: committing it must not cost a read of every file row of a large table).
    :param max_column_id: the highest column id ever used by the table (None until an ALTER needs it).
    :param changes: staged row changes (None until the first append or delete).
    :param pending: True for a table created in this transaction.
    :param new_partition_fields: the partition spec set in this transaction (``()``: reset), None if unchanged.
    :param partition_specs_set: how many times this transaction set the partition spec (each ``SET``/``RESET``
        takes a catalog id in DuckDB, and files written under a replaced one keep its id).
    :param new_sort_keys: the sort order set in this transaction (``()``: reset), None if unchanged.
    :param retyped_columns: columns whose type this transaction changed (files it staged before hold the old one).
    :param nested_defaults_set: list, struct and map columns whose default this transaction set (see
        :meth:`~.transaction.Transaction.set_nested_column_default`).
    """

    schema_name: str
    name: str
    columns: tuple[Column, ...]
    table_dir: str
    table_id: int | None = None
    schema_id: int | None = None
    info: TableInfo | None = None
    files: dict[int, DataFileInfo] | None = None
    max_column_id: int | None = None
    pending: bool = False
    dropped: bool = False
    changes: TableChanges | None = None
    new_partition_fields: tuple[PartitionField, ...] | None = None
    partition_specs_set: int = 0
    new_sort_keys: tuple[SortKey, ...] | None = None
    retyped_columns: set[int] = field(default_factory=set)
    nested_defaults_set: set[int] = field(default_factory=set)

    @property
    def qualified_name(self) -> str:
        return f"{self.schema_name}.{self.name}"

    @property
    def sort_keys(self) -> tuple[SortKey, ...]:
        """The table's ``SET SORTED BY`` keys (new files are written in that order): those set in this
        transaction, else the table's."""
        if self.new_sort_keys is not None:
            return self.new_sort_keys
        return self.info.sort_keys if self.info is not None else ()

    def partition_fields(self) -> tuple[PartitionField, ...]:
        """The keys new rows are partitioned by: the spec set in this transaction, else the table's (``()``:
        unpartitioned)."""
        if self.new_partition_fields is not None:
            return self.new_partition_fields
        return self.info.partition_fields if self.info is not None else ()

    def partitioning(self) -> Partitioning | None:
        """How new rows are split into files: the spec set in this transaction, else the table's.

        A key whose DuckDB text cannot be reproduced exactly makes writes unpartitioned (still read correctly by
        every reader, only not pruned), rather than failing them.
        """
        if self.new_partition_fields is not None:
            partition_id, pending = None, self.partition_specs_set - 1
        else:
            partition_id, pending = (self.info.partition_id if self.info is not None else None), None
        try:
            return Partitioning.of(partition_id, self.partition_fields(), self.columns, pending)
        except UnsupportedPartitioningError as exc:
            log.warning("%s: writing unpartitioned files: %s", self.qualified_name, exc)
            return None
