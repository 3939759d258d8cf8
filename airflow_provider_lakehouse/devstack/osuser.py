"""Run server binaries as an unprivileged OS user when we are root (``initdb`` refuses root)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

_CANDIDATES = ("postgres", "nobody")


def service_user() -> str | None:
    """The OS user to run PostgreSQL as: ``None`` when not root, else ``postgres`` (or ``nobody``)."""
    if os.geteuid() != 0:
        return None
    for name in _CANDIDATES:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise RuntimeError("Running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL.")


def as_user(user: str | None, argv: list[str]) -> list[str]:
    """Prefix ``argv`` so it runs as ``user`` (no prefix when ``user`` is None)."""
    if user is None:
        return argv
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    return [runuser, "-u", user, "--", *argv]


def can_access(user: str | None, path: Path) -> bool:
    """True if ``user`` can traverse and read ``path``."""
    if user is None:
        return True
    return subprocess.run(as_user(user, ["test", "-r", str(path), "-a", "-x", str(path)])).returncode == 0


def chown(user: str | None, path: Path) -> None:
    """Give ``path`` to ``user`` (no-op when not root)."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
