"""A queued stack run (issue 36) on N workers: wall time against the scheduling lower bound.

A wide stack (WIDTHS: three layers, each member on two of the layer before, as bench_stack
lays it) with bench_stack's stand-in engine, every apply taking exactly APPLY_SECONDS. The
store and the queue are a private PostgreSQL cluster (tests/pgcluster.py), stopped at the
end. Each of the WORKERS workers is a runner of its own: its own copy of the checkout and
its own runtime root, as CI runners are. Warm-up first: each runner alone works one queued run
at 0 s, so every checkout has run every member once (`init`, the engine's version and the parsed
HCL are one-time costs, as in bench_stack; with one shared warm-up run, which members a worker
took decided which of them paid an `init` in the timed run), then the timed run: the clock
starts before `hyops stack apply --queue`, the workers (`stack work --until-idle`) start as soon
as it has returned, and the run ends when
the store says it finished (the last member's end): the bench watches the run's row every
WATCH_SECONDS on a connection of its own, since the rows' times are whole seconds. The
workers' exit, which also waits for their `--until-idle` look, is shown beside it.

Lower bound: max(critical path, ceil(members / WORKERS)) applies. Target: within 1.2x.
The second table says where the rest goes: how long after the queueing the first member
started (worker start-up, first fetch), a member's mean time on its worker above the engine's
APPLY_SECONDS (claim, record, lock, wiring, the end's transaction), and the workers' idle time
between a member's end and their next member's start while members were still queued.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run.py loads benches by file path
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.pgcluster, when run alone
from bench_stack import APPLY_SECONDS, workspace  # type: ignore[import-not-found]  # noqa: E402

from tests.pgcluster import PgCluster, available, fresh_database  # noqa: E402

TITLE = "hyops stack apply --queue: wide stack on N workers (own checkouts), stand-in engine, wall vs lower bound"
WIDTHS = (12, 12, 6)  # 30 members; critical path 3 applies
WORKERS = int(os.environ.get("HYOPS_BENCH_QUEUE_WORKERS", "3"))
TARGET_RATIO = 1.2
HYOPS = str(Path(sys.executable).with_name("hyops"))
WATCH_SECONDS = 0.02


def _checkouts(base: Path, pg: dict[str, str]) -> list[tuple[Path, dict[str, str]]]:
    source = workspace(base / "source", WIDTHS)
    out = []
    for i in range(WORKERS):
        root = base / f"runner-{i}"
        shutil.copytree(source, root)
        env = {**os.environ, **pg, "HYOPS_ENGINE": str(root / "engine.sh"), "HYOPS_RUNTIME_ROOT": str(root / ".hyops")}
        out.append((root, env))
    return out


def _hyops(root: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([HYOPS, *args], cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"hyops {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-1500:]}")
    return proc.stdout


class _Watch(threading.Thread):
    """Seconds from `start` until the run's first member started and until the run finished,
    read from the store every WATCH_SECONDS (its rows say when only to the second)."""

    def __init__(self, conninfo: str, password: str, run_id: str, start: float) -> None:
        super().__init__(daemon=True)
        self.conninfo, self.password, self.run_id, self.start_at = conninfo, password, run_id, start
        self.first_start: float | None = None
        self.finished: float | None = None
        self.done = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.conninfo, password=self.password, autocommit=True) as conn:
            while self.finished is None and not self.done.is_set():
                started, finished = conn.execute(
                    "SELECT (SELECT count(*) FROM hyops.queue_members WHERE run_id = %s AND started_at IS NOT NULL),"
                    " (SELECT finished_at FROM hyops.queue_runs WHERE run_id = %s)",
                    (self.run_id, self.run_id)).fetchone()
                now = time.perf_counter() - self.start_at
                if started and self.first_start is None:
                    self.first_start = now
                if finished is not None:
                    self.finished = now
                time.sleep(WATCH_SECONDS)


def _queued_run(runners: list[tuple[Path, dict[str, str]]], seconds: float) -> tuple[str, _Watch, float]:
    """Queue a run from the first runner, work it on all; (run id, its watch, seconds until the
    last worker exited), every time from the queueing."""
    timed = [(root, {**env, "BENCH_APPLY_SECONDS": f"{seconds:g}"}) for root, env in runners]
    start = time.perf_counter()
    run_id = _hyops(*timed[0], "stack", "apply", "stack.yml", "--queue").strip()
    workers = [subprocess.Popen([HYOPS, "stack", "work", "--until-idle", "--name", f"w{i}", "--run", run_id],
                                cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for i, (root, env) in enumerate(timed)]
    env = timed[0][1]
    watch = _Watch(env["HYOPS_STORE"], env["PGPASSWORD"], run_id, start)
    watch.start()
    try:
        for i, worker in enumerate(workers):
            _, err = worker.communicate()
            if worker.returncode != 0:
                raise RuntimeError(f"worker w{i} exited {worker.returncode}: {err.strip()[-1500:]}")
        exited = time.perf_counter() - start
        watch.join(timeout=5)
    finally:
        watch.done.set()
    if watch.finished is None or watch.first_start is None:
        raise RuntimeError(f"queued run {run_id}: the store never said it started and finished")
    return run_id, watch, exited


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _members(cluster: PgCluster, dbname: str, run_id: str) -> list[tuple[str, float, float, str]]:
    """(worker, started, finished, status) of each member, in epoch seconds."""
    text = cluster.psql("SELECT worker, started_at, finished_at, status FROM hyops.queue_members "
                        f"WHERE run_id = '{run_id}' ORDER BY started_at", dbname)
    return [(w, _epoch(s), _epoch(f), st) for w, s, f, st in (line.split("|") for line in text.splitlines())]


def _idle(members: list[tuple[str, float, float, str]]) -> float:
    """Seconds workers sat between a member's end and their next start while a member that could
    run was waiting: summed over every worker's gaps that end before the last member started."""
    last_start = max(s for _, s, _, _ in members)
    idle = 0.0
    for worker in {w for w, _, _, _ in members}:
        mine = sorted((s, f) for w, s, f, _ in members if w == worker)
        idle += sum(max(0.0, nxt[0] - cur[1]) for cur, nxt in zip(mine, mine[1:], strict=False)
                    if nxt[0] <= last_start)
    return idle


