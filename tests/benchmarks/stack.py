"""The local stack as the benchmarks use it: reuse a running one, stop only what the benchmark started."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from airflow_provider_lakehouse.devstack.stack import Stack


def _quiet(_message: str) -> None:
    pass


@contextmanager
def bench_stack(*, export_env: bool = False) -> Iterator[Stack]:
    """Start the stack unless it runs, yield it, and stop it afterwards if this call started it.

    :param export_env: also put the stack's connections into this process's environment (for benchmarks that
        open hooks in-process rather than in child processes).
    """
    stack = Stack()
    started = stack.up(log=_quiet)
    if export_env:
        os.environ.update(stack.env())
    try:
        yield stack
    finally:
        if started:
            stack.down(log=_quiet)
