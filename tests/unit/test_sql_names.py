"""The one name resolver (sql.names), and that the planner and the lineage extractor read names alike."""

from __future__ import annotations

import pytest
import sqlglot

from airflow_provider_lakehouse.exceptions import UnsupportedStatementError
from airflow_provider_lakehouse.lineage import extract_lineage
from airflow_provider_lakehouse.spark.plan import plan_script
from airflow_provider_lakehouse.spark.steps import Copy
from airflow_provider_lakehouse.sql.names import (
    FilePath,
    NameScope,
    StoreRef,
    TableName,
    UseTarget,
    attached_lake,
    file_path,
    file_reference,
    parse_attach,
)


@pytest.mark.parametrize(
    "literal, store",
    [
        ("ducklake", StoreRef("ducklake", "main")),
        ("ducklake:sales", StoreRef("ducklake", "sales")),
        ("ducklake://sales", StoreRef("ducklake", "sales")),
        ("DuckLake://Sales", StoreRef("ducklake", "Sales")),  # the planner took only lower-case 'ducklake'
        ("ducklake://my-lake", StoreRef("ducklake", "my-lake")),  # lineage took no '-' in names
        ("ducklake://", StoreRef("ducklake", "main")),
        ("datatable", StoreRef("datatable", "main")),
        ("datatable://ops", StoreRef("datatable", "ops")),
        ("datatable://ops:analytics", StoreRef("datatable", "ops", "analytics")),
        ("datatable:ops:analytics", StoreRef("datatable", "ops", "analytics")),
        ("ducklake://sales:analytics", None),  # a lake's schema is chosen with USE
        ("ducklake:postgres:dbname=x", None),
        ("other.duckdb", None),
        ("s3://bucket/lake", None),
    ],
)
def test_what_an_attach_literal_names(literal: str, store: StoreRef | None) -> None:
    assert parse_attach(literal) == store


@pytest.mark.parametrize(
    "sql, lake",
    [
        ("ATTACH 'ducklake://sales' AS dl; USE dl; SELECT 1", "sales"),
        ("ATTACH 'ducklake' AS dl", "main"),
        ("ATTACH 'datatable://ops' AS o; ATTACH 'ducklake:x' AS dl", "x"),
        ("ATTACH 'other.duckdb' AS o; SELECT 1", None),
        ("SELECT 'ducklake://sales'", None),
    ],
)
def test_the_attached_lake_of_a_script(sql: str, lake: str | None) -> None:
    assert attached_lake(sql) == lake


@pytest.mark.parametrize(
    "parts, target",
    [
        (["dl"], UseTarget("ducklake://sales", "main")),
        (["DL", "analytics"], UseTarget("ducklake://sales", "analytics")),
        (["analytics"], UseTarget(None, "analytics")),
        (["memory", "main"], UseTarget(None, "main", "memory")),
        (["dl", "a", "b"], UseTarget("ducklake://sales", "b", "a")),
    ],
)
def test_what_use_selects(parts: list[str], target: UseTarget) -> None:
    scope = NameScope(aliases={"dl": "ducklake://sales"})
    assert scope.use(parts) == target
    assert scope.schema == target.schema


@pytest.mark.parametrize(
    "use, reference, name",
    [
        ([], (None, None, "t"), TableName("main", "t")),
        ([], (None, "s", "t"), TableName("s", "t")),
        # alias.table: the alias's default schema, unless USE made its store the current one (as DuckDB does)
        ([], (None, "dl", "t"), TableName("main", "t", "ducklake://sales")),
        (["dl", "s"], (None, "dl", "t"), TableName("s", "t", "ducklake://sales")),
        (["dl", "s"], (None, "ops", "t"), TableName("main", "t", "datatable://ops")),
        (["dl", "s"], (None, None, "t"), TableName("s", "t", "ducklake://sales")),
        ([], ("dl", "x", "t"), TableName("x", "t", "ducklake://sales")),
        ([], ("elsewhere", "x", "t"), TableName("x", "t", None, "elsewhere")),
    ],
)
def test_how_a_table_reference_resolves(
    use: list[str], reference: tuple[str | None, str | None, str], name: TableName
) -> None:
    scope = NameScope(aliases={"dl": "ducklake://sales", "ops": "datatable://ops"})
    if use:
        scope.use(use)
    assert scope.table(*reference) == name


def test_the_target_store_is_the_current_one_until_use_selects_another() -> None:
    scope = NameScope(schema="s", target="ducklake://sales", aliases={"dl": "ducklake://sales"})
    assert scope.table(None, "dl", "t").qualified == "s.t"


@pytest.mark.parametrize(
    "text, path",
    [
        ("s3://b/k.parquet", FilePath("s3://b/k.parquet", "parquet", "s3")),
        ("/data/x.csv", FilePath("/data/x.csv", "csv")),
        ("/data/dir", FilePath("/data/dir")),
        ("raw/*.parquet", FilePath("raw/*.parquet", "parquet")),
        ("x.csv.gz", FilePath("x.csv.gz", "csv", None, "gz")),
        ("x.tsv", FilePath("x.tsv", "tsv")),  # the planner took .tsv for a table name
        ("./x.csv", FilePath("./x.csv", "csv")),
        ("../x", FilePath("../x")),  # the planner took this for a table name
        ("~/x.parquet", FilePath("~/x.parquet", "parquet")),
        ("x.jsonl", FilePath("x.jsonl", "json")),
        ("x.ndjson.zst", FilePath("x.ndjson.zst", "json", None, "zst")),
        ("https://h/x.parquet", FilePath("https://h/x.parquet", "parquet", "https")),
        ("x.gz", FilePath("x.gz", None, None, "gz")),
        ("orders", None),
        ("sales.orders", None),
    ],
)
def test_which_strings_are_file_paths(text: str, path: FilePath | None) -> None:
    assert file_path(text) == path


