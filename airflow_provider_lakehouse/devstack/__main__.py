"""Command line of the local stack. ``python3 -m airflow_provider_lakehouse.devstack --help``."""

from __future__ import annotations

import argparse
import sys

from airflow_provider_lakehouse.devstack.bootstrap import ensure_venv, in_venv, reexec_in_venv
from airflow_provider_lakehouse.devstack.prerequisites import check_runtime, ensure_test_tools

_COMMANDS = {
    "demo": "set up, start the stack, run the example DAGs with `airflow dags test`, stop what was started",
    "test": "set up and run the whole test suite (extra arguments go to pytest)",
    "up": "start PostgreSQL and SeaweedFS S3 (idempotent); writes .lakehouse/env.sh",
    "down": "stop the stack",
    "status": "show what is running",
    "env": 'print the stack\'s environment as shell exports (eval "$(... env)")',
    "install": "create .venv and install the project into it",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m airflow_provider_lakehouse.devstack",
        description="Embedded local stack for airflow-provider-lakehouse.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(f"  {name:<8} {text}" for name, text in _COMMANDS.items()),
    )
    parser.add_argument("command", choices=list(_COMMANDS), metavar="command")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed on (test: to pytest)")
    ns = parser.parse_args(argv)
    if not in_venv():  # checked once, before anything is installed
        check_runtime()
    if ns.command == "test":  # also when started from inside .venv: the browser tests need chromium either way
        ensure_test_tools()
    if ns.command == "install":
        ensure_venv()
        return 0
    if not in_venv():
        reexec_in_venv([ns.command, *ns.args])  # does not return
    from airflow_provider_lakehouse.devstack import commands

    return int(getattr(commands, ns.command)(ns.args) or 0)


if __name__ == "__main__":
    sys.exit(main())
