"""The store under fire (issue 56, `make drill-store`): a queued stack of nine members over
three workers on the private PostgreSQL cluster, and faults at seeded moments: every hyops
connection terminated (pg_terminate_backend), the server restarted (pg_ctl stop -m fast,
start), the server frozen for some seconds (SIGSTOP/SIGCONT of the postmaster and its
backends), a worker killed (SIGKILL of its process group, engine and all).

A fault fires when the run has started a given number of members (a row count, never a
clock). After each trial: no worker met a bug (exit 70, a trace, a bug file), no member ran
twice (one run that started its engine each at most), none is lost without a report (the run finished and
every member row says how it ended, and why when it did not end ok), a member the run counts
`ok` has a record `ok` of that run, and reconcile's advice converges: `reconcile --stack
--write`, then `stack apply --resume`, leaves `reconcile --stack` with nothing to say.

A failing schedule is shrunk (`shrink`) to the shortest one that still fails, so its report
names the few faults that matter.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.hyops_cli import Hyops, wait_for
from tests.integration.queue_rig import NINE, checkout, member_rows, queue, worker
from tests.integration.shared_store import SharedStore

KINDS = ("terminate", "restart", "freeze", "kill_worker")
WORKERS = 3
# the server may stay away this long before a worker gives up (stack/queue/outage.py), and a
# killed worker's member is found lost after it: long beside a restart, short beside a trial
DRILL_HEARTBEAT = {"HYOPS_QUEUE_HEARTBEAT": "0.5", "HYOPS_QUEUE_LOST_AFTER": "30"}
TRIAL_BOUND = 900.0  # seconds for a trial's workers to end, however loaded the machine
ENDED = {"ok", "error", "interrupted", "pending", "skipped", "cancelled", "destroyed"}


@dataclass(frozen=True)
class Fault:
    kind: str
    after: int  # fires once this many members have started
    seconds: float = 2.0  # how long a freeze lasts
    whom: int = 0  # which live worker a kill takes (index among the live ones, modulo)

    def __str__(self) -> str:
        extra = {"freeze": f" {self.seconds:g}s", "kill_worker": f" #{self.whom}"}.get(self.kind, "")
        return f"{self.kind}{extra} after {self.after} started"


def schedule(seed: int, most: int = 3) -> tuple[Fault, ...]:
    """A seeded schedule: one to `most` faults, at most one worker killed, by moment."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    for _ in range(rng.randint(1, most)):
        kind = rng.choice([k for k in KINDS if k != "kill_worker" or all(f.kind != k for f in faults)])
        faults.append(Fault(kind, rng.randint(0, len(NINE) - 2), round(rng.uniform(1.0, 5.0), 1),
                            rng.randrange(WORKERS)))
    return tuple(sorted(faults, key=lambda f: f.after))


def shrink(faults: tuple[Fault, ...], fails: Callable[[tuple[Fault, ...]], bool]) -> tuple[Fault, ...]:
    """The shortest schedule found that still fails: drop one fault at a time while the rest
    still fail, then move each remaining fault to the earliest moment that still fails."""
    current = faults
    shrunk = True
    while shrunk and len(current) > 1:
        shrunk = False
        for i in range(len(current)):
            fewer = current[:i] + current[i + 1:]
            if fails(fewer):
                current, shrunk = fewer, True
                break
    for i, fault in enumerate(current):
        for after in range(fault.after):
            earlier = current[:i] + (Fault(fault.kind, after, fault.seconds, fault.whom),) + current[i + 1:]
            if fails(earlier):
                current = earlier
                break
    return current


@dataclass
class Trial:
    faults: tuple[Fault, ...]
    fired: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    outcome: dict[str, int] = field(default_factory=dict)  # member statuses, counted
    why: list[str] = field(default_factory=list)  # what the run said of each member that failed
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        said = "; ".join(self.fired) or "no fault reached"
        ends = ", ".join(f"{n} {s}" for s, n in sorted(self.outcome.items()))
        verdict = "ok" if self.ok else "FAILED: " + " | ".join(self.problems)
        why = f" ({'; '.join(self.why)})" if self.why else ""
        return f"[{said}] -> {ends}{why} in {self.seconds:.0f}s: {verdict}"