@pytest.mark.parametrize(
    "sql, dialect, path",
    [
        ("SELECT * FROM 's3://b/x.parquet'", "duckdb", FilePath("s3://b/x.parquet", "parquet", "s3")),
        ("SELECT * FROM parquet.`/data/x`", "spark", FilePath("/data/x", "parquet")),
        ("SELECT * FROM csv.`/data/x.parquet`", "spark", FilePath("/data/x.parquet", "csv")),
        ("SELECT * FROM t", "duckdb", None),
        ("SELECT * FROM s.t", "duckdb", None),
    ],
)
def test_which_table_references_are_files(sql: str, dialect: str, path: FilePath | None) -> None:
    assert file_reference(sqlglot.parse_one(sql, read=dialect).find(sqlglot.exp.Table)) == path


# -- the planner and the lineage extractor agree -------------------------------------------------------------


@pytest.mark.parametrize(
    "path, fmt, options",
    [
        ("s3://b/x.parquet", "parquet", {}),
        ("/data/x.csv.gz", "csv", {}),
        ("./x.csv", "csv", {}),
        ("x.tsv", "csv", {"delim": "\t"}),
        ("../raw", "parquet", {}),
    ],
)
def test_file_paths_the_planner_reads(path: str, fmt: str, options: dict[str, str]) -> None:
    step = plan_script(f"SELECT * FROM '{path}'").steps[0]
    (ref,) = step.files
    assert (ref.paths, ref.format, ref.options) == ((path,), fmt, options)
    assert not step.tables
    lineage = extract_lineage(f"SELECT * FROM '{path}'")
    assert [(d.dataset.kind, d.dataset.name) for d in lineage.datasets] == [("file", path)]


@pytest.mark.parametrize(
    "sql, fragment",
    [
        ("SELECT * FROM '~/x.parquet'", "'~' is not expanded on Spark"),
        ("SELECT * FROM 'https://h/x.parquet'", "https:// files are not supported"),
        ("SELECT * FROM 'x.json'", "json files are not supported on Spark"),
        ("SELECT * FROM 'x.gz'", "cannot tell the file format"),
        ("COPY (SELECT 1) TO 'out.json'", "json files are not supported on Spark"),
        ("ATTACH 'other.duckdb' AS o", "only ATTACH 'ducklake://NAME'"),
        ("ATTACH 'datatable://ops-1' AS o", "ops-1"),  # a Data Table name is a connection id's tail
        ("ATTACH 'datatable' AS dt; DELETE FROM dt.t WHERE id IN (SELECT id FROM u)", "read only that Data Table"),
        ("ATTACH 'datatable' AS dt; SELECT * FROM dt.t AT (VERSION => 1)", "a Data Table has one version"),
        ("ATTACH 'datatable' AS dt; INSERT INTO dt.t SELECT 1 ON CONFLICT DO NOTHING", "ON CONFLICT"),
        ("USE memory.main", "USE memory.main: name a lake alias"),
    ],
)
def test_file_paths_and_names_the_planner_refuses_clearly(sql: str, fragment: str) -> None:
    with pytest.raises(UnsupportedStatementError, match=fragment):
        plan_script(sql)


def test_copy_to_a_tsv_writes_tab_separated_csv() -> None:
    step = plan_script("COPY (SELECT 1 AS a) TO '/tmp/out.tsv'").steps[0]
    assert step.details == Copy(format="csv", options={"delim": "\t"})


@pytest.mark.parametrize(
    "script, table",
    [
        ("ATTACH 'ducklake://sales' AS dl; USE dl.analytics; INSERT INTO dl.t SELECT 1", "analytics.t"),
        ("ATTACH 'ducklake://sales' AS dl; USE dl; INSERT INTO dl.s.t SELECT 1", "s.t"),
        ("ATTACH 'DuckLake:sales' AS dl; USE dl.a; INSERT INTO t SELECT 1", "a.t"),
        ("INSERT INTO s.t SELECT 1", "s.t"),
    ],
)
def test_planner_and_lineage_resolve_the_same_table(script: str, table: str) -> None:
    step = plan_script(script).steps[-1]
    assert step.target == table
    (written,) = [d.dataset for d in extract_lineage(script).datasets if d.access != "read"]
    assert written.name == table


def test_a_column_rename_without_the_keyword_is_no_table_rename_for_lineage() -> None:
    """``ALTER TABLE t RENAME v TO u`` renames a column in DuckDB: the table stays, no table ``v`` appears."""
    from airflow_provider_lakehouse.lineage import extract_lineage

    column_rename = extract_lineage("ALTER TABLE t RENAME v TO u")
    assert [(str(d.dataset), d.lifecycle) for d in column_rename.datasets] == [("main.t", "ALTER")]
    table_rename = extract_lineage("ALTER TABLE t RENAME TO u")
    assert [(str(d.dataset), d.lifecycle) for d in table_rename.datasets] == [("main.t", "DROP"), ("main.u", "RENAME")]
