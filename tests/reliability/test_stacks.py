"""Stacks under SIGKILL and under a race of two stacks sharing one member.

A stack member runs the per-module contract, so a kill of `hyops stack` must leave every
member's record as honest as a kill of `hyops apply`: members that finished are settled,
the one in flight says `running` (stale), members that never started have no new record,
the run report is the old one or the killed run's (never torn; `stack status` then shows
that run interrupted and exits 3), every lock is free, and a `stack destroy` afterwards
leaves nothing alive that no record names.
"""

from __future__ import annotations

import json
import os
import shlex
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.gates import Gate
from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.checks import assert_lock_free, check_record, load_record, orphan_addresses
from tests.reliability.figures import KILL, RACE, note
from tests.reliability.race import BUSY, MutationSampler, RecordReader, ts
from tests.stackfiles import NETWORK_VM_CONFIG, write_stack

pytestmark = pytest.mark.integration

MEMBERS = {"network": "demo/network", "vm": "demo/vm", "config": "demo/config"}
OWNER_OF_TYPE = {"sim_network": ("demo/network", "sim_network.this"),
                 "sim_vm": ("demo/vm", "sim_vm.this"),
                 "sim_config": ("demo/config", "sim_config.this")}


class StackRig:
    def __init__(self, hyops: Hyops, directory: Path) -> None:
        self.h = hyops
        self.dir = directory
        self.file = directory / "stack.yml"
        self.report_path = hyops.runtime_root / "stacks" / "demo" / "latest.json"

    def runs(self, ref: str) -> set[Path]:
        base = self.h.runtime_root / "runs" / ref.replace("/", "__")
        return set(base.iterdir()) if base.is_dir() else set()

    def records(self) -> dict[str, str | None]:
        return {ref: (load_record(self.h.record_path(ref)) or {}).get("status") for ref in MEMBERS.values()}

    def start(self, command: str, env: dict[str, str] | None = None) -> Any:
        return self.h.start("stack", command, "stack/stack.yml", "--parallelism", "2", env=env)


@pytest.fixture
def rig(hyops: Hyops, tmp_path: Path) -> StackRig:
    directory = tmp_path / "stack"
    directory.mkdir()
    for name in ("network", "vm", "config"):
        copy_module(name, directory / name)
    write_stack(directory, NETWORK_VM_CONFIG)
    return StackRig(hyops, directory)


def _faults(tmp_path: Path, rules: list[dict[str, Any]]) -> dict[str, str]:
    path = tmp_path / "stack-faults.yml"
    path.write_text(yaml.safe_dump({"rules": rules}))
    return {"HYOPS_SIM_FAULTS": str(path)}


def _kill_member_engine(rig: StackRig, member: str, gate: Gate) -> None:
    """SIGKILL the member's engine too (a runner killing the whole tree), then wait until it
    and the gated provider are gone: the gate is never opened, so nothing finishes later."""
    for pid in procs.engine_pids(rig.dir / member):
        procs.kill(pid)
    provider = json.loads(gate.started.read_text())["pid"]
    procs.wait_until(lambda: not procs.engine_pids(rig.dir / member) and not procs.alive(provider),
                     f"the {member} engine and its provider to be gone")


def _adopt_what_the_state_lost(h: Hyops) -> bool:
    """Follow a member's state_missing advice: the engine dropped an object from state whose
    delete never completed (a provider that died mid-delete), the record still knows its id,
    so the destroy said `error`; `hyops reconcile ... --import ADDR=ID` adopts it back.
    True when some member needed it (each import must then succeed)."""
    adopted = False
    for ref in MEMBERS.values():
        doc = load_record(h.record_path(ref))
        error = (doc or {}).get("last_error") or ""
        if not error.startswith("state_missing:"):
            continue
        command = error.split("`hyops ", 1)[1].split("`", 1)[0]
        result = h(*shlex.split(command))
        assert result.returncode == 0, result.stdout + result.stderr
        adopted = True
    return adopted


