#!/usr/bin/env bash
# Run once by the postgres image's entrypoint, on the first start with an empty data volume.
#
# The same roles and databases as the local stack (devstack/stack.py: APP_ROLE, DATA_TABLES_DB,
# LAKE_CATALOG_DB; devstack/postgres.py: PostgresServer.provision), plus Airflow's metadata database:
#   lakehouse / datatables          data table "main"   (AIRFLOW_CONN_DATATABLE_MAIN)
#   lakehouse / lakehouse_catalog   lake catalogs        (AIRFLOW_CONN_DUCKLAKE_MAIN)
#   airflow   / airflow             Airflow metadata     (AIRFLOW__DATABASE__SQL_ALCHEMY_CONN)
set -euo pipefail

: "${LAKEHOUSE_PG_PASSWORD:?must be set (docker/.env)}"
: "${AIRFLOW_DB_PASSWORD:?must be set (docker/.env)}"

# Passwords travel as psql variables and are quoted by psql (:'name'), so no quote in them can break the SQL.
psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname postgres \
    -v app_password="$LAKEHOUSE_PG_PASSWORD" -v airflow_password="$AIRFLOW_DB_PASSWORD" <<'SQL'
CREATE ROLE lakehouse WITH LOGIN CREATEDB PASSWORD :'app_password';
CREATE DATABASE datatables OWNER lakehouse;
CREATE DATABASE lakehouse_catalog OWNER lakehouse;
CREATE ROLE airflow WITH LOGIN PASSWORD :'airflow_password';
CREATE DATABASE airflow OWNER airflow;
SQL
