"""TPC-DS pipeline benchmark: the pipeline's SQL on each engine over one lake, answers checked, costs measured.

    python -m tests.benchmarks.bench_tpcds [--sf 0.1] [--engines connect,submit,duckdb,hookduck,auto] [--storage s3|fs]
    python -m tests.benchmarks.bench_tpcds --sf 1 --engines connect:1,connect:2,connect:4

``ENGINE:N`` runs up to N tasks of a stage at once (threads, each a ``DucklakeHook`` run, as Airflow runs a task
group's tasks with ``max_active_tasks=N``); the default is 1, one after another.

Runs the 51 SQL tasks of ``dags_examples/tpcds_pipeline.py`` (the same :func:`pipeline_tasks`; the Data Table
publish step is left out: it is the same small copy whatever the engine) one after another, stage by stage, on

- ``connect``: ``DucklakeHook`` over Spark Connect (the stack's Connect server, ``local[2]``);
- ``submit``: ``DucklakeHook`` through spark-submit per task (``local[2]``, a JVM per task);
- ``duckdb``: the same DuckDB SQL in DuckDB 1.5 with its ``ducklake`` extension attached to the same lake;
- ``local`` / ``local41``: DuckLake with the provider's Spark driver in the runner's own local Spark 4.3 / 4.1;
- ``iceberg``: Apache Iceberg 1.12 on local Spark 4.1, the same planned Spark SQL, a JDBC catalog in the stack's
  Postgres and the data on the same storage (see :mod:`tests.benchmarks.spark_peers`);
- ``icebergwarm``: the same, measured on the second of two passes in one JVM (the first is not reported), to
  compare stages warm against a Connect server's pass 2.

Each engine runs in its own Python process (PySpark allows one kind of session per process) over the same lake
(Postgres catalog; data on SeaweedFS S3 or a local directory), replacing the previous engine's tables. After
each engine the ten query results are read back by DuckDB and compared with the generator's reference answers
(SF 0.01, 1 and 10) and with DuckDB's own answers on the landing files.

Measured per stage: wall time; vCPU-seconds (busy CPU time of the whole machine, from ``/proc/stat``: the
catalog Postgres and the S3 server are part of the work; run it on an otherwise idle machine) per GB of input
(the landing area's Parquet bytes); peak memory (sum of the resident set sizes of the engine's processes:
the runner and its children, and for ``connect`` the Connect server's JVM and Python workers, sampled every
0.1 s). Writes ``report.md``, ``chart.png`` and ``results.json`` to ``--out``, then deletes the lake (its files,
the Iceberg peer's and its catalog schema) unless ``--keep-lake``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from airflow_provider_lakehouse.tpcds.pipeline import STAGES, PipelineTask, pipeline_tasks, preamble
from airflow_provider_lakehouse.tpcds.tables import BENCHMARK_QUERIES

ENGINES = {  # the operator's engine (DucklakeHook, what DucklakeOperator.execute runs), without Airflow around it
    "connect": "Spark Connect (DucklakeHook)",
    "submit": "spark-submit per task (DucklakeHook)",
    "duckdb": "DuckDB 1.5 + ducklake, same SQL",
    "hookduck": "the duckdb engine (DucklakeHook engine='duckdb')",
    "auto": "engine='auto' (DucklakeHook; Spark Connect above the threshold)",
    "local": "DuckLake on local Spark 4.3 in the runner (PlanRunner)",
    "local41": "DuckLake on local Spark 4.1 in the runner (PlanRunner)",
    "iceberg": "Apache Iceberg 1.12 on local Spark 4.1 (JDBC catalog; S3A when the lake is on S3)",
    "icebergwarm": "Apache Iceberg 1.12 on local Spark 4.1, pass 2 in the same JVM",
}
ICEBERG_ENGINES = ("iceberg", "icebergwarm")
PEER_ENGINES = ("local41", *ICEBERG_ENGINES)  # run by the Spark 4.1 environment (see spark_peers)
IN_PROCESS_SPARK = ("local", "local41", *ICEBERG_ENGINES)
#: SF 1 end to end on 2 vCPUs through Spark Connect, by where the lake keeps its data (issue 15's goals)
GOAL_SECONDS = {"s3": 90.0, "fs": 75.0}


def say(text: str = "") -> None:
    """Print to the real stdout (Airflow's logging setup replaces ``sys.stdout`` once a hook is imported)."""
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


@dataclass
class StageCost:
    """What one stage cost on one engine."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    tasks: dict[str, float] = field(default_factory=dict)
    started_unix: float = 0.0  # when the stage began (seconds since the epoch): lines it up with a JVM profile


@dataclass
class EngineRun:
    """One engine's pass over the pipeline."""

    engine: str
    stages: dict[str, StageCost] = field(default_factory=dict)
    error: str | None = None
    answers: dict[str, str | None] = field(default_factory=dict)  # query -> None (equal) or the difference
    ran_on: dict[str, int] = field(default_factory=dict)  # the hook's engines: tasks per engine that ran them

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EngineRun:
        """The inverse of ``asdict`` (extra keys such as the totals in ``results.json`` are ignored)."""
        stages = {name: StageCost(**cost) for name, cost in data["stages"].items()}
        return cls(data["engine"], stages, data.get("error"), data.get("answers") or {}, data.get("ran_on") or {})

    @property
    def wall_s(self) -> float:
        return sum(s.wall_s for s in self.stages.values())

    @property
    def cpu_s(self) -> float:
        return sum(s.cpu_s for s in self.stages.values())

    @property
    def peak_rss_mb(self) -> float:
        return max((s.peak_rss_mb for s in self.stages.values()), default=0.0)


def _busy_cpu_seconds() -> float:
    """Busy CPU time of the whole machine so far (all CPUs; idle and I/O wait excluded)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


class MemorySampler:
    """Peak summed RSS of a changing set of processes, sampled on a background thread.

    :param pids: returns the PIDs to sum at each sample (processes come and go: a JVM per spark-submit).
    :param interval_s: sampling period.
    """

    def __init__(self, pids: Any, interval_s: float = 0.1) -> None:
        self._pids, self._interval = pids, interval_s
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> None:
        total = 0
        for pid in self._pids():
            try:
                total += psutil.Process(pid).memory_info().rss
            except psutil.Error:
                pass  # exited between listing and reading
        self.peak_bytes = max(self.peak_bytes, total)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def __enter__(self) -> MemorySampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def _tree(pid: int) -> list[int]:
    try:
        return [pid] + [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


# ---------------------------------------------------------------------------------------------- engine side


def _hook_runner(lake: str, engine: str | None = None) -> Any:
    """What ``DucklakeOperator.execute`` runs: the hook, on the lake's Spark or on ``engine``."""
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    hook = DucklakeHook(ducklake=lake, engine=engine)
    return lambda task: hook.run(preamble(lake, task.schema) + task.sql)


def _duckdb_runner(setup: Any) -> Any:
    from tests import referee

    con = referee.connect()
    setup.attach(con, alias="dl")

    def run(task: PipelineTask) -> None:
        con.execute(f"USE dl{'.' + task.schema if task.schema else ''}")
        con.execute(task.sql).fetchall()

    return run


def engine_of(name: str) -> tuple[str, int]:
    """``connect:4`` -> (``connect``, 4): the engine and how many tasks of a stage run at once.

    >>> engine_of("connect:4"), engine_of("duckdb")
    (('connect', 4), ('duckdb', 1))
    """
    base, _, concurrency = name.partition(":")
    return base, int(concurrency or 1)


def label(name: str) -> str:
    base, concurrency = engine_of(name)
    return ENGINES[base] + (f", {concurrency} tasks at once" if concurrency > 1 else "")


def run_labels(runs: list[EngineRun]) -> list[str]:
    """Each run's label; an engine run again in one benchmark is its next pass (over Spark Connect, on the server
    the earlier passes warmed), so reports and charts keep the passes apart.

    >>> run_labels([EngineRun("connect:2"), EngineRun("connect:2"), EngineRun("duckdb")])[1]
    'Spark Connect (DucklakeHook), 2 tasks at once, pass 2 (same server)'
    """
    passes: Counter[str] = Counter()
    labels = []
    for run in runs:
        passes[run.engine] += 1
        again = passes[run.engine] > 1
        server = " (same server)" if again and engine_of(run.engine)[0] in ("connect", "auto") else ""
        labels.append(label(run.engine) + (f", pass {passes[run.engine]}{server}" if again else ""))
    return labels


def run_engine(
    engine: str,
    tasks: list[PipelineTask],
    setup: Any,
    connect_pid: int | None,
    lake: dict[str, Any] | None = None,
    jars: list[str] | None = None,
    runner: Any = None,
) -> EngineRun:
    """Run every task on ``engine`` stage by stage (up to its concurrency at once), measuring each stage; stop
    at the first failure."""
    from concurrent.futures import ThreadPoolExecutor

    base, concurrency = engine_of(engine)
    if runner is not None:
        run = runner
    elif base == "duckdb":
        run = _duckdb_runner(setup)
    elif base in ("local", "local41"):
        from tests.benchmarks.spark_peers import ducklake_local_runner

        run = ducklake_local_runner(lake or {}, jars or [])
    else:
        run = _hook_runner("main", {"hookduck": "duckdb", "auto": "auto"}.get(base))
    me = os.getpid()

    def pids() -> list[int]:
        return _tree(me) + (_tree(connect_pid) if connect_pid else [])

    result = EngineRun(engine)
    for stage in STAGES:
        cost = result.stages.setdefault(stage, StageCost())
        cpu_before, start = _busy_cpu_seconds(), time.perf_counter()
        cost.started_unix = time.time()

        def one(task: PipelineTask, stage: str = stage, cost: StageCost = cost) -> None:
            task_start = time.perf_counter()
            try:
                if not result.error:
                    response = run(task)
                    if isinstance(response, dict) and "engine" in response:
                        result.ran_on[response["engine"]] = result.ran_on.get(response["engine"], 0) + 1
            except Exception as exc:  # the report says which task failed and why
                result.error = result.error or f"{stage}.{task.name}: {type(exc).__name__}: {str(exc)[:600]}"
            cost.tasks[task.name] = round(time.perf_counter() - task_start, 3)

        with MemorySampler(pids) as memory, ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, [t for t in tasks if t.stage == stage]))
        cost.wall_s = time.perf_counter() - start
        cost.cpu_s = _busy_cpu_seconds() - cpu_before
        cost.peak_rss_mb = memory.peak_bytes / 2**20
        if result.error:
            break
    return result


