"""Failures raised in Spark's Python workers, as a task's user should read them."""

from __future__ import annotations

import re

_MARKER = "An exception was thrown from the Python worker:"
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception)\b")


def without_worker_traceback(message: str) -> str:
    """A failure in a Python worker (an executor writing files) from its exception line on: the traceback says
    where in the provider it failed, which the task's user does not need (Spark's log keeps it).

    >>> without_worker_traceback(
    ...     "An exception was thrown from the Python worker:\\nTraceback (most recent call last):\\n"
    ...     '  File "w.py", line 5, in f\\n    raise\\nValueError: Column \\'c\\' is NOT NULL but 1 value(s) are NULL.'
    ... )
    "ValueError: Column 'c' is NOT NULL but 1 value(s) are NULL."
    >>> without_worker_traceback(
    ...     "An exception was thrown from the Python worker:\\nTraceback (most recent call last):\\n  raise\\n"
    ...     "LakehouseError: 2.parquet: columns id: int64\\n  differ from the first file's"
    ... )
    "LakehouseError: 2.parquet: columns id: int64\\ndiffer from the first file's"
    >>> without_worker_traceback("Statement failed: no such table")
    'Statement failed: no such table'
    """
    if _MARKER not in message or "Traceback (most recent call last):" not in message:
        return message
    lines = [line.strip() for line in message.split(_MARKER, 1)[1].splitlines() if line.strip()]
    last = max((i for i, line in enumerate(lines) if _EXCEPTION_LINE.match(line)), default=None)
    return message if last is None else "\n".join(lines[last:])  # a message of several lines keeps them all
