"""Actions in the record (issue 48, item 2), pure: the rows a run's events give, the rule that a
run whose action failed never settles `ok`, the resource an action's failure leaves complete,
`action_failed` and its advice, and the sim's `sim_vm_restart` with its fault. From the written
Terraform 1.14 stream (tests/fixtures/written/terraform-1.14-actions.jsonl) and small inline
lines; the real engine's side is tests/integration/test_actions.py. Each test builds the case
where its rule alone decides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.engine.events import Event, parse_event
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.engine.state import StateSnapshot
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Code
from hybridops_tf.reconcile.rules import Verdict, decide, settled_record
from hybridops_tf.record.action_fold import ActionFold
from hybridops_tf.record.action_settle import with_actions
from hybridops_tf.record.actions import UNREPORTED, ActionOutcome, ActionRow, at_end, did_not_finish, failed
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.sim import actions as sim_actions
from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.faults import FaultsError, parse_rule
from hybridops_tf.sim.store import SimStore
from hybridops_tf.sim.wire import Diagnostics
from tests.unit.reconcile_builders import REF, evidence, plan_with, quiet, record, state

WRITTEN = Path(__file__).resolve().parents[1] / "fixtures" / "written" / "terraform-1.14-actions.jsonl"
REBOOT = "action.sim_reboot.now"
CMD = Commands("hyops", "terraform")
VM = "sim_vm.web"


def _written() -> list[Event]:
    return [parse_event(line) for line in WRITTEN.read_text().splitlines() if line.strip()]


def _hook(kind: str, **extra: object) -> str:
    """One `action_*` line of an `-invoke` run (no lifecycle trigger)."""
    hook = {"action": {"addr": REBOOT, "action_type": "sim_reboot", "action_name": "now"}, "invoke": {}, **extra}
    return json.dumps({"type": kind, "@level": "info", "@message": kind, "hook": hook})


def _ok() -> OperationRecord:
    return record(Status.OK, resources={VM: ("complete", "update", "vm-1")})


# --- the rows -------------------------------------------------------------------------------------------


def test_each_invocation_is_a_row_with_its_trigger_outcome_and_error() -> None:
    fold = ActionFold().feed_all(_written())

    assert fold.rows == [
        ActionRow(REBOOT, "sim_vm.web after_update", ActionOutcome.ERROR, "the vm did not come back"),
        ActionRow(REBOOT, "invoke", ActionOutcome.COMPLETED)]
    assert fold.failed_in_summary == 1
    assert [r.to_dict() for r in fold.rows][1] == {"address": REBOOT, "trigger": "invoke", "outcome": "completed",
                                                   "error": None}


def test_the_planned_invocation_of_the_real_engine_names_its_action_under_action_addr() -> None:
    line = json.dumps({"type": "planned_action_invocation", "invocation": {
        "action_addr": {"addr": "action.sim_vm_restart.r"},
        "lifecycle_trigger": {"triggering_resource": {"addr": "sim_vm.vm"}, "triggering_event": "AfterCreate"}}})
    event = parse_event(line)
    assert (event.action_addr, event.trigger_addr, event.trigger_event) == (  # type: ignore[union-attr]
        "action.sim_vm_restart.r", "sim_vm.vm", "AfterCreate")


def test_an_invocation_started_and_never_reported_finished_stays_invoked_and_unfinished() -> None:
    fold = ActionFold().feed_all([parse_event(_hook("action_start"))])
    assert fold.started
    assert at_end(fold.rows) == [ActionRow(REBOOT, "invoke", ActionOutcome.INVOKED)]
    assert did_not_finish(fold.rows) == fold.rows and UNREPORTED in (failed(fold.rows) or "")


def test_a_planned_invocation_is_a_row_from_the_plan_and_not_started_once_the_run_ended() -> None:
    planned = [e for e in _written() if e.type == "planned_action_invocation"]
    fold = ActionFold().feed_all(planned)
    assert not fold.started
    assert fold.rows == [ActionRow(REBOOT, "sim_vm.web after_update", ActionOutcome.PLANNED)]
    assert at_end(fold.rows) == [ActionRow(REBOOT, "sim_vm.web after_update", ActionOutcome.NOT_STARTED)]


def test_the_rows_survive_the_record_on_disk_with_exactly_their_four_keys() -> None:
    rec = _ok()
    rec.actions = ActionFold().feed_all(_written()).rows
    doc = rec.to_dict()
    assert [set(row) for row in doc["actions"]] == [{"address", "trigger", "outcome", "error"}] * 2
    assert OperationRecord.from_dict(json.loads(json.dumps(doc))).actions == rec.actions
    assert "actions" not in _ok().to_dict()


def test_a_record_with_a_malformed_action_row_is_refused() -> None:
    doc = _ok().to_dict()
    doc["actions"] = [{"address": REBOOT, "trigger": "invoke", "outcome": "maybe", "error": None}]
    with pytest.raises(ValueError, match="actions"):
        OperationRecord.from_dict(doc)


# --- the settle rule ------------------------------------------------------------------------------------


def test_a_run_whose_action_failed_never_settles_ok() -> None:
    settled, succeeded = with_actions(_ok(), ActionFold().feed_all(_written()), Command.APPLY, "hyops reconcile x")

    assert settled.status is Status.ERROR and not succeeded
    assert REBOOT in (settled.last_error or "") and "the vm did not come back" in (settled.last_error or "")
    assert settled.resources is not None and settled.resources[VM].status == "complete"


def test_a_failed_count_in_the_summary_alone_keeps_the_run_from_ok() -> None:
    only_summary = [e for e in _written() if e.type == "change_summary"]
    settled, succeeded = with_actions(_ok(), ActionFold().feed_all(only_summary), Command.APPLY, "r")
    assert settled.status is Status.ERROR and not succeeded


def test_a_run_whose_actions_completed_stays_ok_with_its_rows() -> None:
    fold = ActionFold().feed_all([parse_event(_hook("action_start")), parse_event(_hook("action_complete"))])
    settled, succeeded = with_actions(_ok(), fold, Command.APPLY, "r")
    assert settled.status is Status.OK and succeeded
    assert settled.actions == [ActionRow(REBOOT, "invoke", ActionOutcome.COMPLETED)]


def test_an_actions_failure_leaves_its_triggering_resource_complete() -> None:
    """The engine's diagnostic for a failed action points into the resource block (its
    `action_trigger`), with the action's error text as its detail: it is not the resource's."""
    diagnostic = json.dumps({"type": "diagnostic", "diagnostic": {
        "severity": "error", "summary": "Error when invoking action", "detail": "the vm did not come back",
        "snippet": {"context": 'resource "sim_vm" "web"'}}})
    events = [e for e in _written() if e.type != "change_summary"] + [parse_event(diagnostic)]
    tracker = ResourceTracker().feed_all(events)
    assert tracker.resources[VM].status is Progress.COMPLETE


# --- reconcile ------------------------------------------------------------------------------------------


def _vm_state() -> StateSnapshot:
    return state(VM, ids={VM: "vm-1"})


def _failed_action(**kw: object) -> OperationRecord:
    rec = record(Status.ERROR, resources={VM: ("complete", "create", "vm-1")}, **kw)  # type: ignore[arg-type]
    rec.actions = [ActionRow(REBOOT, "sim_vm.web after_create", ActionOutcome.ERROR, "the vm did not come back")]
    return rec


def test_reconcile_never_settles_ok_over_an_action_that_did_not_finish() -> None:
    ev = evidence(record=_failed_action(), state=_vm_state(), refresh=quiet(), plan=quiet())
    decision = decide(ev)
    assert decision.verdict is Verdict.NONE and REBOOT in decision.reason


def test_action_failed_advises_the_invoke_alone_and_no_partial_apply() -> None:
    found = compare(evidence(record=_failed_action(), state=_vm_state(), refresh=quiet(), plan=quiet()), CMD)

    assert [f.code for f in found] == [Code.ACTION_FAILED]
    [failed] = found
    assert failed.next_actions == (f"hyops apply modules/sim/network --ref {REF} -- -invoke={REBOOT}",)
    assert failed.alternatives == () and failed.addresses == (VM,)
    assert "vm-1" in failed.detail and "the vm did not come back" in failed.detail


def test_action_failed_beside_other_work_keeps_partial_apply() -> None:
    ev = evidence(record=_failed_action(), state=_vm_state(), refresh=quiet(), plan=plan_with(("sim_vm.db", "create")))
    assert [f.code for f in compare(ev, CMD)] == [Code.ACTION_FAILED, Code.PARTIAL_APPLY]


def test_no_invoke_is_offered_for_an_action_whose_object_the_state_lacks() -> None:
    ev = evidence(record=_failed_action(), state=state(), refresh=quiet(), plan=quiet())
    failed = next(f for f in compare(ev, CMD) if f.code is Code.ACTION_FAILED)
    assert failed.next_actions == ()


def test_the_invoke_command_keeps_the_workspace_and_quotes_what_a_shell_would_split() -> None:
    where = Where("app", "modules/my app", workspace="uat", inputs_args=("--inputs", "a b.yml"))
    assert CMD.invoke(where, 'action.t.n["x y"]') == (
        "hyops apply 'modules/my app' --ref app --workspace uat --inputs 'a b.yml' -- "
        "'-invoke=action.t.n[\"x y\"]'")


# --- the sim --------------------------------------------------------------------------------------------


def _steps(cloud: SimCloud, vm_id: str) -> list[sim_actions.Step]:
    class Source:
        def cloud(self, diags: Diagnostics) -> SimCloud:
            return cloud

    return list(sim_actions.invoke(Source(), "sim_vm_restart", {"vm_id": vm_id}))


def test_the_sims_restart_is_progress_then_completed_and_a_call_in_the_log(tmp_path: Path) -> None:
    cloud = SimCloud(SimStore(tmp_path))
    cloud.store.ensure()
    net = cloud.create("sim_network", {"name": "n"}).state
    vm = cloud.create("sim_vm", {"name": "v", "network_id": net["id"]}).state  # type: ignore[index]
    assert vm is not None

    steps = _steps(cloud, vm["id"])

    assert [s.progress for s in steps] == [sim_actions.RESTARTING, None]
    assert steps[-1].diagnostics is not None and not steps[-1].diagnostics.has_errors()
    restarts = [c for c in _calls(tmp_path) if c["op"] == "invoke"]
    assert [(c["type"], c["id"], c["fault"]) for c in restarts] == [("sim_vm_restart", vm["id"], None)]


def test_a_fault_rule_on_invoke_fails_the_restart(tmp_path: Path) -> None:
    cloud = SimCloud(SimStore(tmp_path), rules=[parse_rule({"type": "sim_vm_restart", "op": "invoke", "mode": "fail"},
                                                           1)])
    cloud.store.ensure()
    net = cloud.create("sim_network", {"name": "n"}).state
    vm = cloud.create("sim_vm", {"name": "v", "network_id": net["id"]}).state  # type: ignore[index]
    assert vm is not None

    end = _steps(cloud, vm["id"])[-1].diagnostics
    assert end is not None and end.has_errors()
    assert [(c["id"], c["fault"]) for c in _calls(tmp_path) if c["op"] == "invoke"] == [(None, "fail")]


def test_invoke_is_the_one_op_of_an_action_type_and_only_theirs() -> None:
    parse_rule({"type": "sim_vm_restart", "op": "invoke", "mode": "fail"}, 1)
    parse_rule({"type": "*", "op": "invoke", "mode": "fail"}, 1)
    with pytest.raises(FaultsError, match="rule 1"):
        parse_rule({"type": "sim_vm_restart", "op": "create", "mode": "fail"}, 1)
    with pytest.raises(FaultsError, match="rule 2"):
        parse_rule({"type": "sim_vm", "op": "invoke", "mode": "fail"}, 2)


def _calls(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (root / "calls.jsonl").read_text().splitlines() if line.strip()]


def test_a_killed_runs_unfinished_action_is_kept_when_reconcile_settles_it_to_error() -> None:
    """hyops died while its apply ran: the run's own events (its action started, never reported
    finished) become the record's rows, so the next --write does not settle ok over them."""
    started = ActionFold().feed_all([parse_event(_hook("action_start"))]).rows
    rec = record(Status.RUNNING, resources={VM: ("complete", "create", "vm-1")})
    ev = evidence(record=rec, lock_free=True, state=_vm_state(), last_run_actions=tuple(started))

    settled = settled_record(ev, decide(ev).verdict, "reconcile-1")

    assert settled.status is Status.ERROR
    assert settled.actions == [ActionRow(REBOOT, "invoke", ActionOutcome.INVOKED)]
    again = evidence(record=settled, state=_vm_state(), refresh=quiet(), plan=quiet())
    assert decide(again).verdict is Verdict.NONE


