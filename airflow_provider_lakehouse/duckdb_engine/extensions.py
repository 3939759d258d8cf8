"""DuckDB extensions loaded from their wheels, safely when several processes share one extension directory.

DuckDB's ``INSTALL`` writes the extension to a temporary file, then removes any file already at the target and
moves its own into place. Two processes installing the same extension at once (parallel tasks on a fresh
worker, two test workers) therefore open a window in which the file is missing, and a third process's ``LOAD``
fails with "Extension ... not found". An advisory ``flock`` on ``<directory>/.install.lock`` closes it: the check
for installed files shares the lock, an install holds it alone and only installs what is still missing, so no
file is replaced once it is there.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Mapping, Sequence
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


def _not_installed(con: Any, names: Sequence[str]) -> list[str]:
    """Those of ``names`` (or an alias, such as ``postgres`` for ``postgres_scanner``) without a file in the
    connection's extension directory. Reads the directory only: nothing is loaded."""
    rows = con.execute("SELECT extension_name, aliases FROM duckdb_extensions() WHERE installed").fetchall()
    installed = {name for name, _aliases in rows} | {alias for _name, aliases in rows for alias in aliases or ()}
    return [name for name in names if name not in installed]


def _install_from_wheel(con: Any, name: str) -> None:
    try:
        from duckdb_extensions import import_extension

        import_extension(name, con=con)
    except Exception as exc:  # the wheel is missing: say which one
        raise DuckDBNotInstalledError(
            f"DuckDB extension {name!r} is not installed: pip install duckdb-extension-{name}"
        ) from exc


def install_extensions(con: Any, directory: str, names: Sequence[str]) -> None:
    """Install from its ``duckdb-extension-<name>`` wheel each of ``names`` that ``directory`` (the connection's
    ``extension_directory``) does not hold yet; no network is used. Nothing is loaded: with
    ``autoload_known_extensions`` on, DuckDB loads an installed extension the first time a statement needs it
    (an ``ATTACH 'ducklake:...'``, a Postgres secret, an ``s3://`` path). Each ``LOAD`` verifies the extension's
    signature over its whole file, about 0.1 s for each of these 20 to 40 MB files in every new database, so a
    connection pays only for the extensions it uses (0.46 s for all four before).

    Once installed, a file is never replaced (only missing ones are installed, under the lock), so a later load
    outside the lock is safe.

    :raises DuckDBNotInstalledError: when an extension is neither installed nor has its wheel.
    """
    with _locked(directory, fcntl.LOCK_SH):
        missing = _not_installed(con, names)
    if not missing:
        return
    with _locked(directory, fcntl.LOCK_EX):
        for name in _not_installed(con, missing):  # another process may have installed some while this one waited
            _install_from_wheel(con, name)


def load_extensions(con: Any, directory: str, names: Sequence[str]) -> None:
    """:func:`install_extensions`, then ``LOAD`` each of ``names`` now: for extensions DuckDB does not load by
    itself, or a connection with ``autoload_known_extensions`` off.

    :raises DuckDBNotInstalledError: when an extension is neither installed nor has its wheel.
    """
    install_extensions(con, directory, names)
    for name in names:
        con.execute(f"LOAD {name}")


def offline_connection(
    directory: str,
    names: Sequence[str],
    *,
    database: str = ":memory:",
    load: bool = False,
    config: Mapping[str, Any] | None = None,
) -> Any:
    """A DuckDB connection that never downloads an extension (``autoinstall_known_extensions`` off), with
    ``names`` installed into ``directory`` (:func:`install_extensions`): loaded now when ``load``, else by DuckDB
    when a statement first needs one.

    :param config: further DuckDB settings (``temp_directory``, ...).
    :raises DuckDBNotInstalledError: when an extension is neither installed nor has its wheel.
    """
    import duckdb

    settings = {
        "extension_directory": directory,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": True,
        **(config or {}),
    }
    con = duckdb.connect(database, config=settings)
    try:
        (load_extensions if load else install_extensions)(con, directory, names)
    except BaseException:
        con.close()
        raise
    return con