def _engine_main(args: argparse.Namespace) -> None:
    """Child process: run one engine, write its :class:`EngineRun` as JSON."""
    spec = json.loads(Path(args.run_engine).read_text())
    tasks = [PipelineTask(**t) for t in spec["tasks"]]
    lake, jars = spec["lake"], spec.get("jars") or []
    if engine_of(spec["engine"])[0] in ICEBERG_ENGINES:
        from tests.benchmarks.spark_peers import export_iceberg_results, iceberg_runner

        runner = iceberg_runner(lake, jars)
        if engine_of(spec["engine"])[0] == "icebergwarm":
            # a first, unreported pass warms the JVM, as a long-running server's pass 2 is warm: stages compared
            # warm against warm, not against a JVM that compiles as it goes
            warm_up = run_engine(spec["engine"], tasks, None, None, runner=runner)
            if warm_up.error:
                Path(spec["output"]).write_text(json.dumps(asdict(warm_up)))
                return
        result = run_engine(spec["engine"], tasks, None, None, runner=runner)
        if not result.error:  # the parent checks these with DuckDB, as the lakes' results
            export_iceberg_results(runner, [f"q{n:02d}" for n in BENCHMARK_QUERIES], Path(spec["results_dir"]))
    else:
        result = run_engine(spec["engine"], tasks, _lake_setup(lake), spec.get("connect_pid"), lake, jars)
    Path(spec["output"]).write_text(json.dumps(asdict(result)))


