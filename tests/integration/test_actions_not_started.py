"""Planned actions that never started (issue 55, item 3), on the real engine and the sim.

Terraform >= 1.14 plans each `after_create` invocation with the create; an apply that stops on
another error (here a lost create: the sim fault `lose_response`) invokes none of them, and no
later plan plans them again once their objects exist. What is checked (HYOPS_MODERN_ENGINE:
1.15.5 in `make test`; also run on 1.14.9):
- the apply records both invocations `not_started` (status --json), reconcile says
  `action_not_started` and never "consistent" while they are, and following its printed
  commands to the letter ends with both restarts done, one vm each, the record `ok`, reconcile
  quiet;
- a plain apply with nothing to change carries them forward: never `ok` over them.
The rows' rules are unit-tested from the written stream in tests/unit/test_actions.py.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.helpers import SIM_HEADER, findings, paste, reconcile, run_ok, write_module
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

ACTIONS_FROM = (1, 14)
REF = "edge"
EDGES = ("edge-c", "edge-d")
RESTARTS = tuple(f'action.sim_vm_restart.r["{edge}"]' for edge in EDGES)
LOST_VM = [{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}]
ROUNDS = 4  # reconcile, then its steps, at most this often: each round settles one kind of finding
EDGE_VMS = SIM_HEADER + """
resource "sim_network" "net" {
  name = "edge-net"
}
resource "sim_vm" "r" {
  for_each   = toset(["edge-c", "edge-d"])
  name       = each.key
  network_id = sim_network.net.id
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.sim_vm_restart.r[each.key]]
    }
  }
}
action "sim_vm_restart" "r" {
  for_each = toset(["edge-c", "edge-d"])
  config {
    vm_id = sim_vm.r[each.key].id
  }
}
"""


@pytest.fixture
def actions_hyops(modern_hyops: Hyops) -> Hyops:
    release = engine_release(modern_hyops.engine) or ()
    if release < ACTIONS_FROM:
        pytest.skip(f"actions need Terraform >= 1.14; the modern engine is {'.'.join(map(str, release))}")
    return modern_hyops


def _status(h: Hyops, module: Path, expect: int = 0) -> dict[str, Any]:
    doc = json.loads(run_ok(h, "status", str(module), "--ref", REF, "--json", expect=expect).stdout)
    assert isinstance(doc, dict)
    return doc


def _restarted(h: Hyops) -> list[str]:
    """The vm ids the cloud restarted (calls.jsonl: op invoke, no fault)."""
    return sorted(str(c["id"]) for c in h.sim_calls() if c["op"] == "invoke" and c["fault"] is None)


def _vms(h: Hyops) -> dict[str, str]:
    return {str(o["name"]): str(o["id"]) for o in h.sim_objects() if o["type"] == "sim_vm"}


def _lost_create_with_actions(h: Hyops, faults_file: Callable[..., Path]) -> Path:
    """The two vms and their restarts applied while one create's answer is lost: exit 1, no
    restart invoked, both vms in the cloud; the lookups find a lost vm through the engine's query."""
    module = write_module(h, EDGE_VMS)
    (h.runtime_root.parent / "hyops.lookups.yml").write_text(yaml.safe_dump(
        {"lookups": {"sim_vm": {"source": "query", "match": ["name"], "complete": True}}}))
    faults_file(LOST_VM)
    run_ok(h, "apply", str(module), "--ref", REF, expect=1)
    faults_file([])
    assert sorted(_vms(h)) == list(EDGES) and _restarted(h) == []
    return module


def test_a_lost_create_leaves_its_planned_restarts_not_started_and_the_printed_recovery_runs_both(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    h = actions_hyops
    module = _lost_create_with_actions(h, faults_file)

    doc = _status(h, module, expect=3)
    assert doc["status"] == "error"
    assert sorted((r["address"], r["trigger"], r["outcome"], r["error"]) for r in doc["actions"]) == [
        (a, f'sim_vm.r["{e}"] after_create', "not_started", None) for a, e in zip(RESTARTS, EDGES, strict=True)]
    table = run_ok(h, "status", str(module), "--ref", REF, expect=3).stdout
    assert all(a in table for a in RESTARTS)

    rounds = []
    for _ in range(ROUNDS):
        code, report = reconcile(h, str(module), "--ref", REF)
        if code == 0:
            break
        found = findings(report, REF)
        assert "action_not_started" in found  # never consistent while they are undone
        rounds.append(sorted(found))
        steps = [step for f in found.values() for step in f["next_actions"]]  # in reconcile's order
        assert steps, f"reconcile gave no step to run: {json.dumps(found, indent=1)}"
        for step in dict.fromkeys(steps):
            paste(h, step, expect=3 if "reconcile" in shlex.split(step)[:2] else 0)
    else:
        pytest.fail(f"still not consistent after {ROUNDS} rounds of the printed steps: {rounds}")

    vms = _vms(h)
    assert sorted(vms) == list(EDGES)  # adopted, never duplicated
    assert _restarted(h) == sorted(vms.values())  # each vm restarted, once
    after = _status(h, module)
    assert after["status"] == "ok"
    assert {(r["address"], r["trigger"], r["outcome"]) for r in after["actions"]} <= {
        (a, "invoke", "completed") for a in RESTARTS}  # the last run's own: nothing left unfinished
    assert "orphan_found" in rounds[0] and rounds[-1] == ["action_not_started"], rounds  # adopted, then invoked


def test_a_plain_apply_with_nothing_to_change_carries_the_not_started_restarts_and_is_never_ok(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    h = actions_hyops
    module = _lost_create_with_actions(h, faults_file)
    run_ok(h, "reconcile", str(module), "--ref", REF, "--write", expect=3)  # adopts the lost vm
    assert h.record(REF)["status"] == "error"  # --write never settles ok over them

    run_ok(h, "apply", str(module), "--ref", REF, expect=1)  # after_create fires for a create only

    kept = _status(h, module)
    assert kept["status"] == "error"
    assert sorted((r["address"], r["outcome"]) for r in kept["actions"]) == [(a, "not_started") for a in RESTARTS]
    assert _restarted(h) == []
    code, report = reconcile(h, str(module), "--ref", REF)
    assert code == 3 and set(findings(report, REF)) == {"action_not_started"}


def test_a_saved_plan_that_stops_records_the_invocations_its_plan_holds(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    """Applying a saved plan prints no planned invocation: the rows come from the plan itself
    (its `show -json` `action_invocations`), as `hyops apply FILE` and a terminal's approval
    apply it."""
    h = actions_hyops
    module = write_module(h, EDGE_VMS)
    plan_file = h.workdir / "edge.tfplan"
    run_ok(h, "plan", str(module), "--ref", REF, "--out", str(plan_file))
    faults_file(LOST_VM)

    run_ok(h, "apply", str(plan_file), expect=1)

    doc = _status(h, module, expect=3)
    assert sorted((r["address"], r["trigger"], r["outcome"]) for r in doc["actions"]) == [
        (a, f'sim_vm.r["{e}"] after_create', "not_started") for a, e in zip(RESTARTS, EDGES, strict=True)]
    assert _restarted(h) == []
