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
TIMED_RUNS timed runs (HYOPS_BENCH_QUEUE_RUNS, default 3; one run swings by a few tenths of a
second on a 2-core machine): the median is the figure, each run's ratio beside it. The second
table says where the rest goes in the median run: how long after the queueing the first
member started (the queue command, the workers' start-up, their first fetch), and what each
of the members a worker runs in turn costs above the engine's APPLY_SECONDS (claim, record,
lock, wiring, the end's transaction, the next fetch), from the first start to the run's end.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run.py loads benches by file path
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.pgcluster, when run alone
from bench_stack import APPLY_SECONDS, workspace  # type: ignore[import-not-found]  # noqa: E402
from installed import installed_python  # type: ignore[import-not-found]  # noqa: E402

from tests.pgcluster import PgCluster, available, fresh_database  # noqa: E402

TITLE = "hyops stack apply --queue: wide stack on N workers (own checkouts), stand-in engine, wall vs lower bound"
WIDTHS = (12, 12, 6)  # 30 members; critical path 3 applies
WORKERS = int(os.environ.get("HYOPS_BENCH_QUEUE_WORKERS", "3"))
TARGET_RATIO = 1.2
HYOPS = str(Path(sys.executable).with_name("hyops"))  # run() puts hyops as a user installs it here
WATCH_SECONDS = 0.05
TIMED_RUNS = int(os.environ.get("HYOPS_BENCH_QUEUE_RUNS", "3"))  # the median is the figure


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
    read from the store every WATCH_SECONDS (its rows say when only to the second). Its
    connection is opened before the clock starts: its driver's import and login would compete
    with the workers' start-up."""

    def __init__(self, conninfo: str, password: str) -> None:
        import psycopg

        super().__init__(daemon=True)
        self.conn = psycopg.connect(conninfo, password=password, autocommit=True)
        self.run_id, self.start_at = "", 0.0
        self.first_start: float | None = None
        self.finished: float | None = None
        self.done = threading.Event()

    def watch(self, run_id: str, start: float) -> None:
        self.run_id, self.start_at = run_id, start
        self.start()

    def run(self) -> None:
        with self.conn:
            while self.finished is None and not self.done.is_set():
                started, finished = self.conn.execute(
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
    watch = _Watch(timed[0][1]["HYOPS_STORE"], timed[0][1]["PGPASSWORD"])
    start = time.perf_counter()
    run_id = _hyops(*timed[0], "stack", "apply", "stack.yml", "--queue").strip()
    workers = [subprocess.Popen([HYOPS, "stack", "work", "--until-idle", "--name", f"w{i}", "--run", run_id],
                                cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for i, (root, env) in enumerate(timed)]
    watch.watch(run_id, start)
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


def _members(cluster: PgCluster, dbname: str, run_id: str) -> list[tuple[str, str]]:
    """(worker, status) of each member."""
    text = cluster.psql(f"SELECT worker, status FROM hyops.queue_members WHERE run_id = '{run_id}'", dbname)
    return [(w, st) for w, st in (line.split("|") for line in text.splitlines())]


def run() -> dict[str, list[dict[str, object]]] | list[dict[str, object]]:
    reason = available()
    if reason is not None:
        print(f"skipped: {reason}", flush=True)
        return [{"measure": "skipped", "value": reason}]
    members = sum(WIDTHS)
    timed: list[tuple[float, float, float]] = []  # (run end, first start, workers exited), each from its queueing
    global HYOPS
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        python = installed_python(base / "installed", extras="postgres")
        HYOPS, which = ((str(python.with_name("hyops")), "installed from a wheel") if python is not None
                        else (HYOPS, "the dev venv (no wheel could be built)"))
        cluster = PgCluster.start(base)
        try:
            url, password = fresh_database(cluster, "bench_queue")
            pg = {"HYOPS_STORE": f"{url}?sslmode=disable", **password}
            runners = _checkouts(base, pg)
            _hyops(*runners[0], "store", "init")
            for runner in runners:  # warm-up: every checkout runs every member once
                _queued_run([runner], 0)
            for _ in range(TIMED_RUNS):
                run_id, watch, workers_wall = _queued_run(runners, APPLY_SECONDS)
                rows = _members(cluster, url.rsplit("/", 1)[1], run_id)
                if len(rows) != members or {st for _, st in rows} != {"ok"}:
                    raise RuntimeError(f"a timed run did not end with {members} members ok: {rows}")
                assert watch.finished is not None and watch.first_start is not None
                timed.append((watch.finished, watch.first_start, workers_wall))
        finally:
            cluster.stop()
    run_end, first_start, workers_wall = sorted(timed)[len(timed) // 2]  # the median run
    rounds = max(len(WIDTHS), math.ceil(members / WORKERS))
    bound = rounds * APPLY_SECONDS
    ratio = run_end / bound
    return {
        "wall time": [{
            "workers": WORKERS, "members": members, "apply s": f"{APPLY_SECONDS:g}",
            "lower bound s": f"{bound:.1f}", "queue to run end s": f"{run_end:.2f}", "ratio": f"{ratio:.2f}x",
            "runs": " ".join(f"{end / bound:.2f}x" for end, _, _ in timed),
            "workers exited s": f"{workers_wall:.2f}", "target": f"<= {TARGET_RATIO}x",
            "met": "yes" if ratio <= TARGET_RATIO else "NO",
        }],
        "where the rest goes (the median run)": [
            {"measure": "queueing to the first member's start (queue command, worker start-up, first fetch)",
             "value": f"{first_start:.2f} s"},
            {"measure": f"each of the {rounds} members a worker runs in turn, above the engine's {APPLY_SECONDS:g} s "
                        "(first start to run end, per member)",
             "value": f"{((run_end - first_start) / rounds - APPLY_SECONDS) * 1000:+.0f} ms"},
            {"measure": "hyops", "value": which},
            {"measure": "machine: cores / load avg 1 min (at the end)",
             "value": f"{os.cpu_count()} / {os.getloadavg()[0]:.2f}"},
        ],
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import print_result  # type: ignore[import-not-found]

    print_result(run())
