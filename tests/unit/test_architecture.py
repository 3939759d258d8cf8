"""The package drawing of docs/architecture.md, enforced: which package may import which.

Every ``import`` of ``airflow_provider_lakehouse.*`` counts, also those inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency, and a cycle hidden in a function is still a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import airflow_provider_lakehouse

PACKAGE_ROOT = Path(airflow_provider_lakehouse.__file__).parent

# The drawing, bottom to top: each package with the packages it may import. Keep docs/architecture.md in step.
ALLOWED: dict[str, frozenset[str]] = {
    # foundations
    "exceptions": frozenset(),
    "jsonsafe": frozenset(),
    "interrupts": frozenset(),
    "get_provider_info": frozenset(),
    "connections": frozenset({"exceptions"}),
    "sql": frozenset({"exceptions"}),
    # format core and the pure engines over it
    "ducklake": frozenset({"connections", "exceptions", "sql"}),
    "lineage": frozenset({"sql", "exceptions"}),
    "datatables": frozenset({"connections", "ducklake", "exceptions", "jsonsafe", "sql"}),
    # planner and driver
    "spark": frozenset({"connections", "datatables", "ducklake", "exceptions", "interrupts", "jsonsafe", "sql"}),
    "duckdb_engine": frozenset(
        {"connections", "datatables", "ducklake", "exceptions", "interrupts", "jsonsafe", "spark", "sql"}
    ),
    # the Airflow shell
    "airflow_connections": frozenset({"connections", "exceptions"}),
    "assets": frozenset({"airflow_connections", "exceptions", "lineage"}),
    "hooks": frozenset(
        {
            "airflow_connections",
            "assets",
            "connections",
            "datatables",
            "duckdb_engine",
            "ducklake",
            "exceptions",
            "jsonsafe",
            "lineage",
            "spark",
            "sql",
        }
    ),
    "operators": frozenset(
        {"airflow_connections", "assets", "connections", "datatables", "exceptions", "hooks", "lineage", "spark", "sql"}
    ),
    "client": frozenset({"connections", "exceptions", "hooks", "sql"}),
    # the UI (Airflow plugin) and the tools around the provider
    "plugins": frozenset(
        {
            "airflow_connections",
            "assets",
            "connections",
            "ducklake",
            "exceptions",
            "hooks",
            "jsonsafe",
            "lineage",
            "spark",
            "sql",
        }
    ),
    "tpcds": frozenset({"connections", "duckdb_engine", "ducklake", "exceptions", "hooks", "spark", "sql"}),
    "devstack": frozenset({"spark", "tpcds"}),
}


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "airflow_provider_lakehouse":
        return None
    return parts[1] if len(parts) > 1 else ""


def _imports() -> Iterator[tuple[str, str, str]]:
    """(importing file, its package, imported package) for every internal import in the package."""
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        relative = path.relative_to(PACKAGE_ROOT)
        if relative.parts[0] == "plugins" and "www" in relative.parts:
            continue
        source = relative.parts[0].removesuffix(".py")
        if source == "__init__":
            continue  # the package root re-exports nothing of its subpackages
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                target = _package_of(name)
                if target is not None and target != source:
                    yield str(relative), source, target


def test_every_package_is_in_the_drawing() -> None:
    packages = {p.name.removesuffix(".py") for p in PACKAGE_ROOT.iterdir() if not p.name.startswith("_")}
    packages -= {"py.typed", "__pycache__"}
    assert packages - ALLOWED.keys() == set(), "add the new package to ALLOWED and docs/architecture.md"


def test_imports_follow_the_drawing() -> None:
    wrong = sorted(
        f"{path}: {source} -> {target}" for path, source, target in _imports() if target not in ALLOWED[source]
    )
    assert wrong == [], "imports across the drawing of docs/architecture.md:\n" + "\n".join(wrong)


def test_the_drawing_has_no_cycle() -> None:
    """Layers: a package may only import packages that cannot import it back, directly or through others."""
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(package: str, path: tuple[str, ...]) -> None:
        if seen.get(package) == 1:
            pytest.fail("cycle in the drawing: " + " -> ".join((*path, package)))
        if seen.get(package) == 2:
            return
        seen[package] = 1
        for target in sorted(ALLOWED[package]):
            visit(target, (*path, package))
        seen[package] = 2

    for package in sorted(ALLOWED):
        visit(package, ())


def test_the_drawing_is_documented() -> None:
    """docs/architecture.md names every package of the drawing."""
    text = (PACKAGE_ROOT.parent / "docs" / "architecture.md").read_text()
    missing = [p for p in ALLOWED if f"`{p}" not in text]
    assert missing == []
