"""The local stack as one object: start, check, stop, and the environment that points Airflow at it.

PostgreSQL and SeaweedFS start with :meth:`Stack.up`; the Spark services (a Connect server and a
standalone cluster, one to two JVMs each) start only on request, see :meth:`Stack.start_spark_connect`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from airflow_provider_lakehouse.devstack import osuser
from airflow_provider_lakehouse.devstack.bootstrap import REPO_ROOT
from airflow_provider_lakehouse.devstack.jars import classpath_conf
from airflow_provider_lakehouse.devstack.lock import state_lock
from airflow_provider_lakehouse.devstack.ports import LOOPBACK, pick_port
from airflow_provider_lakehouse.devstack.postgres import PostgresServer, reachable_bin_dir
from airflow_provider_lakehouse.devstack.seaweed import GRPC_OFFSET, REGION, SeaweedS3
from airflow_provider_lakehouse.devstack.spark import SparkCluster, SparkConnectServer, spark_home

DATA_TABLES_DB = "datatables"
LAKE_CATALOG_DB = "lakehouse_catalog"
APP_ROLE = "lakehouse"
LAKE_BUCKET = "lakehouse"
LANDING_BUCKET = "landing"
AWS_CONN_ID = "lakehouse_s3"
PREFERRED_PORTS = {"postgres": 55432, "s3": 18333, "master": 19333, "volume": 19340, "filer": 18888, "admin": 19646}
# Spark Connect's own default port, then a block for the standalone cluster.
SPARK_PREFERRED_PORTS = {
    "spark_connect": 15002,
    "spark_master": 17077,
    "spark_master_ui": 18180,
    "spark_worker_ui": 18181,
}
SPARK_LOCAL_MASTER = "local[2]"


def spark_connect_connection(port: int) -> str:
    """The Airflow connection (JSON) of a Spark Connect server on loopback ``port``, as ``env()`` exports the
    stack's own in ``AIRFLOW_CONN_SPARK_CONNECT_LOCAL``."""
    return json.dumps({"conn_type": "spark_connect", "host": f"sc://{LOOPBACK}", "port": port})


