"""A Spark Connect server of a test's own, beside the stack's: for a test that counts what the server does (its
Python worker daemons) while the suite's other worker uses the stack's server at the same time."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.devstack.ports import pick_port
from airflow_provider_lakehouse.devstack.spark import SparkConnectServer
from airflow_provider_lakehouse.devstack.stack import SPARK_PREFERRED_PORTS

#: above the stack's preferred port and the Spark 4.0 run's second stack (50 above), so starts do not race
PORT_OFFSET = 100


@contextmanager
def connect_server_of_its_own(stack: Any, state_dir: Path) -> Iterator[SparkConnectServer]:
    """A started Connect server with the stack's S3A jars, its state in ``state_dir``; stopped on exit.

    The stack server's class-data archive is linked in when there is one (it is valid for the same ``java`` and
    class path, whatever the port), so this server starts as fast as the stack's and writes no archive of its own.
    """
    stacks_server = stack.spark_connect_server()
    server = SparkConnectServer(
        state_dir=state_dir,
        port=pick_port(SPARK_PREFERRED_PORTS["spark_connect"] + PORT_OFFSET),
        jars=stacks_server.jars,
    )
    archive, own = stacks_server.class_archive(), server.class_archive()
    if archive is not None and own is not None and archive.path.is_file():
        own.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(archive.path, own.path)
        except OSError:
            shutil.copyfile(archive.path, own.path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
