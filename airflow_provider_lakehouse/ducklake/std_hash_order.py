"""The order in which a C++ ``std::unordered_map`` of integers, as libstdc++ builds it, iterates its keys.

DuckDB's ``ducklake`` extension labels the rows a change feed lists as deleted through two such maps (file
position to snapshot, then row id to snapshot, the last write winning). When one row id sits at several positions
deleted in different snapshots (a flushed file of inlined rows holds every version of an updated row), which
snapshot labels them depends on that iteration order, and ``ducklake_table_changes`` answers with it. To give
DuckDB's answer, :func:`iteration_order` replays libstdc++'s hash table: identity hash, prime bucket counts, a
node inserted at the front of its bucket's run or, into an empty bucket, at the front of the whole list, and every
rehash re-inserting the nodes in their current order.
"""

from __future__ import annotations

from collections.abc import Iterable

#: the bucket counts libstdc++ grows such a map through, one insertion at a time (printed by a C++ program that
#: filled a ``std::unordered_map<unsigned long, unsigned long>``; each rehash happens when the next key would make
#: the keys outnumber the buckets)
BUCKET_COUNTS = (
    13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061, 712697, 1447153,
    2938679, 5967347, 12117689, 24607243, 49969847, 101473717, 206062531,
)  # fmt: skip


class _Table:
    """The bucket runs of one bucket count: which buckets are in use, and their keys, both newest first."""

    def __init__(self, bucket_count: int) -> None:
        self.bucket_count = bucket_count
        self.buckets_newest_last: list[int] = []
        self.runs: dict[int, list[int]] = {}

    def insert(self, key: int) -> None:
        bucket = key % self.bucket_count
        run = self.runs.get(bucket)
        if run is None:  # an empty bucket: the key goes to the front of the whole list
            self.runs[bucket] = [key]
            self.buckets_newest_last.append(bucket)
        else:  # the front of its bucket's run
            run.append(key)

    def keys(self) -> list[int]:
        return [key for bucket in reversed(self.buckets_newest_last) for key in reversed(self.runs[bucket])]


def iteration_order(keys: Iterable[int]) -> list[int]:
    """The distinct ``keys`` (non-negative) in the order libstdc++ iterates a map filled by ``map[key] = ...`` in
    the given order; a key seen again keeps its place. Maps larger than the last of :data:`BUCKET_COUNTS` are not
    replayed past it (no data file holds that many deleted positions)."""
    seen: set[int] = set()
    table = _Table(1)
    growth = iter(BUCKET_COUNTS)
    capacity = 0
    for key in keys:
        if key in seen:
            continue
        if len(seen) + 1 > capacity:
            bucket_count = next(growth, None)
            if bucket_count is not None:
                current = table.keys()
                table = _Table(bucket_count)
                for moved in current:
                    table.insert(moved)
                capacity = bucket_count
        seen.add(key)
        table.insert(key)
    return table.keys()
