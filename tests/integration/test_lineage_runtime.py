"""Run-time lineage facts against real lakes: schemas, snapshot ids, files/bytes/rows written, checked with
DuckDB reading the same catalog; the OpenLineage event built from them validates against the spec."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from airflow_provider_lakehouse.hooks._lineage import SqlTarget
from airflow_provider_lakehouse.hooks._openlineage import ducklake_facts, ducklake_naming
from airflow_provider_lakehouse.lineage import Dataset, Lineage
from airflow_provider_lakehouse.lineage.openlineage import DatasetFacts, openlineage_datasets
from tests import referee
from tests.integration.test_spark_sql import run, spec_of
from tests.referee import LakeSetup
from tests.support.local_spark import local_test_spark
from tests.support.openlineage_schemas import validate_event

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = """
ATTACH 'ducklake' AS dl; USE dl;
CREATE TABLE totals AS SELECT k, sum(v) AS total FROM src GROUP BY k;
INSERT INTO totals SELECT k, v FROM src WHERE v > 5;
"""


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = local_test_spark(shuffle_partitions=2)
    yield session
    session.stop()


@dataclass(frozen=True)
class _Ran:
    """A script run on a fresh lake table ``src`` (k = i % 3, v = i for i < 10) and its lineage facts."""

    info: dict[str, Any]
    target: SqlTarget
    lineage: Lineage
    facts: dict[Dataset, DatasetFacts]


def _run_on_src(spark: Any, setup: LakeSetup, script: str) -> _Ran:
    con = referee.connect()
    setup.attach(con)
    con.execute("CREATE TABLE lake.src AS SELECT i % 3 AS k, i AS v FROM range(10) t(i)").fetchall()
    response = run(spark, setup, script)
    target = SqlTarget("ducklake", "main", "main", "duckdb")
    lineage = target.extract(script)
    return _Ran(response["catalog_info"], target, lineage, ducklake_facts(spec_of(setup), target, lineage, response))


def test_facts_match_the_catalog_and_the_event_validates(spark: Any, setup: LakeSetup) -> None:
    ran = _run_on_src(spark, setup, SCRIPT)
    info, target, lineage, facts = ran.info, ran.target, ran.lineage, ran.facts

    totals, src = Dataset("table", "main.totals", "ducklake://main"), Dataset("table", "main.src", "ducklake://main")
    con2 = referee.connect()
    setup.attach(con2)
    meta = f"__ducklake_metadata_lake.{getattr(setup.store, 'metadata_schema', None) or 'main'}"
    table_id = referee.rows(
        con2, f"SELECT table_id FROM {meta}.ducklake_table WHERE table_name = 'totals' AND end_snapshot IS NULL"
    )[0]["table_id"]
    declared = referee.rows(
        con2,
        f"SELECT column_name, column_type FROM {meta}.ducklake_column "
        f"WHERE table_id = {table_id} AND end_snapshot IS NULL ORDER BY column_order",
    )
    written = referee.rows(
        con2,
        f"SELECT count(*) AS files, sum(file_size_bytes) AS bytes, sum(record_count) AS rows "
        f"FROM {meta}.ducklake_data_file WHERE table_id = {table_id} "
        f"AND begin_snapshot > {info['snapshot_before']}",
    )[0]
    duck_count = referee.rows(con2, "SELECT count(*) AS n FROM lake.totals")[0]["n"]

    out = facts[totals]
    assert out.fields == tuple((r["column_name"], r["column_type"]) for r in declared)
    assert out.version == str(info["snapshot_after"])
    assert (out.files, out.bytes, out.rows) == (written["files"], written["bytes"], written["rows"])
    assert out.rows == duck_count == 3 + 4  # three groups, then the four values above 5
    assert out.catalog is not None and out.catalog.warehouseUri == setup.data_path
    assert facts[src].version == str(info["snapshot_before"])  # what the script read
    assert facts[src].rows is None and facts[src].files is None

    inputs, outputs = openlineage_datasets(lineage, ducklake_naming(target), facts)
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=dt.datetime.now(dt.UTC).isoformat(),
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="tests", name="lineage.runtime"),
        producer="https://example.invalid/tests",
        inputs=inputs,
        outputs=outputs,
    )
    payload = Serde.to_json(event)
    assert validate_event(json.loads(payload)) == []
    for secret in filter(None, [getattr(setup.pg, "password", None), getattr(setup.s3, "secret_key", None)]):
        assert secret not in payload
    column_lineage = outputs[0].facets["columnLineage"]
    total = {
        (f.field, t.type, t.subtype) for f in column_lineage.fields["total"].inputFields for t in f.transformations
    }
    assert total == {("v", "DIRECT", "AGGREGATION"), ("v", "DIRECT", "IDENTITY")}
    dataset_wide = {(f.field, t.subtype) for f in column_lineage.dataset for t in f.transformations}
    assert dataset_wide == {("k", "GROUP_BY"), ("v", "FILTER")}


UPDATE_SCRIPT = """
ATTACH 'ducklake' AS dl; USE dl;
UPDATE src SET v = v + 1 WHERE k = 0;
"""


def test_in_place_update_reads_one_snapshot_and_writes_the_next(spark: Any, setup: LakeSetup) -> None:
    """The target of an UPDATE is an input and an output (docs/lineage-rules.md): its input entry carries
    the snapshot the script read, its output entry the snapshot it committed, and its self edge names the
    input."""
    ran = _run_on_src(spark, setup, UPDATE_SCRIPT)
    info, target, lineage, facts = ran.info, ran.target, ran.lineage, ran.facts
    src = Dataset("table", "main.src", "ducklake://main")
    assert lineage.get(src.key).access == "read_write"  # type: ignore[union-attr]
    assert (facts[src].version_read, facts[src].version) == (str(info["snapshot_before"]), str(info["snapshot_after"]))

    inputs, outputs = openlineage_datasets(lineage, ducklake_naming(target), facts)
    (read,), (written,) = inputs, outputs
    assert (read.namespace, read.name) == (written.namespace, written.name) == ("ducklake://main", "main.src")
    assert read.facets["version"].datasetVersion == str(info["snapshot_before"])
    assert written.facets["version"].datasetVersion == str(info["snapshot_after"])
    assert "outputStatistics" not in (read.inputFacets or {})
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=dt.datetime.now(dt.UTC).isoformat(),
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="tests", name="lineage.update"),
        producer="https://example.invalid/tests",
        inputs=inputs,
        outputs=outputs,
    )
    assert validate_event(json.loads(Serde.to_json(event))) == []
    column_lineage = written.facets["columnLineage"]
    v = {
        (f.name, f.field, t.type, t.subtype) for f in column_lineage.fields["v"].inputFields for t in f.transformations
    }
    assert v == {("main.src", "v", "DIRECT", "TRANSFORMATION")}
    assert {(f.field, t.subtype) for f in column_lineage.dataset for t in f.transformations} == {("k", "FILTER")}
