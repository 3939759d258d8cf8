"""The constraints file (the exact tested set) agrees with the ranges pyproject.toml declares."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from airflow_provider_lakehouse.devstack.bootstrap import CONSTRAINTS, REPO_ROOT, pyspark_pin


def _pins() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and " " not in line, f"not an exact pin: {line!r}"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_declared_range_admits_the_tested_version() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    pins = _pins()
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    checked = 0
    for text in requirements:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name == canonicalize_name(project["name"]):
            continue  # dev names the other extras
        assert name in pins, f"{requirement.name} is declared but not in {CONSTRAINTS.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{text} does not admit the tested {requirement.name}=={pins[name]}"
        )
        checked += 1
    assert checked >= 30


def test_the_project_itself_is_not_constrained_and_pyspark_pairs_with_its_client() -> None:
    pins = _pins()
    assert "airflow-provider-lakehouse" not in pins
    assert pyspark_pin() == f"pyspark=={pins['pyspark']}"
    assert pins["pyspark-client"].split(".")[0] == pins["pyspark"].split(".")[0]  # the same Spark major
