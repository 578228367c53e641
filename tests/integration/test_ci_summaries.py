"""What CI shows after a red stack run, on the real engine and the sim cloud: the JUnit file
of `stack apply --junit` (read back with xml.etree) and the `--format markdown` tables of
`stack status`, `reconcile --stack` and `status --all` (parsed back into cells)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, members
from tests.readers import code_spans, parse_mermaid, parse_table, plain

pytestmark = pytest.mark.integration

VM_FAILS = [{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}]


def cases(path: Path) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}


def test_a_red_stack_apply_still_writes_its_junit_with_the_failure_and_the_skipped(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file(VM_FAILS)
    junit = stack_env.hyops.workdir / "reports" / "junit.xml"

    result = stack_env.stack("apply", "stack/stack.yml", "--junit", str(junit))

    assert result.returncode == 1, result.stderr
    found = cases(junit)
    assert list(found) == ["network", "vm", "config", "health"]
    assert {c.get("classname") for c in found.values()} == {"demo"}
    assert found["network"].find("failure") is None and found["network"].find("skipped") is None
    (failure,) = found["vm"].findall("failure")
    assert failure.get("message") == members(stack_env.report())["vm"]["error"]
    assert "fail_after_create" in failure.get("message", "")
    for name in ("config", "health"):
        assert found[name].find("skipped").get("message") == "blocked by vm"
    assert junit.stat().st_mode & 0o777 == 0o600


def test_a_refused_stack_run_writes_one_failing_case(
    stack_env: StackEnv, tmp_path: Path
) -> None:
    record = stack_env.hyops.record_path("demo/vm")
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"schema_version": 1, "module_ref": "demo/vm", "status": "running",
                                  "run_id": "apply-1", "updated_at": "2026-01-01T00:00:00Z"}))
    junit = tmp_path / "junit.xml"

    result = stack_env.stack("apply", "stack/stack.yml", "--junit", str(junit))

    assert result.returncode == 4, result.stderr
    (case,) = cases(junit).values()
    assert case.get("name") == "(preflight)"
    assert "member vm" in case.find("failure").get("message", "")


def test_after_a_red_stack_the_markdown_summaries_say_why_and_what_to_run(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file(VM_FAILS)
    applied = stack_env.stack("apply", "stack/stack.yml", "--format", "markdown")
    assert applied.returncode == 1

    status = stack_env.stack("status", "stack/stack.yml", "--format", "markdown")
    reconcile = stack_env.hyops("reconcile", "--stack", "stack/stack.yml", "--format", "markdown")
    records = stack_env.hyops("status", "--all", "--format", "markdown")

    assert status.returncode == 0, status.stderr
    rows = {plain(r["Member"]): r for r in parse_table(status.stdout.splitlines())}
    assert {m: plain(r["Status"]) for m, r in rows.items()} == {
        "network": "ok", "vm": "error", "config": "pending", "health": "pending"}
    assert "fail_after_create" in plain(rows["vm"]["Why"])
    assert "hyops stack apply stack/stack.yml --resume" in code_spans(rows["vm"]["Next action"])
    assert plain(rows["config"]["Why"]) == "blocked by vm (error)"

    assert reconcile.returncode == 3, reconcile.stderr
    vm_rows = [r for r in parse_table(reconcile.stdout.splitlines()) if plain(r["Module"]) == "demo/vm"]
    assert vm_rows and all(plain(r["Status"]) == "error" for r in vm_rows)
    assert any(plain(r["Why"]).startswith("partial_apply: ") for r in vm_rows)
    assert all(s.startswith("hyops ") for r in vm_rows for s in code_spans(r["Next action"]))

    # each stack summary draws the stack above its table: a node per member, its status its class
    red = {"network": "ok", "vm": "error", "config": "pending", "health": "pending"}
    for summary in (applied.stdout, status.stdout, reconcile.stdout):
        lines = summary.splitlines()
        flow = parse_mermaid(lines[lines.index("```mermaid") + 1: lines.index("```")])
        assert {flow["nodes"][n][0].split(" (")[0]: c for n, c in flow["classes"].items()} == red, summary
        assert lines.index("```") < min(i for i, line in enumerate(lines) if line.startswith("|"))
    assert {plain(r["Member"]): plain(r["Status"]) for r in parse_table(applied.stdout.splitlines())} == red
    assert applied.stdout.startswith("### hyops stack apply demo\n")

    assert records.returncode == 0, records.stderr
    by_ref = {plain(r["Module"]): r for r in parse_table(records.stdout.splitlines())}
    assert plain(by_ref["demo/vm"]["Status"]) == "error"
    assert code_spans(by_ref["demo/vm"]["Next action"]) == ["hyops reconcile stack/vm --ref demo/vm"]
