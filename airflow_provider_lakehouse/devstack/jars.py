"""The jars Spark's own S3 reader (S3A) needs, fetched with Maven once and cached.

The pip PySpark ships Hadoop's client jars but not ``hadoop-aws``. It must be the same version as the bundled
Hadoop, with what it declares at runtime: the AWS SDK v2 ``bundle`` and the S3 analytics accelerator. A
throw-away POM that depends on ``hadoop-aws`` lets Maven resolve exactly those (``dependency:copy-dependencies``,
runtime scope) from Maven's configured repositories; afterwards the cache is used offline.

One repair: the AWS SDK ``bundle`` 2.24.6, which ``hadoop-aws`` 3.4.1 (Spark 4.0) declares, carries SLF4J 1.7's API
unshaded. First on a JVM's class path (where ``extraClassPath`` puts it), it wins over Spark's SLF4J 2 and sends
every log line of the JVM to SLF4J's no-op logger: a Spark 4.0 driver with S3A logged nothing at all. The cached
copy leaves those classes out (:func:`without_unshaded_slf4j`); later bundles shade them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.lakehouse</groupId>
  <artifactId>s3a-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.hadoop</groupId>
      <artifactId>hadoop-aws</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def bundled_hadoop_version(spark_jars: Path) -> str:
    """The Hadoop version of the pip PySpark's ``hadoop-client-api`` jar (``3.5.0`` for Spark 4.3)."""
    for jar in spark_jars.glob("hadoop-client-api-*.jar"):
        match = re.match(r"hadoop-client-api-(.+)\.jar$", jar.name)
        if match:
            return match.group(1)
    raise RuntimeError(f"No hadoop-client-api jar in {spark_jars}.")


def _cache_folder(cache: Path, version: str) -> Path:
    return cache / f"hadoop-aws-{version}"


def cached_s3a_jars(cache: Path, spark_jars: Path) -> list[Path]:
    """The S3A jars for the bundled Hadoop if :func:`s3a_jars` has fetched them into ``cache``, else none."""
    target = _cache_folder(cache, bundled_hadoop_version(spark_jars))
    return sorted(target.glob("*.jar")) if (target / "complete").exists() else []


def s3a_jars(cache: Path, spark_jars: Path, *, log: Callable[[str], None] = print) -> list[Path]:
    """The S3A jars for the bundled Hadoop, from ``cache`` (filled with ``mvn`` the first time).

    :raises RuntimeError: ``mvn`` is missing or could not resolve them (the caller falls back to pyarrow).
    """
    version = bundled_hadoop_version(spark_jars)
    target = _cache_folder(cache, version)
    marker = target / "complete"
    if marker.exists():
        _repair_bundles(target)  # a cache filled before the repair was added
        return sorted(target.glob("*.jar"))
    if shutil.which("mvn") is None:
        raise RuntimeError("mvn is not installed: cannot fetch hadoop-aws for S3A.")
    log(f"fetching hadoop-aws {version} and the AWS SDK it declares with mvn (once; about 700 MB) ...")
    with tempfile.TemporaryDirectory() as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(_POM.format(version=version))
        staging = Path(work) / "jars"
        result = subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}",
                "-DincludeScope=runtime",
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if result.returncode != 0 or not list(staging.glob("hadoop-aws-*.jar")):
            raise RuntimeError(f"mvn could not fetch hadoop-aws {version}: {(result.stdout + result.stderr)[-1500:]}")
        target.mkdir(parents=True, exist_ok=True)
        for jar in staging.glob("*.jar"):
            shutil.move(str(jar), target / jar.name)
    _repair_bundles(target)
    marker.write_text("\n".join(sorted(j.name for j in target.glob("*.jar"))) + "\n")
    return sorted(target.glob("*.jar"))


_SLF4J = "org/slf4j/"


def _repair_bundles(target: Path) -> None:
    """:func:`without_unshaded_slf4j` on the folder's AWS SDK bundle, once: a marker saves reading a 550 MB jar's
    directory on every later call."""
    repaired = target / "slf4j-checked"
    if repaired.exists():
        return
    for jar in target.glob("bundle-*.jar"):
        without_unshaded_slf4j(jar)
    repaired.touch()


def without_unshaded_slf4j(jar: Path, *, zip_command: str | None = shutil.which("zip")) -> bool:
    """Rewrite ``jar`` without its unshaded ``org/slf4j/`` classes, if it has any; return whether it had.

    With Info-ZIP's ``zip`` (``zip_command``) the entries are deleted and the rest copied as they are (4 s for
    the 550 MB bundle, measured); without it, Python rewrites every entry (about 45 s). Either writes a temporary
    file renamed over the jar, so a crash leaves the old jar or the new one.
    """
    with zipfile.ZipFile(jar) as source:
        entries = source.infolist()
        if not any(e.filename.startswith(_SLF4J) for e in entries):
            return False
        if zip_command is not None:
            subprocess.run([zip_command, "-q", "-d", str(jar), f"{_SLF4J}*"], check=True, capture_output=True)
            return True
        repaired = jar.with_name(jar.name + ".repairing")
        with zipfile.ZipFile(repaired, "w", compression=zipfile.ZIP_DEFLATED) as target:
            for entry in entries:
                if not entry.filename.startswith(_SLF4J):
                    target.writestr(entry, source.read(entry))
    repaired.replace(jar)
    return True


def classpath_conf(jars: Sequence[Path | str]) -> dict[str, str]:
    """Spark properties that put ``jars`` on the driver's and the executors' classpath when their JVMs start.

    Not ``spark.jars``: that hands every jar to each application's executors, and in local mode copies them,
    the 690 MB AWS SDK bundle included, for every application: about 4 s on each spark-submit task here
    (``tests/benchmarks/bench_spark.py``). The paths must exist wherever an executor runs, which holds for the
    local stack (one machine); on a cluster, install the jars on every node, or ship them with ``spark.jars``.

    >>> classpath_conf(["/j/a.jar", "/j/b.jar"])["spark.executor.extraClassPath"]
    '/j/a.jar:/j/b.jar'
    """
    classpath = ":".join(str(jar) for jar in jars)
    return {"spark.driver.extraClassPath": classpath, "spark.executor.extraClassPath": classpath}
