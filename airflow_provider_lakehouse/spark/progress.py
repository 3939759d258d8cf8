"""Progress lines for long statements: Spark stages and tasks done, at a bounded rate.

A TPC-DS statement can run for minutes with nothing in the task log. While a script runs, a line like
``still running after 35 s: stage 12: 6/8 tasks done (2 running)`` is logged once a statement has run
``first_after_s`` seconds, then at most every ``every_s`` seconds. Classic sessions are polled through
their status tracker; Spark Connect sessions report progress to a handler.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from airflow_provider_lakehouse.spark.py4j_logging import best_effort_jvm_calls
from airflow_provider_lakehouse.spark.session import is_connect_session
from airflow_provider_lakehouse.spark.thread_logging import log_between_forks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StageProgress:
    stage_id: int
    tasks: int
    done: int
    running: int = 0


def describe(elapsed_s: float, stages: Iterable[StageProgress]) -> str:
    """One progress line.

    >>> describe(35.2, [StageProgress(12, 8, 6, 2)])
    'still running after 35 s: stage 12: 6/8 tasks done (2 running)'
    >>> describe(61, [])
    'still running after 61 s: no Spark stage active (reading or writing lake files)'
    """
    active = [s for s in stages if s.done < s.tasks]
    if not active:
        return f"still running after {elapsed_s:.0f} s: no Spark stage active (reading or writing lake files)"
    parts = [
        f"stage {s.stage_id}: {s.done}/{s.tasks} tasks done" + (f" ({s.running} running)" if s.running else "")
        for s in active[:3]
    ]
    more = f" (+{len(active) - 3} more stages)" if len(active) > 3 else ""
    return f"still running after {elapsed_s:.0f} s: {', '.join(parts)}{more}"


class _Throttle:
    def __init__(self, first_after_s: float, every_s: float) -> None:
        self.started = time.monotonic()
        self.first_after_s = first_after_s
        self.every_s = every_s
        self.last: float | None = None
        self.lock = threading.Lock()

    def due(self) -> float | None:
        """Seconds elapsed when a line is due now, else ``None``."""
        now = time.monotonic()
        elapsed = now - self.started
        with self.lock:
            if elapsed < self.first_after_s or (self.last is not None and now - self.last < self.every_s):
                return None
            self.last = now
        return elapsed


def _classic_stages(spark: Any) -> list[StageProgress]:
    tracker = spark.sparkContext.statusTracker()
    stages = []
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            stages.append(StageProgress(stage_id, info.numTasks, info.numCompletedTasks, info.numActiveTasks))
    return stages


@contextmanager
def progress_lines(
    spark: Any, *, first_after_s: float = 10.0, every_s: float = 30.0, logger: logging.Logger | Any = log
) -> Iterator[None]:
    """Log progress lines while the block runs; never raises into it (progress is a courtesy)."""
    throttle = _Throttle(first_after_s, every_s)
    if is_connect_session(spark):

        def handler(stages: Any, inflight_tasks: int, operation_id: Any, done: bool, **_: Any) -> None:
            try:
                elapsed = None if done else throttle.due()
                if elapsed is not None:
                    logger.info(
                        "%s",
                        describe(
                            elapsed,
                            [StageProgress(s.stage_id, s.num_tasks, s.num_completed_tasks) for s in stages or ()],
                        ),
                    )
            except Exception:
                pass

        try:
            spark.registerProgressHandler(handler)
        except Exception:
            yield
            return
        try:
            yield
        finally:
            try:
                spark.removeProgressHandler(handler)
            except Exception:
                pass
        return
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(1.0):
            elapsed = throttle.due()
            if elapsed is None:
                continue
            try:
                with best_effort_jvm_calls():
                    stages = _classic_stages(spark)
                log_between_forks(logger, logging.INFO, "%s", describe(elapsed, stages))
            except Exception:
                return  # the session went away: the statement's own error says why

    thread = threading.Thread(target=poll, name="lakehouse-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