def test_a_stack_members_invoke_takes_the_stack_files_inputs_as_its_apply_does() -> None:
    member = Where("app", "modules/app", inputs_args=("--inputs", "old.yml"), stack_file="stack.yml",
                   stack_args=("--var", "size=large"))
    assert CMD.invoke(member, REBOOT) == f"hyops apply modules/app --ref app --var size=large -- -invoke={REBOOT}"
    assert CMD.apply(member).startswith("hyops apply modules/app --ref app --var size=large")


def test_a_shared_stores_journal_keeps_the_actions_start_and_end_not_its_ticks() -> None:
    """A runner that reconciles a run killed on another machine reads its journal, not its
    events.jsonl: the action's rows come from there."""
    from hybridops_tf.operation.stream import _journaled

    kept = [kind for kind in ("action_start", "action_progress", "action_complete", "action_errored")
            if _journaled(parse_event(_hook(kind)))]
    assert kept == ["action_start", "action_complete", "action_errored"]


def _row(address: str, outcome: ActionOutcome, trigger: str = "sim_vm.vm after_create") -> ActionRow:
    return ActionRow(address, trigger, outcome, "boom" if outcome is ActionOutcome.ERROR else None)


def test_an_apply_carries_an_earlier_unfinished_action_it_did_not_run_again_while_it_is_declared() -> None:
    from hybridops_tf.record.actions import carried_forward

    undone, done = _row("action.t.a", ActionOutcome.ERROR), _row("action.t.b", ActionOutcome.COMPLETED)
    assert carried_forward([undone, done], [], lambda a: True) == [undone]
    assert carried_forward([undone], [_row("action.t.a", ActionOutcome.COMPLETED, "invoke")], lambda a: True) == []
    assert carried_forward([undone], [], lambda a: a != "action.t.a") == []


def test_an_action_block_is_looked_for_in_the_root_its_child_modules_and_the_installed_ones(tmp_path: Path) -> None:
    from hybridops_tf.operation.declared_actions import may_declare

    (tmp_path / "child").mkdir()
    (tmp_path / "main.tf").write_text('module "c" {\n  source = "./child"\n}\n')
    (tmp_path / "child" / "main.tf").write_text('action "sim_vm_restart" "r" {\n}\n')
    installed = tmp_path / ".terraform" / "modules" / "far"
    installed.mkdir(parents=True)
    (installed / "main.tf").write_text('action  "sim_vm_restart"   "far" {\n}\n')

    assert may_declare(tmp_path, 'module.c["k"].action.sim_vm_restart.r')
    assert may_declare(tmp_path, "module.far.action.sim_vm_restart.far")
    assert not may_declare(tmp_path, "action.sim_vm_restart.r2")
    assert may_declare(tmp_path, "not an action address")  # unsure: kept
