"""Issue 10, case 4 (and case 11's "nothing lost in transit"): the engine must not outlive a
killed hyops, and every line it announced must reach events.jsonl.

Sequence reproduced on the real engine: `hyops apply` of the pair module (network, then a vm
whose create hangs on a gate that is never released); once the provider is parked in the vm
create and hyops has logged its `apply_start`, SIGKILL to hyops's process group (as a CI
runner does on cancel) or to hyops alone. Before the fix the engine and its provider kept
running (the engine ran in its own session, nobody stopped it), `reconcile` ended exit 1 on
the state lock it held, and what the engine printed after the kill was lost in the pipe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.hyops_cli import HYOPS, Hyops, engine_processes, wait_for
from tests.reliability.procs import alive

pytestmark = pytest.mark.integration

STOP_DEADLINE_SECONDS = 5.0
VM = "sim_vm.vm[0]"


def _relays_of(hyops_pid: int) -> list[int]:
    """Live event relays that hyops_pid started (their argv names it as the parent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"relay.py") for a in argv) and str(hyops_pid).encode() in argv and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def _events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _addr(event: dict[str, Any]) -> str | None:
    return ((event.get("hook") or {}).get("resource") or {}).get("addr")


def _vm_started(run_dir: Path) -> bool:
    return any(e.get("type") == "apply_start" and _addr(e) == VM for e in _events(run_dir))


def _run_dir(hyops: Hyops) -> Path:
    """The folder of the run the record names: the apply under test says `running` there before
    its engine starts. (Run ids order runs only to the second: two applies in one second sort
    by their random part, so the last name need not be the last run.)"""
    rec = hyops.record("pair")
    assert rec is not None, "no record of pair"
    return hyops.runtime_root / "runs" / "pair" / rec["run_id"]


