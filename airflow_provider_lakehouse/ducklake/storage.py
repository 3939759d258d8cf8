"""Data files on a local/shared filesystem or S3, through ``pyarrow.fs``.

Paths handed around are *URIs as DuckDB stores them*: ``s3://bucket/key`` or an absolute local path.
"""

from __future__ import annotations

import os
import struct
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from airflow_provider_lakehouse.connections.lake import S3Spec


def join_path(base: str, relative: str) -> str:
    """Join a stored relative path onto its base (stored paths always use ``/``).

    >>> join_path("s3://b/lake/", "main/t/f.parquet")
    's3://b/lake/main/t/f.parquet'
    """
    return base + relative if base.endswith("/") else f"{base}/{relative}"


def relative_to(base: str, path: str) -> str | None:
    """``path`` relative to ``base`` if it lies under it, else None."""
    if not base.endswith("/"):
        base += "/"
    return path[len(base) :] if path.startswith(base) else None


def uuid7() -> str:
    """A time-ordered UUIDv7 string, as DuckDB names its files."""
    ms = int(time.time() * 1000)
    rand = bytearray(os.urandom(10))
    value = (ms << 80) | (0x7 << 76) | (int.from_bytes(rand[:2], "big") & 0x0FFF) << 64
    value |= (0b10 << 62) | (int.from_bytes(rand[2:], "big") & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def data_file_name(tag: str = "") -> str:
    """DuckDB's file name form; ``tag`` (a writer's token) lets a failed writer find its own files."""
    return f"ducklake-{uuid7()}{'-' + tag if tag else ''}.parquet"


def delete_file_name() -> str:
    return f"ducklake-{uuid7()}-delete.parquet"


@dataclass(frozen=True)
class FileEntry:
    uri: str
    size: int
    mtime_ns: int | None


#: pyarrow ``ParquetWriter`` options that lay values out as DuckDB's own files do. Decimals of up to 18 digits
#: become INT32/INT64 (as in DuckDB and Spark), which Spark decodes faster than fixed-length byte arrays
#: (tests/benchmarks/bench_decimal_storage.py).
DUCKDB_PARQUET_LAYOUT = {"store_decimal_as_integer": True}


class Storage:
    """Reads and writes the files of one lake.

    :param data_path: the lake's root, ``s3://bucket/prefix/`` or a filesystem path.
    :param s3: credentials and endpoint for ``s3://`` paths.
    """

    def __init__(self, data_path: str, s3: S3Spec | None = None) -> None:
        self.data_path = data_path if data_path.endswith("/") else data_path + "/"
        self.is_s3 = self.data_path.startswith(("s3://", "s3a://"))
        self._s3 = s3
        self._fs: pafs.FileSystem | None = None

    @property
    def fs(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs = self._make_fs()
        return self._fs

    def _make_fs(self) -> pafs.FileSystem:
        if not self.is_s3:
            return pafs.LocalFileSystem()
        s3 = self._s3
        kwargs: dict[str, object] = {"region": (s3.region if s3 else None) or "us-east-1"}
        if s3 and s3.access_key:
            kwargs.update(access_key=s3.access_key, secret_key=s3.secret_key, session_token=s3.session_token)
        if s3 and s3.endpoint_url:
            endpoint = urlsplit(s3.endpoint_url if "://" in s3.endpoint_url else "http://" + s3.endpoint_url)
            kwargs.update(endpoint_override=endpoint.netloc, scheme=endpoint.scheme or "http")
            kwargs["force_virtual_addressing"] = False  # path-style, as S3-compatible servers expect
        return pafs.S3FileSystem(**kwargs)

    def fs_path(self, uri: str) -> str:
        """The path ``pyarrow.fs`` wants: ``bucket/key`` for S3, the path itself locally."""
        if uri.startswith(("s3://", "s3a://")):
            return uri.split("://", 1)[1]
        if uri.startswith("file://"):
            return uri[len("file://") :]
        return uri

    def open_input(self, uri: str) -> pa.NativeFile:
        return self.fs.open_input_file(self.fs_path(uri))

    def write_parquet(
        self,
        table: pa.Table | pa.RecordBatchReader,
        uri: str,
        *,
        compression: str = "snappy",
        row_group_size: int = 1_000_000,
    ) -> tuple[int, int, pq.FileMetaData]:
        """Write ``table`` to ``uri``; return (file size, footer size, Parquet metadata). A record batch reader
        is written batch by batch (at most ``row_group_size`` rows per group), never held whole."""
        path = self.fs_path(uri)
        if not self.is_s3:
            self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(path) as sink:
            # No Arrow schema in the key-value metadata: DuckDB writes none, and field ids carry the mapping.
            writer = pq.ParquetWriter(
                sink, table.schema, compression=compression, store_schema=False, **DUCKDB_PARQUET_LAYOUT
            )
            with writer:
                if isinstance(table, pa.Table):
                    writer.write_table(table, row_group_size=row_group_size)
                else:
                    for batch in table:
                        writer.write_batch(batch, row_group_size=row_group_size)
        with self.fs.open_input_file(path) as handle:
            size = handle.size()
            handle.seek(size - 8)
            footer = struct.unpack("<I", handle.read(4))[0]
        return size, footer, writer.writer.metadata  # the C++ writer keeps the footer it wrote

    def write_bytes(self, uri: str, data: bytes) -> None:
        """Write a small object whole (one PUT on S3)."""
        path = self.fs_path(uri)
        if not self.is_s3:
            self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(path) as sink:
            sink.write(data)

    def delete(self, uri: str) -> bool:
        try:
            self.fs.delete_file(self.fs_path(uri))
        except FileNotFoundError:
            return False
        except OSError as exc:  # S3 reports a missing key as a generic error on some servers
            if "not found" in str(exc).lower() or "nosuchkey" in str(exc).lower():
                return False
            raise
        return True

    def exists(self, uri: str) -> bool:
        return self.fs.get_file_info(self.fs_path(uri)).type == pafs.FileType.File

    def list_files(self, prefix_uri: str) -> list[FileEntry]:
        """All files under ``prefix_uri`` (recursively), as URIs in the same scheme."""
        base = self.fs_path(prefix_uri).rstrip("/")
        selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
        scheme = prefix_uri.split("://", 1)[0] + "://" if "://" in prefix_uri else ""
        return [
            FileEntry(uri=scheme + info.path, size=info.size or 0, mtime_ns=info.mtime_ns)
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        ]