# ---------------------------------------------------------------------------------------------- lake setup


def _lake(stack_env: dict[str, str], storage: str, root: Path) -> dict[str, Any]:
    """A fresh lake: its own metadata schema in the stack's catalog database, data on S3 or in ``root``."""
    name = f"tpcds_bench_{uuid.uuid4().hex[:8]}"
    conn = json.loads(stack_env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    data_path = f"s3://lakehouse/{name}/" if storage == "s3" else str(root / name) + "/"
    extra = {**conn.get("extra", {}), "metadata_schema": name, "data_path": data_path}
    if storage != "s3":
        extra.pop("aws_conn_id", None)
    return {"conn": dict(conn, extra=extra), "aws": json.loads(stack_env["AIRFLOW_CONN_LAKEHOUSE_S3"])}


def _lake_setup(lake: dict[str, Any]) -> Any:
    from airflow_provider_lakehouse.ducklake.store import PostgresStore
    from tests import referee

    conn = lake["conn"]
    s3 = referee.s3_spec(lake["aws"]) if conn["extra"]["data_path"].startswith("s3://") else None
    return referee.LakeSetup(
        PostgresStore(referee.postgres_spec(conn), metadata_schema=conn["extra"]["metadata_schema"]),
        conn["extra"]["data_path"],
        s3=s3,
    )


def drop_lake(lake: dict[str, Any]) -> None:
    """Delete what a run left: the lake's data files, the Iceberg peer's warehouse next to them and the lake's
    metadata schema. Two days of SF 10 runs left 50 GB in the S3 store and filled the disk in the middle of a run.
    """
    import psycopg
    from pyarrow import fs as pafs

    from airflow_provider_lakehouse.ducklake.storage import Storage
    from tests import referee
    from tests.benchmarks.spark_peers import iceberg_warehouse

    conn, data_path = lake["conn"], lake["conn"]["extra"]["data_path"]
    s3 = referee.s3_spec(lake["aws"]) if data_path.startswith("s3://") else None
    for root in (data_path, iceberg_warehouse(data_path)):
        storage = Storage(root, s3)
        path = storage.fs_path(root).rstrip("/")
        if storage.fs.get_file_info(path).type != pafs.FileType.NotFound:
            storage.fs.delete_dir(path)
    with psycopg.connect(referee.postgres_conninfo(referee.postgres_spec(conn)), autocommit=True) as pg:
        pg.execute(f'DROP SCHEMA IF EXISTS "{conn["extra"]["metadata_schema"]}" CASCADE')


def _engine_conn(lake: dict[str, Any], engine: str, spark_conf: dict[str, str]) -> str:
    conn = json.loads(json.dumps(lake["conn"]))
    engine = engine_of(engine)[0]
    if engine == "auto" and lake.get("auto_max_scan_bytes") is not None:
        conn["extra"]["duckdb_max_scan_bytes"] = lake["auto_max_scan_bytes"]
    if engine in ("connect", "auto"):
        conn["extra"]["spark_conn_id"] = "spark_connect_local"
        conn["extra"]["spark_conf"] = dict(spark_conf)  # spark.sql.* settings reach the Connect session
    elif engine == "submit":
        conn["extra"]["spark_conn_id"] = "spark_local"
        conn["extra"]["spark_conf"] = {"spark.driver.memory": "3g", **spark_conf}
    return json.dumps(conn)


def spawn_engine(
    engine: str,
    tasks: list[PipelineTask],
    lake: dict[str, Any],
    env: dict[str, str],
    connect_pid: int | None,
    workdir: Path,
    spark_conf: dict[str, str],
    python: str = sys.executable,
    jars: list[str] | None = None,
) -> EngineRun:
    """Run one engine in a fresh Python process (``python``: the Spark 4.1 environment's for the peers) and read
    back its measurements."""
    slug = engine.replace(":", "-")
    spec_file, output = workdir / f"{slug}.json", workdir / f"{slug}.result.json"
    spec_file.write_text(
        json.dumps(
            {
                "engine": engine,
                "tasks": [asdict(t) for t in tasks],
                "lake": lake,
                "connect_pid": connect_pid,
                "output": str(output),
                "jars": jars or [],
                "results_dir": str(results_dir(workdir, engine)),
            }
        )
    )
    spec_file.chmod(0o600)  # holds the catalog credentials
    child_env = dict(
        env,
        AIRFLOW_CONN_DUCKLAKE_MAIN=_engine_conn(lake, engine, spark_conf),
        PYSPARK_PYTHON=python,
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
    )
    log = workdir / f"{slug}.log"
    with log.open("w") as out:
        proc = subprocess.run(
            [python, "-m", "tests.benchmarks.bench_tpcds", "--run-engine", str(spec_file)],
            env=child_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if proc.returncode != 0 or not output.exists():
        return EngineRun(engine, error=f"runner exited {proc.returncode}; log {log}:\n{log.read_text()[-1500:]}")
    return EngineRun.from_json(json.loads(output.read_text()))


def results_dir(workdir: Path, engine: str) -> Path:
    """Where the Iceberg runner leaves its ``results.qNN`` tables as Parquet for the answer check."""
    return workdir / f"{engine.replace(':', '-')}-results"


# ---------------------------------------------------------------------------------------------- answers


def check_answers(
    setup: Any, landing: Path, scale_factor: float, exported: Path | None = None
) -> dict[str, str | None]:
    """Each ``results.qNN`` in the lake (or, for Iceberg, exported as ``exported/qNN.parquet``) against the
    generator's reference answer (SF 0.01, 1 and 10) and DuckDB's answer on the landing files; ``None`` means
    equal."""
    from airflow_provider_lakehouse.tpcds.answers import generator_version, matches_reference, reference_answer
    from airflow_provider_lakehouse.tpcds.tables import SOURCE_TABLES
    from tests import referee

    con = referee.connect()
    if exported is None:
        setup.attach(con, alias="lake", READ_ONLY="true")
    for table in SOURCE_TABLES:
        con.execute(
            f"CREATE OR REPLACE VIEW memory.main.{table} AS SELECT * FROM read_parquet('{landing}/{table}.parquet')"
        )
    con.execute("USE memory.main")
    reference_sf = {0.01: "0.01", 1.0: "1", 10.0: "10"}.get(scale_factor)
    generator = generator_version(landing)  # its answers are the reference (DuckDB 2.0 changed the generator)
    cache = str(Path(referee.extension_dir()).parent / "tpcds_answers")
    verdicts: dict[str, str | None] = {}
    for number in BENCHMARK_QUERIES:
        name = f"q{number:02d}"
        try:
            source = f"read_parquet('{exported}/{name}.parquet')" if exported else f"lake.results.{name}"
            ours = con.execute(f"SELECT * FROM {source}").fetchall()
        except Exception as exc:
            verdicts[name] = f"not readable: {exc}"
            continue
        duckdb_rows = con.execute(Path(landing, "queries", f"{name}.sql").read_text()).fetchall()
        difference = matches_reference(ours, duckdb_rows)  # any order, numbers within the reference's rounding
        verdict = f"differs from DuckDB on the landing files: {difference}" if difference else None
        if verdict is None and reference_sf:
            try:
                reference = reference_answer(number, reference_sf, cache, version=generator)[1]
            except LookupError:  # DuckDB 1.5's generator ships no SF 10 answers: DuckDB's answer is the check
                reference = None
            difference = matches_reference(ours, reference) if reference is not None else None
            verdict = f"differs from the SF {reference_sf} reference: {difference}" if difference else None
        verdicts[name] = verdict
    con.close()
    return verdicts


def answers_checked_against(landing: Path, scale_factor: float) -> str:
    """What :func:`check_answers` compares the results with, for the report."""
    from airflow_provider_lakehouse.tpcds.answers import generator_version, reference_answer
    from tests import referee

    generator = generator_version(landing)
    sf = {0.01: "0.01", 1.0: "1", 10.0: "10"}.get(scale_factor)
    try:
        if sf is None:
            raise LookupError(sf)
        reference_answer(
            BENCHMARK_QUERIES[0], sf, str(Path(referee.extension_dir()).parent / "tpcds_answers"), generator
        )
    except LookupError:
        return (
            f"DuckDB's answers on the landing files (DuckDB {generator}'s generator ships none for SF {scale_factor:g})"
        )
    return f"DuckDB's answers on the landing files and the generator's SF {sf} reference answers (DuckDB {generator})"


# ---------------------------------------------------------------------------------------------- report


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    import duckdb
    import pyspark

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    # the java Spark's launcher runs: $JAVA_HOME's when set (the stack's JVMs inherit it), else the one on PATH
    java_home = os.environ.get("JAVA_HOME")
    binary = str(Path(java_home, "bin", "java")) if java_home else "java"
    java = subprocess.run([binary, "-version"], capture_output=True, text=True).stderr.splitlines()
    return {
        "cpu": f"{cpu}, {len(os.sched_getaffinity(0))} vCPUs",
        "memory": f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
        "os": f"{platform.system()} {platform.release()}",
        "software": f"Python {platform.python_version()}, {java[0] if java else 'java ?'}, "
        f"Spark {pyspark.__version__}, DuckDB {duckdb.__version__}",
    }


def markdown(runs: list[EngineRun], scale_factor: float, input_gb: float, storage: str, about: dict[str, str]) -> str:
    lines = [
        f"## TPC-DS pipeline, SF {scale_factor:g} ({input_gb * 1024:.1f} MB Parquet input, lake data on "
        f"{'SeaweedFS S3' if storage == 's3' else 'a local directory'}, Postgres catalog)",
        "",
    ]
    lines += [f"- {key}: {value}" for key, value in about.items()]  # the machine, and what the answers meet
    lines += [
        "",
        "| engine | " + " | ".join(STAGES) + " | total s | vCPU-s / GB input | peak memory MB | answers |",
        "|---|" + "---:|" * (len(STAGES) + 3) + "---|",
    ]
    for run, name in zip(runs, run_labels(runs), strict=True):
        stages = [f"{run.stages[s].wall_s:.1f}" if s in run.stages else "-" for s in STAGES]
        wrong = [q for q, v in run.answers.items() if v]
        answers = (
            "failed"
            if run.error
            else (f"{len(run.answers) - len(wrong)}/{len(run.answers)} equal" if run.answers else "-")
        )
        lines.append(
            f"| {name} | " + " | ".join(stages) + f" | {run.wall_s:.1f} | "
            f"{run.cpu_s / input_gb:.0f} | {run.peak_rss_mb:.0f} | {answers} |"
        )
    lines.append("")
    for run, name in zip(runs, run_labels(runs), strict=True):
        if scale_factor == 1 and engine_of(run.engine)[0] == "connect" and not run.error:
            goal = GOAL_SECONDS[storage]
            verdict = "met" if run.wall_s <= goal else "missed"
            lines.append(
                f"- Goal SF 1 on {storage} within {goal:.0f} s through Spark Connect: {verdict} by {name} "
                f"({run.wall_s:.1f} s)."
            )
    for run in runs:
        if run.ran_on and engine_of(run.engine)[0] == "auto":
            split = ", ".join(f"{count} on {engine}" for engine, count in sorted(run.ran_on.items()))
            lines.append(f"- {run.engine} ran its tasks: {split}.")
        if run.error:
            lines.append(f"- {run.engine} failed: {run.error}")
        for query, verdict in run.answers.items():
            if verdict:
                lines.append(f"- {run.engine} {query}: {verdict}")
    return "\n".join(lines) + "\n"


def render(results: Path) -> None:
    """``report.md`` and ``chart.png`` next to a ``results.json``, printed too."""
    data = json.loads(results.read_text())
    runs = [EngineRun.from_json(run) for run in data["runs"]]
    report = markdown(runs, data["scale_factor"], data["input_gb"], data["storage"], data["machine"])
    (results.parent / "report.md").write_text(report)
    where = "SeaweedFS S3" if data["storage"] == "s3" else "a local directory"
    chart(
        runs,
        results.parent / "chart.png",
        f"TPC-DS pipeline, SF {data['scale_factor']:g}, "
        f"{data['machine']['cpu'].rsplit(', ', 1)[-1]}, lake data on {where}",
    )
    say(report)


def chart(runs: list[EngineRun], path: Path, title: str) -> None:
    """Stacked horizontal bars: wall time per stage, one bar per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.8 * len(runs)))
    labels = run_labels(runs)  # matplotlib draws bars of one label on top of each other
    left = [0.0] * len(runs)
    for stage in STAGES:
        widths = [r.stages[stage].wall_s if stage in r.stages else 0.0 for r in runs]
        ax.barh(labels, widths, left=left, label=stage)
        left = [a + b for a, b in zip(left, widths, strict=False)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total:.0f} s", va="center")
    ax.set_xlim(0, max(left, default=1.0) * 1.12)  # room for the totals
    ax.set_xlabel("wall time, seconds (stages run one after another)")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.legend(ncol=len(STAGES), loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")  # long engine labels would cut off the title and legend
    plt.close(fig)


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=0.1, help="scale factor (SF 1: about 300 MB of Parquet)")
    parser.add_argument("--engines", default="connect,submit,duckdb,hookduck,auto")
    parser.add_argument("--storage", choices=("s3", "fs"), default="s3", help="where the lake keeps its data files")
    parser.add_argument("--landing", help="generated data (default: under the stack's state dir, per SF)")
    parser.add_argument("--out", help="report directory (default: .lakehouse/benchmarks/tpcds-sf<SF>)")
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark property for both Spark engines (repeatable; over Connect only spark.sql.*)",
    )
    parser.add_argument(
        "--driver-memory",
        help="heap of the Spark Connect server (restarted if it runs) and of the in-process Spark peers "
        "(default: 2g, and a running server is kept)",
    )
    parser.add_argument(
        "--auto-max-scan-bytes",
        type=int,
        help="the auto engine's threshold (the lake's duckdb_max_scan_bytes; default: a quarter of the memory)",
    )
    parser.add_argument(
        "--from-results", metavar="RESULTS_JSON", help="only render report.md and chart.png again from a results.json"
    )
    parser.add_argument(
        "--keep-lake", action="store_true", help="keep the lake (files and catalog) instead of deleting it at the end"
    )
    parser.add_argument("--run-engine", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_engine:
        _engine_main(args)
        return
    if args.from_results:
        render(Path(args.from_results))
        return

    from airflow_provider_lakehouse.tpcds.generate import generate
    from tests import referee
    from tests.benchmarks.stack import bench_stack

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    spark_conf = dict(item.split("=", 1) for item in args.spark_conf)
    unknown = {engine_of(e)[0] for e in engines} - set(ENGINES)
    if unknown:
        parser.error(f"unknown engines {sorted(unknown)}; choose from {sorted(ENGINES)}")
    with bench_stack() as stack:
        connect_started = False
        lake: dict[str, Any] | None = None
        try:
            env = dict(os.environ, **stack.env())
            # absolute: the engines read it from other working directories (the Connect server's, a runner's)
            landing = Path(args.landing or stack.state_dir / "tpcds" / f"sf{args.sf:g}").resolve()
            if not (landing / "queries").is_dir():
                say(f"generating SF {args.sf:g} into {landing} ...")
                generate(args.sf, str(landing), extension_dir=referee.extension_dir())
            input_gb = sum(f.stat().st_size for f in landing.glob("*.parquet")) / 1e9
            queries = {n: (landing / "queries" / f"q{n:02d}.sql").read_text() for n in BENCHMARK_QUERIES}
            tasks = pipeline_tasks(str(landing), queries)
            out = Path(args.out or stack.state_dir / "benchmarks" / f"tpcds-sf{args.sf:g}")
            out.mkdir(parents=True, exist_ok=True)
            lake = _lake(env, args.storage, stack.state_dir / "benchmarks" / "lakes")
            lake["auto_max_scan_bytes"] = args.auto_max_scan_bytes
            lake["driver_memory"] = args.driver_memory or "2g"
            os.environ.update(env)
            setup = _lake_setup(lake)
            connect_pid = None
            if any(engine_of(e)[0] in ("connect", "auto") for e in engines):
                connect_started = not stack.spark_connect_server().running()
                if not connect_started and args.driver_memory:
                    stack.stop_spark_connect(log=lambda _m: None)  # its heap is set at start
                    connect_started = True
                stack.start_spark_connect(log=lambda _m: None, driver_memory=args.driver_memory)
                env = dict(os.environ, **stack.env())
                connect_pid = stack.spark_connect_server().pid()
            runs = []
            with tempfile.TemporaryDirectory() as workdir:
                for engine in engines:
                    base = engine_of(engine)[0]
                    python, jars = sys.executable, []
                    if base in PEER_ENGINES:
                        from tests.benchmarks.spark_peers import peer_jars, peer_python

                        python = str(peer_python(stack.state_dir, log=say))
                        jars = peer_jars(Path(python), stack.state_dir, iceberg=base in ICEBERG_ENGINES)
                    elif base == "local":
                        jars = [str(j) for j in stack.ensure_s3a_jars(log=lambda _m: None)]
                    say(f"{label(engine)}: {len(tasks)} tasks ...")
                    run = spawn_engine(
                        engine,
                        tasks,
                        lake,
                        env,
                        connect_pid if base in ("connect", "auto") else None,
                        Path(workdir),
                        spark_conf,
                        python,
                        jars,
                    )
                    if not run.error:
                        exported = results_dir(Path(workdir), engine) if base in ICEBERG_ENGINES else None
                        run.answers = check_answers(setup, landing, args.sf, exported)
                    say(f"  {run.wall_s:.1f} s" + (f", failed: {run.error}" if run.error else ""))
                    runs.append(run)
            (out / "results.json").write_text(
                json.dumps(
                    {
                        "scale_factor": args.sf,
                        "storage": args.storage,
                        "input_gb": input_gb,
                        "machine": dict(machine(), answers=answers_checked_against(landing, args.sf)),
                        "runs": [
                            dict(asdict(r), wall_s=r.wall_s, cpu_s=r.cpu_s, peak_rss_mb=r.peak_rss_mb) for r in runs
                        ],
                    },
                    indent=2,
                )
            )
            render(out / "results.json")
            say(f"written: {out / 'report.md'}, {out / 'chart.png'}, {out / 'results.json'}")
        finally:
            if connect_started:
                stack.stop_spark_connect(log=lambda _m: None)
            if lake is not None and not args.keep_lake:
                drop_lake(lake)


if __name__ == "__main__":
    main()
