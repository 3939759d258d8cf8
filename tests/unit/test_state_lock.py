"""The state folder's lock: processes sharing a stack take turns, a process re-enters its own lock, and a killed
holder releases it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from airflow_provider_lakehouse.devstack.lock import state_lock
from airflow_provider_lakehouse.devstack.stack import Stack
from tests.conftest import REPO_ROOT

HOLD = """
import sys, time
from pathlib import Path
from airflow_provider_lakehouse.devstack.lock import state_lock
with state_lock(Path(sys.argv[1])).held():
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""

CREDENTIALS = """
import json, sys
from pathlib import Path
from airflow_provider_lakehouse.devstack.stack import Stack
from tests.conftest import REPO_ROOT
print(json.dumps(Stack(Path(sys.argv[1])).credentials()))
"""


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True, env=env)


def _wait_until_held(holder: subprocess.Popen[str]) -> None:
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"


def test_another_process_waits_until_the_holder_is_done(tmp_path: Path) -> None:
    holder = _python(HOLD, str(tmp_path), "1.5")
    _wait_until_held(holder)
    begin = time.monotonic()
    with state_lock(tmp_path).held():
        waited = time.monotonic() - begin
    # the holder printed, then slept 1.5 s holding the lock: taking it here cannot have been quicker than 1 s
    assert waited > 1.0, f"the lock was taken {waited:.2f} s after the other process took it"
    assert holder.wait() == 0


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    holder = _python(HOLD, str(tmp_path), "600")
    _wait_until_held(holder)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with state_lock(tmp_path).held():  # would wait ten minutes if the dead process still held it
        pass


def test_a_process_re_enters_its_own_lock_through_another_stack_object(tmp_path: Path) -> None:
    with state_lock(tmp_path).held(), state_lock(tmp_path / "." / "").held():
        assert Stack(tmp_path).credentials() == Stack(tmp_path).credentials()


def test_processes_starting_at_once_generate_one_set_of_credentials(tmp_path: Path) -> None:
    processes = [_python(CREDENTIALS, str(tmp_path)) for _ in range(4)]
    outputs = [process.communicate(timeout=120)[0] for process in processes]
    assert all(process.returncode == 0 for process in processes)
    generated = {json.dumps(json.loads(output), sort_keys=True) for output in outputs}
    assert len(generated) == 1, "two processes generated different credentials for one stack"
    assert json.loads((tmp_path / "credentials.json").read_text()) == json.loads(outputs[0])
    assert not list(tmp_path.glob(".*.partial"))
