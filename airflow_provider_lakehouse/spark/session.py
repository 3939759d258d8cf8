"""SparkSessions the driver runs on: in-process local Spark, or a Spark Connect client."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Mapping
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.exceptions import SparkNotInstalledError, SparkVersionError

LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # progress goes to the task log as lines (see .progress)
    "spark.sql.session.timeZone": "UTC",
    # Executors' Python must be this interpreter: they import this package to read and write lake files.
    "spark.pyspark.python": sys.executable,
    "spark.pyspark.driver.python": sys.executable,
}


def spark_home() -> str | None:
    """The Spark distribution a local session starts from, as PySpark finds it: ``$SPARK_HOME``, else the
    installed ``pyspark`` package when it carries Spark's launcher and jars (the full ``pyspark``, the
    ``spark`` extra). ``None`` when only ``pyspark-client`` is installed: the same ``pyspark/`` package
    without ``bin/`` and ``jars/``, enough for Spark Connect and nothing else."""
    if os.environ.get("SPARK_HOME"):
        return os.environ["SPARK_HOME"]
    spec = find_spec("pyspark")
    if spec is None or not spec.origin:
        return None
    home = Path(spec.origin).parent
    return str(home) if (home / "bin" / "spark-submit").is_file() and (home / "jars").is_dir() else None


def require_local_spark() -> None:
    """Raise :class:`SparkNotInstalledError` (naming the ``spark`` extra) unless a local Spark can start;
    without this check PySpark prints "Could not find valid SPARK_HOME" and exits the process."""
    if spark_home() is None:
        raise SparkNotInstalledError(
            "Local Spark (a lake without spark_conn_id)", "no SPARK_HOME, and the pyspark package has no jars/"
        )


def require_spark_submit(binary: str = "spark-submit") -> str:
    """The path of ``binary`` on PATH, or :class:`SparkNotInstalledError` naming the ``spark`` extra (the full
    pyspark installs ``spark-submit`` next to the Python)."""
    path = shutil.which(binary)
    if path is None:
        raise SparkNotInstalledError("spark-submit (a 'spark' connection)", f"no {binary!r} on PATH")
    return path


def local_session(conf: Mapping[str, str] | None = None) -> Any:
    """The process's local SparkSession (created on first use, then reused: one JVM per worker process)."""
    require_local_spark()
    from pyspark.sql import SparkSession

    from airflow_provider_lakehouse.spark.py4j_logging import quiet_py4j

    quiet_py4j()
    settings = dict(LOCAL_CONF)
    settings.update(conf or {})
    builder = SparkSession.builder.master(settings.pop("spark.master", "local[*]")).appName("lakehouse")
    if os.environ.get("SPARK_LOCAL_IP"):
        settings.setdefault("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
        settings.setdefault("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
    for key, value in settings.items():
        builder = builder.config(key, value)
    _start_jvm_with_logged_output(settings)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _start_jvm_with_logged_output(settings: Mapping[str, str]) -> None:
    """Launch this process's Spark JVM with its console output in pipes, logged at its real level (see
    :mod:`.jvm_output`); the builder then reuses it. Left to PySpark when a JVM already runs or this fails."""
    from pyspark import SparkConf, SparkContext

    if SparkContext._gateway is not None:
        return
    try:
        from subprocess import PIPE

        from pyspark.java_gateway import launch_gateway

        from airflow_provider_lakehouse.spark.jvm_output import forward

        conf = SparkConf().setAll(list(settings.items()))
        popen_kwargs: dict[str, Any] = {"stdout": PIPE, "stderr": PIPE}
        gateway = launch_gateway(conf, popen_kwargs=popen_kwargs)
        process = getattr(gateway, "proc", None)
        if process is not None:
            forward(process.stdout, "stdout")
            forward(process.stderr, "stderr")
        SparkContext._ensure_initialized(gateway=gateway, conf=conf)
    except Exception:
        import logging

        logging.getLogger(__name__).debug(
            "starting the JVM with logged output failed; PySpark starts it", exc_info=True
        )


#: sessions this process holds, by session key (a process may talk to several lakes or servers)
_CONNECT_SESSIONS: dict[str, Any] = {}
#: every client session this process opened, also those replaced in ``_CONNECT_SESSIONS``: all are closed at exit
_OPENED: list[Any] = []
#: tasks of one process (threads) asking for the same session at once must get one, not one each
_CONNECT_LOCK = threading.Lock()


def connect_session(url: str, conf: Mapping[str, str] | None = None) -> Any:
    """A Spark Connect session to ``url`` (``sc://host:port``); runtime SQL settings from ``conf`` applied.

    Every task with the same server and settings uses **one shared server-side session** (a session id derived
    from them), never one of its own: the server starts Python worker daemons per session and never stops them
    (found under a scheduler: 7 processes and 600 MB per task, forever), and a shared session keeps its workers
    warm between tasks. Scripts keep their temporary views apart by names unique to each run (see
    :mod:`.plan`); they register nothing else in the session. If the server closed the session (its idle
    timeout), the next id of the same series is used.
    """
    settings, _server_side = connect_settings(conf)
    key = json.dumps([url.rstrip("/"), settings])
    with _CONNECT_LOCK:
        cached = _CONNECT_SESSIONS.get(key)
        if cached is not None and _alive(cached):
            return cached
        return _open_connect_session(url, key, settings)


def is_connect_session(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (else a classic one), told without importing PySpark."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def connect_settings(conf: Mapping[str, str] | None) -> tuple[dict[str, str], list[str]]:
    """Split a lake's ``spark_conf`` for a Spark Connect session: the runtime SQL settings a task sets on its
    session (``spark.sql.*``), and the names of the others, which only the server's own configuration decides
    (Spark refuses to change core settings such as ``spark.executor.memory`` in a running session).

    >>> connect_settings({"spark.executor.memory": "8g", "spark.sql.shuffle.partitions": "8"})
    ({'spark.sql.shuffle.partitions': '8'}, ['spark.executor.memory'])
    """
    conf = conf or {}
    settings = {k: v for k, v in sorted(conf.items()) if k.startswith("spark.sql.")}
    return settings, sorted(k for k in conf if k not in settings)


def _open_connect_session(url: str, key: str, settings: Mapping[str, str]) -> Any:
    from pyspark.sql import SparkSession

    had_flag = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    try:
        for generation in range(_MAX_GENERATIONS):
            session_id = str(uuid.uuid5(_NAMESPACE, f"{key}#{generation}"))
            spark = SparkSession.builder.remote(f"{url.rstrip('/')}/;session_id={session_id}").create()
            _OPENED.append(spark)
            try:
                for name, value in settings.items():
                    spark.conf.set(name, value)
                server_version = spark.version  # the first round trip: is the session usable?
            except Exception as exc:
                if "SESSION_CLOSED" not in str(exc):
                    raise
                continue  # closed by the server's idle timeout: ids are never reused, take the next one
            check_connect_versions(client_version(), server_version, url)
            _CONNECT_SESSIONS[key] = spark
            return spark
    finally:
        if not had_flag:
            # PySpark sets this for the whole process and never clears it; a later local session or spark-submit
            # started from this process would then fail with CONNECT_URL_NOT_SET.
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    raise RuntimeError(f"Spark Connect at {url} has closed {_MAX_GENERATIONS} sessions of this series; restart it.")


def client_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def check_connect_versions(client: str, server: str, url: str) -> None:
    """Refuse a Spark Connect client of a later Spark release than its server, naming both: the client sends
    settings the server does not know, and the task would fail later on a message that names neither (a pyspark
    4.2 client on a 4.0 server: ``SQL_CONF_NOT_FOUND spark.sql.session.localRelationSizeLimit``, measured).
    Patch releases and older clients pass.

    >>> check_connect_versions("4.3.0", "4.3.1", "sc://h:1")
    >>> check_connect_versions("4.2.1", "4.0.0", "sc://h:1")
    Traceback (most recent call last):
    ...
    airflow_provider_lakehouse.exceptions.SparkVersionError: The Spark Connect server at sc://h:1 runs Spark 4.0.0, an older release than this task's pyspark 4.2.1. A Spark Connect client must not be newer than its server: install pyspark 4.0.* where the task runs, or run the server on Spark 4.2.
    """
    if spark_release(client) > spark_release(server):
        raise SparkVersionError(
            f"The Spark Connect server at {url} runs Spark {server}, an older release than this task's pyspark "
            f"{client}. A Spark Connect client must not be newer than its server: install pyspark "
            f"{'.'.join(map(str, spark_release(server)))}.* where the task runs, or run the server on Spark "
            f"{'.'.join(map(str, spark_release(client)))}."
        )


def spark_release(version: str) -> tuple[int, int]:
    """``4.2.1`` → (4, 2): the feature release (patch releases of one release talk to each other)."""
    major, minor = (int("".join(ch for ch in part if ch.isdigit()) or 0) for part in version.split(".")[:2])
    return major, minor


_NAMESPACE = uuid.UUID("9a8f0c52-6a4e-4c8e-9a4b-2f0d6b8a9c11")
_MAX_GENERATIONS = 1000


def _alive(spark: Any) -> bool:
    try:
        return not spark.is_stopped
    except Exception:
        return False


def close_connect_clients() -> None:
    """Close this process's Spark Connect channels, keeping the shared server-side sessions open.

    Registered with :mod:`atexit`: left to ``SparkSession.__del__`` at interpreter teardown, gRPC's channel close
    waits for threads that no longer run, and the process never exits (seen in the TPC-DS benchmark after four
    concurrent tasks). Closing here, while the interpreter is whole, makes that later close a no-op. Every
    session opened is closed, not only the cached ones: an uncached one (two tasks of one process racing to open
    the session, before the lock) hung the benchmark's runner at exit just the same.
    """
    with _CONNECT_LOCK:
        sessions = list(_OPENED)
        _OPENED.clear()
        _CONNECT_SESSIONS.clear()
    for spark in sessions:
        try:
            spark.client.close()
        except Exception:
            pass


atexit.register(close_connect_clients)
