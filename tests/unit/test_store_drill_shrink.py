"""The store drill's schedules (tests/reliability/store_drill.py): seeded, and a failing one
shrunk to the shortest that still fails."""

from __future__ import annotations

from tests.reliability.store_drill import Fault, schedule, shrink


def test_a_seed_gives_the_same_schedule_every_time_with_at_most_one_worker_killed() -> None:
    for seed in range(200):
        faults = schedule(seed)
        assert faults == schedule(seed) and 1 <= len(faults) <= 3
        assert sum(f.kind == "kill_worker" for f in faults) <= 1
        assert [f.after for f in faults] == sorted(f.after for f in faults)


def test_a_failing_schedule_shrinks_to_the_one_fault_that_fails_it_at_its_earliest_moment() -> None:
    faults = (Fault("terminate", 1), Fault("restart", 4), Fault("freeze", 6))
    shortest = shrink(faults, lambda s: any(f.kind == "restart" and f.after >= 2 for f in s))
    assert shortest == (Fault("restart", 2),)


def test_a_schedule_that_needs_two_faults_keeps_both() -> None:
    faults = (Fault("terminate", 3), Fault("kill_worker", 5), Fault("freeze", 7))
    shortest = shrink(faults, lambda s: {"terminate", "kill_worker"} <= {f.kind for f in s})
    assert [f.kind for f in shortest] == ["terminate", "kill_worker"] and [f.after for f in shortest] == [0, 0]
