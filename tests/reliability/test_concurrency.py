"""Concurrency: many hyops processes race apply/destroy on one module (see race.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.integration.gates import Gate
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.checks import assert_lock_free, check_record
from tests.reliability.figures import RACE, note
from tests.reliability.race import BUSY, RaceReport, race, ts

pytestmark = pytest.mark.integration


STATE_LOCK_CLASH = "Error acquiring the state lock"  # see test_read_only_reconcile_never_fails_...


def _guard_refused_holder(h: Hyops, ref: str, run: str, report: RaceReport) -> int | None:
    """The pid of the apply/destroy contender that opened `run` under the lock and was refused
    by the uncertain-outcome guard (exit 4, its engine never started), else None. A loser
    probing the lock in that window rightly names it as the holder."""
    folder = h.runtime_root / "runs" / ref.replace("/", "__") / run
    try:
        meta = json.loads((folder / "meta.json").read_text())
        result = json.loads((folder / "result.json").read_text())
    except (OSError, ValueError):
        return None
    contenders = {c.proc.pid: c for c in report.contenders if c.command in ("apply", "destroy")}
    holder = contenders.get(meta.get("pid"))
    if holder is None or holder.code != 4 or result.get("outcome") != "refused":
        return None
    return holder.proc.pid if "outcome is uncertain" in result.get("error", "") else None


def assert_race_was_safe(h: Hyops, report: RaceReport, ref: str, scenario: str,
                         tolerate_state_lock_clash: bool = False) -> None:
    reader, sampler = report.reader, report.sampler
    assert reader is not None and sampler is not None
    ran = report.ran
    note(RACE, scenario=scenario, processes=len({c.proc.pid for c in report.contenders}),
         mutations=len(ran), refusals=len(report.refused), reads=reader.reads,
         invalid_reads=len(reader.invalid), provider_mutations=len(report.mutations),
         most_engines_at_once=sampler.most, samples=sampler.samples)
    unexpected = [(c.command, c.code, c.stderr[-300:]) for c in report.contenders
                  if c.code not in ((0, 1, 3, 4) if c.command == "reconcile" else (0, 1, 4))
                  or "Traceback" in c.stderr]
    assert not unexpected, unexpected
    assert ran, "no contender ever ran"
    # no fault is injected: a run that got the lock must succeed, whatever else was running
    failed = [(c.command, c.stdout + c.stderr) for c in ran if c.code != 0
              and not (tolerate_state_lock_clash and STATE_LOCK_CLASH in c.stdout + c.stderr)]
    assert not failed, failed

    # the reader never saw a torn or invalid record
    assert reader.reads > 0
    assert reader.invalid == [], reader.invalid[:3]

    # at most one mutation at a time
    assert sampler.most <= 1, f"{sampler.most} mutating engines alive at once: {sampler.worst}"
    ids = [c.run_id for c in ran]
    assert all(ids), [(c.stdout, c.stderr) for c in ran if not c.run_id]
    spans = sorted((report.spans[r], r) for r in ids if r in report.spans)
    assert len(spans) == len(ids), "every run that ran left engine events"
    for (first, a), (second, b) in zip(spans, spans[1:], strict=False):
        assert first[1] < second[0], f"engine runs overlap: {a} {first} and {b} {second}"
    span_of = {r: s for s, r in spans}
    command_of = {c.run_id: c.command for c in ran}
    for call in report.mutations:
        assert "watched" in call, call
        seen = json.loads(call["watched"])
        assert seen["status"] == "running", f"provider {call['op']} while the record said {seen['status']}"
        owner = seen["run_id"]
        assert owner in span_of, f"{call} happened under record of unknown run {owner}"
        start, end = span_of[owner]
        assert start <= ts(call["time"]) <= end, f"{call['op']} outside the span of {owner}"
        if call["op"] == "create":
            assert command_of[owner] == "apply", f"a create under {owner}"


    # no update lost: every run was seen in the record; the last run wrote the final record
    for rid in ids:
        assert rid in reader.seen, f"run {rid} never appeared in latest.json"
    last = spans[-1][1]
    final = check_record(h, ref, f"after race {scenario}")
    assert final is not None
    if final["run_id"].startswith("reconcile-"):  # a reconcile --write settled it last
        written = report.results[final["run_id"]]
        assert written["outcome"] == final["status"] and written["record_after"]["run_id"] == final["run_id"]
        assert ts(written["finished_at"]) + 1 >= spans[-1][0][1], "a settle older than the last run won"
    else:
        assert final["run_id"] == last
        assert final["status"] == report.results[last]["outcome"]
    assert_lock_free(h, ref)

    # losers exit 4 and name the holder: pid and run of a contender that was running then
    pid_of = {c.run_id: c.proc.pid for c in ran}
    anonymous = 0
    for loser in report.refused:
        assert "Traceback" not in loser.stderr
        m = BUSY.search(loser.stderr)
        if m is None and "refused:" in loser.stderr and "reconcile" in loser.stderr:
            continue  # the uncertain-outcome guard, not the lock: also exit 4, nothing ran
        if m is None:
            anonymous += 1
            assert m, f"exit 4 without naming the holder: {loser.stderr!r}"
        pid, run = int(m.group(1)), m.group(4)
        if run.startswith("reconcile-"):  # reconcile --write holds the lock under its own run id
            assert pid in {c.proc.pid for c in report.contenders if c.command == "reconcile"}, run
            continue
        if run not in pid_of:  # a holder that took the lock, then was refused before its engine
            pid_of[run] = _guard_refused_holder(h, ref, run, report)
        assert pid_of.get(run) == pid, f"named holder pid {pid} run {run} is no contender that ran"
    note(RACE + "_losers", scenario=scenario, named=len(report.refused) - anonymous,
         anonymous=anonymous)


@pytest.mark.parametrize(("processes", "rounds", "seed"), [(2, 3, 1), (4, 2, 2)],
                         ids=["2x3", "4x2"])
def test_racing_applies_and_destroys_mutate_one_at_a_time_and_lose_no_update(
    hyops: Hyops, module_copy: Callable[[str], Path], processes: int, rounds: int, seed: int
) -> None:
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0  # init once, outside the race
    report = race(hyops, "modules/network", module, "network", processes=processes,
                  rounds=rounds, seed=seed)
    assert_race_was_safe(hyops, report, "network", f"{processes} processes x {rounds} rounds")


@pytest.mark.reliability
@pytest.mark.parametrize(("processes", "rounds", "seed"), [(8, 8, 3), (3, 15, 4)], ids=["8x8", "3x15"])
def test_long_races_mutate_one_at_a_time_and_lose_no_update(
    hyops: Hyops, module_copy: Callable[[str], Path], processes: int, rounds: int, seed: int
) -> None:
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    report = race(hyops, "modules/network", module, "network", processes=processes,
                  rounds=rounds, seed=seed)
    assert_race_was_safe(hyops, report, "network", f"{processes} processes x {rounds} rounds")


def test_a_loser_never_names_a_dead_holder_from_a_stale_note(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """A kill leaves the holder note; then a live process holds the lock before it wrote a
    note of its own (the gap between a holder's flock and its note), and another apply loses.

    The live holder is this test's own flock on the module's lock file: the same kernel state
    a hyops frozen right after its flock leaves, made without a race (freezing a real hyops
    inside that gap, a few microseconds wide, is luck)."""
    import fcntl
    import os

    from tests.reliability.crash import CrashRig

    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    dead = CrashRig(hyops, module, "network").kill("apply", "after_lock", "fifo_events")
    assert dead.hit, dead.evidence
    lock = hyops.record_path("network").parent / ".lock"
    note_path = lock.with_name(".lock.owner.json")
    assert note_path.exists(), "the killed holder's note is left behind"
    dead_pid = dead.evidence["hyops_pid"]
    assert json.loads(note_path.read_text()).get("pid") == dead_pid
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert procs.lock_holders(lock) == {os.getpid()}
        loser = hyops("apply", "modules/network")
    finally:
        os.close(fd)
    named = BUSY.search(loser.stderr)
    note(RACE + "_losers", scenario="stale holder note", named=int(bool(named)), anonymous=int(not named))
    assert loser.returncode == 4, loser.stderr
    assert f"pid {dead_pid} " not in loser.stderr and dead.run_id not in loser.stderr, (
        f"named the dead holder {dead_pid} while pid {os.getpid()} holds the lock: {loser.stderr}")


def test_reconcile_write_races_apply_and_destroy_without_overlap_or_lost_update(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """Starting from a stale `running` record (a kill after the running write): applies are
    refused until a `reconcile --write` settles it; everything else must still hold."""
    from tests.reliability.crash import CrashRig

    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    kill = CrashRig(hyops, module, "network").kill("apply", "after_running_before_engine", "fifo_stderr")
    assert kill.hit, kill.evidence
    report = race(hyops, "modules/network", module, "network", processes=4, rounds=3, seed=6,
                  commands=("apply", "destroy", "reconcile"), extra={"reconcile": ("--write",)})
    assert_race_was_safe(hyops, report, "network", "4 processes x 3 rounds with reconcile --write",
                         tolerate_state_lock_clash=True)
    settles = [name for name in report.results if name.startswith("reconcile-")]
    note(RACE + "_reconcile", settles=len(settles),
         state_lock_clashes=sum(STATE_LOCK_CLASH in c.stdout + c.stderr for c in report.contenders))


def test_read_only_reconcile_never_fails_a_concurrent_apply(
    hyops: Hyops, module_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    faults = tmp_path / "slow-read.yml"
    gate = Gate.at(tmp_path)  # the reconcile's refresh stays in flight for the whole apply
    faults.write_text(yaml.safe_dump([gate.rule(type="sim_network", op="read", times=1)]))
    reader = hyops.start("reconcile", "modules/network", "--json", env={"HYOPS_SIM_FAULTS": str(faults)})
    try:
        gate.wait_started(reader, procs.GENEROUS)  # the reconcile's refresh is in flight
        applied = hyops("apply", "modules/network")
        assert reader.poll() is None, "the reconcile ended before the apply did"
    finally:
        gate.release()
        reader.communicate(timeout=300)
    assert applied.returncode in (0, 4), applied.stdout + applied.stderr
    assert hyops.record("network")["status"] == "ok"
