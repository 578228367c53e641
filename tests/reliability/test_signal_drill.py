"""The signal drill: SIGINT or SIGTERM at random moments of `hyops stack apply` of the demo
stack, as a CI cancel or a Ctrl-C would land (docs/running.md: Signals). `make reliability`
only: the moments are random, so each round checks the rule whatever moment it hit, and
notes the moment its report proves (tests/reliability/figures.py).

Each round starts from nothing (its own runtime root, sim cloud and module copies), with
SIGINT inherited at default or ignored, and sends one signal 0 to 6 s after hyops installed
its handling (seen in /proc: SIGTERM caught). Python's start-up before that, which hyops does
not cover, is documented, not drilled. Then:

- hyops exits 130/143 with one `hyops: interrupted by SIG...; next: ...` line and no
  traceback (before the command began: no report, no record, nothing in the cloud), or,
  when the signal came after it had finished, 0 with every member ok;
- the run report says each member's end: `ok` (record `ok`), `interrupted` (record `error`, or
  as it was when its engine had not started a change), `pending` (no record);
- no engine or provider of the round is left running;
- the record never claims less than may have happened: every live sim object is named by a
  record (by id), or its record lists a suspect orphan of that type;
- following the line's advice converges: `stack apply --resume` (after `reconcile --write`
  when a member is `interrupted`) exits 0 with exactly one object per member; an apply the
  records refuse (exit 4: a suspect orphan, the signal having stopped a create whose answer
  was lost) is counted, and the drill then checks nothing was created twice.

HYOPS_SIGNAL_DRILL_ROUNDS (default 12) and HYOPS_SIGNAL_DRILL_SEED (default: random, noted)
replay a drill.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.runtime import live_journal
from tests.integration import phases
from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.figures import SIGNAL, note
from tests.stackfiles import write_stack

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

MEMBERS = ("network", "vm", "config", "health")
TYPE_OF = {"network": "sim_network", "vm": "sim_vm", "config": "sim_config", "health": "sim_health_check"}
LATEST = 6.0  # seconds after the handling is installed: past the first members of the demo stack


def _rounds() -> int:
    return int(os.environ.get("HYOPS_SIGNAL_DRILL_ROUNDS", "12"))


def _seed() -> int:
    given = os.environ.get("HYOPS_SIGNAL_DRILL_SEED")
    return int(given) if given else random.SystemRandom().randrange(1 << 30)


def _catches_sigterm(pid: int) -> bool:
    """hyops has installed its handling: SIGTERM is caught (Python alone never catches it)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


class Round:
    def __init__(self, base: Path, engine: str) -> None:
        base.mkdir()
        runtime = base / "runtime"
        runtime.mkdir(mode=0o700)
        self.h = Hyops(base, runtime, engine, base / "cloud", {})
        stack = base / "stack"
        stack.mkdir()
        for name in MEMBERS:
            copy_module(name, stack / name)
        write_stack(stack)
        self.base = base

    def record(self, name: str) -> dict[str, Any] | None:
        return self.h.record(f"demo/{name}")

    def report(self) -> dict[str, Any] | None:
        path = self.h.runtime_root / "stacks" / "demo" / "latest.json"
        return live_journal.fold(json.loads(path.read_text()), path) if path.exists() else None

    def live(self) -> list[dict[str, Any]]:
        return self.h.sim_objects() if self.h.sim_root.exists() else []


def _moment(statuses: dict[str, str]) -> str:
    """Where the signal landed, as the report proves it."""
    done = sum(s == "ok" for s in statuses.values())
    if "interrupted" in statuses.values():
        return f"member {done + 1}'s engine"
    if done == len(MEMBERS):
        return "after every member"
    return "before any member" if done == 0 else f"between members {done} and {done + 1}"


def _unclaimed(r: Round) -> list[str]:
    """Live objects no record names by id and no suspect orphan of their type covers."""
    records = {name: r.record(name) or {} for name in MEMBERS}
    ids = {e.get("id") for rec in records.values() for e in (rec.get("resources") or {}).values()}
    orphan_types = {TYPE_OF[name] for name, rec in records.items() if rec.get("suspect_orphans")}
    return [f"{o['type']} {o['id']}" for o in r.live() if o["id"] not in ids and o["type"] not in orphan_types]


