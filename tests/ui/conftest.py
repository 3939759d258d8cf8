"""One real Airflow with the Lakehouse plugin for the API and browser tests of this folder (started once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.harness import LakehouseAirflow, lakehouse_airflow


@pytest.fixture(scope="session")
def lakehouse(stack: Any, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LakehouseAirflow]:
    with lakehouse_airflow(stack, stack_env, Path(tmp_path_factory.mktemp("lakehouse-ui"))) as harness:
        yield harness
