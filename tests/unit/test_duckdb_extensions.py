"""Extensions loaded from their wheels when several processes share one fresh extension directory."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import time
from pathlib import Path

import duckdb
import pytest

from airflow_provider_lakehouse.duckdb_engine.extensions import (
    LOCK_FILE,
    DuckDBNotInstalledError,
    install_extensions,
    load_extensions,
)

NAMES = ("httpfs", "sqlite")


def _connection(directory: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(config={"extension_directory": str(directory), "autoinstall_known_extensions": False})


def _loaded(con: duckdb.DuckDBPyConnection) -> list[str]:
    return sorted(name for (name,) in con.sql("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall())


def _use_autoloaded(con: duckdb.DuckDBPyConnection) -> None:
    """Statements that need ``httpfs`` and ``sqlite``: DuckDB loads them by itself from the extension directory."""
    con.sql("CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')")
    con.sql("ATTACH ':memory:' AS other (TYPE sqlite)")


def _load(directory: str, autoload: bool = False) -> None:
    con = _connection(Path(directory))
    if autoload:
        install_extensions(con, directory, NAMES)
        _use_autoloaded(con)
    else:
        load_extensions(con, directory, NAMES)
    assert {"httpfs", "sqlite_scanner"} <= set(_loaded(con)), _loaded(con)


def test_processes_loading_from_one_fresh_directory_at_once_all_succeed(tmp_path: Path) -> None:
    """Without the install lock, about 1 in 30 such processes failed here ("Extension ... not found"): one's
    ``LOAD`` fell into another's remove-then-move of the same file, as two pytest workers did in CI."""
    context = multiprocessing.get_context("spawn")
    for round_number in range(3):
        directory = tmp_path / str(round_number)
        directory.mkdir()
        # half load at once, half install and leave the loading to DuckDB's autoload
        processes = [context.Process(target=_load, args=(str(directory), n % 2 == 1)) for n in range(6)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=300)
        assert [process.exitcode for process in processes] == [0] * 6
        installed = sorted(path.name for path in directory.rglob("*.duckdb_extension"))
        assert installed == ["httpfs.duckdb_extension", "sqlite_scanner.duckdb_extension"]
        assert not [path for path in directory.rglob("*") if ".tmp" in path.name], "a temporary file was left"


def test_a_load_waits_while_another_process_installs(tmp_path: Path) -> None:
    _load(str(tmp_path))  # installed
    fd = os.open(tmp_path / LOCK_FILE, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as an installer holds it
    process = multiprocessing.get_context("spawn").Process(target=_load, args=(str(tmp_path),))
    try:
        process.start()
        time.sleep(3)
        assert process.is_alive(), "the load did not wait for the install"
    finally:
        os.close(fd)
    process.join(timeout=120)
    assert process.exitcode == 0


def test_an_extension_without_its_wheel_names_the_wheel(tmp_path: Path) -> None:
    con = _connection(tmp_path)
    with pytest.raises(DuckDBNotInstalledError, match="pip install duckdb-extension-spatial"):
        load_extensions(con, str(tmp_path), ["spatial"])


def test_an_installed_extension_is_loaded_only_when_a_statement_needs_it(tmp_path: Path) -> None:
    """Each ``LOAD`` verifies the extension's signature over its whole file (about 0.1 s each): a connection that
    never touches S3 or SQLite must not pay for them."""
    install_extensions(_connection(tmp_path), str(tmp_path), NAMES)
    con = _connection(tmp_path)
    before = _loaded(con)
    install_extensions(con, str(tmp_path), NAMES)
    assert _loaded(con) == before and "httpfs" not in before and "sqlite_scanner" not in before
    _use_autoloaded(con)
    assert {"httpfs", "sqlite_scanner"} <= set(_loaded(con))


def test_aliases_count_as_installed(tmp_path: Path) -> None:
    """``sqlite`` is installed as ``sqlite_scanner``: asked for again under either name, nothing is installed."""
    install_extensions(_connection(tmp_path), str(tmp_path), ["sqlite"])
    (installed,) = tmp_path.rglob("sqlite_scanner.duckdb_extension")
    stamp = installed.stat().st_mtime_ns
    install_extensions(_connection(tmp_path), str(tmp_path), ["sqlite", "sqlite_scanner", "sqlite3"])
    assert installed.stat().st_mtime_ns == stamp
