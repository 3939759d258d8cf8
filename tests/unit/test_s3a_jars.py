"""The S3A jar cache's repair of AWS SDK bundles that carry SLF4J unshaded (see devstack.jars)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.jars import s3a_jars, without_unshaded_slf4j


def _jar(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as jar:
        for name in names:
            jar.writestr(name, f"bytes of {name}")
    return path


#: the Python rewrite (the fallback), and Info-ZIP's zip where the machine has it
TOOLS: list[str | None] = [None, *([shutil.which("zip")] if shutil.which("zip") else [])]


@pytest.mark.parametrize("zip_command", TOOLS, ids=lambda t: "zip" if t else "python")
def test_unshaded_slf4j_classes_are_left_out_and_everything_else_kept(tmp_path: Path, zip_command: str | None) -> None:
    kept = [
        "META-INF/MANIFEST.MF",
        "software/amazon/awssdk/thirdparty/org/slf4j/LoggerFactory.class",  # shaded: the SDK's own copy
        "software/amazon/awssdk/services/s3/S3Client.class",
    ]
    jar = _jar(tmp_path / "bundle-2.24.6.jar", [*kept, "org/slf4j/LoggerFactory.class", "org/slf4j/impl/X.class"])

    assert without_unshaded_slf4j(jar, zip_command=zip_command) is True

    with zipfile.ZipFile(jar) as repaired:
        assert repaired.namelist() == kept
        assert repaired.read(kept[2]) == f"bytes of {kept[2]}".encode()
    assert not list(tmp_path.glob("*.repairing"))


def test_a_jar_without_them_is_not_rewritten(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "bundle-2.35.4.jar", ["software/amazon/awssdk/thirdparty/org/slf4j/Logger.class"])
    before = jar.stat().st_mtime_ns

    assert without_unshaded_slf4j(jar) is False
    assert jar.stat().st_mtime_ns == before


def test_a_cached_folder_is_repaired_once(tmp_path: Path) -> None:
    spark_jars = tmp_path / "spark-jars"
    spark_jars.mkdir()
    (spark_jars / "hadoop-client-api-3.4.1.jar").write_bytes(b"")
    cached = tmp_path / "cache" / "hadoop-aws-3.4.1"
    cached.mkdir(parents=True)
    (cached / "complete").write_text("bundle-2.24.6.jar\n")
    bundle = _jar(cached / "bundle-2.24.6.jar", ["org/slf4j/LoggerFactory.class", "software/amazon/X.class"])

    assert s3a_jars(tmp_path / "cache", spark_jars) == [bundle]
    with zipfile.ZipFile(bundle) as repaired:
        assert repaired.namelist() == ["software/amazon/X.class"]

    # a second call does not open the jar again: a bundle put back unrepaired stays as it is
    _jar(bundle, ["org/slf4j/LoggerFactory.class"])
    assert s3a_jars(tmp_path / "cache", spark_jars) == [bundle]
    with zipfile.ZipFile(bundle) as untouched:
        assert untouched.namelist() == ["org/slf4j/LoggerFactory.class"]
