"""hyops without the `[sim]` extra (no `pyvider` package): a sim module fails with one line that
names the fix, before the engine starts; the provider's launcher, run by hand, says the same.

Without the check the engine starts the launcher, the launcher dies on `import pyvider`, and all a
person sees is the engine's "Unrecognized remote plugin message". The `pyvider` package is hidden
here the way a missing one looks to Python: a sitecustomize on PYTHONPATH puts None in
sys.modules["pyvider"], so `import pyvider` raises ModuleNotFoundError and `find_spec("pyvider")` is None,
in hyops and in every process the engine starts (they inherit PYTHONPATH).
(tests/integration/test_packaging.py checks the same with a wheel installed without `[sim]`.)
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

FIX = "pip install 'hybridops-tf[sim]'"


@pytest.fixture
def without_tf(tmp_path: Path) -> dict[str, str]:
    """The environment of a Python that cannot import `pyvider`."""
    site = tmp_path / "no-tf"
    site.mkdir()
    (site / "sitecustomize.py").write_text('import sys\n\nsys.modules["pyvider"] = None  # as if not installed\n')
    return {"PYTHONPATH": str(site)}


def test_apply_on_a_sim_module_without_tf_is_one_line_naming_the_extra_and_runs_nothing(
        hyops: Hyops, module_copy: Callable[[str], Path], without_tf: dict[str, str]) -> None:
    module = module_copy("network")

    out = hyops("apply", str(module), "--ref", "sim/network", env=without_tf)

    assert out.returncode == 2, out.stdout + out.stderr
    errors = [line for line in out.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and FIX in errors[0], out.stderr
    assert "Unrecognized remote plugin message" not in out.stdout + out.stderr
    assert not (module / ".terraform").exists(), "the engine ran (init)"
    assert hyops.record("sim/network") is None


def test_plan_on_a_sim_module_without_tf_is_the_same_usage_error(
        hyops: Hyops, module_copy: Callable[[str], Path], without_tf: dict[str, str]) -> None:
    module = module_copy("network")

    out = hyops("plan", str(module), "--ref", "sim/network", env=without_tf)

    assert out.returncode == 2 and FIX in out.stderr, out.stdout + out.stderr


def test_the_launcher_run_by_hand_without_tf_says_the_same_line(without_tf: dict[str, str]) -> None:
    import os

    out = subprocess.run([sys.executable, "-m", "hybridops_tf.sim"], env={**os.environ, **without_tf},
                         capture_output=True, text=True, timeout=60)

    assert out.returncode != 0
    assert len(out.stderr.strip().splitlines()) == 1 and FIX in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