def _kill_mid_create(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path, whom: str
) -> tuple[Gate, subprocess.Popen[bytes], Path, int]:
    """Start the apply, wait until the vm create hangs and hyops logged it, SIGKILL."""
    assert hyops("apply", "modules/pair").returncode == 0  # the network exists: init done
    gate = Gate.at(tmp_path)  # never released: the kill always lands inside the vm create
    faults_file([gate.rule(type="sim_vm", op="create")])
    with (tmp_path / "hyops.out").open("wb") as out:
        proc = subprocess.Popen([HYOPS, "apply", "modules/pair", "--var", "with_vm=true"], cwd=hyops.workdir,
                                env=hyops.env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # hyops leads its group, as under a CI runner
    provider = gate.wait_started(proc, output=tmp_path / "hyops.out")["pid"]
    wait_for(lambda: _vm_started(_run_dir(hyops)), what="hyops to log the vm's apply_start")
    if whom == "group":
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()
    proc.wait(timeout=30)
    return gate, proc, _run_dir(hyops), provider


@pytest.mark.parametrize("whom", ["group", "hyops_alone"])
def test_an_engine_whose_hyops_is_sigkilled_stops_within_seconds_and_apply_stays_guarded(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path, whom: str
) -> None:
    gate, proc, _run, provider = _kill_mid_create(hyops, pair, faults_file, tmp_path, whom)
    try:
        killed_at = time.monotonic()
        deadline = killed_at + STOP_DEADLINE_SECONDS
        while (engine_processes(pair) or alive(provider)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = engine_processes(pair) + ([provider] if alive(provider) else [])
        assert left == [], f"engine/provider processes {left} still run {STOP_DEADLINE_SECONDS}s after the kill"
        wait_for(lambda: _relays_of(proc.pid) == [], timeout=120, what="the event relay to exit")

        result = hyops("reconcile", "modules/pair", "--json")
        assert result.returncode == 3, result.stdout + result.stderr
        doc = json.loads(result.stdout)
        module = next(m for m in doc["modules"] if m["module_ref"] == "pair")
        assert "stale_running" in {f["code"] for f in module["findings"]}

        refused = hyops("apply", "modules/pair", "--var", "with_vm=true")
        assert refused.returncode == 4, refused.stdout + refused.stderr
    finally:
        gate.release()
        kill_engines(pair)


def test_what_the_engine_writes_after_hyops_is_killed_reaches_events_jsonl(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """The engine's graceful stop (its interrupt notice, the errored vm create, its final
    diagnostics) is written after hyops died: the relay drains it to events.jsonl."""
    gate, _proc, run_dir, provider = _kill_mid_create(hyops, pair, faults_file, tmp_path, "group")
    try:
        wait_for(lambda: not engine_processes(pair) and not alive(provider), timeout=STOP_DEADLINE_SECONDS,
                 what="the engine and its provider to stop")
        wait_for((run_dir / "events.complete").exists, timeout=120, what="the relay to reach the engine's EOF")
        lines = (run_dir / "events.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines]  # every line whole: nothing torn
        started = next(i for i, e in enumerate(events) if e.get("type") == "apply_start" and _addr(e) == VM)
        after = events[started + 1:]
        assert any(e.get("type") == "apply_errored" and _addr(e) == VM for e in after), (
            f"the engine's answer for the interrupted create was lost: {[e.get('type') for e in after]}")
        assert any(e.get("type") == "diagnostic" and e["diagnostic"]["severity"] == "error" for e in after)
        # one interrupt, a graceful stop: a second one makes the engine exit at once
        assert not [e for e in after if "Two interrupts" in str(e.get("@message", ""))]
        assert (run_dir / "engine.json").exists()
        note = json.loads((run_dir / "engine.json").read_text())
        assert note["run_id"] == run_dir.name and isinstance(note["pid"], int)
        assert not _vm_created(hyops), "the hung create went on after its engine stopped"
    finally:
        gate.release()
        kill_engines(pair)


def _vm_created(hyops: Hyops) -> bool:
    return any(o["type"] == "sim_vm" for o in hyops.sim_objects())


def test_a_hung_create_interrupted_by_ctrl_c_is_abandoned_not_completed_later(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """SIGINT to hyops while the vm create hangs: the engine asks the provider to Stop, the
    provider leaves at once, and the hung call never goes on to make a vm that no record or
    state would name. A guard, not a regression test: before, the provider's poll of its
    parent already ended it within a second of the engine's exit."""
    assert hyops("apply", "modules/pair").returncode == 0
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create")])
    proc = hyops.start("apply", "modules/pair", "--var", "with_vm=true")
    try:
        provider = gate.wait_started(proc)["pid"]
        wait_for(lambda: _vm_started(_run_dir(hyops)), what="hyops to log the vm's apply_start")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        assert proc.returncode == 130
        wait_for(lambda: not alive(provider), timeout=STOP_DEADLINE_SECONDS, what="the stopped provider to exit")
        gate.release()  # a provider still parked in the create would now go on and make the vm
        assert not _vm_created(hyops)
        assert hyops.record("pair")["status"] == "error"
    finally:
        gate.release()
        kill_engines(pair)


def test_an_apply_killed_before_it_planned_leaves_no_suspect_after_reconcile_write(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Case 11: SIGKILL to hyops's group while the engine refreshes (a hung read of the
    network), before it planned anything. The engine stops with hyops and the relay drains
    its stdout to the end (events.complete): the events then prove that no create started,
    so `reconcile --write` settles the record without a suspect orphan. Before, the engine
    ran on, and a run whose plan hyops never read counted every planned create as suspect."""
    assert hyops("apply", "modules/pair").returncode == 0
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="read")])
    with (tmp_path / "hyops.out").open("wb") as out:
        proc = subprocess.Popen([HYOPS, "apply", "modules/pair", "--var", "with_vm=true"], cwd=hyops.workdir,
                                env=hyops.env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        provider = gate.wait_started(proc, output=tmp_path / "hyops.out")["pid"]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        run_dir = _run_dir(hyops)
        wait_for(lambda: not engine_processes(pair) and not alive(provider), timeout=STOP_DEADLINE_SECONDS,
                 what="the engine and its provider to stop")
        wait_for(lambda: (run_dir / "events.complete").exists(), timeout=120, what="the relay to reach EOF")
        assert not [e for e in _events(run_dir) if e.get("type") in ("planned_change", "apply_start")]
        faults_file([])

        written = hyops("reconcile", "modules/pair", "--write", "--json")

        rec = hyops.record("pair")
        assert rec["status"] != "running", written.stdout + written.stderr
        assert rec.get("suspect_orphans", []) == [], rec
    finally:
        gate.release()
        kill_engines(pair)
