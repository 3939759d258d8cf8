"""Generate TPC-DS data into a landing area (one Parquet file per table) with DuckDB's ``dsdgen``, offline.

DuckDB and its ``tpcds`` extension come from their wheels (``duckdb``, ``duckdb-extension-tpcds``); the
extension is installed from the wheel into a local extension directory, never downloaded.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from airflow_provider_lakehouse.tpcds.tables import BENCHMARK_QUERIES, SOURCE_TABLES

if TYPE_CHECKING:
    import duckdb

    from airflow_provider_lakehouse.connections.lake import S3Spec
    from airflow_provider_lakehouse.ducklake.storage import Storage


#: DuckDB's memory while generating: the rest of a 24 GB machine stays free for the services beside it
GENERATOR_MEMORY = "6GB"
# DuckDB's default row group size: a large table gets many row groups, which readers split among cores.
ROW_GROUP_ROWS = 122_880


@dataclass(frozen=True)
class Generated:
    """What :func:`generate` wrote: rows per table, bytes, seconds."""

    scale_factor: float
    landing: str
    rows: dict[str, int]
    bytes: int
    seconds: float


def tpcds_connection(extension_dir: str, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB (in memory unless ``database`` names a file) with ``tpcds`` loaded from its wheel (installed once
    into ``extension_dir``)."""
    from airflow_provider_lakehouse.duckdb_engine.extensions import offline_connection

    Path(extension_dir).mkdir(parents=True, exist_ok=True)
    con: duckdb.DuckDBPyConnection = offline_connection(extension_dir, ["tpcds"], database=database, load=True)
    return con


def query_text(con: duckdb.DuckDBPyConnection, number: int) -> str:
    """TPC-DS query ``number`` as the generator ships it."""
    row = con.execute("SELECT query FROM tpcds_queries() WHERE query_nr = ?", [number]).fetchone()
    if row is None:
        raise ValueError(f"the generator has no TPC-DS query {number}")
    return str(row[0])


def benchmark_queries(extension_dir: str) -> dict[int, str]:
    """The benchmark queries' text, generated once per DuckDB version and then read from a cache file in
    ``extension_dir``: DAG parsing (which every task process repeats) must not start DuckDB each time.

    The text still comes from the generator, never from this repository.
    """
    import json

    import duckdb

    cache = Path(extension_dir) / f"tpcds-queries-duckdb-{duckdb.__version__}.json"
    try:
        cached = json.loads(cache.read_text())
        if sorted(int(k) for k in cached) == sorted(BENCHMARK_QUERIES):
            return {int(k): str(v) for k, v in cached.items()}
    except (OSError, ValueError):
        pass
    con = tpcds_connection(extension_dir)
    try:
        queries = {n: query_text(con, n) for n in BENCHMARK_QUERIES}
    finally:
        con.close()
    partial = cache.with_suffix(f".{os.getpid()}.tmp")  # written whole, then renamed: parallel parsers race safely
    partial.write_text(json.dumps({str(k): v for k, v in queries.items()}))
    partial.replace(cache)
    return queries


def generate(scale_factor: float, landing: str, *, extension_dir: str, s3: S3Spec | None = None) -> Generated:
    """Write ``<landing>/<table>.parquet`` for the 24 source tables, ``<landing>/queries/qNN.sql`` and
    ``<landing>/generator.json`` (the DuckDB release that generated them: its reference answers are theirs, see
    :mod:`.answers`).

    :param scale_factor: TPC-DS scale factor (1 = about 1 GB of raw data).
    :param landing: a local directory or ``s3://bucket/prefix``.
    :param extension_dir: where DuckDB extensions are installed from their wheels.
    :param s3: credentials and endpoint when ``landing`` is on S3.
    """
    from airflow_provider_lakehouse.ducklake.storage import Storage, join_path

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tpcds-") as scratch:
        # A database file, not memory: at SF 10 the generated tables alone outgrow a 24 GB machine's memory.
        con = tpcds_connection(extension_dir, str(Path(scratch) / "tpcds.duckdb"))
        con.execute(f"SET memory_limit = '{GENERATOR_MEMORY}'")
        con.execute(f"CALL dsdgen(sf={float(scale_factor)!r})")
        storage = Storage(landing if "://" in landing else str(Path(landing).resolve()), s3)
        rows: dict[str, int] = {}
        size = 0
        for table in SOURCE_TABLES:
            rows[table], file_size = _write_table(con, table, storage, join_path(storage.data_path, f"{table}.parquet"))
            size += file_size
        _write_queries(con, storage)
        _write_generator(storage, scale_factor)
        con.close()
    benchmark_queries(extension_dir)  # the DAG reads the query text from this cache when it is parsed
    return Generated(scale_factor, storage.data_path, rows, size, time.monotonic() - started)


def _write_table(con: duckdb.DuckDBPyConnection, table: str, storage: Storage, uri: str) -> tuple[int, int]:
    """Stream ``table`` into one zstd Parquet file of ``ROW_GROUP_ROWS``-row groups; (rows, file size). One
    table of SF 10 is several GB in Arrow: it is never held whole."""
    reader = con.execute(f"SELECT * FROM {table}").fetch_record_batch(ROW_GROUP_ROWS)
    size, _footer, meta = storage.write_parquet(reader, uri, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    return meta.num_rows, size


def _write_queries(con: duckdb.DuckDBPyConnection, storage: Storage) -> None:
    from airflow_provider_lakehouse.ducklake.storage import join_path

    for number in BENCHMARK_QUERIES:
        path = storage.fs_path(join_path(storage.data_path, f"queries/q{number:02d}.sql"))
        if not storage.is_s3:
            storage.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with storage.fs.open_output_stream(path) as out:
            out.write(query_text(con, number).encode())


def _write_generator(storage: Storage, scale_factor: float) -> None:
    import json

    import duckdb

    from airflow_provider_lakehouse.ducklake.storage import join_path
    from airflow_provider_lakehouse.tpcds.answers import GENERATOR_FILE

    record = {"duckdb": duckdb.__version__, "scale_factor": scale_factor}
    with storage.fs.open_output_stream(storage.fs_path(join_path(storage.data_path, GENERATOR_FILE))) as out:
        out.write(json.dumps(record).encode())
