"""The local stack's Spark services: a Spark Connect server and a standalone cluster, on loopback only."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.spark import SparkCluster, SparkConnectServer
from airflow_provider_lakehouse.devstack.stack import Stack

# exclusive: stops and restarts the stack's Spark servers
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.exclusive]

# Holds its executors (and their Python workers) until the test has looked at their sockets.
JOB = """
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("devstack-spark-test").getOrCreate()
rdd = spark.sparkContext.parallelize(range(1, 1001), 4)
print(f"SUM={rdd.map(lambda x: x * x).sum()}", flush=True)
# pyarrow is not in the base interpreter: this fails unless executors run the virtualenv's Python.
prefixes = rdd.map(lambda _: (__import__("pyarrow").__name__, __import__("sys").prefix)).distinct().collect()
print(f"EXECUTOR_PREFIXES={sorted({p for _, p in prefixes})}", flush=True)
Path(sys.argv[1]).write_text("computed")
deadline = time.monotonic() + 120
while not Path(sys.argv[2]).exists() and time.monotonic() < deadline:
    time.sleep(0.1)
spark.stop()
"""


def _quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def spark_connect(stack: Stack) -> Iterator[str]:
    """The stack's Spark Connect URL; the server is stopped afterwards unless it was running before."""
    was_running = stack.spark_connect_server().running()
    url = stack.start_spark_connect(log=_quiet)
    try:
        yield url
    finally:
        if not was_running:
            stack.stop_spark_connect(log=_quiet)


@pytest.fixture(scope="module")
def spark_cluster(stack: Stack) -> Iterator[str]:
    """The stack's standalone master URL; master and worker are stopped afterwards unless they were running."""
    was_running = stack.spark_cluster().running()
    url = stack.start_spark_cluster(log=_quiet)
    try:
        yield url
    finally:
        if not was_running:
            stack.stop_spark_cluster(log=_quiet)


