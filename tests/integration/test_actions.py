"""Actions in the record, on the real engine and the sim's `sim_vm_restart` (issue 48, item 2).

Terraform >= 1.14 runs an `action` block after its resource's create (`action_trigger`) or on
`apply -invoke=ADDR`; an action changes no state. On the modern engine (HYOPS_MODERN_ENGINE:
1.15.5 in `make test`; also run on 1.14.9):
- an action that fails after its vm's create leaves the record `error`, the vm `complete`, and
  the action named in `hyops status --json`'s `actions`; reconcile says `action_failed` (no
  `partial_apply`), `--write` does not settle it `ok`, and its one command, pasted as printed,
  invokes the action alone: one vm in the cloud, restarted once, the record `ok`, reconcile quiet;
- an `apply -invoke` records its invocation though the state does not change: `ok` when the
  action completed, `error` (never "refused") when it failed.
The recording rules are unit-tested from a written stream in tests/unit/test_actions.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, findings, paste, reconcile, run_ok, write_module
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

ACTIONS_FROM = (1, 14)
RESTART = "action.sim_vm_restart.r"
REF = "acts"
VM_WITH_RESTART = SIM_HEADER + """
resource "sim_network" "net" {
  name = "acts-net"
}
resource "sim_vm" "vm" {
  name       = "acts-vm"
  network_id = sim_network.net.id
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.sim_vm_restart.r]
    }
  }
}
action "sim_vm_restart" "r" {
  config {
    vm_id = sim_vm.vm.id
  }
}
"""
FAIL_RESTART = {"type": "sim_vm_restart", "op": "invoke", "mode": "fail"}


@pytest.fixture
def actions_hyops(modern_hyops: Hyops) -> Hyops:
    release = engine_release(modern_hyops.engine) or ()
    if release < ACTIONS_FROM:
        pytest.skip(f"actions need Terraform >= 1.14; the modern engine is {'.'.join(map(str, release))}")
    return modern_hyops


def _status(h: Hyops, module: Path) -> dict[str, Any]:
    doc = json.loads(run_ok(h, "status", str(module), "--ref", REF, "--json").stdout)
    assert isinstance(doc, dict)
    return doc


def _restarts(h: Hyops) -> list[dict[str, Any]]:
    """The restarts the cloud did (calls.jsonl: op invoke with the vm's id, no fault)."""
    return [c for c in h.sim_calls() if c["op"] == "invoke" and c["fault"] is None]


def _restart_failed(h: Hyops, faults_file: Callable[..., Path]) -> Path:
    """The vm with its restart, applied while the restart fails: exit 1, the vm created."""
    module = write_module(h, VM_WITH_RESTART)
    faults_file([FAIL_RESTART])
    run_ok(h, "apply", str(module), "--ref", REF, expect=1)
    return module


def test_an_action_that_fails_after_create_is_finished_by_the_advice_with_one_object(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    h = actions_hyops
    module = _restart_failed(h, faults_file)

    doc = _status(h, module)
    [vm] = [o["id"] for o in h.sim_objects() if o["type"] == "sim_vm"]
    assert doc["status"] == "error"
    assert {a: (e["status"], e.get("id")) for a, e in doc["resources"].items() if a == "sim_vm.vm"} == {
        "sim_vm.vm": ("complete", vm)}
    assert doc["resources"]["sim_network.net"]["status"] == "complete"
    [row] = doc["actions"]
    assert set(row) == {"address", "trigger", "outcome", "error"}
    assert (row["address"], row["trigger"], row["outcome"]) == (RESTART, "sim_vm.vm after_create", "error")
    assert "injected fault fail" in row["error"]
    assert _restarts(h) == []
    [result] = (h.runtime_root / "runs" / REF).glob("apply-*/result.json")
    assert json.loads(result.read_text())["actions"] == doc["actions"]  # the run folder keeps them too

    code, report = reconcile(h, str(module), "--ref", REF)
    assert code == 3
    found = findings(report, REF)
    assert set(found) == {"action_failed"}
    advice = found["action_failed"]
    assert advice["next_actions"] == [f"hyops apply modules/m --ref {REF} -- -invoke={RESTART}"]
    assert advice["alternatives"] == [] and advice["addresses"] == ["sim_vm.vm"]
    run_ok(h, "reconcile", str(module), "--ref", REF, "--write", expect=3)
    assert h.record(REF)["status"] == "error"  # both plans are quiet, the action still did not finish

    faults_file([])  # the cause, fixed
    paste(h, advice["next_actions"][0])

    assert [(o["type"], o["id"]) for o in h.sim_objects() if o["type"] == "sim_vm"] == [("sim_vm", vm)]
    assert len(h.sim_objects()) == 2  # the network and the vm: nothing re-created
    assert [c["id"] for c in _restarts(h)] == [vm]
    after = _status(h, module)
    assert after["status"] == "ok"
    assert after["actions"] == [{"address": RESTART, "trigger": "invoke", "outcome": "completed", "error": None}]
    assert reconcile(h, str(module), "--ref", REF)[0] == 0


def test_an_invoke_apply_records_the_invocation_though_the_state_does_not_change(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    h = actions_hyops
    module = write_module(h, VM_WITH_RESTART)
    run_ok(h, "apply", str(module), "--ref", REF)
    created = _status(h, module)
    assert created["actions"] == [
        {"address": RESTART, "trigger": "sim_vm.vm after_create", "outcome": "completed", "error": None}]
    serial = created["state_seen"]["serial"]

    run_ok(h, "apply", str(module), "--ref", REF, "--", f"-invoke={RESTART}")

    invoked = _status(h, module)
    assert invoked["status"] == "ok"
    assert invoked["actions"] == [{"address": RESTART, "trigger": "invoke", "outcome": "completed", "error": None}]
    assert invoked["state_seen"]["serial"] == serial  # the state did not change
    assert len(_restarts(h)) == 2

    faults_file([FAIL_RESTART])
    run_ok(h, "apply", str(module), "--ref", REF, "--", f"-invoke={RESTART}", expect=1)

    failed = _status(h, module)
    assert failed["status"] == "error" and "last_attempt" not in failed  # it ran: never "refused"
    [row] = failed["actions"]
    assert (row["trigger"], row["outcome"]) == ("invoke", "error")
    assert {e["status"] for e in failed["resources"].values()} == {"complete"}
    assert len(_restarts(h)) == 2


def test_an_action_that_did_not_finish_is_not_forgotten_by_a_later_apply_until_it_is_gone_from_the_configuration(
    actions_hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    h = actions_hyops
    module = _restart_failed(h, faults_file)
    faults_file([])

    run_ok(h, "apply", str(module), "--ref", REF, expect=1)  # nothing to change; the action is still undone

    kept = _status(h, module)
    assert kept["status"] == "error"
    assert [(r["address"], r["outcome"]) for r in kept["actions"]] == [(RESTART, "error")]
    assert _restarts(h) == []
    code, report = reconcile(h, str(module), "--ref", REF)
    assert code == 3 and set(findings(report, REF)) == {"action_failed"}

    (module / "main.tf").write_text(VM_WITH_RESTART.replace("""  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.sim_vm_restart.r]
    }
  }
""", "").replace("""action "sim_vm_restart" "r" {
  config {
    vm_id = sim_vm.vm.id
  }
}
""", ""))
    run_ok(h, "apply", str(module), "--ref", REF)  # the action is no longer asked for

    gone = _status(h, module)
    assert gone["status"] == "ok" and gone.get("actions", []) == []
    assert reconcile(h, str(module), "--ref", REF)[0] == 0
