"""Real engine: hyops's own CPU share of a no-op apply and of `hyops status` (issue 58, item 2).

hyops as a user installs it (a wheel of this tree in a fresh venv, byte-compiled: bench/installed.py;
the dev venv's `hyops` when no wheel can be built, and the title says which). Each row pairs two
whole processes, run in turn (A B A B ...) after one warm-up, and reads their CPU (user + system)
from the kernel's accounting of each finished process and everything it waited for (the engine,
the relay): a no-op `hyops apply` of a module of two `terraform_data` (no provider: only hyops and
the engine are measured) against the raw engine's `apply -auto-approve` of a copy of it, and
`hyops status --all` (a root holding that record, printed into a pipe) against a bare interpreter
(`python -c pass`, the same Python). Columns: the medians in ms, the median of the per-pair ratios,
hyops's own share (median of the per-pair differences). `terraform_data` needs Terraform >= 1.4:
the engine is HYOPS_BENCH_MODERN_ENGINE, else the `make engines` Terraform 1.15.5, else the rows
are left out, saying so. HYOPS_BENCH_OWN_PAIRS pairs (default 15). With valgrind on PATH, each
row also counts the instructions of hyops's own process once (bench/instructions.py: callgrind,
the engine and the relay not counted), and of the bare interpreter for `status`: the same count
on a busy machine as on a quiet one, so a lever is judged by it where CPU time is noise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run.py loads benches by file path
import instructions  # type: ignore[import-not-found]  # noqa: E402
from installed import installed_python  # type: ignore[import-not-found]  # noqa: E402
from machine import machine_row  # type: ignore[import-not-found]  # noqa: E402

KIND = "real engine"
PAIRS = int(os.environ.get("HYOPS_BENCH_OWN_PAIRS", "15"))
REPO = Path(__file__).resolve().parent.parent
MODULE = """resource "terraform_data" "a" {
  input = "a"
}

resource "terraform_data" "b" {
  input = "b"
}
"""


def _engine() -> str | None:
    chosen = os.environ.get("HYOPS_BENCH_MODERN_ENGINE") or str(REPO / ".engines" / "1.15.5" / "bin" / "terraform")
    return chosen if os.access(chosen, os.X_OK) else None


def _cpu_ms(argv: list[str], env: Mapping[str, str], cwd: Path) -> float:
    """The CPU (user + system) of one whole process and everything it waited for, in ms."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def _paired(a: list[str], b: list[str], env: Mapping[str, str], cwd: Path) -> tuple[list[float], list[float]]:
    _cpu_ms(a, env, cwd), _cpu_ms(b, env, cwd)  # warm-up: the page cache, the engine's first run
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(PAIRS):
        ours.append(_cpu_ms(a, env, cwd))
        theirs.append(_cpu_ms(b, env, cwd))
    return ours, theirs


def _row(what: str, against: str, ours: list[float], theirs: list[float], counted: str = "-") -> dict[str, object]:
    return {"command": what, "against": against, "pairs": len(ours),
            "hyops cpu ms": f"{statistics.median(ours):.0f}", "baseline cpu ms": f"{statistics.median(theirs):.0f}",
            "ratio": f"{statistics.median(o / t for o, t in zip(ours, theirs, strict=True)):.2f}",
            "own share ms": f"{statistics.median(o - t for o, t in zip(ours, theirs, strict=True)):.0f}",
            "instructions (M), hyops's process": counted}


def _counted(argv: list[str], env: Mapping[str, str], cwd: Path, baseline: list[str] | None = None) -> str:
    """Instructions of `argv`'s own process (and of `baseline`'s), in millions; "-" without valgrind."""
    if not instructions.available():
        return "-"
    ours = instructions.instructions(argv, dict(env), cwd) / 1e6
    if baseline is None:
        return f"{ours:.0f}"
    theirs = instructions.instructions(baseline, dict(env), cwd) / 1e6
    return f"{ours:.0f} (baseline {theirs:.0f})"


TITLE = "hyops's own CPU share: a no-op apply against the raw engine, status against a bare interpreter"


def run() -> dict[str, list[dict[str, object]]]:
    engine = _engine()
    machine = machine_row("start")
    if engine is None:
        return {"left out": [{"why": "no Terraform >= 1.4 for terraform_data: `make engines`, or set "
                                     "HYOPS_BENCH_MODERN_ENGINE"}]}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        python = installed_python(work)
        how = "from a wheel installed in a fresh venv"
        if python is None:
            python, how = Path(sys.executable), "from the dev venv (no wheel could be built)"
        hyops = str(python.with_name("hyops"))
        mine, raw = work / "mine", work / "raw"
        for module in (mine, raw):
            module.mkdir()
            (module / "main.tf").write_text(MODULE)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "HYOPS_"))}
        env.update(HYOPS_ENGINE=engine, HYOPS_RUNTIME_ROOT=str(work / "rt"))
        for argv in ([hyops, "apply", "mine"], [engine, "-chdir=raw", "apply", "-auto-approve", "-input=false"]):
            subprocess.run(argv, env=env, cwd=work, check=True, stdin=subprocess.DEVNULL, capture_output=True)
        rows = [
            _row("hyops apply (no-op)", "raw apply -auto-approve",
                 *_paired([hyops, "apply", "mine"],
                          [engine, "-chdir=raw", "apply", "-auto-approve", "-input=false"], env, work),
                 _counted([hyops, "apply", "mine"], env, work)),
            _row("hyops status --all", "python -c pass",
                 *_paired([hyops, "status", "--all"], [str(python), "-c", "pass"], env, work),
                 _counted([hyops, "status", "--all"], env, work, [str(python), "-c", "pass"])),
        ]
    return {f"{how}, Terraform at {engine}": rows, "machine": [machine, machine_row("end")]}


if __name__ == "__main__":
    from run import print_result  # type: ignore[import-not-found]

    print_result(run())
