"""The provider in the lowest Airflow it declares (``apache-airflow>=X`` in pyproject.toml), installed the way a
user installs it into their own deployment: from this checkout, with the declared ranges, no constraints file.

The rest of the suite runs on the constraints file's set, which is also the highest supported Airflow (the
newest Airflow 3 release when the constraints were frozen). One venv per (lowest Airflow, pyproject.toml),
cached in the stack's state folder; only the provider is reinstalled when the venv exists. First build: pip
resolves and installs about 200 packages (see docs/local-stack.md, "Versions", for the measured time).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.bootstrap import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PYPROJECT = REPO_ROOT / "pyproject.toml"
DAG_ID = "example_datatable"  # Data Tables only: no Spark, no JVM
#: Airflow 3.2.0 caps neither cadwyn nor fastapi, and today's releases (cadwyn 8.2 / 7.4 with fastapi 0.163) break
#: its in-process execution API: every task of `airflow dags test` fails with "PydanticUserError: Model
#: 'TITerminalStatePayload' needs a discriminator field" (also with pydantic 2.13). A 3.2.0 deployment installed
#: with its release constraints has older ones; these are the tested set's versions (constraints-3.11.txt).
AIRFLOW_3_2_0_COMPAT = ("cadwyn==7.0.0", "fastapi==0.136.3")


def lowest_airflow() -> str:
    (requirement,) = [
        r for r in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"] if r.startswith("apache-airflow>=")
    ]
    return re.match(r"apache-airflow>=([0-9.]+)", requirement).group(1)


def _source_copy(target: Path) -> Path:
    """What a wheel is built from, outside the checkout: building in place leaves egg-info behind there."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, target / name)
    shutil.copytree(
        REPO_ROOT / "airflow_provider_lakehouse",
        target / "airflow_provider_lakehouse",
        ignore=shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc"),
    )
    return target


def _clean_env(venv: Path, **extra: str) -> dict[str, str]:
    """This process's environment without the project venv or the checkout on any path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    project_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != project_bin]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    env.update(extra)
    return env


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def lowest_venv(stack, tmp_path_factory: pytest.TempPathFactory) -> Path:
    version = lowest_airflow()
    key = hashlib.sha256(PYPROJECT.read_bytes() + version.encode() + repr(AIRFLOW_3_2_0_COMPAT).encode()).hexdigest()[
        :12
    ]
    venv = stack.state_dir / "venvs" / f"airflow-{version}-{key}"
    python = str(venv / "bin" / "python")
    work = tmp_path_factory.mktemp("lowest-airflow")
    source = _source_copy(work / "src")
    env = _clean_env(venv, PIP_DISABLE_PIP_VERSION_CHECK="1")
    begin = time.monotonic()
    if not (venv / ".installed").exists():
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], env, work)
        _run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], env, work)
        compat = AIRFLOW_3_2_0_COMPAT if version == "3.2.0" else ()
        _run([python, "-m", "pip", "install", "-q", f"apache-airflow=={version}", *compat, str(source)], env, work, 900)
        (venv / ".installed").write_text(version)
    else:  # dependencies unchanged (same pyproject.toml): only this checkout's code
        _run([python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(source)], env, work)
    print(f"\n[lowest Airflow {version}] venv ready in {time.monotonic() - begin:.1f} s: {venv}")
    return venv


def test_lowest_airflow_installs_imports_and_loads_the_plugin(lowest_venv: Path, tmp_path: Path) -> None:
    python = str(lowest_venv / "bin" / "python")
    env = _clean_env(lowest_venv, AIRFLOW_HOME=str(tmp_path / "home"))
    _run([python, "-m", "pip", "check"], env, tmp_path)
    found = json.loads(
        _run([python, str(Path(__file__).with_name("check_install.py"))], env, tmp_path).stdout.splitlines()[-1]
    )
    print(f"\n[lowest Airflow] {json.dumps(found)}")
    assert found["versions"]["apache-airflow"] == lowest_airflow()
    assert found["modules_imported"] > 50
    assert found["react_views"] == ["Lakehouse", "Lakehouse data flow", "Lakehouse lineage"]
    # the installed package, not this checkout
    where = _run([python, "-c", "import airflow_provider_lakehouse as p; print(p.__file__)"], env, tmp_path)
    assert str(lowest_venv) in where.stdout


def test_lowest_airflow_runs_a_data_table_dag(lowest_venv: Path, stack, tmp_path: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    shutil.copy2(REPO_ROOT / "dags_examples" / f"{DAG_ID}.py", dags)
    env = _clean_env(
        lowest_venv,
        **{k: v for k, v in stack.env().items() if k not in ("PATH", "AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER")},
    )
    env.update(AIRFLOW_HOME=str(tmp_path / "home"), AIRFLOW__CORE__DAGS_FOLDER=str(dags))
    airflow = str(lowest_venv / "bin" / "airflow")
    begin = time.monotonic()
    _run([airflow, "db", "migrate"], env, tmp_path)
    migrated = time.monotonic()
    result = _run([airflow, "dags", "test", DAG_ID], env, tmp_path)
    print(f"\n[lowest Airflow] db migrate {migrated - begin:.1f} s, dags test {time.monotonic() - migrated:.1f} s")
    output = result.stdout + result.stderr
    assert "state=success" in output or "DagRunState.SUCCESS" in output, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
