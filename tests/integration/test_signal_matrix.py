"""Cancel means stop: SIGINT and SIGTERM at each phase of a command, on the real engine
(docs/running.md: Signals; docs/contract.md: Exit codes).

The matrix: phase (start-up, root discovery, lock, engine probe, init, plan, apply, settle,
between two members, report) x signal (SIGINT, SIGTERM) x how hyops's parent left SIGINT
(default, or ignored as a shell leaves a background job), on the suite's engine; the phases
that run an engine again on the modern engine (modern_engine fixture), with SIGINT at its
default only: hyops hands every engine the same default disposition whatever it inherited,
so that dimension is hyops's alone and is covered once.

Each cell parks hyops at its phase without a hook or a sleep (tests/integration/phases.py
says how), sends the signal, and checks the one rule: nothing new starts after it, what ran
is settled from evidence, the stack report says each member's end, hyops exits 130 (SIGINT)
or 143 (SIGTERM) with exactly one `hyops: interrupted by SIG...; next: ...` line, no
traceback, and "interrupted", never "failed". A cell costs at most one engine run of the
module under test, plus one apply where the phase needs an applied module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration import phases
from tests.integration.gates import Gate
from tests.integration.helpers import VM_PAIR_TF
from tests.integration.hyops_cli import Hyops
from tests.integration.stacks import StackEnv, statuses
from tests.reliability import procs
from tests.stackfiles import NETWORK_VM

BUNDLED = [pytest.param(("bundled", sig, inherited), id=f"{sig}-{inherited}")
           for sig in phases.SIGNALS for inherited in phases.INHERITED]
ENGINES = BUNDLED + [pytest.param(("modern", sig, "SIGINT-default"), id=f"modern-{sig}") for sig in phases.SIGNALS]


@dataclass
class Cell:
    """One cell of the matrix: the hyops to run, the signal, how SIGINT was inherited."""

    hyops: Hyops
    sig: str
    ignore_sigint: bool

    @property
    def signum(self) -> int:
        return phases.SIGNALS[self.sig]

    def start(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              **how: bool) -> phases.Run:
        return phases.start(args, cwd or self.hyops.workdir, env or self.hyops.env(),
                            ignore_sigint=self.ignore_sigint, **how)

    def signal(self, run: phases.Run) -> None:
        assert run.proc.poll() is None, f"hyops ended before the signal: {phases.text_of(run.err)}"
        run.proc.send_signal(self.signum)

    def cloud_is_empty(self) -> bool:
        return not self.hyops.sim_root.exists() or self.hyops.sim_objects() == []


@pytest.fixture
def cell(request: pytest.FixtureRequest, tmp_path: Path, engine_path: str, runtime_root: Path,
         sim_root: Path) -> Cell:
    which, sig, inherited = request.param
    engine = request.getfixturevalue("modern_engine") if which == "modern" else engine_path
    return Cell(Hyops(tmp_path, runtime_root, engine, sim_root, {}), sig, inherited == "SIGINT-ignored")


def _nothing_changed(cell: Cell, run: phases.Run, said: str, timeout: float = 180) -> str:
    """hyops stopped before it changed anything: the rule's exit and line (saying `said`), no
    record, no engine-made object. Returns stdout."""
    code, out, err = run.finish(timeout=timeout)
    assert said in phases.check_said(code, err, cell.sig)
    assert cell.hyops.record("network") is None
    assert cell.cloud_is_empty()
    return out


def _signal_while_parked(cell: Cell, run: phases.Run, verb: str, fifo: Path, data: bytes = b"") -> None:
    """Wait until the engine running `verb` is parked opening `fifo`, signal hyops, then feed
    the FIFO so the engine goes on and hyops shows what it does with the signal."""
    parked = lambda: phases.engine_parked_on_fifo(run.pid, verb)  # noqa: E731
    procs.wait_until(lambda: parked() or run.proc.poll() is not None, f"`{verb}` to park")
    cell.signal(run)
    phases.feed_while(parked, fifo, data, run)


def _write_faults(tmp_path: Path, rules: list[dict[str, Any]]) -> dict[str, str]:
    path = tmp_path / "faults.yml"
    path.write_text(yaml.safe_dump({"rules": rules}))
    return {"HYOPS_SIM_FAULTS": str(path)}


def _runs(hyops: Hyops, ref: str) -> list[Path]:
    folder = hyops.runtime_root / "runs" / ref.replace("/", "__")
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _engine_interrupted(events: Path) -> bool:
    """The engine's own log line saying it got the interrupt (Terraform and OpenTofu alike)."""
    try:
        lines = events.read_text().splitlines()
    except OSError:
        return False
    return any('"type":"log"' in line and "Interrupt received" in line for line in lines)


