"""Scale of the stack scheduler: a 500-member graph with a stand-in for each member's run.

In-process, no engine runs: `operation.run` (one member's whole module contract) is replaced
by a stand-in that returns an `ok` outcome with the member's output at once, so every
second left is hyops's own: load_stack (YAML, each module's variables), the preflight
(every record read, every lock probed, the engine's `version -json` once, from a stand-in
shell script), the scheduler loop on the thread pool, the wiring of each member's inputs from
its upstream's outputs, and the report written. Three shapes of SIZE members, at parallelism
8: layered (LAYERS wide layers, each member on two of the layer before), wide (one root,
the rest on it) and a chain (each on the one before). The pure graph.Scheduler loop on the
same graph is timed too (no threads). The stack is loaded as the CLI does, with the runtime
root's HCL cache: cold (the first run, every module parsed) and warm (every later run).
Target: load + run < 2 s for each shape. A last row (HYOPS_BENCH_SCALE_CLI=0 drops it) runs
the whole `hyops stack apply` process on the layered graph with bench_stack's stand-in
engine at 0 s per apply: every member's full contract and its engine processes; target
< 30 s at 500 members (issue 37).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from hybridops_tf.operation import steps
from hybridops_tf.operation.request import ModuleRequest, Outcome
from hybridops_tf.record.lifecycle import MemberStatus, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack import graph
from hybridops_tf.stack.loader import load_stack
from hybridops_tf.stack.runner import StackRequest, run_stack

SIZE = int(os.environ.get("HYOPS_BENCH_SCALE_MEMBERS", "500"))
LAYERS = 10
PARALLELISM = 8
TARGET_SECONDS = 2.0
CLI_TARGET_SECONDS = 30.0  # issue 37: the whole process at SIZE members
CLI = os.environ.get("HYOPS_BENCH_SCALE_CLI", "1") != "0"  # the whole-process row (slow: ~1 min)
TITLE = f"stack scheduling at {SIZE} members, stand-in member runs (in-process, no engine)"

VERSION_ENGINE = """#!/bin/sh
case "$*" in
  *version*) echo '{"terraform_version":"1.6.0","platform":"linux_amd64","provider_selections":{}}' ;;
  *) echo "bench_scale engine: only version is expected, got: $*" >&2; exit 1 ;;
esac
"""
MODULE_TF = 'variable "upstream" {\n  type    = string\n  default = ""\n}\noutput "id" {\n  value = "x"\n}\n'


def layered(n: int) -> dict[str, tuple[str, ...]]:
    width = max(1, n // LAYERS)
    layers = [[f"l{d}-m{i}" for i in range(width)] for d in range(n // width)]
    deps: dict[str, tuple[str, ...]] = {}
    for d, layer in enumerate(layers):
        for i, name in enumerate(layer):
            before = layers[d - 1] if d else []
            deps[name] = tuple(sorted({before[i % width], before[(i + 1) % width]})) if before else ()
    return deps


def wide(n: int) -> dict[str, tuple[str, ...]]:
    return {"root": (), **{f"child{i}": ("root",) for i in range(1, n)}}


def chain(n: int) -> dict[str, tuple[str, ...]]:
    return {f"link{i}": ((f"link{i - 1}",) if i else ()) for i in range(n)}


SHAPES: dict[str, Callable[[int], dict[str, tuple[str, ...]]]] = {"layered": layered, "wide": wide, "chain": chain}


def _workspace(base: Path, deps: dict[str, tuple[str, ...]]) -> Path:
    """One module directory shared by every member would serialize them (a workspace
    group), so each member gets its own."""
    lines = ["stack: scale", "modules:"]
    for name, ups in deps.items():
        (base / name).mkdir(parents=True)
        (base / name / "main.tf").write_text(MODULE_TF)
        lines += [f"  - name: {name}", f"    path: {name}"]
        if ups:
            lines += [f"    depends_on: [{', '.join(ups)}]", f"    inputs_from: {{upstream: {ups[0]}.id}}"]
    (base / "stack.yml").write_text("\n".join(lines) + "\n")
    engine = base / "engine.sh"
    engine.write_text(VERSION_ENGINE)
    engine.chmod(0o755)
    return base / "stack.yml"


def _stand_in(req: ModuleRequest) -> Outcome:
    rec = OperationRecord(module_ref=req.target.ref, status=Status.OK, run_id="bench-stand-in",
                          outputs={"id": f"{req.target.ref}-id"})
    return Outcome(record=rec, exit_code=0, run_id="bench-stand-in", run_dir=None, message="")


def _pure_scheduler(deps: dict[str, tuple[str, ...]]) -> float:
    start = time.perf_counter()
    sched = graph.Scheduler(deps, parallelism=PARALLELISM)
    while not sched.done:
        for name in sched.start():
            sched.finish(name, MemberStatus.OK)
    return time.perf_counter() - start


def _stack_run(deps: dict[str, tuple[str, ...]]) -> tuple[float, float, float, dict[str, Any]]:
    """load_stack cold (no HCL cache yet), load_stack warm (as every later run), run_stack."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        stack_file = _workspace(base, deps)
        root = base / ".hyops"
        runtime = Runtime(root, str(base / "engine.sh"))  # as the CLI builds it, once
        runtime.ensure_root()
        cache = runtime.hcl_cache()  # as the CLI loads a stack
        t0 = time.perf_counter()
        load_stack(stack_file, cache)
        t1 = time.perf_counter()
        stack = load_stack(stack_file, cache)
        t2 = time.perf_counter()
        with mock.patch.object(steps, "run", _stand_in):
            result = run_stack(StackRequest(stack=stack, command="apply", runtime=runtime,
                                            parallelism=PARALLELISM))
        t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, result.report.counts()


