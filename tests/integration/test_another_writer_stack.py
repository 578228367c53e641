"""Another writer, seen from the stack (issue 44 items 5 and 6, docs/stacks.md: Resume,
docs/recovery.md: Another writer).

- An object deleted in the cloud's console (a writer too): `reconcile --stack` reported the
  drift, then `stack apply --resume` skipped the member as "ok, nothing changed" and the stack
  went green over a missing vm.
- A teammate's raw apply in a member: `hyops status` said so, while `stack status`, its
  JUnit, its markdown and the report said ok.
- A skip vouches only for what it compared: its line and the run report say what it did not.

Real engine and sim provider; the teammate's engine is run by the test, in the member's folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import findings
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


def _vms(h: Hyops) -> set[str]:
    return {o["id"] for o in h.sim_objects() if o["type"] == "sim_vm"}


@pytest.mark.both_stores  # what reconcile saw reaches the resume through the shared store too
def test_resume_applies_a_member_whose_object_reconcile_saw_deleted_outside_hyops(applied: StackEnv) -> None:
    """The vm deleted in the console: reconcile --stack saw it; --resume skipped the vm anyway."""
    h = applied.hyops
    [vm] = _vms(h)
    assert h("sim", "rm", vm).returncode == 0
    code, report = _reconcile_stack(applied)
    assert code == 3 and "drift" in findings(report, "demo/vm"), report

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


def test_stack_status_names_a_member_whose_state_another_writer_changed(applied: StackEnv, tmp_path: Path) -> None:
    """A raw apply in the network member: `hyops status` said so; `stack status` (text, JSON,
    JUnit, markdown), reconcile --stack and the report now say it for that member."""
    h = applied.hyops
    net = h.record("demo/network")["resources"]["sim_network.this"]["id"]
    _engine(h, applied.directory / "network", "apply", "-auto-approve", "-input=false", "-var", "cidr=10.9.0.0/16")

    junit = tmp_path / "status.xml"
    out = applied.stack("status", STACK, "--json", "--junit", str(junit))

    assert out.returncode == 3, out.stdout + out.stderr
    by_name = members(json.loads(out.stdout))
    written = by_name["network"]["state_written_outside"]
    assert written["changed"] == [{"address": "sim_network.this", "id": net}], written
    assert any("state_written_outside" in why for why in by_name["network"]["uncertain"]), by_name["network"]
    assert all("state_written_outside" not in m for n, m in by_name.items() if n != "network"), by_name
    [case] = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "network"]
    assert case.find("failure") is not None and "state_written_outside" in case.find("failure").get("message", "")
    text = applied.stack("status", STACK)
    assert text.returncode == 3 and "state_written_outside" in text.stdout, text.stdout
    markdown = applied.stack("status", STACK, "--format", "markdown")
    assert markdown.returncode == 3 and "written outside hyops since run" in markdown.stdout, markdown.stdout

    code, report = _reconcile_stack(applied)
    assert code == 3 and "state_written_outside" in findings(report, "demo/network"), report
    page = tmp_path / "report.html"
    assert h("report", STACK, "--html", str(page), "--no-reconcile").returncode == 0
    html = page.read_text()
    assert 'data-member="network"' in html and 'data-finding="state_written_outside"' in html


def test_stack_status_says_it_did_not_compare_a_state_it_cannot_read_without_the_engine(
        stack_env: StackEnv) -> None:
    """A member whose state sits behind a backend (a `local` one that names its file: every
    checkout's engine reads that file): status cannot read it cheaply, and says so. (A
    `backend "local" {}` naming no file keeps the folder's own file, compared as without one.)"""
    (stack_env.directory / "network" / "backend.tf").write_text(
        'terraform {\n  backend "local" {\n    path = "network.tfstate"\n  }\n}\n')
    assert stack_env.stack("apply", STACK).returncode == 0

    out = stack_env.stack("status", STACK, "--json")

    assert out.returncode == 0, out.stdout + out.stderr
    by_name = members(json.loads(out.stdout))
    assert "reconcile compares it" in by_name["network"]["state_not_read"], by_name["network"]
    assert all("state_not_read" not in m for n, m in by_name.items() if n != "network"), by_name
    text = stack_env.stack("status", STACK)
    assert "state not compared with the record: network:" in text.stdout, text.stdout
    resumed = stack_env.stack("apply", STACK, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "not compared: its state (not a local file" in members(stack_env.report())["network"][
        "compared"]
