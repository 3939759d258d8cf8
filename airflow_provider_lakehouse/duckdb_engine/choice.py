"""Which engine runs a lake script: ``spark``, ``duckdb``, or ``auto`` (chosen per script from the bytes it will
scan, read from the catalog after file pruning, against a threshold sized for the worker's memory)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.exceptions import (
    CatalogNotFoundError,
    LakehouseError,
    NoSuchTableError,
    UnsupportedStatementError,
)
from airflow_provider_lakehouse.spark.files import expand
from airflow_provider_lakehouse.spark.plan import MAX_VIEW_DEPTH, Plan, TableRef, view_query_step

#: the share of the worker's memory ``auto`` lets DuckDB scan (DuckDB streams and spills; joins and sorts of the
#: scanned data are what need memory)
MEMORY_SHARE = 0.25


@dataclass(frozen=True)
class EngineChoice:
    """The engine that runs a script and why (shown in the task log and the response's ``engine_choice``).

    :param requested: what the task or the lake connection asked for (``spark``, ``duckdb`` or ``auto``).
    :param scan_bytes: for ``auto``: the bytes the script will scan (Parquet file sizes after pruning).
    """

    engine: str
    requested: str
    reason: str
    scan_bytes: int | None = None
    threshold_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def default_threshold_bytes() -> int:
    """A quarter of this machine's physical memory."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 8 << 30
    return int(memory * MEMORY_SHARE)


def choose_engine(requested: str, plan: Plan, spec: DuckLakeSpec, threshold_bytes: int | None = None) -> EngineChoice:
    """The engine for ``plan``: ``requested`` itself unless it is ``auto``; then DuckDB when the script scans at
    most ``threshold_bytes`` (default :func:`default_threshold_bytes`), else Spark.

    :raises UnsupportedStatementError: DuckDB asked for a script in Spark's dialect.
    """
    if plan.dialect != "duckdb":
        if requested == "duckdb":
            raise UnsupportedStatementError(
                f"The duckdb engine runs DuckDB SQL; this script is in the {plan.dialect!r} dialect."
            )
        return EngineChoice("spark", requested, f"the script is in the {plan.dialect!r} dialect")
    if requested != "auto":
        return EngineChoice(requested, requested, "requested")
    threshold = threshold_bytes if threshold_bytes is not None else default_threshold_bytes()
    scanned = scan_bytes(plan, spec)
    if scanned <= threshold:
        engine, verdict = "duckdb", "at most"
    else:
        engine, verdict = "spark", "more than"
    reason = f"scans {_size(scanned)}, {verdict} the {_size(threshold)} threshold"
    return EngineChoice(engine, "auto", reason, scanned, threshold)


def scan_bytes(plan: Plan, spec: DuckLakeSpec) -> int:
    """The bytes ``plan`` reads: its lake tables' data and delete files after pruning by the statements' WHERE
    conditions, and the files it reads by path. A table the script creates itself counts nothing."""
    try:
        lake = DuckLake.from_spec(spec)
    except CatalogNotFoundError:
        lake = None
    total = 0
    seen_tables: set[tuple[Any, ...]] = set()
    seen_files: set[str] = set()
    for step in plan.steps:
        for ref in step.tables:
            key = (ref.schema.lower(), ref.table.lower(), ref.predicates, ref.version)
            if lake is None or key in seen_tables:
                continue
            seen_tables.add(key)
            total += _table_bytes(lake, spec.name, ref, plan.parameters)
        for files in step.files:
            for path in files.paths:
                if path not in seen_files:
                    seen_files.add(path)
                    total += _path_bytes(path, spec)
    return total


def _table_bytes(lake: DuckLake, lake_name: str, ref: TableRef, parameters: dict[str, Any], depth: int = 0) -> int:
    """The bytes a read of ``ref`` scans; a view's are those of the tables its query reads."""
    version = ref.version if isinstance(ref.version, int) else None
    filters = [
        (name, op, parameters.get(value["param"]) if isinstance(value, dict) and "param" in value else value)
        for name, op, value in ref.predicates
    ]
    try:
        scan = lake.scan(ref.name, version=version, filters=filters)
    except NoSuchTableError:
        return _view_bytes(lake, lake_name, ref, parameters, depth)
    except (LakehouseError, KeyError, ValueError):  # a filter stats cannot use
        try:
            scan = lake.scan(ref.name, version=version)
        except (LakehouseError, KeyError, ValueError):
            return 0
    return sum(f.file_size_bytes + (f.delete_file.file_size_bytes if f.delete_file else 0) for f in scan.files)


def _view_bytes(lake: DuckLake, lake_name: str, ref: TableRef, parameters: dict[str, Any], depth: int) -> int:
    """What a view's query scans; nothing for a name that is no view either (a table the script creates)."""
    version = ref.version if isinstance(ref.version, int) else None
    view = lake.view(ref.name, version=version) if depth < MAX_VIEW_DEPTH else None
    if view is None:
        return 0
    try:
        step = view_query_step(view, lake_name)
    except LakehouseError:
        return 0
    inner = [replace(table, version=version) if table.version is None else table for table in step.tables]
    return sum(_table_bytes(lake, lake_name, table, parameters, depth + 1) for table in inner)


def _path_bytes(path: str, spec: DuckLakeSpec) -> int:
    """A read file's size; a glob counts every file it matches."""
    s3 = spec.s3 if path.startswith(("s3://", "s3a://")) else None
    storage = Storage(path.rsplit("/", 1)[0] or "/", s3)
    total = 0
    try:
        for one in expand([path], s3):
            info = storage.fs.get_file_info(storage.fs_path(one))
            if info.type == pafs.FileType.File:
                total += info.size or 0
    except (LakehouseError, OSError):
        return 0
    return total


def _size(count: int) -> str:
    """
    >>> _size(512), _size(3 * 1024**2), _size(5 * 1024**3)
    ('512 B', '3.0 MiB', '5.0 GiB')
    """
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{count} B"
