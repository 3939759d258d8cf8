"""Spark's own S3 reader (S3A) for S3 lakes: credentials per session, and whether it is there at all.

The lake's S3 credentials and endpoint are set as *session* settings for the lake's buckets
(``fs.s3a.bucket.<bucket>.*``): Spark copies session settings into the Hadoop configuration of every file read,
so nothing goes on a command line or into the cluster's Hadoop configuration, and Spark redacts the key names
(``access.key``, ``secret.key``) wherever it shows settings. Where the cluster lacks ``hadoop-aws``, reads fall
back to executors reading with pyarrow (see :mod:`.scans`).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any
from urllib.parse import urlparse

from airflow_provider_lakehouse.connections.lake import S3Spec

log = logging.getLogger(__name__)
#: per SparkSession: S3A usable (True/False), and the buckets whose settings are set
_AVAILABLE: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def bucket_settings(bucket: str, s3: S3Spec) -> dict[str, str]:
    """The ``fs.s3a.bucket.<bucket>.*`` settings for ``s3`` (keys, endpoint, path-style, TLS per the endpoint).

    >>> sorted(bucket_settings("lake", S3Spec(access_key="k", secret_key="s", endpoint_url="http://127.0.0.1:9000")))[:3]
    ['fs.s3a.bucket.lake.access.key', 'fs.s3a.bucket.lake.aws.credentials.provider', 'fs.s3a.bucket.lake.connection.ssl.enabled']
    """
    prefix = f"fs.s3a.bucket.{bucket}."
    settings = {"endpoint.region": s3.region or "us-east-1"}
    if s3.access_key and s3.secret_key:
        settings.update(
            {
                "access.key": s3.access_key,
                "secret.key": s3.secret_key,
                "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            }
        )
        if s3.session_token:
            settings.update(
                {
                    "session.token": s3.session_token,
                    "aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
                }
            )
    if s3.endpoint_url:
        parsed = urlparse(s3.endpoint_url)
        settings.update(
            {
                "endpoint": s3.endpoint_url,
                "path.style.access": "true",
                "connection.ssl.enabled": str(parsed.scheme == "https").lower(),
            }
        )
    return {prefix + key: value for key, value in settings.items()}


def use_s3a(spark: Any, buckets: set[str], s3: S3Spec | None, wanted: bool | None) -> bool:
    """Set the buckets' S3A settings on ``spark`` and tell whether Spark can read them itself.

    :param wanted: True or False forces the choice; None (the default) uses S3A when the cluster has it.
    """
    if wanted is False or s3 is None:
        return False
    for bucket in sorted(buckets):
        for key, value in bucket_settings(bucket, s3).items():
            spark.conf.set(key, value)
    if wanted is True:
        return True
    if spark not in _AVAILABLE:
        _AVAILABLE[spark] = _probe(spark, sorted(buckets)[0])
    return _AVAILABLE[spark]


def _probe(spark: Any, bucket: str) -> bool:
    """Ask Spark for paths that do not exist: "path not found" means S3A answered.

    Two paths, not one: for a single path Spark first looks for a streaming sink's metadata directory there and
    logs the miss as a WARN with a 30-line stack trace, into every task log; for several it goes straight to
    the path check.
    """
    probe = f"s3a://{bucket}/__lakehouse_s3a_probe__"
    try:
        spark.read.parquet(f"{probe}/none.parquet", f"{probe}/none-either.parquet").schema  # noqa: B018
    except Exception as exc:  # the error's text is all Spark Connect hands over
        text = str(exc)
        if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
            return True
        reason = (
            "hadoop-aws is not on the classpath"
            if "S3AFileSystem" in text or "ClassNotFound" in text
            else text.splitlines()[0][:200]
        )
        log.info("Spark cannot read s3a:// (%s); executors read the lake's S3 files with pyarrow", reason)
        return False
    return True