def default_state_dir() -> Path:
    return Path(os.environ.get("LAKEHOUSE_STATE_DIR", REPO_ROOT / ".lakehouse")).resolve()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _one_process_at_a_time(method: Callable[Concatenate[Stack, _P], _R]) -> Callable[Concatenate[Stack, _P], _R]:
    """Run ``method`` holding the state folder's lock: processes sharing a stack (the suite's two workers, a user's
    ``devstack up``) start, stop and provision it in turn, never both at once."""

    @functools.wraps(method)
    def locked(self: Stack, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with state_lock(self.state_dir).held():
            return method(self, *args, **kwargs)

    return locked


def _write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` in one step, so that another process reading it sees the old or the new text, never half
    of one (``state.json`` is read by every process on the stack)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    # created with its final mode: a credentials file is never readable by others, not even while written
    with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode), "w") as f:
        f.write(text)
    os.replace(partial, path)


class Stack:
    """PostgreSQL + SeaweedFS S3 + an Airflow home under one state folder, and Spark on request.

    :param state_dir: where data, logs, PID files and generated credentials live.
    """

    def __init__(self, state_dir: Path | None = None) -> None:
        self.state_dir = (state_dir or default_state_dir()).resolve()
        tag = hashlib.sha256(str(self.state_dir).encode()).hexdigest()[:10]
        # Unix socket paths are limited to ~100 bytes, so sockets live in a short per-stack temp dir.
        self.runtime_dir = Path(tempfile.gettempdir()) / f"lakehouse-{tag}"
        self.user = osuser.service_user()

    # -- persistent state -------------------------------------------------------------------
    @property
    def _state_file(self) -> Path:
        return self.state_dir / "state.json"

    def _load_state(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self._state_file.read_text()))
        except (OSError, ValueError):
            return {}

    def _save_state(self, state: dict[str, Any]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)  # settings may come before the first start
        _write_atomically(self._state_file, json.dumps(state, indent=2))

    def _update_state(self, **values: Any) -> None:
        """Merge ``values`` into the state read just now: a Spark start takes seconds, and ``up`` may have
        saved its ports in the meantime."""
        state = self._load_state()
        state.update(values)
        self._save_state(state)

    def prefer_spark_ports(self, offset: int) -> None:
        """Start this stack's Spark servers ``offset`` ports above the preferred ones: a second stack beside
        another, where both may start a Connect server at the same moment (the first free port would be the same)."""
        self._update_state(**{f"{role}_port": port + offset for role, port in SPARK_PREFERRED_PORTS.items()})

    def _class_archives(self) -> bool:
        """False once :meth:`without_class_archives` was called for this state folder."""
        return bool(self._load_state().get("class_archives", True))

    def without_class_archives(self) -> None:
        """No class-data archives for this stack's Spark: its Connect server neither maps nor writes one, and
        lake ``main``'s spark-submit drivers neither (``spark_class_archive: false``). For a throwaway stack,
        such as the one a test of another Spark release starts: each first JVM would spend seconds writing an
        archive that nothing maps again, and the drivers' would stay in the user's cache."""
        self._update_state(class_archives=False)

    def credentials(self) -> dict[str, str]:
        """Generated once per state folder. The password deliberately holds a space, quotes, ``@`` and ``%``:
        every layer that handles it must neither break on it nor print it."""
        path = self.state_dir / "credentials.json"
        if path.exists():
            return dict(json.loads(path.read_text()))
        return self._generate_credentials(path)

    @_one_process_at_a_time
    def _generate_credentials(self, path: Path) -> dict[str, str]:
        if path.exists():  # another process generated them while this one waited for the lock
            return dict(json.loads(path.read_text()))
        creds = {
            "pg_password": f"lh {secrets.token_hex(6)} p@ss'w\"o%rd",
            "s3_access_key": "lakehouse" + secrets.token_hex(4),
            "s3_secret_key": secrets.token_urlsafe(24),
        }
        self.state_dir.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, json.dumps(creds), mode=0o600)
        return creds

    # -- services ---------------------------------------------------------------------------
    def _postgres(self, port: int) -> PostgresServer:
        pg_root = self.state_dir / "postgres"
        if not osuser.can_access(self.user, self.state_dir.parent):
            pg_root = self.runtime_dir / "postgres-data"  # the service user cannot reach the repo (e.g. /root)
        return PostgresServer(
            bin_dir=reachable_bin_dir(self.user, self.runtime_dir),
            data_dir=pg_root / "data",
            socket_dir=self.runtime_dir / "pg",
            log_file=pg_root / "server.log",
            port=port,
            user=self.user,
        )

    def _seaweed(self, ports: dict[str, int]) -> SeaweedS3:
        creds = self.credentials()
        return SeaweedS3(
            state_dir=self.state_dir / "seaweed",
            runtime_dir=self.runtime_dir / "weed",
            ports=ports,
            access_key=creds["s3_access_key"],
            secret_key=creds["s3_secret_key"],
            buckets=[LAKE_BUCKET, LANDING_BUCKET],
        )

    def postgres_server(self) -> PostgresServer:
        """The stack's PostgreSQL server (running or not), on its last known port: e.g. to restart it in a test."""
        return self._postgres(self.postgres_port())

    def spark_connect_server(self) -> SparkConnectServer:
        """The Spark Connect server of this stack (running or not), on its last known port."""
        state = self._load_state()
        return SparkConnectServer(
            state_dir=self.state_dir / "spark",
            port=int(state.get("spark_connect_port", SPARK_PREFERRED_PORTS["spark_connect"])),
            jars=self.s3a_jar_paths(),
            class_archives=self._class_archives(),
        )

    def spark_cluster(self) -> SparkCluster:
        """The standalone Spark cluster of this stack (running or not), on its last known ports."""
        state = self._load_state()

        def port(role: str) -> int:
            return int(state.get(f"{role}_port", SPARK_PREFERRED_PORTS[role]))

        return SparkCluster(
            state_dir=self.state_dir / "spark",
            master_port=port("spark_master"),
            master_ui_port=port("spark_master_ui"),
            worker_ui_port=port("spark_worker_ui"),
        )

    @_one_process_at_a_time
    def up(self, *, log: Any = print) -> bool:
        """Start whatever is not running. Returns True if this call started anything."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.chmod(0o755)
        state = self._load_state()
        creds = self.credentials()
        started = False

        pg = self._postgres(state.get("postgres_port", PREFERRED_PORTS["postgres"]))
        running_port = pg.running_port() if pg.initialized() else None
        if running_port is None:
            if not pg.initialized():
                log(f"initialising PostgreSQL in {pg.data_dir}")
                pg.init()
            pg.port = pick_port(pg.port)
            log(f"starting PostgreSQL on {LOOPBACK}:{pg.port}")
            pg.start()
            started = True
        else:
            pg.port = running_port
        pg.provision(APP_ROLE, creds["pg_password"], [DATA_TABLES_DB, LAKE_CATALOG_DB])
        state["postgres_port"] = pg.port

        s3 = self._seaweed(state.get("s3_ports", {}))
        if s3.pid() is None or not s3.ports or not s3.answering():
            s3.stop()
            taken: set[int] = {pg.port}
            ports: dict[str, int] = {}
            for role in ("s3", "master", "volume", "filer", "admin"):
                wanted = s3.ports.get(role, PREFERRED_PORTS[role])
                ports[role] = pick_port(wanted, companion_offset=GRPC_OFFSET, avoid=taken)
                taken |= {ports[role], ports[role] + GRPC_OFFSET}
            s3.ports = ports
            log(f"starting SeaweedFS S3 on {s3.endpoint}")
            s3.start()
            started = True
        else:
            s3.create_buckets()
        state["s3_ports"] = s3.ports
        self._save_state(state)
        self.ensure_s3a_jars(log=log)
        self.write_env_file()
        return started

    @_one_process_at_a_time
    def ensure_s3a_jars(self, *, log: Any = print) -> list[Path]:
        """The S3A jars for Spark (``hadoop-aws`` and what it needs), fetched with ``mvn`` once into
        ``<state>/jars``; an empty list when they cannot be had (S3 lakes are then read with pyarrow)."""
        from airflow_provider_lakehouse.devstack.jars import s3a_jars

        try:
            jars = s3a_jars(self.state_dir / "jars", spark_home() / "jars", log=log)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            log(f"S3A is not available ({exc}); Spark reads S3 lakes through pyarrow")
            jars = []
        return jars

    def s3a_jar_paths(self) -> tuple[Path, ...]:
        """The S3A jars :meth:`ensure_s3a_jars` fetched for this process's Spark (none if it has not run or failed).

        Each bundled Hadoop has its own cache folder, and only this Spark's is used: ``hadoop-aws`` must match the
        Hadoop it runs with (a test run from a venv with Spark 4.0 fetches and uses Hadoop 3.4.1's).
        """
        from airflow_provider_lakehouse.devstack.jars import cached_s3a_jars

        try:
            return tuple(cached_s3a_jars(self.state_dir / "jars", spark_home() / "jars"))
        except RuntimeError:  # no full pyspark here: nothing to give the jars to
            return ()

    @_one_process_at_a_time
    def start_spark_connect(self, *, log: Any = print, driver_memory: str | None = None) -> str:
        """Start the Spark Connect server unless it is running; return its URL (``sc://127.0.0.1:<port>``).

        Not part of :meth:`up`: the server is a JVM with a 2 GB heap (``driver_memory`` sets another when this
        call starts it). Its port is kept in ``state.json`` (so ``env()`` exports
        ``AIRFLOW_CONN_SPARK_CONNECT_LOCAL``) and reused on the next start if free.

        :raises RuntimeError: the server did not answer a query (the message holds its log).
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        server = self.spark_connect_server()
        home = self._stop_if_from_another_spark("spark_connect", server.pid() is not None, server.stop, log)
        if not server.running():
            server.stop()  # ours but not answering: a half-started or wedged JVM
            server.port = pick_port(server.port)
            if driver_memory:
                server.driver_memory = driver_memory
            log(f"starting Spark Connect on {server.url}")
            begin = time.monotonic()
            server.start()
            log(f"Spark Connect answered after {time.monotonic() - begin:.1f} s")
            self._update_state(spark_connect_home=home)
        self._update_state(spark_connect_port=server.port)
        self._refresh_env_file()
        return server.url

    @_one_process_at_a_time
    def start_spark_cluster(self, *, log: Any = print) -> str:
        """Start a standalone Spark master and worker unless they run; return the master URL (``spark://...``).

        Not part of :meth:`up`: the master and the worker are two JVMs, and executors add one per
        application. Ports are kept in ``state.json`` (so ``env()`` exports ``AIRFLOW_CONN_SPARK_CLUSTER``).

        :raises RuntimeError: the worker did not register with the master (the message holds the log).
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        cluster = self.spark_cluster()
        running = cluster.pid() is not None or cluster.worker_pid() is not None
        home = self._stop_if_from_another_spark("spark_cluster", running, cluster.stop, log)
        if not cluster.running():
            cluster.stop()  # e.g. a master whose worker died: free its ports before choosing them again
            cluster.master_port = pick_port(cluster.master_port)
            cluster.master_ui_port = pick_port(cluster.master_ui_port, avoid={cluster.master_port})
            cluster.worker_ui_port = pick_port(
                cluster.worker_ui_port, avoid={cluster.master_port, cluster.master_ui_port}
            )
            log(f"starting a Spark standalone cluster at {cluster.master_url}")
            begin = time.monotonic()
            cluster.start()
            log(f"Spark worker registered after {time.monotonic() - begin:.1f} s (master UI {cluster.master_ui_url})")
            self._update_state(spark_cluster_home=home)
        self._update_state(
            spark_master_port=cluster.master_port,
            spark_master_ui_port=cluster.master_ui_port,
            spark_worker_ui_port=cluster.worker_ui_port,
        )
        self._refresh_env_file()
        return cluster.master_url

    def _stop_if_from_another_spark(self, role: str, running: bool, stop: Callable[[], None], log: Any) -> str:
        """Stop ``role``'s running JVMs if another Spark home (another pyspark, or one not recorded) started them;
        return this process's Spark home, which the caller records as ``<role>_home`` when it starts them.

        A newer Spark Connect client asks an older server for settings it does not have, and any answer would be
        that Spark's, not this one's.
        """
        home = str(spark_home())
        started_from = self._load_state().get(f"{role}_home")
        if running and started_from != home:
            log(f"restarting {role}: it runs {started_from or 'an unrecorded Spark'}, not {home}")
            stop()
        return home

    @_one_process_at_a_time
    def stop_spark_connect(self, *, log: Any = print) -> None:
        """Stop the Spark Connect server if it runs (its port stays in ``state.json`` for the next start)."""
        server = self.spark_connect_server()
        if server.pid() is not None:
            log("stopping Spark Connect")
        server.stop()

    @_one_process_at_a_time
    def stop_spark_cluster(self, *, log: Any = print) -> None:
        """Stop the standalone Spark worker (with its executors) and master if they run."""
        cluster = self.spark_cluster()
        if cluster.pid() is not None or cluster.worker_pid() is not None:
            log("stopping the Spark standalone cluster")
        cluster.stop()

    @_one_process_at_a_time
    def down(self, *, log: Any = print) -> None:
        """Stop every server and remove their sockets; data stays for the next ``up``."""
        self.stop_spark_connect(log=log)
        self.stop_spark_cluster(log=log)
        state = self._load_state()
        s3 = self._seaweed(state.get("s3_ports", {}))
        if s3.pid() is not None:
            log("stopping SeaweedFS S3")
        s3.stop()
        pg = self._postgres(state.get("postgres_port", PREFERRED_PORTS["postgres"]))
        if pg.initialized() and pg.running_port() is not None:
            log("stopping PostgreSQL")
            pg.stop()
        for sock in (self.runtime_dir / "pg").glob(".s.PGSQL.*"):
            sock.unlink(missing_ok=True)
        for sock in (self.runtime_dir / "weed").glob("*.sock"):
            sock.unlink(missing_ok=True)

    def status(self) -> dict[str, Any]:
        state = self._load_state()
        pg = self._postgres(state.get("postgres_port", PREFERRED_PORTS["postgres"]))
        s3 = self._seaweed(state.get("s3_ports", {}))
        pg_port = pg.running_port() if pg.initialized() else None
        connect = self.spark_connect_server()
        cluster = self.spark_cluster()
        return {
            "state_dir": str(self.state_dir),
            "postgres": f"{LOOPBACK}:{pg_port}" if pg_port else "stopped",
            "s3": s3.endpoint if s3.pid() is not None and s3.answering() else "stopped",
            "spark_connect": connect.url if connect.running() else "stopped",
            "spark_cluster": cluster.master_url if cluster.running() else "stopped",
        }

    def is_up(self) -> bool:
        status = self.status()
        return status["postgres"] != "stopped" and status["s3"] != "stopped"

    # -- what clients see -------------------------------------------------------------------
    def s3_endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self._load_state()['s3_ports']['s3']}"

    def seaweed_client(self):
        """A boto3 S3 client for the running SeaweedFS."""
        return self._seaweed(self._load_state().get("s3_ports", {})).client()

    def postgres_data_dir(self) -> Path:
        """The cluster's data directory (outside the state folder when the service user cannot reach it)."""
        return self._postgres(self.postgres_port()).data_dir

    def postgres_port(self) -> int:
        return int(self._load_state()["postgres_port"])

    def airflow_env(self) -> dict[str, str]:
        """Settings that do not depend on the running services: safe to apply before Airflow is imported."""
        bin_dir = str(Path(sys.executable).parent)
        path = os.environ.get("PATH", "")
        return {
            "LAKEHOUSE_STATE_DIR": str(self.state_dir),
            "AIRFLOW_HOME": str(self.state_dir / "airflow"),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO_ROOT / "dags_examples"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__OPENLINEAGE__DISABLED": "true",
            "SPARK_LOCAL_IP": LOOPBACK,
            # DuckDB extensions installed from their wheels (the TPC-DS DAG reads its query text through them)
            "LAKEHOUSE_DUCKDB_EXTENSIONS": str(self.state_dir / "duckdb_extensions"),
            "TPCDS_LANDING": str(self.state_dir / "tpcds" / "landing"),
            "PATH": path if path.startswith(bin_dir + os.pathsep) else bin_dir + os.pathsep + path,
        }

    def env(self) -> dict[str, str]:
        """Environment variables that point Airflow, the provider and the tests at this stack.

        The Spark connections appear once their service has been started (its port is in ``state.json``);
        ``spark_local`` (an in-process ``local[2]`` master for spark-submit) is always there.
        """
        creds = self.credentials()
        state = self._load_state()
        pg_port = self.postgres_port()
        endpoint = self.s3_endpoint()
        aws_extra = {
            "endpoint_url": endpoint,
            "region_name": REGION,
            "config_kwargs": {"s3": {"addressing_style": "path"}},
        }

        def pg_conn(conn_type: str, db: str, extra: dict[str, Any] | None = None) -> str:
            conn: dict[str, Any] = {
                "conn_type": conn_type,
                "host": LOOPBACK,
                "port": pg_port,
                "login": APP_ROLE,
                "password": creds["pg_password"],
                "schema": db,
            }
            if extra:
                conn["extra"] = extra
            return json.dumps(conn)

        return {
            **self.airflow_env(),
            "AIRFLOW_CONN_DATATABLE_MAIN": pg_conn("datatable", DATA_TABLES_DB),
            "AIRFLOW_CONN_DUCKLAKE_MAIN": pg_conn("ducklake", LAKE_CATALOG_DB, self._lake_extra()),
            f"AIRFLOW_CONN_{AWS_CONN_ID.upper()}": json.dumps(
                {
                    "conn_type": "aws",
                    "login": creds["s3_access_key"],
                    "password": creds["s3_secret_key"],
                    "extra": aws_extra,
                }
            ),
            **self._spark_conns(state),
        }

    def _lake_extra(self) -> dict[str, Any]:
        """Lake ``main``: data on the stack's S3; Spark gets the S3A jars (in-process and spark-submit; the
        Connect server has them on its classpath) when they could be fetched."""
        extra: dict[str, Any] = {"data_path": f"s3://{LAKE_BUCKET}/main/", "aws_conn_id": AWS_CONN_ID}
        jars = self.s3a_jar_paths()
        if jars:
            extra["spark_conf"] = classpath_conf(jars)
        if not self._class_archives():
            extra["spark_class_archive"] = False
        return extra

    @staticmethod
    def _spark_conns(state: dict[str, Any]) -> dict[str, str]:
        """Airflow connections for Spark, shaped for the apache-spark provider's hooks.

        ``SparkConnectHook`` appends ``:port`` to a host that already has a scheme and yields
        ``sc://127.0.0.1:<port>/``; ``SparkSubmitHook`` passes a ``spark``-type host containing ``://``
        through as the master and appends ``:port``, giving ``spark://127.0.0.1:<port>``.
        """
        conns = {"AIRFLOW_CONN_SPARK_LOCAL": json.dumps({"conn_type": "spark", "host": SPARK_LOCAL_MASTER})}
        if "spark_connect_port" in state:
            conns["AIRFLOW_CONN_SPARK_CONNECT_LOCAL"] = spark_connect_connection(state["spark_connect_port"])
        if "spark_master_port" in state:
            conns["AIRFLOW_CONN_SPARK_CLUSTER"] = json.dumps(
                {
                    "conn_type": "spark",
                    "host": f"spark://{LOOPBACK}",
                    "port": state["spark_master_port"],
                    "extra": {"deploy-mode": "client"},
                }
            )
        return conns

    def _refresh_env_file(self) -> None:
        """Rewrite ``env.sh`` if :meth:`up` has written one (its connections need the core stack's ports)."""
        state = self._load_state()
        if "postgres_port" in state and "s3_ports" in state:
            self.write_env_file()

    @_one_process_at_a_time
    def write_env_file(self) -> Path:
        """Write ``env.sh`` (mode 600) so a shell can ``source`` the stack's environment."""
        path = self.state_dir / "env.sh"
        lines = [f"export {k}={shlex.quote(v)}" for k, v in self.env().items()]
        _write_atomically(path, "\n".join(lines) + "\n", mode=0o600)
        return path

    @_one_process_at_a_time
    def ensure_airflow_db(self, *, log: Any = print) -> None:
        """Run ``airflow db migrate`` once per state folder (SQLite metadata DB in the Airflow home)."""
        env = dict(os.environ, **self.env())
        home = Path(env["AIRFLOW_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        if (home / "airflow.db").exists() and (home / ".migrated").exists():
            return
        log("initialising the Airflow metadata database")
        subprocess.run(
            [sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True, stdout=subprocess.DEVNULL
        )
        (home / ".migrated").write_text("ok")
