"""Deletion vectors: the delete files DuckDB writes when a lake sets ``write_deletion_vectors`` (catalog format
``puffin``).

The file holds one Iceberg ``deletion-vector-v1`` blob (DuckDB writes the blob alone; a full Puffin file, with
its ``PFA1`` magic and JSON footer, is read too): the vector's length (big-endian), the magic bytes
``D1 D3 39 64``, the number of 32-bit Roaring bitmaps, each bitmap's key (the positions' high 32 bits) followed by
the bitmap in Roaring's portable format, and a CRC-32 of magic and vector (big-endian). Positions only: a
deletion vector records no per-row snapshot, so each snapshot's deletes are a file of their own.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np

from airflow_provider_lakehouse.exceptions import LakehouseError

DELETION_VECTOR_MAGIC = b"\xd1\xd3\x39\x64"
PUFFIN_MAGIC = b"PFA1"
_SERIAL_COOKIE_NO_RUNS = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4  # Roaring writes container offsets for run-format bitmaps with at least this many
_ARRAY_MAX = 4096  # containers of more values are bitmaps (unless run-encoded)


class DeletionVectorError(LakehouseError):
    """A deletion vector that cannot be read (corrupt, or a variant this reader does not know)."""


def is_deletion_vector(head: bytes) -> bool:
    """True for the first bytes of a deletion-vector file (a bare blob or a Puffin file), False for Parquet."""
    return head[:4] == PUFFIN_MAGIC or head[4:8] == DELETION_VECTOR_MAGIC


def deleted_positions_of(data: bytes, path: str = "") -> np.ndarray:
    """The row positions a deletion-vector file deletes, sorted (``path`` only names the file in errors).

    >>> blob = deletion_vector_blob([0, 3, 70000])
    >>> deleted_positions_of(blob).tolist()
    [0, 3, 70000]

    :raises DeletionVectorError: naming the file and what is wrong with it.
    """
    try:
        blob = _puffin_blob(data) if data[:4] == PUFFIN_MAGIC else data
        return _positions(blob)
    except DeletionVectorError as exc:
        raise DeletionVectorError(f"Deletion vector {path or '(in memory)'}: {exc}") from None
    except (struct.error, IndexError, ValueError) as exc:
        raise DeletionVectorError(f"Deletion vector {path or '(in memory)'} is truncated or corrupt: {exc}") from None


def _puffin_blob(data: bytes) -> bytes:
    """The ``deletion-vector-v1`` blob of a Puffin file."""
    if data[-4:] != PUFFIN_MAGIC:
        raise DeletionVectorError("a Puffin file without its closing magic")
    payload_size, flags = struct.unpack_from("<ii", data, len(data) - 12)
    if flags & 1:
        raise DeletionVectorError("a compressed Puffin footer (LZ4) is not supported")
    start = len(data) - 12 - payload_size
    footer = json.loads(data[start : len(data) - 12])
    blobs = [b for b in footer.get("blobs", []) if b.get("type") == "deletion-vector-v1"]
    if len(blobs) != 1:
        raise DeletionVectorError(f"expected one deletion-vector-v1 blob, found {len(blobs)}")
    if blobs[0].get("compression-codec"):
        raise DeletionVectorError(f"a {blobs[0]['compression-codec']}-compressed blob is not supported")
    offset, length = int(blobs[0]["offset"]), int(blobs[0]["length"])
    return data[offset : offset + length]


def _positions(blob: bytes) -> np.ndarray:
    (vector_size,) = struct.unpack_from(">I", blob, 0)
    if blob[4:8] != DELETION_VECTOR_MAGIC:
        raise DeletionVectorError("the deletion-vector magic bytes are missing")
    end = 4 + vector_size
    (stored_crc,) = struct.unpack_from(">I", blob, end)
    if zlib.crc32(blob[4:end]) != stored_crc:
        raise DeletionVectorError("its checksum does not match (the file is corrupt)")
    (count,) = struct.unpack_from("<q", blob, 8)
    pos, parts = 16, []
    for _ in range(count):
        (key,) = struct.unpack_from("<I", blob, pos)
        low, pos = _roaring32(blob, pos + 4)
        parts.append((np.int64(key) << 32) | low.astype(np.int64))
    if pos != end:
        raise DeletionVectorError(f"{end - pos} bytes after the last bitmap")
    return np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)


def _roaring32(data: bytes, pos: int) -> tuple[np.ndarray, int]:
    """One 32-bit Roaring bitmap in the portable format at ``pos``: its values and the position after it."""
    (cookie,) = struct.unpack_from("<I", data, pos)
    if cookie & 0xFFFF == _SERIAL_COOKIE:
        size = (cookie >> 16) + 1
        run_flags = np.frombuffer(data, np.uint8, (size + 7) // 8, pos + 4)
        pos += 4 + (size + 7) // 8
    elif cookie == _SERIAL_COOKIE_NO_RUNS:
        (size,) = struct.unpack_from("<I", data, pos + 4)
        run_flags = None
        pos += 8
    else:
        raise DeletionVectorError(f"unknown Roaring cookie {cookie}")
    header = np.frombuffer(data, "<u2", 2 * size, pos).reshape(size, 2)
    pos += 4 * size
    if run_flags is None or size >= _NO_OFFSET_THRESHOLD:
        pos += 4 * size  # container offsets: the containers follow in order anyway
    values = []
    for i in range(size):
        key, cardinality = int(header[i, 0]), int(header[i, 1]) + 1
        if run_flags is not None and run_flags[i // 8] >> (i % 8) & 1:
            (runs,) = struct.unpack_from("<H", data, pos)
            pairs = np.frombuffer(data, "<u2", 2 * runs, pos + 2).reshape(runs, 2).astype(np.int64)
            low = np.concatenate([np.arange(s, s + n + 1) for s, n in pairs]) if runs else np.empty(0, np.int64)
            pos += 2 + 4 * runs
        elif cardinality > _ARRAY_MAX:
            bits = np.unpackbits(np.frombuffer(data, np.uint8, 8192, pos), bitorder="little")
            low = np.flatnonzero(bits).astype(np.int64)
            pos += 8192
        else:
            low = np.frombuffer(data, "<u2", cardinality, pos).astype(np.int64)
            pos += 2 * cardinality
        values.append((key << 16) | low)
    return (np.concatenate(values) if values else np.empty(0, np.int64)), pos


def deletion_vector_blob(positions: list[int]) -> bytes:
    """A ``deletion-vector-v1`` blob of array containers (for tests and doctests; DuckDB writes the real ones)."""
    by_key: dict[int, dict[int, list[int]]] = {}
    for position in sorted(set(positions)):
        by_key.setdefault(position >> 32, {}).setdefault((position >> 16) & 0xFFFF, []).append(position & 0xFFFF)
    vector = DELETION_VECTOR_MAGIC + struct.pack("<q", len(by_key))
    for key, containers in sorted(by_key.items()):
        items = sorted(containers.items())
        body = struct.pack("<II", _SERIAL_COOKIE_NO_RUNS, len(items))
        body += b"".join(struct.pack("<HH", k, len(v) - 1) for k, v in items)
        offset = len(body) + 4 * len(items)
        for _, v in items:
            body += struct.pack("<I", offset)
            offset += 2 * len(v)
        body += b"".join(struct.pack(f"<{len(v)}H", *v) for _, v in items)
        vector += struct.pack("<I", key) + body
    return struct.pack(">I", len(vector)) + vector + struct.pack(">I", zlib.crc32(vector))
