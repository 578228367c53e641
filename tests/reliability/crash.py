"""SIGKILL hyops at a chosen phase of a run, and say from evidence which phase it hit.

How each moment is reached (no product hook; only files, /proc and signals):

- after_lock (lock held, `running` not yet written): a FIFO planted at the new run
  folder's `events.jsonl` while hyops is frozen by SIGSTOP right after it created the run
  folder. hyops opens events.jsonl after taking the lock and before writing `running`, and
  open() of a FIFO without a reader blocks, so hyops parks exactly there. EXACT.
- after_running_before_engine: the same trap on `engine.stderr.log`, which hyops opens
  after writing `running` and before spawning the engine. EXACT.
- engine_running: the provider hangs (`hang` fault); the kill lands once the provider has
  logged the call and hyops has logged the engine's `apply_start`. EXACT.
  Variant stalled_reader: hyops is frozen as soon as it spawned the engine, so it reads
  nothing more; the kill lands once the provider logged the call. EXACT.
- engine_exited_before_settle: show_window: hyops is frozen while the `show -json` it runs
  after a failed apply or destroy is alive (the mutating engine has exited, nothing is
  settled yet). EXACT. poll_exit (a successful apply or destroy, which settles without
  `show`): hyops is frozen as soon as its engine child is seen exited. BEST EFFORT, judged
  by evidence.
- during_settle_write: hyops is frozen as soon as a `.latest.json.*.tmp` appears after
  the engine ran; a hit needs the temp file still there (os.replace not done) once frozen.
  BEST EFFORT, judged by evidence.

Whatever was aimed at, the phase noted is the one the frozen state proves (`classify`).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.integration.hyops_cli import Hyops
from tests.reliability import procs

EXACT_METHODS = {"fifo_events", "fifo_stderr", "hang_call", "stalled_reader", "show_window"}
PHASES = (
    "after_lock",
    "after_running_before_engine",
    "engine_running",
    "engine_exited_before_settle",
    "during_settle_write",
    "after_settle_write",
)
VERB = {"apply": "apply", "destroy": "destroy"}


@dataclass
class Kill:
    """One SIGKILL and what the frozen process proved about where it was."""

    command: str
    wanted: str
    method: str
    phase: str
    run_id: str | None
    before_text: str | None
    evidence: dict[str, Any]
    stderr: str = ""
    calls_before: int = 0
    hung_call: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def hit(self) -> bool:
        return self.phase == self.wanted

    @property
    def exact(self) -> bool:
        return self.method in EXACT_METHODS


class CrashRig:
    """Drives `hyops <command>` on one module and kills it at a chosen moment."""

    def __init__(self, hyops: Hyops, module_dir: Path, ref: str) -> None:
        self.h = hyops
        self.module_dir = module_dir
        self.ref = ref
        self.module_arg = str(module_dir.relative_to(hyops.workdir))
        self.record_path = hyops.record_path(ref)
        self.lock_path = self.record_path.parent / ".lock"
        self.runs_dir = hyops.runtime_root / "runs" / ref.replace("/", "__")

    # ----- evidence ----------------------------------------------------------------------
    def record_text(self) -> str | None:
        try:
            return self.record_path.read_text()
        except FileNotFoundError:
            return None

    def run_dirs(self) -> set[Path]:
        try:
            return set(self.runs_dir.iterdir())
        except FileNotFoundError:
            return set()

    def calls(self) -> list[dict[str, Any]]:
        return self.h.sim_calls()

    def _new_run_dir(self, before: set[Path]) -> Path | None:
        fresh = self.run_dirs() - before
        return next(iter(fresh)) if fresh else None

    def classify(self, snap: procs.Snapshot, run_id: str | None, before_text: str | None,
                 engine_seen: bool, engine_alive: bool) -> str:
        """The phase a frozen hyops is in, from the record, its children and temp files."""
        if snap.record_run_id != run_id or run_id is None:
            if snap.record_text == before_text and procs.lock_holders(self.lock_path):
                return "after_lock"
            return "unexpected"
        if snap.record_status != "running":
            return "after_settle_write"
        if not engine_seen:
            return "after_running_before_engine"
        if engine_alive:
            return "engine_running"
        if snap.tmp_files:
            return "during_settle_write"
        return "engine_exited_before_settle"

    # ----- one attempt -------------------------------------------------------------------
    def kill(self, command: str, wanted: str, method: str, *args: str,
             env: dict[str, str] | None = None) -> Kill:
        """Start `hyops command`, reach `wanted` by `method`, SIGKILL, return the evidence."""
        if method in ("fifo_events", "fifo_stderr"):
            # a fresh init widens the window between run folder and trap (seconds)
            subprocess.run(["rm", "-rf", str(self.module_dir / ".terraform")], check=True)
        before_text = self.record_text()
        before_dirs = self.run_dirs()
        calls_before = len(self.calls())
        proc = self.h.start(command, self.module_arg, *args, env=env)
        pid = proc.pid
        engine_pid: int | None = None
        engine_seen = False
        hung: dict[str, Any] | None = None
        notes: list[str] = []
        seen: dict[str, Any] = {}  # evidence only observable before the freeze
        try:
            if method in ("fifo_events", "fifo_stderr"):
                trap = "events.jsonl" if method == "fifo_events" else "engine.stderr.log"
                run_dir = procs.wait_until(lambda: self._new_run_dir(before_dirs) or
                                           (proc.poll() is not None and "exited"),
                                           "the run folder", interval=0.0005)
                if run_dir == "exited":
                    raise AssertionError(f"hyops exited before creating a run folder: {proc.stderr.read()}")
                procs.stop(pid)
                if (run_dir / trap).exists():
                    notes.append(f"{trap} existed before the trap was set")
                    procs.cont(pid)
                    proc.wait(timeout=procs.GENEROUS)
                else:
                    os.mkfifo(run_dir / trap, 0o600)
                    procs.cont(pid)
                    procs.wait_until(lambda: procs.blocked_opening_fifo(pid) or proc.poll() is not None,
                                     f"hyops to open the trapped {trap}")
                    seen["blocked_on_fifo"] = trap if procs.blocked_opening_fifo(pid) else False
                    procs.stop(pid)
            elif method in ("hang_call", "stalled_reader"):
                engine_pid = _wait_for_engine(proc, command)
                engine_seen = True
                if method == "stalled_reader":
                    procs.stop(pid)  # hyops reads no more engine output from here on
                hung = procs.wait_until(lambda: self._hung_call(calls_before), "the provider's hung call")
                if method == "hang_call":
                    address = self._address_of(hung)
                    procs.wait_until(lambda: self._logged_start(before_dirs, address),
                                     f"hyops to log apply_start of {address}")
                    procs.stop(pid)
            elif method in ("show_window", "poll_exit", "poll_tmp"):
                engine_pid = _wait_for_engine(proc, command)
                engine_seen = True
                if method == "show_window":
                    procs.wait_until(lambda: procs.engine_child(pid, "show") or proc.poll() is not None,
                                     "hyops to read the state after the engine", interval=0.0005)
                    procs.stop(pid)
                elif method == "poll_exit":
                    while procs.alive(engine_pid) and proc.poll() is None:
                        pass
                    procs.stop(pid)
                else:
                    tmp_prefix = f".{self.record_path.name}."
                    folder = self.record_path.parent
                    while proc.poll() is None:
                        if any(n.startswith(tmp_prefix) and n.endswith(".tmp") for n in os.listdir(folder)):
                            break
                    procs.stop(pid)
            else:
                raise ValueError(f"unknown method {method}")

            snap = procs.snapshot(pid, self.record_path)
            run_id = self._run_id(before_dirs)
            engine_alive = engine_pid is not None and procs.alive(engine_pid)
            phase = self.classify(snap, run_id, before_text, engine_seen, engine_alive)
            if proc.poll() is not None:
                phase = "exited_before_kill"  # the run ended on its own: no kill happened
            evidence = snap.describe() | {
                "engine_alive": engine_alive,
                "lock_holders": sorted(procs.lock_holders(self.lock_path)),
                "hyops_pid": pid,
            } | seen
        finally:
            procs.kill(pid)
            proc.wait(timeout=60)
        stderr = proc.stderr.read() if proc.stderr else ""
        for trap in ("events.jsonl", "engine.stderr.log"):  # a kill leaves no FIFO behind
            for d in self.run_dirs() - before_dirs:
                if procs.is_fifo(d / trap):
                    (d / trap).unlink()
        return Kill(command, wanted, method, phase, run_id, before_text, evidence, stderr,
                    calls_before, hung, notes)

    # ----- helpers -----------------------------------------------------------------------
    def _run_id(self, before_dirs: set[Path]) -> str | None:
        fresh = self.run_dirs() - before_dirs
        return next(iter(fresh)).name if fresh else None

    def _hung_call(self, calls_before: int) -> dict[str, Any] | None:
        for call in self.calls()[calls_before:]:
            if call.get("fault") == "hang":
                return call
        return None

    @staticmethod
    def _address_of(call: dict[str, Any]) -> str:
        return {"sim_network": "sim_network.net", "sim_vm": "sim_vm.vm"}[call["type"]]

    def _logged_start(self, before_dirs: set[Path], address: str) -> bool:
        for d in self.run_dirs() - before_dirs:
            try:
                lines = (d / "events.jsonl").read_text().splitlines()
            except OSError:
                continue
            for line in lines:
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                if doc.get("type") == "apply_start" and doc.get("hook", {}).get("resource", {}).get("addr") == address:
                    return True
        return False

    def wait_provider_done(self, kill: Kill) -> None:
        """After a kill mid-call, wait until the hung call can take no more effect.

        The engine stops with its hyops (parent-death signal, then the event relay's
        watchdog) and the sim provider with its engine, so a hung call is abandoned, not
        completed later: once neither process is left, what the cloud holds is final.
        """
        procs.wait_quiet(self.module_dir, self.h.sim_root)


def _wait_for_engine(proc: subprocess.Popen[str], command: str) -> int:
    """The pid of the engine hyops (proc) spawned for `command`; fail if hyops exits first."""
    started = procs.wait_until(lambda: procs.engine_child(proc.pid, VERB[command])
                               or (proc.poll() is not None and -1),
                               "the engine to start", interval=0.0005)
    if started == -1:
        raise AssertionError(f"hyops exited before the engine started: {proc.stderr.read()}")
    return int(started)
