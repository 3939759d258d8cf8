"""Spark on loopback from the pip ``pyspark`` install: a Spark Connect server and a standalone cluster.

The pip ``pyspark`` package is a complete Spark distribution (``bin/``, ``jars/``), so no separate
download is needed. It ships no ``start-master.sh``/``start-worker.sh``, and its
``sbin/start-connect-server.sh`` daemonizes through ``nohup``; every JVM here is therefore launched
directly (``bin/spark-class`` and ``bin/spark-submit`` both ``exec`` java), in the foreground and in
its own process group, so the PID we record is the JVM's and ``stop()`` reaches its children too.

Nothing here is started by ``Stack.up()``: each service is a JVM with a heap of 1-2 GB.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from airflow_provider_lakehouse.devstack.jars import classpath_conf
from airflow_provider_lakehouse.devstack.ports import LOOPBACK
from airflow_provider_lakehouse.spark.class_archive import ClassArchive

CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# Logged when the gRPC service cannot start (e.g. its port is taken); the JVM then stays up, serving nothing.
_CONNECT_FAILED = "Error starting Spark Connect server"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_APP_NAME = "Spark Connect server (lakehouse devstack)"
#: how long a stopping Connect server may take before it is killed: a server without a class-data archive
#: writes one on its way out (250 MB after a TPC-DS run, about a second)
CONNECT_STOP_TIMEOUT_S = 30.0

# Runs in a fresh interpreter: an open port is not yet a working server (the SparkSession behind it
# may still be starting), and a Connect session in the caller's process would outlive the check.
_CONNECT_PROBE = (
    "import sys\n"
    "from pyspark.sql import SparkSession\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
    "assert spark.range(3).count() == 3\n"
    "spark.stop()\n"
)


def spark_home() -> Path:
    """The pip ``pyspark`` package directory, which is the Spark home (``bin/spark-class``, ``jars/``)."""
    # Located, not imported: importing pyspark takes about a second and is not needed to launch a JVM.
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The 'pyspark' package is not installed.")
    home = Path(next(iter(spec.submodule_search_locations))).resolve()
    if not (home / "bin" / "spark-class").exists():
        raise RuntimeError(f"{home} has no bin/spark-class: 'pyspark-client' (no JVM parts) replaced 'pyspark'.")
    return home


# The command lines below are shared with docker/compose.yaml (tests/unit/test_docker_compose.py compares
# them): the deployment runs the same JVMs with the same flags, only on container addresses and ports.


def server_env() -> dict[str, str]:
    """Environment every Spark JVM launched here gets on top of the caller's (and the compose services too)."""
    return {"SPARK_CONNECT_MODE": "0"}  # as sbin/start-connect-server.sh sets it: run a server, not a client


def cluster_env() -> dict[str, str]:
    """Environment of the standalone master and worker, on top of :func:`server_env`."""
    return {
        # On by default: a REST submission server on the fixed port 6066, which a second stack could not
        # bind. It serves only cluster-mode submissions, which this stack does not use.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        # A taken port must fail the start, not make Spark move silently to the next port, away from
        # the URL we hand out.
        "SPARK_DAEMON_JAVA_OPTS": "-Dspark.port.maxRetries=0",
    }


def master_argv(home: Path | str, *, host: str, port: int, webui_port: int) -> list[str]:
    """The standalone master's command line.

    :param home: the Spark home (the pip ``pyspark`` package directory), see :func:`spark_home`.
    :param host: the address the master binds and advertises (``spark://<host>:<port>``).
    :param port: the master's RPC port.
    :param webui_port: the master's web UI port.
    """
    return [
        str(Path(home) / "bin" / "spark-class"),
        MASTER_CLASS,
        "--host",
        host,
        "--port",
        str(port),
        "--webui-port",
        str(webui_port),
    ]


