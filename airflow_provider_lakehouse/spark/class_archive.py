"""A class-data archive (Java's AppCDS) for the driver JVMs that spark-submit starts, one per lake task, and for
the Spark Connect server the local stack starts.

A spark-submit task's driver is a fresh JVM, and most of its start is spent loading and verifying Spark's classes
(its SparkContext, then the SQL engine for the first statement). The first task on a machine has the JVM write
the classes it loaded into an archive when it exits (``-XX:ArchiveClassesAtExit``); later tasks map that archive
(``-XX:SharedArchiveFile``) instead of loading the classes again. On the 2-core machine a task's ``SELECT 1``
went from 9.9 s to 5.8 s, below a bare spark-submit of an empty job (7.1 s); the first task pays about 12 s more
to write the archive (see docs/ducklake.md, "Spark benchmark").

An archive is only valid for the JVM and the class path that wrote it, so its file name is a digest of both (the
``java`` binary, Spark's ``jars/`` and ``spark.driver.extraClassPath``); a JVM that still finds it unusable falls
back to loading classes itself. Each first task writes to a name of its own and moves the finished archive into
place, so tasks starting together never read a half-written file.

The local stack's Spark Connect server has an archive of its own (:meth:`ClassArchive.for_server`), written when a
server without one stops: a start took 18.8 s without it and 6.4 to 7.2 s with it on the same machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: the driver JVM option Spark reads for client-mode drivers (spark-submit passes it to the JVM it starts)
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
#: the user's driver options that settle class data sharing themselves
_USER_DECIDES = ("-Xshare:off", "-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-XX:-UseSharedSpaces")
# Harmless on a JVM older than 13, which knows neither option and would otherwise refuse to start.
_TOLERANT = "-XX:+IgnoreUnrecognizedVMOptions"
#: archives of one kind (spark-submit drivers, the Connect server) kept per directory: a machine running a few
#: Spark versions or driver class paths keeps one for each
ARCHIVES_KEPT = 3
# A JVM writing an archive warns about every class it leaves out (600 lines: Janino's from a signed jar, the
# classes Spark generates), into the task's or the server's log; errors still show.
_QUIET = "-Xlog:cds*=error"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME`` (else ``~/.cache``) ``/airflow-provider-lakehouse/class-archives``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "airflow-provider-lakehouse" / "class-archives"


@dataclass(frozen=True)
class ClassArchive:
    """The archive for one driver JVM and class path, and the options that use it or write it.

    :param path: where the finished archive lives.
    :param pending: where this task's JVM writes a new archive when none exists yet.
    """

    path: Path
    pending: Path

    @classmethod
    def for_submit(
        cls, spark_home: str | None, conf: Mapping[str, str], cache_dir: Path | None = None
    ) -> ClassArchive | None:
        """The archive for a spark-submit with ``conf`` from ``spark_home``; ``None`` without a ``java`` or a
        Spark home to key it on (the task then runs without one)."""
        path = _keyed_path("spark-driver", spark_home, conf, cache_dir or default_cache_dir())
        if path is None:
            return None
        return cls(path, path.parent / f".{path.name}.{uuid.uuid4().hex}.partial")

    @classmethod
    def for_server(cls, spark_home: str | None, conf: Mapping[str, str], cache_dir: Path) -> ClassArchive | None:
        """The archive for a long-running server JVM (the Spark Connect server) started with ``conf``.

        Its classes differ from a task driver's (the Connect service, everything its queries loaded), so it has
        an archive of its own. One server runs per ``cache_dir``, and the process that stops it may not be the
        one that started it: its pending file has a fixed name, which any process can :meth:`settle`.
        """
        path = _keyed_path("spark-connect", spark_home, conf, cache_dir)
        if path is None:
            return None
        return cls(path, path.parent / f".{path.name}.partial")

    def java_options(self) -> str:
        """JVM options: map the archive when it exists, otherwise write one at exit; none when the cache
        directory cannot be created (a read-only home): the task then runs as it would without an archive."""
        if self.path.is_file():
            return f"{_TOLERANT} -XX:SharedArchiveFile={self.path}"
        try:
            self.pending.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return ""
        return f"{_TOLERANT} -XX:ArchiveClassesAtExit={self.pending} {_QUIET}"

    def with_options(self, conf: Mapping[str, str]) -> dict[str, str]:
        """``conf`` with :meth:`java_options` added to the driver's Java options (the user's own kept first).
        Options that already decide about class data sharing (``-Xshare:off``, an archive of their own) win:
        ``conf`` is returned as it is."""
        merged = dict(conf)
        own = conf.get(DRIVER_JAVA_OPTIONS, "")
        if any(flag in own for flag in _USER_DECIDES):
            return merged
        options = self.java_options()
        if options:
            merged[DRIVER_JAVA_OPTIONS] = f"{own} {options}".strip()
        return merged

    def settle(self) -> bool:
        """After the JVM exited: move an archive it wrote into place; True if one was. A JVM killed before its
        exit leaves nothing or a partial file, which is removed. Of the archives of the same kind in the
        directory, the newest :data:`ARCHIVES_KEPT` stay (see :func:`_remove_older_archives`)."""
        if not self.pending.exists():
            return False
        try:
            if self.pending.stat().st_size > 0 and not self.path.exists():
                os.replace(self.pending, self.path)  # atomic: a task starting now sees no file or a whole one
                _remove_older_archives(self.path)
                return True
            return False
        finally:
            self.pending.unlink(missing_ok=True)


def _remove_older_archives(newest: Path) -> None:
    """Remove the archives of ``newest``'s kind (its name up to the digest) beyond the :data:`ARCHIVES_KEPT` most
    recently written. Each is about 150 to 200 MB, and a new one is written whenever the JVM, Spark or the driver
    class path changes: without a bound the cache grew by one per upgrade, forever. An archive removed while a
    JVM maps it stays readable to that JVM (the kernel keeps the pages); a later task with that class path writes
    it again."""
    kind = newest.name.rsplit("-", 1)[0]
    archives = sorted(newest.parent.glob(f"{kind}-*.jsa"), key=_mtime, reverse=True)  # a vanished one sorts last
    for path in archives[ARCHIVES_KEPT:]:
        if path != newest:
            path.unlink(missing_ok=True)


def _keyed_path(role: str, spark_home: str | None, conf: Mapping[str, str], directory: Path) -> Path | None:
    """``<directory>/<role>-<digest>.jsa``, the digest of what makes an archive valid: the ``java`` binary, Spark's
    jars and the driver's extra class path; None without a ``java`` or a Spark home."""
    java = _java_binary()
    if java is None or not spark_home:
        return None
    jars_dir = Path(spark_home) / "jars"
    key = json.dumps(
        [
            os.path.realpath(java),
            _mtime(Path(os.path.realpath(java))),
            sorted(p.name for p in jars_dir.glob("*.jar")) if jars_dir.is_dir() else [],
            conf.get("spark.driver.extraClassPath", ""),
        ]
    )
    return directory / f"{role}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.jsa"


def _java_binary() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").is_file():
        return str(Path(home, "bin", "java"))
    return shutil.which("java")


def _mtime(path: Path) -> int:
    try:
        return int(path.stat().st_mtime)
    except OSError:
        return 0
