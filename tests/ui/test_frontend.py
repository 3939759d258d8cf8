"""The React app of the Lakehouse plugin: its Vitest unit tests pass, and its committed bundle is what the
lockfile builds (a wheel ships ``dist/``; nobody installing the provider needs Node)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

WWW = REPO_ROOT / "airflow_provider_lakehouse" / "plugins" / "www"
pytestmark = pytest.mark.slow


def _npm(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    assert npm, "npm is needed to build and test the Lakehouse UI (Node 20: see docs/ui.md)"
    return subprocess.run([npm, *args], cwd=WWW, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """``npm ci`` from the lockfile, unless node_modules already matches it."""
    marker = WWW / "node_modules" / ".package-lock.json"
    lock = WWW / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        result = _npm("ci", "--no-audit", "--no-fund")
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return WWW / "node_modules"


def test_vitest_unit_tests_pass(node_modules: Path) -> None:
    result = _npm("test")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert " passed" in output and "failed" not in output.split("Tests")[-1]


def test_typescript_compiles(node_modules: Path) -> None:
    result = _npm("run", "typecheck")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]


def test_committed_bundle_is_what_the_lockfile_builds(node_modules: Path, tmp_path: Path) -> None:
    committed = (WWW / "dist" / "main.umd.cjs").read_bytes()
    result = _npm("run", "build", "--", "--outDir", str(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "main.umd.cjs").read_bytes() == committed, (
        "dist/main.umd.cjs is stale: run `npm ci && npm run build` in airflow_provider_lakehouse/plugins/www"
    )