def _freeze(store: SharedStore, seconds: float) -> None:
    """SIGSTOP the postmaster and every backend it forked (the whole server stops answering,
    its sessions kept), then SIGCONT them after `seconds` (the fault's length, not a race)."""
    pid = store.cluster.postmaster_pid()
    if pid is None:
        return
    pids = [pid] + [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(int(p.name)) == pid]
    for p in pids:
        _signal(p, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        for p in pids:
            _signal(p, signal.SIGCONT)


def _ppid(pid: int) -> int | None:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _fire(fault: Fault, store: SharedStore, workers: dict[str, subprocess.Popen[str]]) -> str:
    if fault.kind == "terminate":
        return f"terminate ({store.terminate_hyops()} sessions)"
    if fault.kind == "restart":
        store.cluster.stop_server()
        store.cluster.start_server()
        return "restart"
    if fault.kind == "freeze":
        _freeze(store, fault.seconds)
        return f"freeze {fault.seconds:g}s"
    live = sorted(name for name, proc in workers.items() if proc.poll() is None)
    if not live:
        return "kill_worker (none live)"
    name = live[fault.whom % len(live)]
    _signal(-workers[name].pid, signal.SIGKILL)  # its process group: the engine goes with it
    workers[name].wait()
    return f"kill_worker {name}"


def _share_states(checkout_dir: Path, states: Path) -> None:
    """Each member's state in one folder every runner's checkout names (a local backend at an
    absolute path), as a team's runners share a remote backend: a member one runner applied is
    the same state wherever the next command runs, so the advice converges from any runner.
    (Each checkout with a state of its own, a member another runner applied is held by no state
    here: `stack apply --resume` rightly refuses to apply it again, state_missing.)"""
    states.mkdir(exist_ok=True)
    # and, as the project's own file does, reconcile asks the cloud about a create a killed
    # worker left uncertain, so `--write` settles it from evidence instead of a person
    (checkout_dir / "hyops.lookups.yml").write_text(
        "lookups:\n  sim_network: {command: [hyops, sim, lookup], match: [name], complete: true}\n")
    for member in sorted((checkout_dir / "m").iterdir()):
        (member / "backend.tf").write_text(
            f'terraform {{\n  backend "local" {{\n    path = "{states / (member.name + ".tfstate")}"\n  }}\n}}\n')


def run_trial(base: Path, engine: str, sim_root: Path, store: SharedStore, faults: tuple[Fault, ...]) -> Trial:
    """One trial on a fresh database of the cluster; its faults fired and what it found."""
    trial = Trial(faults)
    started_at = time.monotonic()
    runners = [checkout(base / f"runner-{i}", engine, sim_root, store) for i in range(WORKERS)]
    for hy in runners:
        hy.extra_env.update(DRILL_HEARTBEAT)
        _share_states(hy.workdir, base / "states")
    run_id = queue(runners[0])
    workers = {f"w{i}": worker(hy, f"w{i}") for i, hy in enumerate(runners)}
    started = (f"SELECT count(*) FROM hyops.queue_members WHERE run_id = '{run_id}' "
               "AND status NOT IN ('waiting', 'queued')")
    try:
        for fault in faults:
            reached = wait_for(lambda after=fault.after: _all_done(workers) or _count(store, started) >= after,
                               timeout=TRIAL_BOUND, what=f"{fault.after} members of {run_id} to start")
            if _all_done(workers) and _count(store, started) < fault.after:
                break
            assert reached
            trial.fired.append(_fire(fault, store, workers))
        outputs = {name: proc.communicate(timeout=TRIAL_BOUND)[0] for name, proc in workers.items()}
    finally:
        store.cluster.start_server()  # a no-op unless a restart failed halfway
        for proc in workers.values():
            if proc.poll() is None:
                _signal(-proc.pid, signal.SIGKILL)
                proc.wait()
    _check(trial, runners, store, run_id, workers, outputs)
    trial.seconds = time.monotonic() - started_at
    return trial


def engines_started(store: SharedStore, key: str) -> int:
    """How many runs of the module started its engine (the journal's `engine` line): a run
    refused before it (the store away before its `running` record) and tried again ran once."""
    return int(store.sql(f"SELECT count(DISTINCT run_id) FROM hyops.journal WHERE key = '{key}' AND kind = 'engine'"))


def _all_done(workers: dict[str, subprocess.Popen[str]]) -> bool:
    return all(proc.poll() is not None for proc in workers.values())


def _count(store: SharedStore, query: str) -> int:
    try:
        return int(store.sql(query).strip() or 0)
    except Exception:  # noqa: BLE001 - the server restarting or frozen: not there yet
        return -1


def _check(trial: Trial, runners: list[Hyops], store: SharedStore, run_id: str,
           workers: dict[str, subprocess.Popen[str]], outputs: dict[str, str]) -> None:
    problems = trial.problems
    for name, proc in workers.items():
        out = outputs.get(name) or ""
        if proc.returncode == 70 or "Traceback" in out:
            problems.append(f"worker {name} met a bug (exit {proc.returncode}): {out[-600:]}")
    for hy in runners:
        bugs = sorted(str(p) for p in hy.runtime_root.rglob("*bug*"))
        if bugs:
            problems.append(f"bug files: {bugs}")
    finished = store.sql(f"SELECT finished_at IS NOT NULL FROM hyops.queue_runs WHERE run_id = '{run_id}'").strip()
    rows = member_rows(store, run_id)
    trial.outcome = {}
    for name, row in rows.items():
        trial.outcome[row["status"]] = trial.outcome.get(row["status"], 0) + 1
        if row["status"] in ("error", "interrupted"):
            trial.why.append(f"{name}: {(row['error'] or '')[:160]}")
    if finished != "t":
        problems.append(f"run {run_id} never finished: {json.dumps({n: r['status'] for n, r in rows.items()})}")
    for name, row in rows.items():
        runs = engines_started(store, f"nine/{name}")
        if runs > 1:
            problems.append(f"{name} ran {runs} times")
        if row["status"] not in ENDED:
            problems.append(f"{name} left {row['status']} with no end")
        elif row["status"] == "pending" and not row["blocked_by"] and not row["error"]:
            problems.append(f"{name} pending with no reason")
        elif row["status"] not in ("ok", "pending", "skipped") and not row["error"]:
            problems.append(f"{name} {row['status']} with no reason")
        if row["status"] == "ok":
            record = store.record(f"nine/{name}") or {}
            if (record.get("status"), record.get("run_id")) != ("ok", row["member_run_id"]):
                problems.append(f"{name} ok in the run, its record says {record.get('status')} "
                                f"of {record.get('run_id')}")
    if not problems:
        _converges(trial, runners[0])


def _converges(trial: Trial, hy: Hyops) -> None:
    """Reconcile's advice, followed to the letter, leaves nothing to say."""
    written = hy("reconcile", "--stack", "stack.yml", "--write")
    if written.returncode not in (0, 3):
        trial.problems.append(f"reconcile --stack --write exit {written.returncode}: {written.stderr[-600:]}")
        return
    resumed = hy("stack", "apply", "stack.yml", "--resume")
    if resumed.returncode != 0:
        trial.problems.append(f"stack apply --resume exit {resumed.returncode}: {resumed.stderr[-600:]}")
        return
    after = hy("reconcile", "--stack", "stack.yml")
    if after.returncode != 0:
        trial.problems.append(f"reconcile --stack after the advice exit {after.returncode}: {after.stdout[-600:]}")
