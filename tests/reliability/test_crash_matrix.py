"""Crash matrix: SIGKILL hyops at every phase of apply and destroy, then prove honesty.

Every kill is timed from real events (see crash.py for how each moment is reached) and
judged by evidence: the phase noted is the one the frozen process proved, not the one
aimed at. After each kill: the record is valid JSON (or unchanged when killed before the
`running` write), a `running` record is reported stale (exit 3), apply refuses to run
blind over it (exit 4) without calling the provider, the lock is free, and a verified
destroy afterwards leaves no live object the record does not name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.checks import (
    assert_lock_free,
    assert_no_unaccounted_objects,
    check_record,
    expected_status_exit,
    orphan_addresses,
    reconcile_available,
)
from tests.reliability.crash import EXACT_METHODS, CrashRig, Kill
from tests.reliability.figures import KILL, note
from tests.reliability.modules import PAIR_ADDRESSES

pytestmark = pytest.mark.integration

RUNNING_PHASES = ("after_running_before_engine", "engine_running", "engine_exited_before_settle",
                  "during_settle_write")
SETTLED = {"apply": ("ok", "error"), "destroy": ("destroyed", "error")}
HANG_VM_CREATE = [{"type": "sim_vm", "op": "create", "mode": "hang", "seconds": 3}]
HANG_VM_DELETE = [{"type": "sim_vm", "op": "delete", "mode": "hang", "seconds": 3}]
FAIL_VM_CREATE = [{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}]
FAIL_VM_DELETE = [{"type": "sim_vm", "op": "delete", "mode": "fail_delete"}]
POLLED_ATTEMPTS = 6  # best-effort kill points: every attempt is checked and noted
HEAVY_ROUNDS = 3  # `make reliability` repeats the whole matrix

# (command, phase aimed at, method, faults for the killed run)
MATRIX = [
    ("apply", "after_lock", "fifo_events", None),
    ("apply", "after_running_before_engine", "fifo_stderr", None),
    ("apply", "engine_running", "hang_call", HANG_VM_CREATE),
    ("apply", "engine_exited_before_settle", "show_window", FAIL_VM_CREATE),
    ("apply", "engine_exited_before_settle", "poll_exit", None),
    ("apply", "during_settle_write", "poll_tmp", None),
    ("destroy", "after_lock", "fifo_events", None),
    ("destroy", "after_running_before_engine", "fifo_stderr", None),
    ("destroy", "engine_running", "hang_call", HANG_VM_DELETE),
    ("destroy", "engine_running", "stalled_reader", HANG_VM_DELETE),
    ("destroy", "engine_exited_before_settle", "show_window", FAIL_VM_DELETE),
    ("destroy", "engine_exited_before_settle", "poll_exit", None),
    ("destroy", "during_settle_write", "poll_tmp", None),
]


def _faults_env(tmp_path: Path, rules: list[dict[str, Any]] | None) -> dict[str, str]:
    if not rules:
        return {}
    path = tmp_path / "crash-faults.yml"
    path.write_text(yaml.safe_dump({"rules": rules}))
    return {"HYOPS_SIM_FAULTS": str(path)}


def _prepare(h: Hyops, rig: CrashRig, command: str) -> None:
    """apply starts from whatever the last recovery left; destroy needs an applied module."""
    if command == "destroy":
        out = h("apply", rig.module_arg, "--allow-uncertain")
        assert out.returncode == 0, out.stdout + out.stderr


def check_after_kill(h: Hyops, rig: CrashRig, kill: Kill) -> None:
    """Everything the record and the tool must still get right after this kill."""
    note(KILL, command=kill.command, wanted=kill.wanted, method=kill.method, phase=kill.phase,
         hit=kill.hit, exact=kill.exact, evidence=kill.evidence)
    assert kill.phase != "unexpected", f"kill landed in no known phase: {kill.evidence}"
    assert_lock_free(h, rig.ref)
    doc = check_record(h, rig.ref, f"after SIGKILL {kill.command} {kill.phase}")

    if kill.phase == "after_lock":
        assert rig.record_text() == kill.before_text, "a kill before the running write changed the record"
        new_calls = h.sim_calls()[kill.calls_before:]
        assert not [c for c in new_calls if c["op"] in ("create", "delete")], new_calls
    elif kill.phase in RUNNING_PHASES:
        assert doc is not None and doc["status"] == "running", doc
        assert doc["run_id"] == kill.run_id and doc["active_command"] == kill.command
        assert doc["owner"]["pid"] == kill.evidence["hyops_pid"]
        if kill.phase == "after_running_before_engine":
            new_calls = h.sim_calls()[kill.calls_before:]
            assert not [c for c in new_calls if c["op"] in ("create", "delete")], new_calls
    else:  # the freeze came after the settle write (or the run ended first): a late kill
        assert kill.phase in ("after_settle_write", "exited_before_kill"), kill.phase
        assert doc is not None and doc["run_id"] == kill.run_id
        assert doc["status"] in SETTLED[kill.command], doc

    rig.wait_provider_done(kill)
    procs.wait_until(lambda: not procs.engine_pids(rig.module_dir), "orphaned engines to end")
    assert_no_unaccounted_objects(h, doc, PAIR_ADDRESSES, f"after SIGKILL at {kill.phase}")

    stale = doc is not None and doc["status"] == "running"
    status = h("status", rig.module_arg)
    assert status.returncode == expected_status_exit(doc, stale), status.stdout + status.stderr
    assert "Traceback" not in status.stderr
    if stale:
        assert "running (stale)" in status.stdout
    as_json = h("status", rig.module_arg, "--json")
    assert json.loads(as_json.stdout) == doc, "status --json must print the record as stored"

    if stale and reconcile_available(h):
        rec = h("reconcile", rig.module_arg, "--json")
        assert rec.returncode == 3, rec.stdout + rec.stderr
        codes = {f["code"] for m in json.loads(rec.stdout)["modules"] for f in m["findings"]}
        assert "stale_running" in codes, rec.stdout

    if stale:  # a blind apply over an uncertain outcome is refused, before any provider call
        calls = len(h.sim_calls())
        refused = h("apply", rig.module_arg)
        assert refused.returncode == 4, refused.stdout + refused.stderr
        assert "reconcile" in refused.stderr and "Traceback" not in refused.stderr
        assert len(h.sim_calls()) == calls

    # recovery: destroy is never blocked; `destroyed` leaves nothing unnamed alive
    cleaned = h("destroy", rig.module_arg)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    after = check_record(h, rig.ref, "after recovery destroy")
    assert after is not None and after["status"] == "destroyed", after
    assert_no_unaccounted_objects(h, after, PAIR_ADDRESSES, "after the recovery destroy")
    if kill.hung_call is not None and kill.hung_call["op"] == "create":
        live = {o["id"] for o in h.sim_objects()}
        if kill.hung_call["id"] in live:
            assert "sim_vm.vm" in orphan_addresses(after)


def _kill_until_hit(hyops: Hyops, pair: Path, tmp_path: Path, command: str, wanted: str,
                    method: str, faults: list[dict[str, Any]] | None) -> None:
    rig = CrashRig(hyops, pair, "pair")
    env = _faults_env(tmp_path, faults)
    attempts = 1 if method in EXACT_METHODS else POLLED_ATTEMPTS
    tried: list[str] = []
    for _attempt in range(attempts):
        _prepare(hyops, rig, command)
        extra = ("--allow-uncertain",) if command == "apply" else ()
        kill = rig.kill(command, wanted, method, *extra, env=env)
        tried.append(kill.phase)
        check_after_kill(hyops, rig, kill)
        if kill.hit:
            break
    assert kill.hit, f"{wanted} was never hit in {attempts} attempt(s) by {method}: landed in {tried}"


@pytest.mark.parametrize(("command", "wanted", "method", "faults"), MATRIX,
                         ids=[f"{c}-{w}-{m}" for c, w, m, _ in MATRIX])
def test_sigkill_at_each_phase_leaves_an_honest_record_and_a_free_lock(
    hyops: Hyops, pair: Path, tmp_path: Path, command: str, wanted: str, method: str,
    faults: list[dict[str, Any]] | None,
) -> None:
    _kill_until_hit(hyops, pair, tmp_path, command, wanted, method, faults)


@pytest.mark.reliability
@pytest.mark.parametrize("round_", range(1, HEAVY_ROUNDS + 1))
@pytest.mark.parametrize(("command", "wanted", "method", "faults"), MATRIX,
                         ids=[f"{c}-{w}-{m}" for c, w, m, _ in MATRIX])
def test_sigkill_at_each_phase_again_and_again(
    hyops: Hyops, pair: Path, tmp_path: Path, command: str, wanted: str, method: str,
    faults: list[dict[str, Any]] | None, round_: int,
) -> None:
    _kill_until_hit(hyops, pair, tmp_path, command, wanted, method, faults)


def test_sigkill_of_a_stalled_reader_mid_create_still_names_what_may_exist(
    hyops: Hyops, pair: Path, tmp_path: Path
) -> None:
    """hyops frozen (CPU-starved CI runner, debugger...) while its engine creates, then killed.

    hyops never read the vm's apply_start (it sat in the pipe from the event relay), but the
    relay wrote it to events.jsonl before forwarding it. The kill stops the engine (its
    parent-death signal) and the provider with it: the hung create is abandoned. The record
    must still not let a verified destroy claim that nothing may exist.
    """
    rig = CrashRig(hyops, pair, "pair")
    kill = rig.kill("apply", "engine_running", "stalled_reader", env=_faults_env(tmp_path, HANG_VM_CREATE))
    note(KILL, command="apply", wanted="engine_running", method="stalled_reader", phase=kill.phase,
         hit=kill.hit, exact=kill.exact, evidence=kill.evidence)
    assert kill.hit, kill.evidence
    assert_lock_free(hyops, rig.ref)
    doc = check_record(hyops, rig.ref, "after SIGKILL apply engine_running (stalled reader)")
    assert doc is not None and doc["status"] == "running"
    rig.wait_provider_done(kill)

    cleaned = hyops("destroy", rig.module_arg)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    after = check_record(hyops, rig.ref, "after recovery destroy")
    live = {o["id"]: o["type"] for o in hyops.sim_objects()}
    assert kill.hung_call is not None and kill.run_id is not None
    logged = (hyops.runtime_root / "runs" / rig.ref / kill.run_id / "events.jsonl").read_text()
    assert '"apply_start"' in logged and "sim_vm.vm" in logged, "the line hyops never read was lost"
    assert after is not None and after["status"] == "destroyed"
    named = [o["address"] for o in after.get("suspect_orphans", [])]
    assert any(a.startswith("sim_vm.") for a in named), (
        f"destroyed with live objects {live} and the vm not among suspect_orphans {named}: "
        f"{json.dumps(after)[:800]}")
    assert hyops("status", rig.module_arg).returncode == 3


@pytest.mark.reliability
def test_sim_provider_exits_when_its_engine_dies(hyops: Hyops, pair: Path, tmp_path: Path) -> None:
    rig = CrashRig(hyops, pair, "pair")
    kill = rig.kill("apply", "engine_running", "hang_call", env=_faults_env(tmp_path, HANG_VM_CREATE))
    assert kill.hit, kill.evidence
    rig.wait_provider_done(kill)
    procs.wait_until(lambda: not procs.provider_pids(hyops.sim_root),
                     "the orphaned sim provider to exit", timeout=60)
