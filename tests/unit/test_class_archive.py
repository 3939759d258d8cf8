"""The spark-submit drivers' class-data archive: which JVM options a task gets, and how a new archive lands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airflow_provider_lakehouse.spark.class_archive import ARCHIVES_KEPT, DRIVER_JAVA_OPTIONS, ClassArchive


@pytest.fixture
def spark_home(tmp_path: Path) -> str:
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    (jars / "spark-core_2.13-4.3.0.jar").write_bytes(b"")
    return str(tmp_path / "spark")


def test_first_task_writes_an_archive_at_exit_and_later_tasks_map_it(spark_home: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = ClassArchive.for_submit(spark_home, {}, cache)
    assert first is not None
    options = first.with_options({DRIVER_JAVA_OPTIONS: "-Duser.timezone=UTC"})[DRIVER_JAVA_OPTIONS]
    assert options.startswith("-Duser.timezone=UTC ")  # the user's own options stay, first
    assert f"-XX:ArchiveClassesAtExit={first.pending}" in options
    assert "-XX:+IgnoreUnrecognizedVMOptions" in options
    first.pending.write_bytes(b"archive")  # what the JVM writes when it exits
    assert first.settle() is True
    assert first.path.read_bytes() == b"archive" and not first.pending.exists()

    later = ClassArchive.for_submit(spark_home, {}, cache)
    assert later is not None and later.path == first.path and later.pending != first.pending
    assert f"-XX:SharedArchiveFile={first.path}" in later.java_options()
    assert later.settle() is False  # it wrote nothing


def test_two_first_tasks_keep_one_whole_archive(spark_home: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a = ClassArchive.for_submit(spark_home, {}, cache)
    b = ClassArchive.for_submit(spark_home, {}, cache)
    assert a is not None and b is not None
    a.java_options(), b.java_options()
    a.pending.write_bytes(b"from a")
    b.pending.write_bytes(b"from b")
    assert a.settle() is True
    assert b.settle() is False  # the archive in place is whole and stays; b's copy is removed
    assert a.path.read_bytes() == b"from a"
    assert sorted(p.name for p in cache.iterdir()) == [a.path.name]


def test_a_killed_jvm_leaves_no_archive(spark_home: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    archive = ClassArchive.for_submit(spark_home, {}, cache)
    assert archive is not None
    archive.java_options()
    archive.pending.write_bytes(b"")  # created, never written
    assert archive.settle() is False
    assert list(cache.iterdir()) == []


def test_the_archive_belongs_to_one_class_path(spark_home: str, tmp_path: Path) -> None:
    plain = ClassArchive.for_submit(spark_home, {}, tmp_path)
    with_s3a = ClassArchive.for_submit(spark_home, {"spark.driver.extraClassPath": "/jars/hadoop-aws.jar"}, tmp_path)
    assert plain is not None and with_s3a is not None
    assert plain.path != with_s3a.path
    (Path(spark_home) / "jars" / "spark-sql_2.13-4.3.0.jar").write_bytes(b"")  # another Spark install
    upgraded = ClassArchive.for_submit(spark_home, {}, tmp_path)
    assert upgraded is not None and upgraded.path != plain.path


def test_no_spark_home_no_archive(tmp_path: Path) -> None:
    assert ClassArchive.for_submit(None, {}, tmp_path) is None


def test_an_unwritable_cache_leaves_the_driver_options_alone(spark_home: str, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would go")
    archive = ClassArchive.for_submit(spark_home, {}, blocker / "cache")
    assert archive is not None
    conf = {DRIVER_JAVA_OPTIONS: "-Dkeep=1"}
    assert archive.with_options(conf) == conf
    assert archive.settle() is False


@pytest.mark.parametrize("own", ["-Xshare:off", "-XX:SharedArchiveFile=/opt/app.jsa -Xmx1g"])
def test_driver_options_that_settle_class_sharing_win(spark_home: str, tmp_path: Path, own: str) -> None:
    archive = ClassArchive.for_submit(spark_home, {}, tmp_path / "cache")
    assert archive is not None
    assert archive.with_options({DRIVER_JAVA_OPTIONS: own}) == {DRIVER_JAVA_OPTIONS: own}


def test_a_server_has_an_archive_of_its_own_that_any_process_can_settle(spark_home: str, tmp_path: Path) -> None:
    driver = ClassArchive.for_submit(spark_home, {}, tmp_path)
    server = ClassArchive.for_server(spark_home, {}, tmp_path)
    assert driver is not None and server is not None
    assert server.path != driver.path  # a Connect server's classes are not a task driver's
    # the process that stops the server finds the file the one that started it named
    again = ClassArchive.for_server(spark_home, {}, tmp_path)
    assert again == server
    assert f"-XX:ArchiveClassesAtExit={server.pending}" in server.java_options()
    server.pending.write_bytes(b"archive")
    assert again.settle() is True
    assert f"-XX:SharedArchiveFile={server.path}" in server.java_options()


def test_the_newest_archives_of_a_kind_stay_and_older_ones_go(spark_home: str, tmp_path: Path) -> None:
    """A new archive for each class path (or Spark, or JVM): only the most recently written few stay, and the
    other kind (the Connect server's) is left alone."""
    server = ClassArchive.for_server(spark_home, {}, tmp_path)
    assert server is not None
    server.java_options()
    server.pending.write_bytes(b"server")
    assert server.settle() is True
    os.utime(server.path, (1, 1))  # the oldest file in the directory
    written = []
    for n in range(ARCHIVES_KEPT + 2):
        archive = ClassArchive.for_submit(spark_home, {"spark.driver.extraClassPath": f"/jars/{n}.jar"}, tmp_path)
        assert archive is not None
        archive.java_options()
        archive.pending.write_bytes(b"driver")
        assert archive.settle() is True
        os.utime(archive.path, (1000 + n, 1000 + n))  # written one after the other
        written.append(archive.path)
    left = sorted(p.name for p in tmp_path.glob("spark-driver-*.jsa"))
    assert left == sorted(p.name for p in written[-ARCHIVES_KEPT:])
    assert server.path.exists()