def _result(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "result.json").read_text())


# --- before anything can change --------------------------------------------------------------


@pytest.mark.parametrize("cell", BUNDLED, indirect=True)
def test_a_signal_during_start_up_stops_hyops_before_anything(cell: Cell, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")
    run = cell.start("apply", "modules/network", block_signals=True)
    cell.signal(run)  # blocked: it waits through Python's start-up for hyops's own handling

    assert _nothing_changed(cell, run, "before anything was changed") == ""
    assert not (cell.hyops.runtime_root / "state").exists() and not (cell.hyops.runtime_root / "runs").exists()


@pytest.mark.parametrize("cell", BUNDLED, indirect=True)
def test_a_signal_during_root_discovery_stops_hyops_before_anything(
    cell: Cell, module_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    module = module_copy("network")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".hyops").write_text("a file, not a runtime root: discovery warns, and parks on the full pipe\n")
    env = phases.hyops_env(cell.hyops.env(), HYOPS_RUNTIME_ROOT=None, HYOPS_CEILING_DIRECTORIES=str(tmp_path))
    run = cell.start("apply", str(module), cwd=work, env=env, full_stderr=True)
    procs.wait_until(lambda: phases.writing_to(run.pid, 2) or run.proc.poll() is not None,
                     "hyops to warn about ./.hyops during root discovery", interval=0.005)
    cell.signal(run)
    procs.wait_until(lambda: phases.delivered(run.pid, cell.signum), "the signal to reach hyops", interval=0.001)

    code, out, err = run.finish()

    phases.check_said(code, err, cell.sig)
    assert err.splitlines() == phases.interrupted_lines(err)  # the warning it was writing never went out
    assert (work / ".hyops").is_file()
    assert not (cell.hyops.runtime_root / "state").exists()
    assert cell.cloud_is_empty()


@pytest.mark.parametrize("cell", BUNDLED, indirect=True)
def test_a_signal_while_waiting_for_the_lock_ends_the_wait_and_changes_nothing(
    cell: Cell, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    lock = phases.holding_lock(cell.hyops.runtime_root / "state" / "modules" / "network" / ".lock")
    try:
        run = cell.start("apply", "modules/network", "--lock-timeout", "600")
        procs.wait_until(lambda: phases.sleeping(run.pid) or run.proc.poll() is not None,
                         "hyops to wait for the busy lock", interval=0.005)
        cell.signal(run)
        # long before the lock is free or the timeout is up
        _nothing_changed(cell, run, "before the lock of network was taken; nothing was changed", timeout=60)
    finally:
        lock.release()

    assert _runs(cell.hyops, "network") == []


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_during_the_engine_probe_is_interrupted_not_failed_and_starts_nothing_more(
    cell: Cell, module_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    module = module_copy("network")
    fifo = tmp_path / "user-terraform.rc"
    os.mkfifo(fifo)
    run = cell.start("apply", "modules/network", env={**cell.hyops.env(), "TF_CLI_CONFIG_FILE": str(fifo)})
    _signal_while_parked(cell, run, "version", fifo)

    _nothing_changed(cell, run, "nothing was changed")
    assert not (module / ".terraform").exists(), "init ran after the signal"


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_during_init_is_interrupted_not_failed_and_starts_nothing_more(
    cell: Cell, module_copy: Callable[[str], Path]
) -> None:
    module = module_copy("network")
    fifo = module / ".terraform.lock.hcl"
    os.mkfifo(fifo)
    run = cell.start("apply", "modules/network")
    _signal_while_parked(cell, run, "init", fifo)

    _nothing_changed(cell, run, "nothing was changed")
    assert not any("apply" in procs.cmdline(p) for p in procs.engine_pids(module)), "an apply started"
    assert [_result(r)["outcome"] for r in _runs(cell.hyops, "network")] == ["interrupted"]


# --- while the engine runs ---------------------------------------------------------------------


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_while_the_apply_plans_stops_it_and_leaves_the_record_as_it_was(
    cell: Cell, module_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    module_copy("network")
    first = cell.hyops("apply", "modules/network")
    assert first.returncode == 0, first.stderr
    before = cell.hyops.record("network")
    gate = Gate.at(tmp_path)  # the refresh's read parks until the engine has the signal
    env = {**cell.hyops.env(), **_write_faults(tmp_path, [gate.rule(type="sim_network", op="read")])}
    earlier = set(_runs(cell.hyops, "network"))  # run ids order runs only to the second
    run = cell.start("apply", "modules/network", env=env)
    try:
        gate.wait_started(run.proc)
        cell.signal(run)
        # the engine waits for a refresh read to return, so the read is let go once the
        # engine has said it got the interrupt (it then plans nothing more)
        [this_run] = [r for r in _runs(cell.hyops, "network") if r not in earlier]
        events = this_run / "events.jsonl"
        procs.wait_until(lambda: _engine_interrupted(events) or run.proc.poll() is not None,
                         "the engine to log the interrupt")
        gate.release()
        code, out, err = run.finish()
    finally:
        gate.release()

    line = phases.check_said(code, err, cell.sig)
    assert "before the apply changed anything" in line
    after = cell.hyops.record("network")
    assert after["status"] == "ok" and after["run_id"] == before["run_id"]
    assert after["last_attempt"]["exit_code"] == code  # 130 or 143, as hyops exited
    assert _result(this_run)["outcome"] == "interrupted"
    assert len(cell.hyops.sim_objects()) == 1


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_during_apply_stops_the_engine_and_settles_the_record_from_evidence(
    cell: Cell, module_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    module = module_copy("network")
    gate = Gate.at(tmp_path)  # never released while the run lives: only the signal ends the create
    env = {**cell.hyops.env(), **_write_faults(tmp_path, [gate.rule(type="sim_network", op="create")])}
    run = cell.start("apply", "modules/network", env=env)
    try:
        gate.wait_started(run.proc)
        cell.signal(run)
        code, out, err = run.finish()
    finally:
        gate.release()

    line = phases.check_said(code, err, cell.sig)
    assert "next: hyops reconcile modules/network --ref network" in line
    rec = cell.hyops.record("network")
    assert rec["status"] == "error" and f"interrupted by {cell.sig}" in rec["last_error"]
    assert rec["resources"]["sim_network.this"]["status"] == "error"
    assert procs.engine_pids(module) == []
    assert cell.hyops.sim_objects() == []


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_while_the_record_settles_lets_the_evidence_be_read_and_exits_130_or_143(
    cell: Cell, tmp_path: Path
) -> None:
    module = tmp_path / "modules" / "pair"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(VM_PAIR_TF)
    gate = Gate.at(tmp_path)
    env = {**cell.hyops.env(), **_write_faults(tmp_path, [
        gate.rule(type="sim_network", op="create", times=1),
        {"type": "sim_vm", "op": "create", "mode": "fail_before_create", "times": 1}])}
    run = cell.start("apply", "modules/pair", env=env)
    config = cell.hyops.runtime_root / "sim" / "terraform.rc"
    try:
        gate.wait_started(run.proc)  # the apply engine has read its CLI config long ago
        text = config.read_bytes()
        config.unlink()
        os.mkfifo(config, 0o600)  # so the `show -json` that settles the failed run parks opening it
    finally:
        gate.release()
    _signal_while_parked(cell, run, "show", config, text)  # the `show -json` that settles the run

    code, out, err = run.finish()

    phases.check_said(code, err, cell.sig)
    rec = cell.hyops.record("pair")
    assert rec["status"] == "error"
    assert rec["resources"]["sim_network.net"]["status"] == "complete"  # read from the state after the signal
    assert rec["resources"]["sim_vm.vm"]["status"] == "error"
    assert "interrupted" not in rec["last_error"] and "could not" not in rec["last_error"], rec["last_error"]
    assert len(cell.hyops.sim_objects()) == 1


# --- a stack ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_between_two_members_starts_no_more_and_reports_the_rest_pending(
    cell: Cell, tmp_path: Path
) -> None:
    stack = StackEnv(cell.hyops, tmp_path / "stack")
    stack.directory.mkdir()
    stack.module("network")
    stack.module("vm")
    stack.write(NETWORK_VM)
    gate = Gate.at(tmp_path)
    env = {**cell.hyops.env(), **_write_faults(tmp_path, [gate.rule(type="sim_network", op="create")])}
    run = cell.start("stack", "apply", "stack/stack.yml", "--lock-timeout", "600", env=env)
    lock = None
    try:
        gate.wait_started(run.proc)  # the stack's preflight has probed every lock by now
        lock = phases.holding_lock(cell.hyops.runtime_root / "state" / "modules" / "demo__vm" / ".lock")
        gate.release()
        procs.wait_until(lambda: (_status(cell.hyops, "demo/network") == "ok"
                                  and phases.sleeping(run.pid, any_thread=True)) or run.proc.poll() is not None,
                         "network to end and vm to wait for its lock")
        cell.signal(run)
        code, out, err = run.finish(timeout=60)  # long before vm's lock is free
    finally:
        gate.release()
        if lock is not None:
            lock.release()

    line = phases.check_said(code, err, cell.sig)
    assert "next: hyops reconcile --stack stack/stack.yml, then hyops stack apply stack/stack.yml --resume" in line
    report = stack.report()
    assert statuses(report) == {"network": "ok", "vm": "pending"}
    assert "blocked_by" not in report["members"][1]  # not blocked: the run was interrupted
    assert cell.hyops.record("demo/vm") is None and _runs(cell.hyops, "demo/vm") == []
    assert len(cell.hyops.sim_objects()) == 1


def _status(hyops: Hyops, ref: str) -> str | None:
    rec = hyops.record(ref)
    return rec["status"] if rec else None


@pytest.mark.parametrize("cell", ENGINES, indirect=True)
def test_a_signal_while_the_stack_report_is_printed_keeps_it_and_exits_130_or_143(
    cell: Cell, tmp_path: Path
) -> None:
    stack = StackEnv(cell.hyops, tmp_path / "stack")
    stack.directory.mkdir()
    stack.module("network")
    stack.write("stack: demo\nmodules:\n  - {name: network, path: network}\n")
    report_file = cell.hyops.runtime_root / "stacks" / "demo" / "latest.json"
    run = cell.start("stack", "apply", "stack/stack.yml", "--json", full_stdout=True)
    procs.wait_until(lambda: phases.writing_to(run.pid, 1) or run.proc.poll() is not None,
                     "hyops to print the report")
    assert report_file.exists(), "parked before the report was written"
    cell.signal(run)

    code, out, err = run.finish()

    line = phases.check_said(code, err, cell.sig)
    assert "next: nothing, every member ended" in line
    assert json.loads(out) == json.loads(report_file.read_text())
    assert statuses(json.loads(out)) == {"network": "ok"}
