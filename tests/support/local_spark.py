"""The in-process Spark the integration tests share: one JVM per test process, with the S3A jars on its class path.

A test process starts its Spark JVM once and keeps it; each module's fixture starts a new SparkContext on it and
stops it afterwards (PySpark allows no Spark Connect session in a process that has a classic one). The S3A jars go
on the JVM's class path at launch (``spark.driver.extraClassPath``, as the stack's lake connections give them), not
in ``spark.jars``: a SparkContext started with a jar list loads them again in a class loader of its own, and each
such context kept about 58 MB of a 1 GB heap after it stopped (179 to 587 MB over 8 start/stop cycles; 119 to 127 MB
with the jars on the class path instead), until a test worker that started enough of them ran out of heap.
"""

from __future__ import annotations

from typing import Any

S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"


def s3a_jars() -> list[str]:
    """The S3A jars of the default state folder, fetched with ``mvn`` the first time (no server needed)."""
    from airflow_provider_lakehouse.devstack.stack import Stack

    return [str(jar) for jar in Stack().ensure_s3a_jars(log=lambda _message: None)]


def local_test_spark(shuffle_partitions: int = 2) -> Any:
    """A local ``SparkSession`` on two cores that can read ``s3a://`` when the S3A jars could be had.

    When this process's JVM was launched without them (by code under test that starts a session of its own), they
    are handed over in ``spark.jars`` instead: S3A then works at the cost of the heap described above.
    """
    from airflow_provider_lakehouse.devstack.jars import classpath_conf
    from airflow_provider_lakehouse.spark.session import local_session

    jars = s3a_jars()
    conf = {"spark.master": "local[2]", "spark.sql.shuffle.partitions": str(shuffle_partitions)}
    if jars:
        conf.update(classpath_conf(jars))
        if _running_jvm_lacks_s3a():
            conf["spark.jars"] = ",".join(jars)
    return local_session(conf)


def stop_local_spark() -> None:
    """Stop this process's classic SparkSession if one runs (without starting a JVM to find out)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:
        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()
        else:
            SparkContext._active_spark_context.stop()


def _running_jvm_lacks_s3a() -> bool:
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return False
    try:
        gateway.jvm.java.lang.Class.forName(S3A_CLASS)
    except Exception:  # py4j hands over the JVM's ClassNotFoundException
        return True
    return False
