"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import referee
from tests.referee import LakeSetup


@pytest.fixture(params=["sqlite", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> LakeSetup:
    if request.param == "sqlite":
        return referee.sqlite_lake(tmp_path)
    return referee.postgres_lake(request.getfixturevalue("stack"))
