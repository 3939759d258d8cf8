"""DuckDB extensions loaded from their wheels, safely when several processes share one extension directory.

DuckDB's ``INSTALL`` writes the extension to a temporary file, then removes any file already at the target and
moves its own into place. Two processes installing the same extension at once (parallel tasks on a fresh
worker, two test workers) therefore open a window in which the file is missing, and a third process's ``LOAD``
fails with "Extension ... not found". An advisory ``flock`` on ``<directory>/.install.lock`` closes it: loads
share the lock, an install holds it alone, and only installs what no load found.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from airflow_provider_lakehouse.exceptions import LakehouseError

LOCK_FILE = ".install.lock"


class DuckDBNotInstalledError(LakehouseError):
    """The ``duckdb`` engine needs DuckDB and its extension wheels (the ``duckdb`` extra)."""


@contextmanager
def _locked(directory: str, mode: int) -> Iterator[None]:
    fd = os.open(os.path.join(directory, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock (so does the process's death)


def _loaded(con: Any, name: str) -> bool:
    import duckdb

    try:
        con.execute(f"LOAD {name}")
    except duckdb.IOException:  # not installed in this directory (yet)
        return False
    return True


def _install_from_wheel(con: Any, name: str) -> None:
    try:
        from duckdb_extensions import import_extension

        import_extension(name, con=con)
    except Exception as exc:  # the wheel is missing: say which one
        raise DuckDBNotInstalledError(
            f"DuckDB extension {name!r} is not installed: pip install duckdb-extension-{name}"
        ) from exc


def load_extensions(con: Any, directory: str, names: Sequence[str]) -> None:
    """``LOAD`` each of ``names`` into ``con``, first installing from its ``duckdb-extension-<name>`` wheel any that
    ``directory`` (the connection's ``extension_directory``) does not hold yet. No network is used.

    :raises DuckDBNotInstalledError: when an extension is neither installed nor has its wheel.
    """
    with _locked(directory, fcntl.LOCK_SH):
        missing = [name for name in names if not _loaded(con, name)]
    if not missing:
        return
    with _locked(directory, fcntl.LOCK_EX):
        for name in missing:
            if _loaded(con, name):  # another process installed it while this one waited
                continue
            _install_from_wheel(con, name)
            con.execute(f"LOAD {name}")
