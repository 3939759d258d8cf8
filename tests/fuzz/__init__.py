"""Random comparisons with DuckDB 1.5, run by hand (not part of the test suite)."""

from __future__ import annotations

import traceback
from collections.abc import Callable


def run_seeds(first_seed: int, count: int, difference_of: Callable[[int], str | None]) -> None:
    """Print each seed's difference (or that it is the same), a harness failure as one too, then the tally."""
    differences = 0
    for seed in range(first_seed, first_seed + count):
        try:
            difference = difference_of(seed)
        except Exception:  # a harness failure is reported with its seed, and the run goes on
            difference = f"seed {seed}: the harness failed\n{traceback.format_exc()[-1500:]}"
        differences += difference is not None
        print(difference or f"seed {seed}: same", flush=True)
    print(f"{differences} of {count} seeds differ")
