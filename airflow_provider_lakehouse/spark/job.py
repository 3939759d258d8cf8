"""The spark-submit application: run a plan handed over in a private file, write the response next to it.

spark-submit starts this file as the driver. Its input is the file named by ``LAKEHOUSE_JOB_FILE`` (mode
600, written by the hook; it holds the plan, the parameters, the lake's connection spec and those of the Data
Tables the plan attaches), so no credential
appears on the command line; the file is deleted as soon as it is read.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any

JOB_FILE_ENV = "LAKEHOUSE_JOB_FILE"


def main() -> int:
    from pyspark.sql import SparkSession

    from airflow_provider_lakehouse.connections.redact import Redactor
    from airflow_provider_lakehouse.exceptions import StatementError
    from airflow_provider_lakehouse.spark.driver import PlanRunner
    from airflow_provider_lakehouse.spark.plan import Plan

    job_path = Path(os.environ[JOB_FILE_ENV])
    job: dict[str, Any] = pickle.loads(job_path.read_bytes())
    job_path.unlink(missing_ok=True)
    result_path = Path(job["result_path"])
    datatables = job.get("datatables") or {}
    redactor = Redactor([*job["spec"].secrets, *(spec.password for spec in datatables.values())])
    response: dict[str, Any]
    try:
        spark = SparkSession.builder.appName(job.get("app_name", "lakehouse")).getOrCreate()
        runner = PlanRunner(spark, job["spec"], job["options"], redact=redactor.redact, datatables=datatables)
        response = runner.run(Plan.from_json_dict(job["plan"], job["parameters"]))
    except StatementError as exc:
        response = {"status": "error", "index": exc.index, "statement": exc.statement, "error": exc.message}
    except Exception as exc:  # report, never print a secret
        response = {
            "status": "error",
            "error": redactor.redact(f"{type(exc).__name__}: {exc}"),
            "traceback": redactor.redact(traceback.format_exc()),
        }
    tmp = result_path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(response))
    tmp.chmod(0o600)
    tmp.replace(result_path)
    return 0 if response.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