def _ppids() -> dict[int, int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _with_descendants(roots: set[int]) -> set[int]:
    parents = _ppids()
    found = set(roots)
    while True:
        more = {pid for pid, ppid in parents.items() if ppid in found} - found
        if not more:
            return found
        found |= more


def _address(hex_addr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address from /proc/net/tcp{,6}: 32-bit words in host (little-endian) byte order."""
    raw = bytes.fromhex(hex_addr)
    swapped = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(swapped)


def _listening(pids: set[int]) -> list[tuple[int, str, int]]:
    """``(pid, address, port)`` of every listening TCP socket owned by ``pids``."""
    inodes: dict[str, tuple[str, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                addr, port = fields[1].split(":")
                inodes[fields[9]] = (str(_address(addr)), int(port, 16))
    sockets = []
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            inode = target.removeprefix("socket:[").removesuffix("]")
            if target.startswith("socket:[") and inode in inodes:
                sockets.append((pid, *inodes[inode]))
    return sockets


def _is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    # Java listens on IPv6 sockets: 127.0.0.1 shows as ::ffff:127.0.0.1, which is_loopback does not accept.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_connect_server_answers_over_the_airflow_connection_and_is_reused(
    stack: Stack, spark_connect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
    from pyspark.sql import SparkSession, functions

    server = stack.spark_connect_server()
    pid = server.pid()
    assert pid is not None and spark_connect == server.url
    assert stack.start_spark_connect(log=_quiet) == spark_connect
    assert server.pid() == pid, "a second start must reuse the running server"
    assert stack.status()["spark_connect"] == spark_connect

    env = stack.env()
    assert json.loads(env["AIRFLOW_CONN_SPARK_CONNECT_LOCAL"]) == {
        "conn_type": "spark_connect",
        "host": "sc://127.0.0.1",
        "port": server.port,
    }
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_LOCAL", env["AIRFLOW_CONN_SPARK_CONNECT_LOCAL"])
    url = SparkConnectHook("spark_connect_local").get_connection_url()
    assert url == f"{spark_connect}/"

    mode_was_set = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    spark = SparkSession.builder.remote(url).getOrCreate()
    try:
        assert spark.range(1, 101).agg(functions.sum("id")).collect()[0][0] == 5050
        # Idle Python workers end, so the long-lived server does not keep one daemon per finished task.
        assert spark.conf.get("spark.python.worker.idleTimeoutSeconds") == "60"
        # Python UDFs run in the server's Python workers: they must be this virtualenv's interpreter.
        prefix = functions.udf(lambda _: __import__("sys").prefix, "string")
        assert spark.range(1).select(prefix("id")).collect()[0][0] == sys.prefix
    finally:
        spark.stop()
        # getOrCreate() set it and stop() keeps it; it would make later classic PySpark in this process,
        # and every spark-submit started from it, fail with CONNECT_URL_NOT_SET.
        if not mode_was_set:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def test_cluster_runs_spark_submit_on_loopback_only(
    stack: Stack, spark_connect: str, spark_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    cluster = stack.spark_cluster()
    master_pid, worker_pid = cluster.pid(), cluster.worker_pid()
    assert master_pid is not None and worker_pid is not None and spark_cluster == cluster.master_url
    assert stack.start_spark_cluster(log=_quiet) == spark_cluster
    assert (cluster.pid(), cluster.worker_pid()) == (master_pid, worker_pid), "a second start must reuse both"

    env = dict(os.environ, **stack.env())
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", env["AIRFLOW_CONN_SPARK_CLUSTER"])
    submit_argv = SparkSubmitHook(conn_id="spark_cluster")._build_spark_submit_command("job.py")
    assert submit_argv[submit_argv.index("--master") + 1] == spark_cluster
    assert submit_argv[submit_argv.index("--deploy-mode") + 1] == "client"

    job, computed, release = tmp_path / "job.py", tmp_path / "computed", tmp_path / "release"
    job.write_text(JOB)
    # Without PYSPARK_PYTHON the driver tells executors to run `python3`, which the worker's PATH must
    # resolve to this virtualenv (the case of an Airflow task that does not set it).
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        env.pop(name, None)
    argv = [
        "spark-submit",
        "--master",
        spark_cluster,
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        str(job),
        str(computed),
        str(release),
    ]
    stderr_file = tmp_path / "spark-submit.err"
    with stderr_file.open("w") as stderr:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, cwd=tmp_path, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 300
        while not computed.exists():
            if proc.poll() is not None:
                out, _ = proc.communicate()
                pytest.fail(f"spark-submit exited early:\n{out[-2000:]}\n{stderr_file.read_text()[-3000:]}")
            assert time.monotonic() < deadline, f"the job did not finish:\n{stderr_file.read_text()[-3000:]}"
            time.sleep(0.2)

        # Everything the stack runs, plus the driver, while the application still holds its executors.
        roots = {master_pid, worker_pid, stack.spark_connect_server().pid(), proc.pid}
        pids = _with_descendants({pid for pid in roots if pid is not None})
        executors = [p for p in pids if "CoarseGrainedExecutorBackend" in _cmdline(p)]
        assert executors, "the worker should have launched an executor"
        sockets = _listening(pids)
        exposed = [s for s in sockets if not _is_loopback(s[1])]
        assert not exposed, f"listening beyond loopback: {[(p, a, port, _cmdline(p)[:200]) for p, a, port in exposed]}"
        ports = {port for _, _, port in sockets}
        assert {
            cluster.master_port,
            cluster.master_ui_port,
            cluster.worker_ui_port,
            stack.spark_connect_server().port,
        } <= ports
        listeners = {p for p, _, _ in sockets}
        assert listeners & set(executors), "the executors' sockets were checked"
        assert listeners & _with_descendants({proc.pid}), "the driver's sockets were checked"
        assert 6066 not in ports, "the master's REST submission server should be off"
    finally:
        release.write_text("go")
        try:
            out, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
    assert proc.returncode == 0, stderr_file.read_text()[-3000:]
    assert "SUM=333833500" in out.splitlines()
    assert f"EXECUTOR_PREFIXES={[sys.prefix]}" in out.splitlines()


def test_stale_pid_files_are_not_mistaken_for_spark(tmp_path: Path) -> None:
    server = SparkConnectServer(state_dir=tmp_path, port=1)
    cluster = SparkCluster(state_dir=tmp_path, master_port=1, master_ui_port=2, worker_ui_port=3)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    for pid in (os.getpid(), gone.pid):  # a live unrelated process, then a dead PID
        for name in ("connect", "master", "worker"):
            (tmp_path / f"{name}.pid").write_text(str(pid))
        assert server.pid() is None and cluster.pid() is None and cluster.worker_pid() is None
        assert not list(tmp_path.glob("*.pid"))
        assert not server.running() and not cluster.running()
        server.stop()
        cluster.stop()
    assert Path(f"/proc/{os.getpid()}").exists()


def _mapped_files(pid: int) -> set[str]:
    with open(f"/proc/{pid}/maps") as maps:
        return {line.split(maxsplit=5)[5].strip() for line in maps if len(line.split(maxsplit=5)) == 6}


def test_a_stopped_connect_server_leaves_a_class_archive_the_next_one_maps(stack: Stack, tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    from airflow_provider_lakehouse.devstack.ports import pick_port

    server = SparkConnectServer(state_dir=tmp_path, port=pick_port(15090), jars=stack.s3a_jar_paths())
    archive = server.class_archive()
    assert archive is not None and not archive.path.exists()

    def answer() -> int:
        mode_was_set = "SPARK_CONNECT_MODE_ENABLED" in os.environ
        spark = SparkSession.builder.remote(server.url).getOrCreate()
        try:
            return spark.sql("SELECT sum(id) AS s FROM range(10)").collect()[0][0]
        finally:
            spark.stop()
            if not mode_was_set:
                os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)

    try:
        server.start()
        pid = server.pid()
        assert pid is not None
        assert f"-XX:ArchiveClassesAtExit={archive.pending}" in _cmdline(pid)
        assert answer() == 45
        server.stop()
        # written on the way out and moved into place; no partial file is left
        assert archive.path.stat().st_size > 10_000_000
        assert not archive.pending.exists()

        server.start()
        pid = server.pid()
        assert pid is not None
        assert f"-XX:SharedArchiveFile={archive.path}" in _cmdline(pid)
        assert str(archive.path) in _mapped_files(pid), "the JVM must map the archive, not just be told of it"
        assert answer() == 45
    finally:
        server.stop()
    assert sorted(p.name for p in archive.path.parent.iterdir()) == [archive.path.name]
