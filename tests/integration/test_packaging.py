"""hyops installed like any Python CLI: from the sdist and wheel `python -m build` makes.

One test, one fresh venv (about a minute on 2 cores, most of it pip): the sources are copied
to a scratch folder (tests included, so "no tests in the wheel" means something), built into
an sdist and a wheel built from that sdist, and the wheel installed with pip from the package
index as a user would:
- without `[sim]`: the installed `hyops` runs, and `hyops apply` on a sim module exits 2
  with the one line naming `pip install 'hybridops-tf[sim]'`, before any engine runs;
- then, in the same venv, the command that line names (`pip install 'hybridops-tf[sim]'`,
  which keeps the installed wheel and adds `pyvider`): `import hybridops_tf.sim.provider` works,
  `hyops sim install` prints its exports, and `hyops apply` on the sim module creates the
  network (the provider launched from the installed package, not from this checkout).
Skipped, saying why, when `build` is missing or the package index cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.integration.helpers import REPO_ROOT, copy_module

pytestmark = [pytest.mark.integration, pytest.mark.packaging]

FIX = "pip install 'hybridops-tf[sim]'"
TIMEOUT = 600
# What pip and build say when the package index cannot be reached: the test then skips.
_OFFLINE = re.compile(
    r"Failed to establish a new connection|NewConnectionError|Network is unreachable|"
    r"Temporary failure in name resolution|Name or service not known|ProxyError|"
    r"ConnectTimeout|Read timed out", re.I)


def _run(argv: list[str], *, cwd: Path, env: dict[str, str], what: str,
         index: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a step that must pass; `index` steps that fail for want of the index skip."""
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode != 0:
        said = done.stdout + done.stderr
        if index and _OFFLINE.search(said):
            pytest.skip(f"the package index cannot be reached, so {what} cannot be tested: "
                        f"{_OFFLINE.search(said).group(0)}")  # type: ignore[union-attr]
        pytest.fail(f"{what} failed (exit {done.returncode}):\n{said[-4000:]}")
    return done


def _copy_sources(to: Path) -> Path:
    source = to / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    for name in ("hybridops_tf", "tests"):
        shutil.copytree(REPO_ROOT / name, source / name, ignore=ignore)
    return source


def _package_files() -> set[str]:
    return {p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "hybridops_tf").rglob("*.py")
            if "__pycache__" not in p.parts}


def _clean_env(tmp_path: Path) -> dict[str, str]:
    """This environment without anything that would import this checkout or this venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "HYOPS_STORE")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if Path(p) != Path(sys.executable).parent)
    env["HOME"] = env.get("HOME", str(tmp_path))
    return env


def test_the_wheel_installs_and_runs_like_any_python_cli(tmp_path: Path, engine_path: str) -> None:
    pytest.importorskip("build", reason="`python -m build` is missing: `make install` (the test "
                        "extra) installs it")
    env = _clean_env(tmp_path)

    # the sdist, then a wheel built from it: a file the sdist lacks is missing from the wheel
    source = _copy_sources(tmp_path)
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], cwd=tmp_path, env=env,
         what="python -m build", index=True)
    [sdist] = dist.glob("hybridops_tf-*.tar.gz")
    [wheel] = dist.glob("hybridops_tf-*.whl")

    wanted = _package_files()
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert wanted <= in_wheel, f"missing from the wheel: {sorted(wanted - in_wheel)}"
    assert {n for n in in_wheel if n.startswith("hybridops_tf/sim/")} >= {
        "hybridops_tf/sim/__main__.py", "hybridops_tf/sim/provider.py", "hybridops_tf/sim/install.py",
        "hybridops_tf/sim/serve.py", "hybridops_tf/sim/resources.py"}
    strays = sorted(n for n in in_wheel if not n.startswith(("hybridops_tf/", "hybridops_tf-")))
    assert not strays, f"the wheel holds more than the package: {strays}"
    assert not [n for n in in_wheel if "tests/" in n or n.startswith("test")]
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert wanted | {"pyproject.toml", "README.md"} <= in_sdist

    # a fresh venv, the wheel without the extra
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=env, what="python -m venv")
    pip, hyops, python = (str(venv / "bin" / name) for name in ("pip", "hyops", "python"))
    _run([pip, "install", "--quiet", str(wheel)], cwd=tmp_path, env=env,
         what="pip install of the wheel", index=True)
    where = _run([python, "-c", "import hybridops_tf; print(hybridops_tf.__file__)"], cwd=tmp_path,
                 env=env, what="import hybridops_tf").stdout.strip()
    assert Path(where).is_relative_to(venv), f"imported from {where}, not from the installed wheel"
    version = _run([hyops, "--version"], cwd=tmp_path, env=env, what="hyops --version").stdout
    assert version.startswith("hyops "), version

    work = tmp_path / "work"
    copy_module("network", work / "modules" / "network")
    run_env = {**env, "HYOPS_ENGINE": engine_path, "HYOPS_RUNTIME_ROOT": str(work / ".hyops"),
               "HYOPS_SIM_ROOT": str(work / "cloud")}
    no_sim = subprocess.run([hyops, "apply", "modules/network"], cwd=work, env=run_env,
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert no_sim.returncode == 2, no_sim.stdout + no_sim.stderr
    errors = [line for line in no_sim.stderr.splitlines() if line.startswith("hyops: error:")]
    assert len(errors) == 1 and FIX in errors[0], no_sim.stderr
    assert not (work / "modules" / "network" / ".terraform").exists(), "the engine ran"

    # the same venv with the extra, by the very command the error names (hybridops-tf is on
    # no index: pip keeps the installed one and adds the extra's packages); then the provider
    # runs from the installed package
    fix = shlex.split(errors[0].rpartition(": ")[2])
    assert fix[:2] == ["pip", "install"], errors[0]
    _run([pip, "install", "--quiet", *fix[2:]], cwd=tmp_path, env=env,
         what=f"`{shlex.join(fix)}` in the venv", index=True)
    _run([python, "-c", "import hybridops_tf.sim, hybridops_tf.sim.provider"], cwd=tmp_path, env=env,
         what="import hybridops_tf.sim.provider")
    exports = _run([hyops, "sim", "install"], cwd=work, env=run_env, what="hyops sim install").stdout
    [sim_python] = [line for line in exports.splitlines() if line.startswith("export HYOPS_SIM_PYTHON=")]
    assert Path(sim_python.partition("=")[2].strip("'")).is_relative_to(venv), exports
    assert "TF_CLI_CONFIG_FILE=" in exports
    _run([hyops, "apply", "modules/network"], cwd=work, env=run_env, what="hyops apply with [sim]")
    listed = _run([hyops, "sim", "ls", "--json"], cwd=work, env=run_env, what="hyops sim ls").stdout
    assert [o["type"] for o in json.loads(listed)["objects"]] == ["sim_network"]