def _check_after_stack_kill(rig: StackRig, phase: str, report_before: bytes | None,
                            in_flight: str | None) -> None:
    h = rig.h
    for ref in MEMBERS.values():
        assert_lock_free(h, ref)
        doc = check_record(h, ref, f"stack member after SIGKILL {phase}")
        if ref == in_flight:
            assert doc is not None and doc["status"] == "running", doc
    report_now = rig.report_path.read_bytes() if rig.report_path.exists() else None
    assert report_now in (report_before, None) or json.loads(report_now)["schema_version"] == 1
    if report_now is not None:
        json.loads(report_now)  # never torn
    status = h("stack", "status", "stack/stack.yml", "--json")
    assert "Traceback" not in status.stderr, status.stderr
    shown = json.loads(status.stdout)
    uncertain = {m["module_ref"] for m in shown["members"] if m.get("uncertain")}
    if report_now is not None and json.loads(report_now)["finished_at"] is None:
        assert shown["state"] == "interrupted", shown  # a run killed after it started says so
    assert status.returncode == (3 if shown["state"] == "interrupted" or uncertain else 0), status.stdout
    if in_flight is not None:
        assert in_flight in uncertain, shown
        rec = h("reconcile", "--stack", "stack/stack.yml", "--json")
        assert rec.returncode == 3, rec.stdout + rec.stderr
        found = {(m["module_ref"], f["code"]) for m in json.loads(rec.stdout)["modules"] for f in m["findings"]}
        assert (in_flight, "stale_running") in found, found
        calls = len(h.sim_calls())
        refused = h("stack", "apply", "stack/stack.yml")
        assert refused.returncode == 4 and "reconcile" in refused.stderr, refused.stderr
        assert len(h.sim_calls()) == calls, "a refused stack apply called the provider"

    # recovery: a stack destroy; then nothing alive that no member record names
    cleaned = h("stack", "destroy", "stack/stack.yml")
    if cleaned.returncode != 0 and _adopt_what_the_state_lost(h):
        cleaned = h("stack", "destroy", "stack/stack.yml")  # as the state_missing advice says
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    for obj in h.sim_objects():
        ref, address = OWNER_OF_TYPE[obj["type"]]
        doc = load_record(h.record_path(ref))
        assert doc is not None and address in orphan_addresses(doc), (
            f"{obj['id']} ({obj['type']}) is alive after a stack destroy and {ref}'s record does "
            f"not name it: {json.dumps(doc)[:500]}")


def test_sigkill_of_a_stack_while_a_member_engine_runs_leaves_honest_member_records(
    rig: StackRig, tmp_path: Path
) -> None:
    h = rig.h
    calls = len(h.sim_calls())
    # the vm is created, its answer held until the end: the kill lands while the engine runs
    gate = Gate.at(tmp_path)
    proc = rig.start("apply", _faults(tmp_path, [gate.rule(type="sim_vm", op="create", at="after")]))
    try:
        gate.wait_started(proc, procs.GENEROUS)  # the vm member's create is hung
        hung = next(c for c in h.sim_calls()[calls:] if c.get("fault") == "hang")
        procs.wait_until(lambda: any("apply_start" in (d / "events.jsonl").read_text()
                                     for d in rig.runs("demo/vm") if (d / "events.jsonl").exists()),
                         "the stack to log the vm's apply_start")
        procs.stop(proc.pid)
        statuses = rig.records()
        engine_alive = bool(procs.engine_pids(rig.dir / "vm", ("apply",)))
        procs.kill(proc.pid)
        proc.wait(timeout=60)
        phase = "member_engine_running" if statuses["demo/vm"] == "running" and engine_alive else "missed"
        note(KILL, command="stack apply", wanted="member_engine_running", method="hang_call", phase=phase,
             hit=phase == "member_engine_running", exact=True, evidence={"records": statuses})
        assert phase == "member_engine_running", statuses
        assert statuses == {"demo/network": "ok", "demo/vm": "running", "demo/config": None}
        _kill_member_engine(rig, "vm", gate)
        assert hung["id"] in {o["id"] for o in h.sim_objects()}, "the held create made no vm"
        _check_after_stack_kill(rig, "member_engine_running", None, "demo/vm")
    finally:
        gate.release()


