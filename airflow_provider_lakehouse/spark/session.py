"""SparkSessions the driver runs on: in-process local Spark, or a Spark Connect client."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    # Executors' Python must be this interpreter: they import this package to read and write lake files.
    "spark.pyspark.python": sys.executable,
    "spark.pyspark.driver.python": sys.executable,
}


def local_session(conf: Mapping[str, str] | None = None) -> Any:
    """The process's local SparkSession (created on first use, then reused: one JVM per worker process)."""
    from pyspark.sql import SparkSession

    import logging

    # py4j logs every connection close at INFO, also from __del__ at interpreter exit (after logging closed).
    logging.getLogger("py4j").setLevel(logging.WARNING)
    settings = dict(LOCAL_CONF)
    settings.update(conf or {})
    builder = SparkSession.builder.master(settings.pop("spark.master", "local[*]")).appName("lakehouse")
    if os.environ.get("SPARK_LOCAL_IP"):
        settings.setdefault("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
        settings.setdefault("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def connect_session(url: str, conf: Mapping[str, str] | None = None) -> Any:
    """A Spark Connect session to ``url`` (``sc://host:port``); runtime SQL settings from ``conf`` applied."""
    from pyspark.sql import SparkSession

    had_flag = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    spark = SparkSession.builder.remote(url).getOrCreate()
    if not had_flag:
        # PySpark sets this for the whole process and never clears it; a later local session or spark-submit
        # started from this process would then fail with CONNECT_URL_NOT_SET.
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    for key, value in (conf or {}).items():
        if key.startswith("spark.sql."):
            spark.conf.set(key, value)
    return spark
