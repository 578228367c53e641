"""`make drill-store` (issue 56): the queue and the store under fire (tests/reliability/store_drill.py).

A small fixed set runs in `make test`: each fault kind once, at a moment the nine members'
run certainly reaches. The long drill (`make drill-store N=... SEED=...`) draws N seeded
schedules, shrinks each failing one to its shortest, and prints one line a trial."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.conftest import pg_cluster  # noqa: F401 - the suite's private cluster, as a fixture
from tests.integration.shared_store import SharedStore
from tests.pgcluster import PgCluster
from tests.reliability.store_drill import Fault, Trial, run_trial, schedule, shrink

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

FIXED = (
    (Fault("terminate", 1), Fault("freeze", 4, seconds=3.0)),
    (Fault("restart", 2), Fault("kill_worker", 5, whom=1)),
)


def _trial(tmp_path: Path, engine: str, sim_root: Path, cluster: PgCluster, faults: tuple[Fault, ...],
           n: int) -> Trial:
    store = SharedStore.create(cluster, f"drill_{os.getpid()}_{n}")
    return run_trial(tmp_path / f"trial-{n}", engine, sim_root, store, faults)


@pytest.mark.parametrize("faults", FIXED, ids=["terminate-freeze", "restart-kill"])
def test_a_queued_run_under_store_faults_loses_nothing_runs_nothing_twice_and_converges(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_cluster: PgCluster,  # noqa: F811
    faults: tuple[Fault, ...],
) -> None:
    trial = _trial(tmp_path, engine_path, sim_root, pg_cluster, faults, 0)
    print(trial.line())
    assert trial.ok, trial.line()


@pytest.mark.reliability
def test_store_drill_long(tmp_path: Path, engine_path: str, sim_root: Path,
                          pg_cluster: PgCluster) -> None:  # noqa: F811
    """N seeded trials from SEED (HYOPS_STORE_DRILL_N, HYOPS_STORE_DRILL_SEED); a failing
    schedule is shrunk and reported with its seed, so `SEED=that N=1` replays it."""
    n = int(os.environ.get("HYOPS_STORE_DRILL_N", "5"))
    seed = int(os.environ.get("HYOPS_STORE_DRILL_SEED", "5600"))
    counter = iter(range(1, 10**6))
    failed = []
    for i in range(n):
        faults = schedule(seed + i)
        trial = _trial(tmp_path, engine_path, sim_root, pg_cluster, faults, next(counter))
        print(f"seed {seed + i}: {trial.line()}", flush=True)
        if not trial.ok:
            shortest = shrink(faults, lambda s: not _trial(tmp_path, engine_path, sim_root, pg_cluster, s,
                                                           next(counter)).ok)
            failed.append(f"seed {seed + i}: shortest failing schedule: {', '.join(map(str, shortest))}")
            print(failed[-1], flush=True)
    assert not failed, "\n".join(failed)