def worker_argv(home: Path | str, *, master_url: str, host: str, webui_port: int, cores: int, memory: str) -> list[str]:
    """The standalone worker's command line.

    :param home: the Spark home, see :func:`spark_home`.
    :param master_url: ``spark://host:port`` of the master to register with.
    :param host: the address the worker binds and advertises.
    :param webui_port: the worker's web UI port.
    :param cores: cores the worker offers to applications.
    :param memory: memory the worker offers to executors (``3g``).
    """
    return [
        str(Path(home) / "bin" / "spark-class"),
        WORKER_CLASS,
        master_url,
        "--host",
        host,
        "--webui-port",
        str(webui_port),
        "--cores",
        str(cores),
        "--memory",
        memory,
    ]


def connect_conf(*, bind_address: str, port: int, driver_host: str) -> dict[str, str]:
    """The Spark properties of the Spark Connect server.

    :param bind_address: the address the gRPC service and the driver bind (``127.0.0.1``, ``0.0.0.0``).
    :param port: the gRPC port.
    :param driver_host: the address the driver advertises to executors.
    """
    return {
        "spark.connect.grpc.binding.address": bind_address,
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.port.maxRetries": "0",  # fail on a taken port; never serve another one
        "spark.driver.bindAddress": bind_address,
        "spark.driver.host": driver_host,
        "spark.ui.enabled": "false",
        # Idle Python workers (not their daemons) end after a minute instead of holding memory between tasks.
        "spark.python.worker.idleTimeoutSeconds": "60",
        "spark.python.worker.killOnIdleTimeout": "true",
        # A client that vanished without interrupting its operation (a task process SIGKILLed) leaves it running
        # until the server drops it. The server does not notice the dead client while the operation sends
        # nothing: the execution counts as attached until its response stream ends (after 2 min by default),
        # then is dropped once nothing reattached for 5 min, checked every 30 s: 7.5 min of a runaway statement.
        # A live client reattaches at once whenever its stream ends, so shorter streams and a 30 s detach
        # timeout bound that to about a minute (measured in docs/scheduler.md).
        "spark.connect.execute.reattachable.senderMaxStreamDuration": "20s",
        "spark.connect.execute.manager.detachedTimeout": "30s",
        "spark.connect.execute.manager.maintenanceInterval": "10s",
    }


def connect_argv(home: Path | str, *, master: str, driver_memory: str, conf: dict[str, str]) -> list[str]:
    """The Spark Connect server's command line (``bin/spark-submit`` of its main class).

    :param home: the Spark home, see :func:`spark_home`.
    :param master: where the server's queries run (``local[2]``, ``spark://...``).
    :param driver_memory: the server JVM's heap.
    :param conf: Spark properties, see :func:`connect_conf`.
    """
    argv = [
        str(Path(home) / "bin" / "spark-submit"),
        "--class",
        CONNECT_CLASS,
        "--name",
        CONNECT_APP_NAME,
        "--master",
        master,
        "--driver-memory",
        driver_memory,
    ]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return argv


def _base_env(conf_dir: Path) -> dict[str, str]:
    """Environment of every JVM started here: loopback only, this virtualenv's Python, a private conf dir."""
    # Not resolved: .venv/bin/python is a symlink to the base interpreter, and only the unresolved path
    # gives Python the virtualenv's site-packages (pyspark, pyarrow, this project).
    python = sys.executable
    env = dict(os.environ)
    # A Spark Connect client session leaves SPARK_CONNECT_MODE_ENABLED=1 in its process's environment,
    # even after stop(); inherited, these turn a classic PySpark process into a Connect client.
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE", "SPARK_API_MODE"):
        env.pop(name, None)
    env.update(
        SPARK_HOME=str(spark_home()),
        # Our own, empty conf dir: a developer's spark-defaults.conf cannot change ports or bind addresses.
        SPARK_CONF_DIR=str(conf_dir),
        # Web UIs, block managers and executors bind this address; unset, they bind the eth0 address.
        SPARK_LOCAL_IP=LOOPBACK,
        PYSPARK_PYTHON=python,
        # A driver that does not set PYSPARK_PYTHON makes executors run `python3` from the worker's PATH.
        PATH=str(Path(python).parent) + os.pathsep + os.environ.get("PATH", ""),
    )
    env.update(server_env())
    return env


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def _state(pid: int) -> bytes:
    """The state letter from ``/proc/<pid>/stat`` (b"" if gone); the command name may hold spaces and ")"."""
    fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[-1].split()
    return fields[0] if fields else b""


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (an exited child not yet reaped still has a /proc entry)."""
    return _state(pid) not in (b"", b"Z")


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _read(f"/proc/{entry.name}/stat").rsplit(b")", 1)[-1].split()
            if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
                members.append(int(entry.name))
    return members


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _wait_group_gone(pgid: int, timeout_s: float) -> bool:
    """Wait until no live process is left in group ``pgid``, reaping its leader if it is our child."""
    deadline = time.monotonic() + timeout_s
    while _group_members(pgid):
        _reap(pgid)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    _reap(pgid)
    return True


def _listening_ports(pid: int) -> set[int]:
    """TCP ports that ``pid`` listens on: its socket inodes looked up in the kernel's TCP tables."""
    inodes = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return set()
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):  # Java listens on IPv6 sockets, even for 127.0.0.1
        for line in _read(table).decode().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@dataclass
