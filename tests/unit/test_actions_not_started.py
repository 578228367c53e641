"""Planned actions that never started (issue 55, item 3), pure: the rows the plan gives from the
moment it knows an invocation, `not_started` once the run ended without starting it, the rule
that such a row never settles `ok` (by the apply or by `reconcile --write`) while the
configuration declares it, its carrying forward, and `action_not_started` with its one command.
From a real Terraform 1.15.5 stream (tests/fixtures/written/terraform-1.15.5-actions-not-started.jsonl)
and small records; the real engine's side is tests/integration/test_actions_not_started.py.
Each test builds the case where its rule alone decides."""

from __future__ import annotations

from pathlib import Path

from hybridops_tf.engine.events import Event, parse_event
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Code
from hybridops_tf.reconcile.rules import Verdict, decide, settled_record
from hybridops_tf.record.action_fold import ActionFold
from hybridops_tf.record.action_settle import with_actions
from hybridops_tf.record.actions import ActionOutcome, ActionRow, at_end, carried_forward, rows_from
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.lifecycle import Command, Status
from tests.unit.reconcile_builders import REF, evidence, quiet, record, state

CAPTURED = Path(__file__).resolve().parents[1] / "fixtures" / "written" / "terraform-1.15.5-actions-not-started.jsonl"
C, D = 'action.sim_vm_restart.r["edge-c"]', 'action.sim_vm_restart.r["edge-d"]'
VM_C, VM_D = 'sim_vm.r["edge-c"]', 'sim_vm.r["edge-d"]'
CMD = Commands("hyops", "terraform")
NOT_STARTED = ActionOutcome.NOT_STARTED


def _captured() -> list[Event]:
    return [parse_event(line) for line in CAPTURED.read_text().splitlines() if line.strip()]


def _waiting(address: str = D, trigger: str = f"{VM_D} after_create") -> ActionRow:
    return ActionRow(address, trigger, NOT_STARTED)


def _both_vms() -> dict[str, tuple[str, str, str | None]]:
    return {VM_C: ("complete", "import", "vm-c"), VM_D: ("complete", "create", "vm-d")}


def _after_adoption(*rows: ActionRow, **kw: object) -> object:
    """The record once the lost vm was adopted: every object complete and in the state, both
    plans quiet; only `rows` can keep it from `ok`."""
    rec = record(Status.ERROR, resources=_both_vms())
    rec.actions = list(rows)
    return evidence(record=rec, state=state(VM_C, VM_D, ids={VM_C: "vm-c", VM_D: "vm-d"}),
                    refresh=quiet(), plan=quiet(), **kw)


# --- the rows -------------------------------------------------------------------------------------------


def test_the_engines_planned_invocations_are_rows_from_the_plan_and_not_started_once_the_apply_stopped() -> None:
    fold = ActionFold().feed_all(_captured())

    assert not fold.started  # a planned invocation alone did nothing
    assert fold.rows == [ActionRow(C, f"{VM_C} after_create", ActionOutcome.PLANNED),
                         ActionRow(D, f"{VM_D} after_create", ActionOutcome.PLANNED)]
    assert at_end(fold.rows) == [ActionRow(C, f"{VM_C} after_create", NOT_STARTED), _waiting()]


def test_the_apply_that_stopped_keeps_its_not_started_rows_and_names_them_in_its_error() -> None:
    failed = record(Status.ERROR, resources={VM_D: ("complete", "create", "vm-d")}, last_error="lost")

    settled, succeeded = with_actions(failed, ActionFold().feed_all(_captured()), Command.APPLY, "r")

    assert not succeeded and settled.status is Status.ERROR
    assert [(r.address, r.outcome) for r in settled.actions] == [(C, NOT_STARTED), (D, NOT_STARTED)]
    assert settled.last_error is not None and settled.last_error.startswith("lost; 2 planned action(s) never started")


def test_a_run_whose_planned_action_never_started_never_settles_ok() -> None:
    planned = [e for e in _captured() if e.type == "planned_action_invocation"]
    settled, succeeded = with_actions(record(Status.OK, resources=_both_vms()), ActionFold().feed_all(planned),
                                      Command.APPLY, "hyops reconcile x")
    assert settled.status is Status.ERROR and not succeeded
    assert D in (settled.last_error or "") and "never started" in (settled.last_error or "")


def test_an_invoke_that_completed_its_action_succeeds_while_a_carried_one_keeps_the_record_error() -> None:
    """Terraform invokes one action a run: the first of two `-invoke` steps must not read as
    failed, and its record must not read `ok` while the second is undone."""
    invoked = ActionFold()
    invoked._rows[(C, "invoke")] = ActionRow(C, "invoke", ActionOutcome.COMPLETED)

    settled, succeeded = with_actions(record(Status.OK, resources=_both_vms()), invoked, Command.APPLY, "r",
                                      [_waiting()], partial=True)
    assert succeeded and settled.status is Status.ERROR
    assert settled.actions == [ActionRow(C, "invoke", ActionOutcome.COMPLETED), _waiting()]
    whole, ok = with_actions(record(Status.OK, resources=_both_vms()), ActionFold(), Command.APPLY, "r", [_waiting()])
    assert not ok and whole.status is Status.ERROR  # a whole apply answers for the configuration