def _cli_run(deps: dict[str, tuple[str, ...]]) -> tuple[float, int]:
    """The whole `hyops stack apply` process with bench_stack's stand-in engine at 0 s per
    apply: every member's full contract (record, lock, run folder, fsyncs, engine processes)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_stack import FAKE_ENGINE  # type: ignore[import-not-found]

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        stack_file = _workspace(base, deps)
        (base / "engine.sh").write_text(FAKE_ENGINE)
        env = dict(os.environ, HYOPS_ENGINE=str(base / "engine.sh"), HYOPS_RUNTIME_ROOT=str(base / ".hyops"),
                   BENCH_APPLY_SECONDS="0")
        hyops = str(Path(sys.executable).with_name("hyops"))
        start = time.perf_counter()
        proc = subprocess.run([hyops, "stack", "apply", str(stack_file), "--parallelism", str(PARALLELISM)],
                              cwd=base, env=env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"stack apply failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed, len(deps)


def _met(seconds: float) -> str:
    return "yes" if seconds < TARGET_SECONDS else "NO"


def run() -> dict[str, list[dict[str, object]]]:
    rows: list[dict[str, object]] = []
    for shape, build in SHAPES.items():
        deps = build(SIZE)
        pure = _pure_scheduler(deps)
        cold_s, warm_s, run_s, counts = _stack_run(deps)
        cold, warm = cold_s + run_s, warm_s + run_s
        rows.append({
            "shape": shape, "members": len(deps), "parallelism": PARALLELISM,
            "pure scheduler s": f"{pure:.3f}", "load cold s": f"{cold_s:.2f}", "load warm s": f"{warm_s:.2f}",
            "run_stack s": f"{run_s:.2f}", "overhead cold s": f"{cold:.2f}", "overhead warm s": f"{warm:.2f}",
            "warm per member ms": f"{warm / len(deps) * 1000:.1f}", "members ok": counts.get("ok", 0),
            "target": f"< {TARGET_SECONDS:g} s",
            "met cold / warm": f"{_met(cold)} / {_met(warm)}",
        })
    tables = {"in-process: load_stack + run_stack, operation.run stood in (target < 2 s)": rows}
    if CLI:
        wall, n = _cli_run(layered(SIZE))
        title = ("whole `hyops stack apply` process, bench_stack's stand-in engine at 0 s "
                 f"(target < {CLI_TARGET_SECONDS:g} s)")
        tables[title] = [
            {"shape": "layered", "members": n, "parallelism": PARALLELISM, "wall s": f"{wall:.2f}",
             "per member ms": f"{wall / n * 1000:.1f}", "target": f"< {CLI_TARGET_SECONDS:g} s",
             "met": "yes" if wall < CLI_TARGET_SECONDS else "NO"}]
    return tables


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import print_result  # type: ignore[import-not-found]

    print_result(run())
