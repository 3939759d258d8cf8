"""The suite cleans up after itself in a developer's long-lived stack: each lake a test made there (a catalog
schema, data under its own S3 prefix) is dropped when the session ends."""

from __future__ import annotations

from typing import Any

import psycopg
import pyarrow as pa
import pytest

from tests import referee

pytestmark = pytest.mark.integration


def test_a_lake_made_in_the_stack_is_dropped_with_its_files(stack: Any) -> None:
    setup = referee.postgres_lake(stack)
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("main.t", pa.schema([("id", pa.int64())]))
    with lake.transaction() as tx:
        tx.append("main.t", pa.table({"id": pa.array(range(3), pa.int64())}))
    assert setup.file_uris()
    assert referee.drop_lakes([setup]) == 1
    schema = setup.store.metadata_schema  # type: ignore[attr-defined]
    with psycopg.connect(referee.postgres_conninfo(setup.store.spec), autocommit=True) as conn:  # type: ignore[attr-defined]
        found = conn.execute("SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s", (schema,))
        assert found.fetchone() == (0,)
    assert setup.file_uris() == []
    assert referee.drop_lakes([setup]) == 1  # gone already: nothing to do, no error
