"""libstdc++'s iteration order of ``std::unordered_map<unsigned long, ...>``, replayed.

Each expected order was printed by a C++ program (g++ 12, libstdc++) that filled the map with ``map[key] = key``
in the given order and iterated it; the last case crosses two rehashes (13, 29 and 59 buckets)."""

from __future__ import annotations

import pytest

from airflow_provider_lakehouse.ducklake.std_hash_order import iteration_order

PRINTED_BY_LIBSTDCXX = [
    ([5, 1, 9, 3], [3, 9, 1, 5]),
    # keys sharing bucket 7 of 13, then two keys seen again (they keep their place)
    ([7, 20, 33, 46, 59, 1, 14, 7, 20], [14, 1, 59, 46, 33, 20, 7]),
    (list(range(30)), [29, *range(12, -1, -1), *range(13, 29)]),
    (
        list(range(100, 0, -3)),
        [1, 4, 7, 10, 13, 64, 67, 70, 73, 76, 79, 82, 85, 88, 91, 94, 97, 100, *range(61, 15, -3)],
    ),
]


@pytest.mark.parametrize(("inserted", "iterated"), PRINTED_BY_LIBSTDCXX)
def test_the_order_libstdcxx_iterates(inserted: list[int], iterated: list[int]) -> None:
    assert iteration_order(inserted) == iterated


def test_an_empty_map_has_no_keys() -> None:
    assert iteration_order([]) == []
