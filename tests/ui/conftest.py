"""One real Airflow with the Lakehouse plugin for the API and browser tests of this folder (started once)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.harness import LakehouseAirflow, attach, lakehouse_airflow


@pytest.fixture(scope="session")
def lakehouse(
    stack: Any, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LakehouseAirflow]:
    """A fresh Airflow for the session; ``LAKEHOUSE_UI_ATTACH=/tmp/lakehouse-ui.json`` reuses the one a running
    ``python -m tests.ui.harness`` serves instead (while working on the UI: its DAG runs take minutes)."""
    if os.environ.get("LAKEHOUSE_UI_ATTACH"):
        yield attach(Path(os.environ["LAKEHOUSE_UI_ATTACH"]))
        return
    with lakehouse_airflow(stack, stack_env, Path(tmp_path_factory.mktemp("lakehouse-ui"))) as harness:
        yield harness
