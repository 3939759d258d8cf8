"""``python -m airflow_provider_lakehouse.tpcds generate --sf 0.1 --landing DIR``: TPC-DS data, offline."""

from __future__ import annotations

import argparse
import os

from airflow_provider_lakehouse.tpcds.generate import generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m airflow_provider_lakehouse.tpcds")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="generate the 24 source tables as Parquet, and the query texts")
    gen.add_argument("--sf", type=float, default=0.1, help="scale factor (default 0.1; 1 is about 1 GB raw)")
    gen.add_argument("--landing", required=True, help="a local directory (S3 landing areas: from Python)")
    gen.add_argument(
        "--extension-dir",
        default=os.path.join(".lakehouse", "duckdb_extensions"),
        help="where DuckDB extensions are installed from their wheels",
    )
    args = parser.parse_args(argv)
    result = generate(args.sf, args.landing, extension_dir=args.extension_dir)
    print(
        f"TPC-DS SF {result.scale_factor}: {sum(result.rows.values()):,} rows in {len(result.rows)} tables, "
        f"{result.bytes / 1e6:.1f} MB Parquet in {result.landing} ({result.seconds:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