def run() -> dict[str, list[dict[str, object]]] | list[dict[str, object]]:
    reason = available()
    if reason is not None:
        print(f"skipped: {reason}", flush=True)
        return [{"measure": "skipped", "value": reason}]
    members = sum(WIDTHS)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cluster = PgCluster.start(base)
        try:
            url, password = fresh_database(cluster, "bench_queue")
            pg = {"HYOPS_STORE": f"{url}?sslmode=disable", **password}
            runners = _checkouts(base, pg)
            _hyops(*runners[0], "store", "init")
            for runner in runners:  # warm-up: every checkout runs every member once
                _queued_run([runner], 0)
            run_id, watch, workers_wall = _queued_run(runners, APPLY_SECONDS)
            rows = _members(cluster, url.rsplit("/", 1)[1], run_id)
        finally:
            cluster.stop()
    if len(rows) != members or {st for *_, st in rows} != {"ok"}:
        raise RuntimeError(f"the timed run did not end with {members} members ok: {rows}")
    assert watch.finished is not None and watch.first_start is not None
    run_end = watch.finished
    bound = max(len(WIDTHS), math.ceil(members / WORKERS)) * APPLY_SECONDS
    ratio = run_end / bound
    mean = sum(f - s for _, s, f, _ in rows) / members
    return {
        "wall time": [{
            "workers": WORKERS, "members": members, "apply s": f"{APPLY_SECONDS:g}",
            "lower bound s": f"{bound:.1f}", "queue to run end s": f"{run_end:.2f}", "ratio": f"{ratio:.2f}x",
            "workers exited s": f"{workers_wall:.2f}", "target": f"<= {TARGET_RATIO}x",
            "met": "yes" if ratio <= TARGET_RATIO else "NO",
        }],
        "where the rest goes": [
            {"measure": "queueing to the first member's start (queue command, worker start-up, first fetch)",
             "value": f"{watch.first_start:.2f} s"},
            {"measure": f"a member's mean time on its worker, above the engine's {APPLY_SECONDS:g} s "
                        "(the rows' whole seconds)",
             "value": f"{mean - APPLY_SECONDS:+.2f} s ({mean:.2f} s)"},
            {"measure": "workers' idle time between members while members were left (summed)",
             "value": f"{_idle(rows):.2f} s"},
            {"measure": "machine: cores / load avg 1 min (at the end)",
             "value": f"{os.cpu_count()} / {os.getloadavg()[0]:.2f}"},
        ],
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import print_result  # type: ignore[import-not-found]

    print_result(run())
