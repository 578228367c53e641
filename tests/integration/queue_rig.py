"""A queued stack's test rig (issue 36): nine members in four layers, a runner's checkout with
its own runtime root, `stack work` as a CI job, and the store's rows read back. Used by
test_stack_queue.py, test_queue_weather.py and the store drill (tests/reliability)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.gates import Gate
from tests.integration.helpers import MODULE_COPY_IGNORE, SIM_MODULES
from tests.integration.hyops_cli import HYOPS, Hyops
from tests.integration.shared_store import SharedStore

QUICK_HEARTBEAT = {"HYOPS_QUEUE_HEARTBEAT": "0.3", "HYOPS_QUEUE_LOST_AFTER": "1.5"}

# Nine members in four layers; each makes one sim_network named after itself.
NINE = {"a1": [], "a2": [], "a3": [], "b1": ["a1", "a2"], "b2": ["a2", "a3"], "b3": ["a3"],
        "c1": ["b1", "b2"], "c2": ["b3"], "d": ["c1", "c2"]}


def nine_stack(base: Path) -> None:
    lines = ["stack: nine", "modules:"]
    for name, ups in NINE.items():
        shutil.copytree(SIM_MODULES / "network", base / "m" / name, ignore=MODULE_COPY_IGNORE)
        lines.append(f"  - {{name: {name}, path: m/{name}, depends_on: [{', '.join(ups)}], "
                     f"inputs: {{name: {name}}}}}")
    (base / "stack.yml").write_text("\n".join(lines) + "\n")


def checkout(base: Path, engine: str, sim_root: Path, store: SharedStore) -> Hyops:
    """A runner: its own clone of the stack and its own runtime root; the store and cloud shared."""
    nine_stack(base)
    runtime = base / ".hyops"
    runtime.mkdir(mode=0o700)
    return Hyops(base, runtime, engine, sim_root, {**store.env(), **QUICK_HEARTBEAT}, store=store)


def worker(hy: Hyops, name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`stack work` as a CI job: in its own process group, so the runner can kill all of it."""
    return subprocess.Popen([HYOPS, "stack", "work", "--until-idle", "--name", name, *args], cwd=hy.workdir,
                            env=hy.env(**(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def member_rows(store: SharedStore, run_id: str) -> dict[str, dict[str, Any]]:
    text = store.sql("SELECT row_to_json(m)::text FROM hyops.queue_members m "
                     f"WHERE run_id = '{run_id}' ORDER BY position")
    return {doc["name"]: doc for doc in map(json.loads, text.splitlines())}


def queue(hy: Hyops, *options: str) -> str:
    """`stack apply --queue` of the nine from this runner; the run id."""
    queued = hy("stack", "apply", "stack.yml", "--queue", *options)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip()


def queued_with_a1_held(tmp_path: Path, engine: str, sim_root: Path, store: SharedStore,
                        faults_file: Callable[..., Path]) -> tuple[Hyops, Gate, str]:
    """One runner's checkout and a queued run of the nine, whose a1 create the cloud holds at a
    gate until the test releases it; (runner, gate, run id)."""
    hy = checkout(tmp_path / "runner", engine, sim_root, store)
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create", name="a1", times=1)])
    return hy, gate, queue(hy)


def engine_runs(store: SharedStore, key: str) -> int:
    """How many runs of the module the store journaled (each run opens with its meta)."""
    return int(store.sql(f"SELECT count(*) FROM hyops.journal WHERE key = '{key}' AND kind = 'meta'"))


def open_jobs(store: SharedStore) -> int:
    """Member jobs queued or running, as procrastinate holds them."""
    return int(store.sql("SELECT count(*) FROM hyops_queue.procrastinate_jobs WHERE status IN ('todo', 'doing')"))


def run_row(store: SharedStore, run_id: str) -> dict[str, Any]:
    return json.loads(store.sql(f"SELECT row_to_json(r)::text FROM hyops.queue_runs r WHERE run_id = '{run_id}'"))
