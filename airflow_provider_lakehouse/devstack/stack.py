"""The local stack as one object: start, check, stop, and the environment that points Airflow at it."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.devstack import osuser
from airflow_provider_lakehouse.devstack.bootstrap import REPO_ROOT
from airflow_provider_lakehouse.devstack.ports import LOOPBACK, pick_port
from airflow_provider_lakehouse.devstack.postgres import PostgresServer, reachable_bin_dir
from airflow_provider_lakehouse.devstack.seaweed import GRPC_OFFSET, REGION, SeaweedS3

DATA_TABLES_DB = "datatables"
LAKE_CATALOG_DB = "lakehouse_catalog"
APP_ROLE = "lakehouse"
LAKE_BUCKET = "lakehouse"
LANDING_BUCKET = "landing"
AWS_CONN_ID = "lakehouse_s3"
PREFERRED_PORTS = {"postgres": 55432, "s3": 18333, "master": 19333, "volume": 19340, "filer": 18888, "admin": 19646}


def default_state_dir() -> Path:
    return Path(os.environ.get("LAKEHOUSE_STATE_DIR", REPO_ROOT / ".lakehouse")).resolve()


class Stack:
    """PostgreSQL + SeaweedFS S3 + an Airflow home under one state folder.

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
        self._state_file.write_text(json.dumps(state, indent=2))

    def credentials(self) -> dict[str, str]:
        """Generated once per state folder. The password deliberately holds a space, quotes, ``@`` and ``%``:
        every layer that handles it must neither break on it nor print it."""
        path = self.state_dir / "credentials.json"
        if path.exists():
            return dict(json.loads(path.read_text()))
        creds = {
            "pg_password": f"lh {secrets.token_hex(6)} p@ss'w\"o%rd",
            "s3_access_key": "lakehouse" + secrets.token_hex(4),
            "s3_secret_key": secrets.token_urlsafe(24),
        }
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(creds))
        path.chmod(0o600)
        return creds

    # -- services ---------------------------------------------------------------------------
    def _postgres(self, port: int) -> PostgresServer:
        pg_root = self.state_dir / "postgres"
        if not osuser.can_access(self.user, self.state_dir.parent):
            pg_root = self.runtime_dir / "postgres-data"  # the service user cannot reach the repo (e.g. /root)
        return PostgresServer(
            bin_dir=reachable_bin_dir(self.user, self.runtime_dir),
            data_dir=pg_root / "data", socket_dir=self.runtime_dir / "pg",
            log_file=pg_root / "server.log", port=port, user=self.user,
        )

    def _seaweed(self, ports: dict[str, int]) -> SeaweedS3:
        creds = self.credentials()
        return SeaweedS3(
            state_dir=self.state_dir / "seaweed", runtime_dir=self.runtime_dir / "weed", ports=ports,
            access_key=creds["s3_access_key"], secret_key=creds["s3_secret_key"], buckets=[LAKE_BUCKET, LANDING_BUCKET],
        )

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
        self.write_env_file()
        return started

    def down(self, *, log: Any = print) -> None:
        """Stop both servers and remove their sockets; data stays for the next ``up``."""
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
        return {
            "state_dir": str(self.state_dir),
            "postgres": f"{LOOPBACK}:{pg_port}" if pg_port else "stopped",
            "s3": s3.endpoint if s3.pid() is not None and s3.answering() else "stopped",
        }

    def is_up(self) -> bool:
        status = self.status()
        return status["postgres"] != "stopped" and status["s3"] != "stopped"

    # -- what clients see -------------------------------------------------------------------
    def s3_endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self._load_state()['s3_ports']['s3']}"

    def seaweed_client(self):  # type: ignore[no-untyped-def]
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
            "PATH": path if path.startswith(bin_dir + os.pathsep) else bin_dir + os.pathsep + path,
        }

    def env(self) -> dict[str, str]:
        """Environment variables that point Airflow, the provider and the tests at this stack."""
        creds = self.credentials()
        pg_port = self.postgres_port()
        endpoint = self.s3_endpoint()
        aws_extra = {
            "endpoint_url": endpoint, "region_name": REGION,
            "config_kwargs": {"s3": {"addressing_style": "path"}},
        }

        def pg_conn(conn_type: str, db: str, extra: dict[str, Any] | None = None) -> str:
            conn: dict[str, Any] = {
                "conn_type": conn_type, "host": LOOPBACK, "port": pg_port, "login": APP_ROLE,
                "password": creds["pg_password"], "schema": db,
            }
            if extra:
                conn["extra"] = extra
            return json.dumps(conn)

        return {
            **self.airflow_env(),
            "AIRFLOW_CONN_DATATABLE_MAIN": pg_conn("datatable", DATA_TABLES_DB),
            "AIRFLOW_CONN_DUCKLAKE_MAIN": pg_conn(
                "ducklake", LAKE_CATALOG_DB, {"data_path": f"s3://{LAKE_BUCKET}/main/", "aws_conn_id": AWS_CONN_ID}
            ),
            f"AIRFLOW_CONN_{AWS_CONN_ID.upper()}": json.dumps({
                "conn_type": "aws", "login": creds["s3_access_key"], "password": creds["s3_secret_key"], "extra": aws_extra,
            }),
        }

    def write_env_file(self) -> Path:
        """Write ``env.sh`` (mode 600) so a shell can ``source`` the stack's environment."""
        path = self.state_dir / "env.sh"
        lines = [f"export {k}={shlex.quote(v)}" for k, v in self.env().items()]
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)
        return path

    def ensure_airflow_db(self, *, log: Any = print) -> None:
        """Run ``airflow db migrate`` once per state folder (SQLite metadata DB in the Airflow home)."""
        env = dict(os.environ, **self.env())
        home = Path(env["AIRFLOW_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        if (home / "airflow.db").exists() and (home / ".migrated").exists():
            return
        log("initialising the Airflow metadata database")
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        (home / ".migrated").write_text("ok")
