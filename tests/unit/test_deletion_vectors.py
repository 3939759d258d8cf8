"""The deletion-vector decoder on blobs built here byte by byte from the Iceberg and Roaring specifications: the
container kinds DuckDB 1.5 does not happen to write (run containers, a Puffin wrapper) are covered too."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from airflow_provider_lakehouse.ducklake.deletion_vectors import (
    DELETION_VECTOR_MAGIC,
    DeletionVectorError,
    deleted_positions_of,
    deletion_vector_blob,
    is_deletion_vector,
)


def _blob(bitmaps: list[tuple[int, bytes]]) -> bytes:
    """A deletion-vector-v1 blob of (high 32 bits, portable 32-bit Roaring bitmap) pairs."""
    vector = DELETION_VECTOR_MAGIC + struct.pack("<q", len(bitmaps))
    vector += b"".join(struct.pack("<I", key) + bitmap for key, bitmap in bitmaps)
    return struct.pack(">I", len(vector)) + vector + struct.pack(">I", zlib.crc32(vector))


def _bitmap_container_roaring(values: list[int]) -> bytes:
    """One container of more than 4096 values: the 8 KiB bitmap form, no run containers (cookie 12346)."""
    bits = np.zeros(65536, dtype=np.uint8)
    bits[values] = 1
    header = struct.pack("<II", 12346, 1) + struct.pack("<HH", 0, len(values) - 1) + struct.pack("<I", 16)
    return header + np.packbits(bits, bitorder="little").tobytes()


def _run_container_roaring(runs: list[tuple[int, int]], key: int = 0) -> bytes:
    """One run container (cookie 12347 with one container, its run flag set; no offsets below 4 containers)."""
    cardinality = sum(length + 1 for _, length in runs)
    body = struct.pack("<I", 12347 | (0 << 16)) + bytes([1])
    body += struct.pack("<HH", key, cardinality - 1)
    body += struct.pack("<H", len(runs)) + b"".join(struct.pack("<HH", s, n) for s, n in runs)
    return body


def test_array_containers_across_64_bit_keys() -> None:
    positions = [0, 1, 65535, 65536, 4_000_000, (3 << 32) + 7]
    assert deleted_positions_of(deletion_vector_blob(positions)).tolist() == positions


def test_a_bitmap_container() -> None:
    values = list(range(0, 60000, 3))  # 20,000 values: bitmap form
    assert deleted_positions_of(_blob([(0, _bitmap_container_roaring(values))])).tolist() == values


def test_run_containers() -> None:
    runs = [(10, 4), (100, 0), (60000, 1535)]  # 10..14, 100, 60000..61535
    expected = [*range(10, 15), 100, *range(60000, 61536)]
    assert deleted_positions_of(_blob([(0, _run_container_roaring(runs, key=2))])).tolist() == [
        (2 << 16) + v for v in expected
    ]


def test_a_full_puffin_file() -> None:
    blob = deletion_vector_blob([5, 9])
    footer = json.dumps(
        {"blobs": [{"type": "deletion-vector-v1", "fields": [], "offset": 4, "length": len(blob)}]}
    ).encode()
    data = b"PFA1" + blob + b"PFA1" + footer + struct.pack("<ii", len(footer), 0) + b"PFA1"
    assert is_deletion_vector(data[:8])
    assert deleted_positions_of(data).tolist() == [5, 9]


def test_parquet_is_not_a_deletion_vector() -> None:
    assert not is_deletion_vector(b"PAR1\x15\x04\x15\x80")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b[:-6], "truncated or corrupt|checksum"),
        (lambda b: b[:4] + b"\x00\x00\x00\x00" + b[8:], "magic bytes are missing"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum does not match"),
    ],
)
def test_damage_is_named(damage: object, message: str) -> None:
    blob = deletion_vector_blob([1, 2, 3])
    with pytest.raises(DeletionVectorError, match=message) as failure:
        deleted_positions_of(damage(blob), "s3://b/t/x-delete.puffin")  # type: ignore[operator]
    assert "s3://b/t/x-delete.puffin" in str(failure.value)