class _Jvm:
    """One JVM we launch and own: its PID file, its log file, and the test that a PID is still ours."""

    name: str
    main_class: str
    state_dir: Path

    @property
    def conf_dir(self) -> Path:
        return self.state_dir / "conf"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / f"{self.name}.log"

    def pid(self) -> int | None:
        """PID of our running JVM; a stale PID file (dead or reused PID) is removed."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        # The main class is in the command line both while the bash launcher runs and after it has
        # exec'ed java; SPARK_CONF_DIR in the environment tells our JVM from another stack's.
        cmdline = _read(f"/proc/{pid}/cmdline")
        marker = f"SPARK_CONF_DIR={self.conf_dir}".encode()
        if (
            not _alive(pid)
            or self.main_class.encode() not in cmdline
            or marker not in _read(f"/proc/{pid}/environ").split(b"\0")
        ):
            self.pid_file.unlink(missing_ok=True)
            return None
        return pid

    def spawn(self, argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
        """Start ``argv`` in its own session (its own process group) with output appended to the log."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        cwd.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {self.name}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        self.pid_file.write_text(str(proc.pid))
        return proc

    def log_tail(self, chars: int = 3000) -> str:
        """The end of this run's log (the log file keeps earlier runs too)."""
        try:
            with self.log_file.open("rb") as log:
                log.seek(max(log.seek(0, os.SEEK_END) - 65536, 0))
                text = log.read().decode(errors="replace")
        except OSError:
            return ""
        return text[text.rfind("\n==== ") :][-chars:]

    def stop(self, timeout_s: float = 20.0) -> bool:
        """SIGTERM the process group, wait, then SIGKILL what is left; reap the JVM if it is our child.

        :returns: True when a running JVM ended on SIGTERM (so it ran its exit, which writes a class-data
            archive), False when none ran or it had to be killed.
        """
        pid = self.pid()
        if pid is None:
            return False
        # start_new_session made the JVM a group leader, so its PID is the group: the group also holds the
        # worker's executors and Python workers, which would otherwise outlive it.
        _signal_group(pid, signal.SIGTERM)
        ended = _wait_group_gone(pid, timeout_s)
        if not ended:
            _signal_group(pid, signal.SIGKILL)
            _wait_group_gone(pid, 5.0)
        self.pid_file.unlink(missing_ok=True)
        return ended


