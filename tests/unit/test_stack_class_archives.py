"""A stack can do without class-data archives (the throwaway stack of the test of another Spark release): its
Connect server then neither maps nor writes one. (That lake ``main``'s spark-submit drivers then do without one
too is checked on a running stack by ``tests/packaging/test_spark_versions.py``.)"""

from __future__ import annotations

from pathlib import Path

from airflow_provider_lakehouse.devstack.stack import Stack


def test_a_stacks_connect_server_has_a_class_archive_unless_told_otherwise(tmp_path: Path) -> None:
    stack = Stack(tmp_path / "state")
    assert stack.spark_connect_server().class_archives

    stack.without_class_archives()
    assert stack.spark_connect_server().class_archive() is None
    assert Stack(tmp_path / "state").spark_connect_server().class_archive() is None  # kept in the state folder