def test_sigkill_of_a_stack_between_members_leaves_the_next_member_untouched(rig: StackRig) -> None:
    """Frozen after the vm member took its lock, before its `running` write (FIFO trap)."""
    h = rig.h
    before = rig.runs("demo/vm")
    proc = rig.start("apply")
    run_dir = procs.wait_until(lambda: next(iter(rig.runs("demo/vm") - before), None),
                               "the vm member's run folder", interval=0.0005)
    procs.stop(proc.pid)
    trapped = not (run_dir / "events.jsonl").exists()
    if trapped:
        os.mkfifo(run_dir / "events.jsonl", 0o600)
    procs.cont(proc.pid)
    assert trapped, "events.jsonl existed before the trap was set"
    procs.wait_until(lambda: procs.blocked_opening_fifo(proc.pid), "the vm member to open the trap")
    procs.stop(proc.pid)
    statuses = rig.records()
    holders = procs.lock_holders(h.record_path("demo/vm").parent / ".lock")
    procs.kill(proc.pid)
    proc.wait(timeout=60)
    (run_dir / "events.jsonl").unlink()
    phase = "member_locked_before_running" if statuses["demo/vm"] is None and proc.pid in holders else "missed"
    note(KILL, command="stack apply", wanted="member_locked_before_running", method="fifo_events",
         phase=phase, hit=phase == "member_locked_before_running", exact=True, evidence={"records": statuses})
    assert phase == "member_locked_before_running", (statuses, holders)
    assert statuses == {"demo/network": "ok", "demo/vm": None, "demo/config": None}
    assert not [c for c in h.sim_calls() if c["type"] == "sim_vm"], "the vm was never asked for"
    _check_after_stack_kill(rig, "member_locked_before_running", None, None)


def test_sigkill_during_the_stack_report_write_never_tears_the_report(rig: StackRig) -> None:
    """Polled: frozen once stacks/demo/.latest.json.*.tmp exists; only a frozen temp counts."""
    h = rig.h
    assert h("stack", "apply", "stack/stack.yml").returncode == 0
    folder = rig.report_path.parent
    hit = False
    for _attempt in range(6):
        report_before = rig.report_path.read_bytes()
        proc = rig.start("apply")
        while proc.poll() is None:
            if any(n.startswith(".latest.json.") and n.endswith(".tmp") for n in os.listdir(folder)):
                break
        procs.stop(proc.pid)
        tmps = [n for n in os.listdir(folder) if n.endswith(".tmp")]
        hit = bool(tmps) and proc.poll() is None
        statuses = rig.records()
        procs.kill(proc.pid)
        proc.wait(timeout=60)
        note(KILL, command="stack apply", wanted="during_report_write", method="poll_tmp",
             phase="during_report_write" if hit else "after_report_write", hit=hit, exact=False,
             evidence={"tmp_files": tmps, "records": statuses})
        json.loads(rig.report_path.read_bytes())  # old or new, never torn
        if hit:
            assert rig.report_path.read_bytes() == report_before, "the old report must stay whole"
            assert all(s == "ok" for s in statuses.values()), statuses
            break
        for n in tmps:
            (folder / n).unlink()
    assert hit, "the report write was never caught in 6 attempts"
    _check_after_stack_kill(rig, "during_report_write", None, None)


def test_sigkill_of_a_stack_destroy_mid_delete_keeps_what_may_live_named(rig: StackRig, tmp_path: Path) -> None:
    h = rig.h
    assert h("stack", "apply", "stack/stack.yml").returncode == 0
    calls = len(h.sim_calls())
    gate = Gate.at(tmp_path)  # never opened: the vm delete never happens, whenever the kill lands
    proc = rig.start("destroy", _faults(tmp_path, [gate.rule(type="sim_vm", op="delete")]))
    try:
        gate.wait_started(proc, procs.GENEROUS)  # the vm member's delete is hung
        hung = next(c for c in h.sim_calls()[calls:] if c.get("fault") == "hang")
        procs.stop(proc.pid)
        statuses = rig.records()
        procs.kill(proc.pid)
        proc.wait(timeout=60)
        hit = statuses["demo/vm"] == "running"
        note(KILL, command="stack destroy", wanted="member_engine_running", method="hang_call",
             phase="member_engine_running" if hit else "missed", hit=hit, exact=True, evidence={"records": statuses})
        assert hit, statuses
        assert statuses["demo/network"] == "ok", "the network goes only after the vm"
        _kill_member_engine(rig, "vm", gate)
        assert hung["id"] in {o["id"] for o in h.sim_objects()}, "the held delete removed the vm"
        _check_after_stack_kill(rig, "stack destroy member_engine_running", None, "demo/vm")
    finally:
        gate.release()


