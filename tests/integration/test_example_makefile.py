"""examples/Makefile runs the hyops command each target names, and fails the way make users
expect: a missing MODULE=/STACK= is a one-line make error, and hyops's exit code stops make.

`make -n` shows each target's command; one real `make apply` runs the console script against
the real engine and the simulated cloud with this test's runtime root (tests/integration
fixtures, passed through the environment as a CI job would).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import HYOPS, Hyops

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "Makefile"
MAKE = shutil.which("make")
# An outer `make test` passes its flags down; the example must be read on its own.
_MAKE_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR")

pytestmark = pytest.mark.skipif(MAKE is None, reason="GNU make is not installed")


def make(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in (env or os.environ).items() if k not in _MAKE_ENV}
    return subprocess.run([str(MAKE), "--no-print-directory", "-f", str(EXAMPLE), *args], cwd=cwd,
                          env=clean, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("target, variables, command", [
    ("plan", ["MODULE=modules/network"], "hyops plan modules/network"),
    ("apply", ["MODULE=modules/network", "ARGS=--var size=small"],
     "hyops apply modules/network --var size=small"),
    ("destroy", ["MODULE=modules/network"], "hyops destroy modules/network"),
    ("reconcile", [], "hyops reconcile --all"),
    ("reconcile", ["MODULE=modules/network"], "hyops reconcile modules/network"),
    ("reconcile", ["STACK=stack.yml"], "hyops reconcile --stack stack.yml"),
    ("status", [], "hyops status --all"),
    ("status", ["MODULE=modules/network"], "hyops status modules/network"),
    ("stack-apply", ["STACK=stack.yml", "ARGS=--resume"], "hyops stack apply stack.yml --resume"),
    ("stack-destroy", ["STACK=stack.yml"], "hyops stack destroy stack.yml"),
    ("stack-status", ["STACK=stack.yml"], "hyops stack status stack.yml"),
])
def test_each_target_runs_its_hyops_command(tmp_path: Path, target: str, variables: list[str],
                                            command: str) -> None:
    result = make("-n", target, *variables, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [command.split()]


def test_hyops_can_be_overridden(tmp_path: Path) -> None:
    result = make("-n", "plan", "MODULE=m", "HYOPS=/opt/bin/hyops --engine tofu", cwd=tmp_path)

    assert result.stdout.split() == ["/opt/bin/hyops", "--engine", "tofu", "plan", "m"]


@pytest.mark.parametrize("target, variable", [
    ("plan", "MODULE"), ("apply", "MODULE"), ("destroy", "MODULE"),
    ("stack-apply", "STACK"), ("stack-destroy", "STACK"), ("stack-status", "STACK"),
])
def test_a_missing_variable_is_a_one_line_make_error(tmp_path: Path, target: str,
                                                    variable: str) -> None:
    result = make(target, cwd=tmp_path)

    assert result.returncode == 2
    assert result.stdout == ""  # nothing ran
    [line] = result.stderr.splitlines()
    assert "***" in line and f"{variable} is not set" in line and f"make {target} {variable}=" in line


def test_apply_on_the_sim_cloud_through_make(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")

    result = make("apply", "MODULE=modules/network", f"HYOPS={HYOPS}", cwd=hyops.workdir,
                  env=hyops.env())

    assert result.returncode == 0, result.stdout + result.stderr
    assert hyops.record("network")["status"] == "ok"
    assert [o["type"] for o in hyops.sim_objects()] == ["sim_network"]


def test_a_failing_hyops_stops_make_with_its_exit_code(hyops: Hyops, pair: Path) -> None:
    # No record for a module never applied: `hyops status MODULE` exits 3 and make stops
    # before the next goal.
    result = make("status", "plan", "MODULE=modules/pair", f"HYOPS={HYOPS}",
                  cwd=hyops.workdir, env=hyops.env())

    assert result.returncode == 2  # make's own code for a failed recipe
    assert "Error 3" in result.stderr  # hyops's exit code, as make reports it
    assert " plan " not in result.stdout


def test_a_failed_apply_fails_make(hyops: Hyops, module_copy: Callable[[str], Path],
                                   faults_file: Callable[..., Path]) -> None:
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_before_create"}])

    result = make("apply", "MODULE=modules/network", f"HYOPS={HYOPS}", cwd=hyops.workdir,
                  env=hyops.env())

    assert result.returncode == 2
    assert "Error 1" in result.stderr  # hyops apply's exit code for a failed run
    assert hyops.record("network")["status"] == "error"