def test_a_signal_at_a_random_moment_of_a_stack_apply_keeps_the_rule(tmp_path: Path, engine_path: str) -> None:
    seed, rounds = _seed(), _rounds()
    rng = random.Random(seed)
    seen: Counter[str] = Counter()
    for i in range(rounds):
        sig = rng.choice(sorted(phases.SIGNALS))
        ignored = rng.random() < 0.5
        delay = rng.uniform(0.0, LATEST)
        where = f"seed {seed} round {i}: {sig}, SIGINT {'ignored' if ignored else 'default'}, {delay:.2f}s"
        r = Round(tmp_path / f"round-{i}", engine_path)
        run = phases.start(["stack", "apply", "stack/stack.yml"], r.h.workdir, r.h.env(), ignore_sigint=ignored)
        procs.wait_until(lambda run=run: _catches_sigterm(run.pid) or run.proc.poll() is not None,
                         "hyops to install its signal handling", interval=0.001)
        ended_first = run.proc.poll() is not None
        if not ended_first:
            _sleep_until_or_exit(run, delay)
            ended_first = run.proc.poll() is not None
            if not ended_first:
                run.proc.send_signal(phases.SIGNALS[sig])
        code, out, err = run.finish()
        procs.wait_until(lambda r=r: not procs.engine_pids_under(r.base) and not procs.provider_pids(r.h.sim_root),
                         f"{where}: the round's engines and providers to end")
        report = r.report()
        if report is None:  # before the command began: it exits at once, nothing changed
            line = phases.check_said(code, err, sig)
            assert "before anything was changed" in line, f"{where}: no run report\n{err}"
            assert all(r.record(name) is None for name in MEMBERS) and r.live() == [], where
            seen["before the command began"] += 1
            note(SIGNAL, signal=sig, inherited="ignored" if ignored else "default", delay=round(delay, 2),
                 moment="before the command began", exit_code=code, recovered="nothing to recover", seed=seed)
            continue
        statuses = {m["name"]: m["status"] for m in report["members"]}
        if ended_first or code == 0:
            assert code == 0 and set(statuses.values()) == {"ok"}, f"{where}: exit {code}\n{err}"
            moment = "after hyops exited"
        else:
            phases.check_said(code, err, sig)
            moment = _moment(statuses)
        assert set(statuses.values()) <= {"ok", "interrupted", "pending"}, f"{where}: {statuses}"
        for name, status in statuses.items():
            rec = r.record(name)
            if status == "pending":
                assert rec is None, f"{where}: {name} never started but has a record"
            elif status == "ok":
                assert rec is not None and rec["status"] == "ok", f"{where}: {name}: {rec}"
            else:
                assert rec is None or rec["status"] in ("error", "ok"), f"{where}: {name}: {rec}"
        assert _unclaimed(r) == [], f"{where}: live objects no record claims"
        recovered = _recover(r, statuses)
        seen[moment] += 1
        note(SIGNAL, signal=sig, inherited="ignored" if ignored else "default", delay=round(delay, 2),
             moment=moment, exit_code=code, recovered=recovered, seed=seed)
    assert sum(seen.values()) == rounds


def _sleep_until_or_exit(run: phases.Run, seconds: float) -> None:
    """The random moment: wait `seconds`, or less if hyops ends first (a bound, not a race:
    whichever moment it is, the round checks the same rule)."""
    try:
        run.proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:  # still running: the moment has come
        pass


def _recover(r: Round, statuses: dict[str, str]) -> str:
    """Follow the advice; how it ended: converged, or refused on an uncertain outcome."""
    if "interrupted" in statuses.values():
        written = r.h("reconcile", "--stack", "stack/stack.yml", "--write")
        assert written.returncode in (0, 3), written.stdout + written.stderr
    again = r.h("stack", "apply", "stack/stack.yml", "--resume")
    if again.returncode == 4:
        assert "reconcile" in again.stderr, again.stderr
        kinds = Counter(o["type"] for o in r.live())
        assert all(n == 1 for n in kinds.values()), f"an object was made twice: {kinds}"
        return "refused (uncertain outcome)"
    assert again.returncode == 0, again.stdout + again.stderr
    kinds = Counter(o["type"] for o in r.live())
    assert kinds == Counter(TYPE_OF.values()), f"not one object per member: {kinds}"
    return "converged"