@dataclass
class SparkCluster:
    """A standalone Spark cluster on loopback: one master and one worker, started with ``bin/spark-class``.

    :param state_dir: PID files, logs, the private conf dir and the worker's application folders.
    :param master_port: the master's RPC port (``spark://127.0.0.1:<port>``).
    :param master_ui_port: the master's web UI; its ``/json/`` tells whether the worker registered.
    :param worker_ui_port: the worker's web UI.
    :param cores: cores the worker offers to applications.
    :param memory: memory the worker offers to executors (their total, not a JVM heap of its own).
    """

    state_dir: Path
    master_port: int
    master_ui_port: int
    worker_ui_port: int
    cores: int = 2
    memory: str = "3g"

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def master_ui_url(self) -> str:
        return f"http://{LOOPBACK}:{self.master_ui_port}"

    @property
    def _master(self) -> _Jvm:
        return _Jvm("master", MASTER_CLASS, self.state_dir)

    @property
    def _worker(self) -> _Jvm:
        return _Jvm("worker", WORKER_CLASS, self.state_dir)

    def pid(self) -> int | None:
        """PID of our running master JVM."""
        return self._master.pid()

    def worker_pid(self) -> int | None:
        """PID of our running worker JVM (its executors are its children)."""
        return self._worker.pid()

    def master_state(self) -> dict[str, object] | None:
        """The master web UI's ``/json/`` document, or None while it does not answer."""
        try:
            with urllib.request.urlopen(f"{self.master_ui_url}/json/", timeout=2) as response:
                return dict(json.load(response))
        except (OSError, urllib.error.URLError, ValueError):
            return None

    def _alive_workers(self) -> int:
        state = self.master_state()
        if not state or state.get("url") != self.master_url or state.get("status") != "ALIVE":
            return 0
        workers = state.get("workers")
        return sum(1 for w in workers if w.get("state") == "ALIVE") if isinstance(workers, list) else 0

    def running(self) -> bool:
        """True when both JVMs are ours and alive and the master lists an ALIVE worker."""
        return self.pid() is not None and self.worker_pid() is not None and self._alive_workers() > 0

    def start(self, timeout_s: float = 120.0) -> None:
        """Start the master, then the worker; return once the worker has registered with the master.

        :raises RuntimeError: a JVM exited or the cluster was not ready within ``timeout_s`` (both are
            stopped again; the message ends with the log of the one that failed).
        """
        deadline = time.monotonic() + timeout_s
        env = _base_env(self._master.conf_dir)
        env.update(cluster_env())
        env["SPARK_WORKER_DIR"] = str(self.state_dir / "work")  # default: inside the pyspark package
        home = spark_home()

        master = self._master.spawn(
            master_argv(home, host=LOOPBACK, port=self.master_port, webui_port=self.master_ui_port),
            env,
            cwd=self.state_dir,
        )
        # The worker starts only now: one that finds no master retries registration after 5-15 s.
        self._wait(
            lambda: self.master_state() is not None,
            master,
            self._master,
            deadline,
            f"Spark master did not come up on {self.master_url}",
        )
        worker = self._worker.spawn(
            worker_argv(
                home,
                master_url=self.master_url,
                host=LOOPBACK,
                webui_port=self.worker_ui_port,
                cores=self.cores,
                memory=self.memory,
            ),
            env,
            cwd=self.state_dir,
        )
        self._wait(
            lambda: self._alive_workers() > 0,
            worker,
            self._worker,
            deadline,
            f"Spark worker did not register with {self.master_url}",
        )

    def _wait(
        self, ready: Callable[[], bool], proc: subprocess.Popen[bytes], jvm: _Jvm, deadline: float, what: str
    ) -> None:
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                exited = f" (exit code {proc.returncode})" if proc.returncode is not None else ""
                tail = jvm.log_tail()
                self.stop()
                raise RuntimeError(f"{what}{exited}; log {jvm.log_file}:\n{tail}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the worker (and its executors), then the master."""
        self._worker.stop()
        self._master.stop()


@dataclass
class SparkConnectServer:
    """A Spark Connect server on loopback, run by ``bin/spark-submit`` in the foreground as our child.

    :param state_dir: PID file, log, the private conf dir, and the working directory the server's
        ``spark-warehouse/`` lands in.
    :param port: the gRPC port (``sc://127.0.0.1:<port>``).
    :param master: where the server's queries run; ``local[2]`` uses both cores in the server's JVM.
    :param driver_memory: the server JVM's heap.
    :param class_archives: map a class-data archive, or write one when it stops (see :meth:`class_archive`).
    """

    state_dir: Path
    port: int
    master: str = "local[2]"
    driver_memory: str = "2g"
    jars: tuple[Path, ...] = ()  # on the server's classpath, e.g. the S3A jars
    class_archives: bool = True

    @property
    def url(self) -> str:
        return f"sc://{LOOPBACK}:{self.port}"

    @property
    def _jvm(self) -> _Jvm:
        return _Jvm("connect", CONNECT_CLASS, self.state_dir)

    def pid(self) -> int | None:
        """PID of our running server JVM."""
        return self._jvm.pid()

    @property
    def log_file(self) -> Path:
        """The server's log (it keeps earlier runs' output too)."""
        return self._jvm.log_file

    def running(self) -> bool:
        """True when the JVM is ours and alive and it listens on the gRPC port."""
        pid = self.pid()
        return pid is not None and self.port in _listening_ports(pid)

    def start(self, timeout_s: float = 180.0) -> None:
        """Start the server; return once a query over Spark Connect has answered.

        :raises RuntimeError: the JVM exited or no query answered within ``timeout_s`` (the server is
            stopped again; the message ends with its log).
        """
        conf = self._conf()
        archive = self.class_archive()
        if archive is not None:
            archive.pending.unlink(missing_ok=True)  # left by a server that was killed while writing it
            conf = archive.with_options(conf)
        argv = connect_argv(spark_home(), master=self.master, driver_memory=self.driver_memory, conf=conf)
        # Spark writes spark-warehouse/ (and derby.log with Hive) into its working directory.
        proc = self._jvm.spawn(argv, _base_env(self._jvm.conf_dir), cwd=self.state_dir / "connect")
        deadline = time.monotonic() + timeout_s
        probe_error = ""
        while True:
            # The port must be the JVM's own: a process that took it first would answer no query.
            if proc.poll() is None and self.port in _listening_ports(proc.pid):
                try:
                    probe = subprocess.run(
                        [sys.executable, "-c", _CONNECT_PROBE, self.url],
                        capture_output=True,
                        text=True,
                        timeout=max(deadline - time.monotonic(), 1),
                    )
                except subprocess.TimeoutExpired:
                    probe_error = "\nthe last query over Connect did not return in time"
                else:
                    if probe.returncode == 0:
                        return
                    probe_error = f"\nlast query over Connect failed:\n{probe.stderr[-1500:]}"
            log = self._jvm.log_tail(chars=65536)
            failed = log.find(_CONNECT_FAILED)
            if proc.poll() is not None or time.monotonic() > deadline or failed >= 0:
                exited = f" (exit code {proc.returncode})" if proc.returncode is not None else ""
                shown = log[failed:][:3000] if failed >= 0 else log[-3000:]
                self.stop()
                raise RuntimeError(
                    f"Spark Connect did not answer on {self.url}{exited}; "
                    f"log {self._jvm.log_file}:\n{shown}{probe_error}"
                )
            time.sleep(0.3)

    def stop(self) -> None:
        """Stop the server; a class-data archive it wrote on its way out is put in place (removed if it was
        killed before it finished)."""
        ended = self._jvm.stop(timeout_s=CONNECT_STOP_TIMEOUT_S)
        archive = self.class_archive()
        if archive is None:
            return
        if ended:
            archive.settle()
        else:
            archive.pending.unlink(missing_ok=True)

    def class_archive(self) -> ClassArchive | None:
        """The server's class-data archive (Java AppCDS), under ``state_dir/class-archives``.

        Without one, the server writes the classes it loaded (Spark Connect, Spark SQL, Parquet, S3A and the
        code its queries generated) into it when it stops; later starts map them instead of loading and
        verifying each class again, in the first queries of every fresh server. None when there is no ``java``
        to key it on, or when ``class_archives`` is off.
        """
        if not self.class_archives:
            return None
        return ClassArchive.for_server(str(spark_home()), self._conf(), self.state_dir / "class-archives")

    def _conf(self) -> dict[str, str]:
        conf = connect_conf(bind_address=LOOPBACK, port=self.port, driver_host=LOOPBACK)
        if self.jars:
            conf.update(classpath_conf(self.jars))
        return conf
