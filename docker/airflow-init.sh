#!/usr/bin/env bash
# The one-shot service airflow-init of docker/compose.yaml: everything the long-running services need before
# they start. Idempotent: `docker compose up` runs it on every start.
set -euo pipefail

: "${AIRFLOW_ADMIN_PASSWORD:?must be set (docker/.env)}"

# 1. Airflow's metadata database (the Postgres database "airflow", created by postgres-init/).
airflow db migrate

# 2. The simple auth manager's password file: user "admin" gets AIRFLOW_ADMIN_PASSWORD. Without the file the
#    api-server would generate a password and print it into its log.
python - <<'PY'
import json
import os

path = os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as out:
    json.dump({"admin": os.environ["AIRFLOW_ADMIN_PASSWORD"]}, out)
PY

# 3. The buckets of the local stack (devstack/stack.py: LAKE_BUCKET, LANDING_BUCKET), created through the
#    same Airflow connection the lake uses, so a wrong key or endpoint fails here, not in the first task.
python - <<'PY'
import time

from airflow.providers.amazon.aws.hooks.s3 import S3Hook

hook = S3Hook(aws_conn_id="lakehouse_s3")
deadline = time.monotonic() + 120
for bucket in ("lakehouse", "landing"):
    while True:
        try:
            if not hook.check_for_bucket(bucket):
                hook.create_bucket(bucket_name=bucket)
            print(f"bucket {bucket}: ok")
            break
        except Exception as error:  # right after start the filer may still be electing a leader
            if time.monotonic() > deadline:
                raise
            print(f"bucket {bucket}: {error}; retrying")
            time.sleep(2)
PY
