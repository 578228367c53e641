"""Another writer, seen from the stack (issue 44 items 5 and 6, docs/stacks.md: Resume,
docs/recovery.md: Another writer).

- An object deleted in the cloud's console (a writer too): `reconcile --stack` reported the
  drift, then `stack apply --resume` skipped the member as "ok, nothing changed" and the stack
  went green over a missing vm.
- A skip vouches only for what it compared: its line and the run report say what it did not.

Real engine and sim provider; the teammate's engine is run by the test, in the member's folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.hyops_cli import Hyops
from tests.integration.stacks import StackEnv, members, statuses

pytestmark = pytest.mark.integration

STACK = "stack/stack.yml"


def _engine(h: Hyops, module: Path, *args: str) -> None:
    """The engine itself in the module, as a teammate runs it (hyops's CLI config for the sim)."""
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run([h.engine, *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def _reconcile_stack(env: StackEnv) -> tuple[int, dict[str, Any]]:
    out = env.hyops("reconcile", "--stack", STACK, "--json")
    assert out.returncode in (0, 3), out.stdout + out.stderr
    return out.returncode, json.loads(out.stdout)


def _findings(report: dict[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    [module] = [m for m in report["modules"] if m["module_ref"] == ref]
    return {f["code"]: f for f in module["findings"]}


def _vms(h: Hyops) -> set[str]:
    return {o["id"] for o in h.sim_objects() if o["type"] == "sim_vm"}


def test_resume_applies_a_member_whose_object_reconcile_saw_deleted_outside_hyops(applied: StackEnv) -> None:
    """The vm deleted in the console: reconcile --stack saw it; --resume skipped the vm anyway."""
    h = applied.hyops
    [vm] = _vms(h)
    assert h("sim", "rm", vm).returncode == 0
    code, report = _reconcile_stack(applied)
    assert code == 3 and "drift" in _findings(report, "demo/vm"), report

    result = applied.stack("apply", STACK, "--resume")

    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses(applied.report())["vm"] == "ok", result.stderr
    assert "[vm] apply (reconcile saw its live objects differ from its state" in result.stderr, result.stderr
    assert len(_vms(h)) == 1 and vm not in _vms(h), "the vm was made again"

    # what reconcile saw spoke of the record before that apply: the next resume skips the vm,
    # and says it did not compare the live objects
    again = applied.stack("apply", STACK, "--resume")
    assert again.returncode == 0, again.stderr
    skipped = members(applied.report())
    assert {m["status"] for m in skipped.values()} == {"skipped"}, skipped
    assert all("state serial" in m["compared"] and "not compared: its live objects" in m["compared"]
               for m in skipped.values()), skipped
    shown = applied.stack("status", STACK, "--json")  # stack status shows what the run report says
    assert shown.returncode == 0 and members(json.loads(shown.stdout))["vm"]["compared"] == skipped["vm"]["compared"]

    # a reconcile that saw no drift since: the skip names that look where there was one
    code, report = _reconcile_stack(applied)
    assert (code, report["consistent"]) == (0, True), report
    third = applied.stack("apply", STACK, "--resume")
    assert third.returncode == 0, third.stderr
    skipped = members(applied.report())
    assert "live objects as reconcile saw them" in skipped["vm"]["compared"], skipped["vm"]
    assert "not compared: its live objects" in skipped["network"]["compared"], skipped["network"]
