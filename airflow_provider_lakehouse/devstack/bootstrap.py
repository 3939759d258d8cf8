"""Create the project's virtual environment and install the project into it (standard library only).

Installs the exact tested set: ``pip install -c constraints/constraints-3.11.txt -e .[dev]`` (``pyproject.toml``
declares compatible ranges; the constraints file pins what the suite runs on). Idempotent: a stamp file records
the hash of ``pyproject.toml`` and the constraints file; when it matches, nothing is installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_DIR = Path(os.environ.get("LAKEHOUSE_VENV", REPO_ROOT / ".venv"))
#: the exact tested set (``pip freeze`` of this venv, the project left out)
CONSTRAINTS = REPO_ROOT / "constraints" / "constraints-3.11.txt"


def pyspark_pin(constraints: Path = CONSTRAINTS) -> str:
    """The ``pyspark==X`` line of the constraints file.

    The apache-spark provider depends on pyspark-client, which installs into the same ``pyspark/`` directory
    as pyspark (the ``spark`` extra) and, when its release differs, overwrites pyspark's Python files with
    its own. Reinstalling pyspark's files afterwards restores a matching Python/JVM pair.
    """
    for line in constraints.read_text().splitlines():
        if line.strip().lower().startswith("pyspark=="):
            return line.strip()
    raise RuntimeError(f"{constraints} pins no pyspark")


def venv_python() -> Path:
    """Path of the virtual environment's Python."""
    return VENV_DIR / "bin" / "python"


def in_venv() -> bool:
    """True when this interpreter is the project's virtual environment."""
    return Path(sys.prefix).resolve() == VENV_DIR.resolve()


def _stamp() -> str:
    digest = hashlib.sha256((REPO_ROOT / "pyproject.toml").read_bytes())
    digest.update(CONSTRAINTS.read_bytes())
    return digest.hexdigest()


def ensure_venv(*, quiet: bool = False) -> Path:
    """Create ``.venv`` and install ``.[dev]`` with the constraints file unless it is already current; return its
    Python."""
    stamp_file = VENV_DIR / ".lakehouse-installed"
    if venv_python().exists() and stamp_file.exists() and stamp_file.read_text() == _stamp():
        return venv_python()
    say = (lambda *_: None) if quiet else (lambda msg: print(f"[bootstrap] {msg}", flush=True))
    if not venv_python().exists():
        say(f"creating virtual environment {VENV_DIR}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV_DIR)], check=True)
    pip = [str(venv_python()), "-m", "pip", "--disable-pip-version-check"]
    say("installing the project and its test dependencies (first time: a few minutes)")
    subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-q", "-c", str(CONSTRAINTS), "-e", f"{REPO_ROOT}[dev]"], check=True)
    # The editable build leaves its egg-info in the checkout; Python run from there (``python -m airflow``)
    # then finds the provider twice, and Airflow logs "Plugin 'lakehouse' already registered" in every task
    # and lists it as a plugin import error. The installed metadata lives in the venv.
    shutil.rmtree(REPO_ROOT / "airflow_provider_lakehouse.egg-info", ignore_errors=True)
    subprocess.run([*pip, "install", "-q", "--force-reinstall", "--no-deps", pyspark_pin()], check=True)
    subprocess.run([*pip, "check"], check=True, stdout=subprocess.DEVNULL)
    stamp_file.write_text(_stamp())
    return venv_python()


def reexec_in_venv(argv: list[str]) -> None:
    """Replace this process with the same module running under the virtual environment's Python."""
    python = ensure_venv()
    env = dict(os.environ)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"  # spark-submit, airflow, weed
    env["VIRTUAL_ENV"] = str(VENV_DIR)
    os.execve(str(python), [str(python), "-m", "airflow_provider_lakehouse.devstack", *argv], env)
