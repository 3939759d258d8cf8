"""What the two commands need from the machine, checked before anything is installed (standard library only).

Both commands need Python 3.11 or 3.12 and Java 17+ (Spark 4). The test command also needs Node 20+ with npm (the
Lakehouse UI's Vitest tests and bundle check) and Debian's ``chromium`` (the browser tests): Chromium is
installed from Debian's packages when it is missing and this process may (root), since browser downloads by
test tools are not possible everywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable

MIN_PYTHON = (3, 11)
MAX_PYTHON = (3, 12)  # pyproject.toml: requires-python >=3.11,<3.13
MIN_JAVA = 17
MIN_NODE = 20
CHROMIUM = "/usr/bin/chromium"


class MissingPrerequisite(SystemExit):
    """Raised with a message that says what is missing and how to get it."""


def java_major(version_output: str) -> int | None:
    """The major version in ``java -version`` output.

    >>> java_major('openjdk version "17.0.12" 2024-07-16')
    17
    >>> java_major('java version "1.8.0_411"')
    8
    """
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def _java_command() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def check_runtime() -> None:
    """Python 3.11 or 3.12 and Java 17+, or a clear message (both commands run Spark)."""
    if not MIN_PYTHON <= sys.version_info[:2] <= MAX_PYTHON:
        raise MissingPrerequisite(
            f"[bootstrap] Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or {MAX_PYTHON[0]}.{MAX_PYTHON[1]} is needed (this is "
            f"{sys.version.split()[0]}); run the command with python3.11"
        )
    java = _java_command()
    if java is None:
        raise MissingPrerequisite(
            f"[bootstrap] Java {MIN_JAVA}+ is needed for Spark and was not found (set JAVA_HOME or put java on "
            "PATH; on Debian: apt-get install -y openjdk-17-jdk-headless)"
        )
    probe = subprocess.run([java, "-version"], capture_output=True, text=True)
    major = java_major(probe.stderr + probe.stdout)
    if major is None or major < MIN_JAVA:
        raise MissingPrerequisite(
            f"[bootstrap] Java {MIN_JAVA}+ is needed for Spark; {java} is version {major or 'unknown'} "
            "(set JAVA_HOME to a JDK 17 or newer)"
        )


def ensure_test_tools(log: Callable[[str], None] = print) -> None:
    """Node 20+ with npm, and Chromium (installed from Debian's packages when missing and we are root)."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        raise MissingPrerequisite(
            f"[bootstrap] the tests need Node {MIN_NODE}+ and npm (the Lakehouse UI's front-end tests); "
            "on Debian: apt-get install -y nodejs npm"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    match = re.match(r"v(\d+)", version)
    if not match or int(match.group(1)) < MIN_NODE:
        raise MissingPrerequisite(f"[bootstrap] the tests need Node {MIN_NODE}+; {node} is {version or 'unknown'}")
    if os.path.exists(CHROMIUM) or shutil.which("chromium"):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise MissingPrerequisite(
            "[bootstrap] the browser tests need Debian's chromium: run `apt-get install -y chromium` as root"
        )
    log("[bootstrap] installing Debian's chromium for the browser tests (apt-get)")
    apt_env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
    ):
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=apt_env)
