"""MurmurHash3 (x86, 32-bit, seed 0), the hash of DuckLake's ``bucket(N, col)`` partition transform.

DuckDB's ``ducklake`` extension hashes integers (and anything stored as one: dates as days, timestamps and times
as their unit count) as 8 little-endian bytes of the value sign-extended to int64, floating point numbers as the
bits of a double (``-0.0`` as ``0.0``), text and blobs as their bytes, and every other type as the bytes of its
text form (spec section 6). Integers and doubles are hashed column-wise with numpy; bytes one value at a time.
"""

from __future__ import annotations

import numpy as np

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def murmur3_32(data: bytes) -> int:
    """The unsigned 32-bit hash of ``data``.

    >>> murmur3_32(b"abc") - (1 << 32)  # DuckDB: SELECT murmur3_32('abc')
    -1277324294
    """
    length = len(data)
    h = 0
    whole = length - length % 4
    for start in range(0, whole, 4):
        h = _mix_block(h, int.from_bytes(data[start : start + 4], "little"))
    tail = data[whole:]
    if tail:
        k = _scramble(int.from_bytes(tail, "little"))
        h ^= k
    return _finalize(h ^ length)


def _scramble(k: int) -> int:
    k = (k * _C1) & _MASK
    k = ((k << 15) | (k >> 17)) & _MASK
    return (k * _C2) & _MASK


def _mix_block(h: int, k: int) -> int:
    h ^= _scramble(k)
    h = ((h << 13) | (h >> 19)) & _MASK
    return (h * 5 + 0xE6546B64) & _MASK


def _finalize(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def murmur3_32_int64(values: np.ndarray) -> np.ndarray:
    """The hash of each value as 8 little-endian bytes (``values`` any integer dtype; sign-extended first).

    >>> int(murmur3_32_int64(np.array([42]))[0])  # DuckDB: SELECT murmur3_32(42::BIGINT)
    1871679806
    """
    words: np.ndarray = np.ascontiguousarray(values.astype("<i8")).view("<u4").reshape(-1, 2).astype(np.uint64)
    h: np.ndarray = np.zeros(len(words), dtype=np.uint64)
    for column in (0, 1):
        k: np.ndarray = words[:, column]
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * _C2) & _MASK
        h ^= k
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    h ^= 8
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def murmur3_32_float64(values: np.ndarray) -> np.ndarray:
    """The hash of each value's double bits, ``-0.0`` hashed as ``0.0``.

    >>> int(murmur3_32_float64(np.array([1.5]))[0]) - (1 << 32)  # DuckDB: SELECT murmur3_32(1.5::DOUBLE)
    -260406309
    """
    doubles = np.asarray(values, dtype="<f8") + 0.0  # adding zero turns -0.0 into 0.0
    return murmur3_32_int64(doubles.view("<i8"))
