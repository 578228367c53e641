"""Where the apply overhead goes: the fixed start-up costs hyops pays before its own work.

Each row is the median wall time of a fresh process, interleaved like the apply bench, so
the apply overhead can be read against them: the interpreter, the library every command must
load before the engine may start (click parses the command line; the module lock is
base/flock.py's and loads no library), the CLI up to `--version`, and a read-only command.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TITLE = "fixed start-up costs inside the apply overhead (fresh process each, median)"
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "15"))


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def run() -> list[dict[str, object]]:
    python = sys.executable
    hyops = str(Path(python).with_name("hyops"))
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HYOPS_RUNTIME_ROOT=str(Path(tmp) / ".hyops"))
        probes = {
            "interpreter (python -c pass)": [python, "-c", "pass"],
            "+ import click": [python, "-c", "import click"],
            "hyops --version": [hyops, "--version"],
            "hyops status --all (no records)": [hyops, "status", "--all"],
        }
        times: dict[str, list[float]] = {name: [] for name in probes}
        for argv in probes.values():
            _timed(argv, env)  # warm the page cache
        for _ in range(ROUNDS):
            for name, argv in probes.items():
                times[name].append(_timed(argv, env))
    base = statistics.median(times["interpreter (python -c pass)"]) * 1000
    rows: list[dict[str, object]] = []
    for name, samples in times.items():
        ms = statistics.median(samples) * 1000
        rows.append({"process": name, "rounds": ROUNDS, "median ms": f"{ms:.0f}",
                     "above the bare interpreter ms": "" if ms == base else f"{ms - base:.0f}"})
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import table  # type: ignore[import-not-found]

    print(table(run()))