def test_a_plain_apply_carries_a_not_started_row_forward_while_it_is_declared() -> None:
    waiting = _waiting()
    assert carried_forward([waiting], [], lambda a: True) == [waiting]
    assert carried_forward([waiting], [ActionRow(D, "invoke", ActionOutcome.COMPLETED)], lambda a: True) == []
    assert carried_forward([waiting], [], lambda a: False) == []


def test_a_record_written_with_complete_reads_as_completed_and_is_written_the_new_way() -> None:
    [row] = rows_from([{"address": D, "trigger": "invoke", "outcome": "complete", "error": None}])
    assert row.outcome is ActionOutcome.COMPLETED and row.to_dict()["outcome"] == "completed"


# --- reconcile ------------------------------------------------------------------------------------------


def test_action_not_started_advises_invoking_each_alone_and_is_never_consistent_while_declared() -> None:
    ev = _after_adoption(ActionRow(C, f"{VM_C} after_create", NOT_STARTED), _waiting())

    found = compare(ev, CMD)  # type: ignore[arg-type]

    assert [f.code for f in found] == [Code.ACTION_NOT_STARTED]
    [waiting] = found
    assert waiting.next_actions == (f"hyops apply modules/sim/network --ref {REF} -- '-invoke={C}'",
                                    f"hyops apply modules/sim/network --ref {REF} -- '-invoke={D}'")
    assert waiting.addresses == (VM_C, VM_D)
    assert decide(ev).verdict is Verdict.NONE  # --write never settles ok over them  # type: ignore[arg-type]


def test_an_action_the_configuration_no_longer_declares_holds_nothing_back() -> None:
    ev = _after_adoption(_waiting(), undeclared_actions=frozenset({D}))

    assert Code.ACTION_NOT_STARTED not in [f.code for f in compare(ev, CMD)]  # type: ignore[arg-type]
    verdict = decide(ev).verdict  # type: ignore[arg-type]
    assert verdict is Verdict.TO_OK
    assert settled_record(ev, verdict, "reconcile-1").actions == []  # type: ignore[arg-type]


def test_no_invoke_is_offered_while_a_suspect_orphan_would_refuse_the_apply() -> None:
    rec = record(Status.ERROR, resources={VM_D: ("complete", "create", "vm-d")}, orphans=[VM_C])
    rec.actions = [_waiting()]
    ev = evidence(record=rec, state=state(VM_D, ids={VM_D: "vm-d"}), refresh=quiet(), plan=quiet())

    waiting = next(f for f in compare(ev, CMD) if f.code is Code.ACTION_NOT_STARTED)

    assert waiting.next_actions == () and "suspect orphans" in waiting.detail


def test_no_invoke_is_offered_for_a_trigger_the_state_lacks_the_apply_that_creates_it_runs_the_action() -> None:
    rec = record(Status.ERROR, resources={VM_C: ("complete", "create", "vm-c")})
    rec.actions = [_waiting()]
    ev = evidence(record=rec, state=state(VM_C, ids={VM_C: "vm-c"}), refresh=quiet(), plan=quiet())

    waiting = next(f for f in compare(ev, CMD) if f.code is Code.ACTION_NOT_STARTED)

    assert waiting.next_actions == () and f"{VM_D} is not in the state" in waiting.detail


def test_a_killed_runs_planned_actions_become_not_started_beside_the_earlier_runs_undone_ones() -> None:
    """hyops died while its apply ran: what that run's events planned and never started is
    `not_started` in the settled record, and the row it carried from the run before stays."""
    earlier = ActionRow("action.t.old", "invoke", ActionOutcome.ERROR, "boom")
    rec = record(Status.RUNNING, resources={VM_D: ("complete", "create", "vm-d")})
    rec.actions = [earlier]
    planned = [e for e in _captured() if e.type == "planned_action_invocation"][1:]
    ev = evidence(record=rec, lock_free=True, state=state(VM_D, ids={VM_D: "vm-d"}),
                  last_run_actions=tuple(ActionFold().feed_all(planned).rows))

    settled = settled_record(ev, decide(ev).verdict, "reconcile-1")

    assert settled.status is Status.ERROR and settled.actions == [_waiting(), earlier]


def test_a_saved_plans_action_invocations_are_planned_rows_spelled_as_the_streams() -> None:
    """`show -json` of a saved plan (Terraform 1.15.5, as tests/integration/test_actions_not_started.py
    applies one): the rows its apply starts from, keyed as the apply's `action_*` lines key them."""
    from hybridops_tf.record.action_fold import planned_in

    plan_doc = {"action_invocations": [
        {"address": D, "type": "sim_vm_restart", "name": "r", "config_unknown": {"vm_id": True},
         "lifecycle_action_trigger": {"triggering_resource_address": VM_D, "action_trigger_event": "AfterCreate",
                                      "action_trigger_block_index": 0, "actions_list_index": 0}},
        {"address": C, "type": "sim_vm_restart", "name": "r"},  # an `-invoke` plan names no trigger
        {"type": "no address"}, "not an object"]}

    rows = planned_in(plan_doc)

    assert rows == [ActionRow(D, f"{VM_D} after_create", ActionOutcome.PLANNED),
                    ActionRow(C, "invoke", ActionOutcome.PLANNED)]
    assert planned_in({}) == [] and planned_in({"action_invocations": "x"}) == []
    started = ActionFold(rows).feed_all(_captured()[:0])
    assert not started.started and at_end(started.rows)[0] == _waiting()