# ----- two stacks sharing one member -----------------------------------------------------

SHARED = """\
stack: {name}
modules:
  - name: network
    path: network
    ref: shared/network
  - name: vm
    path: {vm}
    depends_on: [network]
    inputs: {{size: small, name: {name}-vm}}
    inputs_from: {{network_id: network.network_id}}
"""


def test_two_stacks_sharing_a_member_never_mutate_it_at_once_nor_lose_an_update(
    hyops: Hyops, tmp_path: Path
) -> None:
    directory = tmp_path / "stacks"
    directory.mkdir()
    copy_module("network", directory / "network")
    for vm in ("vm_a", "vm_b"):
        copy_module("vm", directory / vm)
    for name, vm in (("a", "vm_a"), ("b", "vm_b")):
        (directory / f"{name}.yml").write_text(textwrap.dedent(SHARED.format(name=name, vm=vm)))
    assert hyops("stack", "apply", "stacks/a.yml").returncode == 0  # init once, outside the race
    assert hyops("stack", "apply", "stacks/b.yml").returncode == 0
    record = hyops.record_path("shared/network")
    reader, sampler = RecordReader(record), MutationSampler(directory / "network")
    env = {"HYOPS_SIM_WATCH_FILE": str(record)}
    calls = len(hyops.sim_calls())
    runs_before = set((hyops.runtime_root / "runs" / "shared__network").iterdir())
    plan = [("apply", "apply"), ("destroy", "apply"), ("apply", "destroy"), ("destroy", "destroy"),
            ("apply", "apply")]
    results = []
    reader.start()
    sampler.start()
    try:
        for round_, (ca, cb) in enumerate(plan):
            wait = ["--lock-timeout", "120"] if round_ % 2 else []
            pa = hyops.start("stack", ca, "stacks/a.yml", *wait, env=env)
            pb = hyops.start("stack", cb, "stacks/b.yml", env=env)
            for p, cmd in ((pa, ca), (pb, cb)):
                out, err = p.communicate(timeout=600)
                results.append((cmd, p.returncode, out, err))
    finally:
        reader.stop()
        sampler.stop()
    note(RACE, scenario="2 stacks sharing a member x 5 rounds", processes=2 * len(plan),
         mutations=len(set((hyops.runtime_root / "runs" / "shared__network").iterdir()) - runs_before),
         refusals=sum(1 for r in results if r[1] == 4), reads=reader.reads,
         invalid_reads=len(reader.invalid), provider_mutations=len(hyops.sim_calls()) - calls,
         most_engines_at_once=sampler.most, samples=sampler.samples)

    assert all(code in (0, 1, 4) and "Traceback" not in err for _, code, _, err in results), \
        [(c, code, err[-300:]) for c, code, _, err in results]
    assert reader.reads > 0 and reader.invalid == [], reader.invalid[:3]
    assert sampler.most <= 1, f"{sampler.most} engines mutated the shared member at once"
    spans = []
    for folder in set((hyops.runtime_root / "runs" / "shared__network").iterdir()) - runs_before:
        stamps = [ts(json.loads(line)["@timestamp"]) for line in (folder / "events.jsonl").read_text().splitlines()
                  if line.strip()] if (folder / "events.jsonl").exists() else []
        if stamps:
            spans.append((min(stamps), max(stamps), folder.name))
    spans.sort()
    assert spans, "the shared member never ran"
    for a, b in zip(spans, spans[1:], strict=False):
        assert a[1] < b[0], f"shared member runs overlap: {a} {b}"
    for call in hyops.sim_calls()[calls:]:
        if call["type"] == "sim_network" and call["op"] in ("create", "delete"):
            seen = json.loads(call["watched"])
            assert seen["status"] == "running", call
            span = next(s for s in spans if s[2] == seen["run_id"])
            assert span[0] <= ts(call["time"]) <= span[1]
    for _, _, folder in spans:
        assert folder in reader.seen, f"shared run {folder} never appeared in its record"
    final = check_record(hyops, "shared/network", "after the two-stack race")
    assert final is not None and final["run_id"] == spans[-1][2]
    assert_lock_free(hyops, "shared/network")
    for _, code, _, err in results:
        if code == 4 and "is locked by" in err:
            assert BUSY.search(err) or "another process" in err, err
