"""Rules of reconcile/rules.py that `make mutation` (scripts/mutation.py) found unguarded, each
in the fixture where it alone decides: the words each decision gives (reconcile prints them
and the write's audit keeps them), which events count as claims, where a lost object is
reported, the interrupted run's suspects, the actions a stale settle keeps, which objects a
settle marks as another writer's, and that a settled record is a record of its own."""

from __future__ import annotations

import dataclasses

import pytest

from hybridops_tf.engine.state import StateSnapshot, parse_state
from hybridops_tf.reconcile.model import ModuleEvidence
from hybridops_tf.reconcile.rules import (
    Verdict,
    decide,
    interrupted_orphans,
    missing_from_state,
    settled_record,
)
from hybridops_tf.record.actions import ActionOutcome, ActionRow
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry, entry_address
from hybridops_tf.record.stamp import SeenObject, StateStamp
from hybridops_tf.runtime.liveness import LiveEngine
from tests.unit.reconcile_builders import (
    drift,
    evidence,
    plan_with,
    progress,
    quiet,
    record,
    state,
)

RUN = "reconcile-20260101T000000Z-00000000"


def _stamp(serial: int, lineage: str = "L", run_id: str = "apply-1", **objects: str) -> StateStamp:
    return StateStamp(lineage, serial, {k.replace("__", "."): SeenObject(i, "d") for k, i in objects.items()},
                      run_id=run_id)


def _seen(rec_status: Status = Status.OK, **objects: str) -> OperationRecord:
    """A record of `objects` (address__name -> id) that keeps the stamp of the state its run left."""
    rec = record(rec_status, resources={k.replace("__", "."): ("complete", "create", i) for k, i in objects.items()})
    rec.state_seen = _stamp(3, **objects)
    return rec


_SIX = {f"sim_vm.v{n}": ("complete", "create", f"vm-{n}") for n in range(6)}


def _moved() -> ModuleEvidence:
    rec = record(resources={"sim_vm.a": ("complete", "create", "vm-1")})
    return evidence(record=rec, state=state("sim_vm.b", ids={"sim_vm.b": "vm-1"}), refresh=quiet(),
                    plan=plan_with(("sim_vm.b", "delete"), ("sim_vm.a", "create")))


def _written(lineage: str) -> ModuleEvidence:
    rec = _seen(sim_vm__web="vm-1")
    return evidence(record=rec, state=state("sim_vm.web", ids={"sim_vm.web": "vm-1"}), refresh=quiet(),
                    plan=quiet(), stamp=_stamp(4, lineage, sim_vm__web="vm-1"))


# Each decision's verdict and its reason, exactly: reconcile prints the reason ("unchanged:
# REASON", "error -> ok (REASON)") and the write's audit keeps it (steps[].reason).
DECISIONS = {
    "corrupt": (evidence(record_problem="bad json", state=state(), refresh=quiet()), Verdict.NONE,
                "a corrupt record is never overwritten"),
    "busy": (evidence(record=record(Status.RUNNING), lock_free=False, state=state()), Verdict.NONE,
             "a live process holds the module lock"),
    "engine alive": (
        evidence(record=record(Status.RUNNING), lock_free=True, state=state(),
                 live_engine=LiveEngine(4242, "ci-7", "apply-1", "2026-01-01T00:00:00Z")), Verdict.NONE,
        "not settled: the engine of the dead hyops still runs (pid 4242): it may still change objects; "
        "wait for it or kill it, then reconcile again"),
    "unchecked": (evidence(record=record(Status.ERROR), unchecked=("the plan failed", "the state is locked")),
                  Verdict.NONE, "not settled: some evidence could not be read: the plan failed; the state is locked"),
    "empty": (evidence(state=state(), refresh=quiet()), Verdict.TO_ABSENT,
              "the state is empty and the refresh-only plan confirms it"),
    "no record, not empty": (
        evidence(state=state("sim_vm.a"), refresh=None), Verdict.NONE,
        "no record, and not provably empty: the state holds 1 resource(s); the refresh-only plan did not run"),
    "outputs lag": (evidence(record=record(Status.ERROR), state=state("sim_vm.a"), refresh=quiet(),
                             plan=plan_with(outputs_changed=True)), Verdict.REFRESH_THEN_OK,
                    "the state holds the full configuration but not yet its output values"),
    "full configuration": (evidence(record=record(Status.ERROR), state=state("sim_vm.a"), refresh=quiet(),
                                    plan=quiet()), Verdict.TO_OK,
                           "the state holds the full configuration and both plans show no change"),
    "stays error": (
        evidence(record=record(Status.ERROR, resources={"sim_vm.b": ("complete", "create", "vm-2")}),
                 state=state("sim_vm.a"), refresh=None,
                 plan=drift(("sim_vm.a", "update"))),
        Verdict.NONE, "stays error: objects the record knows are missing from state; the refresh-only plan did "
        "not run; the plan shows 1 drifted resource(s)"),
    "stale": (evidence(record=record(Status.RUNNING), lock_free=True, state=state()), Verdict.STALE_TO_ERROR,
              "no live process holds the lock of this running record"),
    "claims empty": (evidence(record=record(Status.DESTROYED), state=state("sim_vm.a", "sim_vm.b")),
                     Verdict.DEMOTE_TO_ERROR, "the state holds 2 resource(s) although the record says destroyed"),
    "missing": (evidence(record=record(resources=_SIX), state=state(), refresh=quiet(),
                         plan=plan_with(*((a, "create") for a in _SIX))),
                Verdict.MISSING_TO_ERROR,
                "the state lacks 6 object(s) the record knows: sim_vm.v0, sim_vm.v1, sim_vm.v2, sim_vm.v3, sim_vm.v4"),
    "move undone": (_moved(), Verdict.NONE,
                    "objects moved in state to addresses the configuration does not declare: the record keeps "
                    "their old addresses (move them back, or declare the move)"),
    "move agreed": (dataclasses.replace(_moved(), plan=quiet()), Verdict.FOLLOW_OBJECTS,
                    "the state holds objects the record knows at new addresses, or the configuration no longer "
                    "manages some"),
    "settled": (evidence(record=record(Status.OK), state=state(), refresh=quiet(), plan=quiet()), Verdict.NONE,
                "ok needs no settling"),
    "written outside": (_written("L"), Verdict.RECORD_WRITER,
                        "the state was written outside hyops since run apply-1 (serial 3 -> 4): the record takes "
                        "it as it is now"),
    "another lineage": (_written("M"), Verdict.RECORD_WRITER,
                        "the state was written outside hyops since run apply-1 (serial 3 -> 4, another lineage): "
                        "the record takes it as it is now"),
}


@pytest.mark.parametrize("case", list(DECISIONS))
def test_each_decision_gives_its_verdict_and_says_why_in_the_words_reconcile_prints(case: str) -> None:
    ev, verdict, reason = DECISIONS[case]

    decision = decide(ev)

    assert (decision.verdict, decision.reason) == (verdict, reason)


def test_only_a_stale_running_records_events_count_as_claims_of_live_objects() -> None:
    events = progress(sim_vm__this=("complete", "create", "vm-1"))  # what an interrupted run's events say
    settled = evidence(record=record(Status.ERROR), state=state(), last_run=events)
    stale = evidence(record=record(Status.RUNNING), lock_free=True, state=state(), last_run=events)

    assert missing_from_state(settled) == {}  # once settled, the record speaks for the run
    assert missing_from_state(stale) == {"sim_vm.this": "vm-1"}


def _state_without_ids(*addresses: str) -> StateSnapshot:
    resources = [{"address": a, "mode": "managed", "type": a.split(".")[0], "name": a.split(".")[1],
                  "values": {"name": "x"}} for a in addresses]
    return parse_state({"format_version": "1.0", "values": {"root_module": {"resources": resources}}})


def test_an_object_the_state_holds_without_an_id_settles_ok_with_the_id_the_record_knew_or_none() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.known": ("complete", "create", "vm-1")})
    ev = evidence(record=rec, state=_state_without_ids("sim_vm.known", "sim_vm.new"), refresh=quiet(),
                  plan=quiet())

    assert decide(ev).verdict is Verdict.TO_OK
    out = settled_record(ev, Verdict.TO_OK, RUN)

    assert {a: e.id for a, e in (out.resources or {}).items()} == {"sim_vm.known": "vm-1", "sim_vm.new": None}


def test_an_object_the_gate_kept_beside_another_is_missing_at_its_address_and_none_hides_another_lost_there() -> None:
    kept = record(resources={"sim_vm.this": ("complete", "create", "vm-2"),
                             "sim_vm.this (missing vm-1)": ("complete", "create", "vm-1")})
    ev = evidence(record=kept, state=state("sim_vm.this", ids={"sim_vm.this": "vm-2"}), refresh=quiet(), plan=quiet())
    assert missing_from_state(ev) == {"sim_vm.this": "vm-1"}  # the address --import ADDRESS=ID needs

    both = record(resources={"sim_vm.this": ("complete", "create", "vm-1"),
                             "sim_vm.this (missing vm-0)": ("complete", "create", "vm-0")})
    lost = missing_from_state(evidence(record=both, state=state(), refresh=quiet(),
                                       plan=plan_with(("sim_vm.this", "create"))))
    assert sorted(str(i) for i in lost.values()) == ["vm-0", "vm-1"]
    assert {entry_address(key) for key in lost} == {"sim_vm.this"}


def test_a_create_the_interrupted_run_started_is_suspect_when_the_state_could_not_be_read() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=None,
                  last_run=progress(sim_vm__this=("started", "create")))

    assert interrupted_orphans(ev) == ["sim_vm.this"]


def test_a_planned_create_is_no_suspect_when_the_interrupted_runs_events_are_complete() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run=progress(sim_vm__this=("pending", "create")), stream_complete=True)

    assert interrupted_orphans(ev) == []
    assert interrupted_orphans(dataclasses.replace(ev, stream_complete=False)) == ["sim_vm.this"]


def test_a_started_create_over_the_object_the_record_knows_is_suspect_while_the_state_holds_that_object() -> None:
    rec = record(Status.RUNNING, run_id="apply-9", resources={"sim_vm.this": ("complete", "create", "vm-1")})
    ev = evidence(record=rec, lock_free=True, state=state("sim_vm.this", ids={"sim_vm.this": "vm-1"}),
                  last_run=progress(sim_vm__this=("started", "create")))

    assert interrupted_orphans(ev) == ["sim_vm.this"]  # vm-1 is the old object, not the one the create made


@pytest.mark.parametrize(("command", "carried"), [("apply", True), ("destroy", False)])
def test_an_interrupted_apply_carries_the_earlier_unfinished_actions_and_an_interrupted_destroy_none(
        command: str, carried: bool) -> None:
    earlier = ActionRow("action.sim_restart.r", "sim_vm.a after_create", ActionOutcome.ERROR, "boom")
    rec = record(Status.RUNNING, active_command=command)
    rec.actions = [earlier]
    ev = evidence(record=rec, lock_free=True, state=state(), last_run={}, last_run_actions=())

    out = settled_record(ev, Verdict.STALE_TO_ERROR, RUN)

    assert out.actions == ([earlier] if carried else [])  # as operation/settle.py settles a run that ended


def test_a_settle_marks_what_another_writer_added_only_over_a_stamp_and_only_when_it_keeps_the_entries() -> None:
    now = _stamp(4, sim_vm__web="vm-1", sim_vm__extra="vm-9")
    live = state("sim_vm.web", "sim_vm.extra", ids={"sim_vm.web": "vm-1", "sim_vm.extra": "vm-9"})
    writer = evidence(record=_seen(sim_vm__web="vm-1"), state=live, stamp=now, refresh=quiet(), plan=quiet())
    assert decide(writer).verdict is Verdict.RECORD_WRITER
    out = settled_record(writer, Verdict.RECORD_WRITER, RUN)
    assert (out.resources or {})["sim_vm.extra"].outside is True
    assert out.state_seen == dataclasses.replace(now, run_id=RUN)

    unstamped = record(resources={"sim_vm.a": ("complete", "create", "vm-1")})  # no stamp: nobody can tell
    moved = evidence(record=unstamped, state=state("sim_vm.b", "sim_vm.extra", ids={"sim_vm.b": "vm-1",
                     "sim_vm.extra": "vm-9"}), stamp=now, refresh=quiet(), plan=quiet())
    assert decide(moved).verdict is Verdict.FOLLOW_OBJECTS
    assert not (settled_record(moved, Verdict.FOLLOW_OBJECTS, RUN).resources or {})["sim_vm.extra"].outside

    failed = _seen(Status.ERROR, sim_vm__web="vm-1")  # ok from state: the failed run may have made vm-9
    converged = evidence(record=failed, state=live, stamp=now, refresh=quiet(), plan=quiet())
    assert decide(converged).verdict is Verdict.TO_OK
    assert not (settled_record(converged, Verdict.TO_OK, RUN).resources or {})["sim_vm.extra"].outside


def test_a_stale_running_record_settles_to_error_keeping_what_it_knew_when_the_state_could_not_be_read() -> None:
    rec = record(Status.RUNNING, run_id="apply-9", resources={"sim_vm.a": ("complete", "create", "vm-1")},
                 outputs={"o": 1})
    ev = evidence(record=rec, lock_free=True, state=None, last_run=progress(sim_vm__b=("complete", "create", "vm-2")))

    out = settled_record(ev, Verdict.STALE_TO_ERROR, RUN)

    assert out.status is Status.ERROR and out.outputs == {"o": 1}
    assert {a: e.id for a, e in (out.resources or {}).items()} == {"sim_vm.a": "vm-1", "sim_vm.b": "vm-2"}


def test_a_settled_record_shares_no_object_with_the_record_it_settles() -> None:
    rec = record(Status.ERROR, failed_command="destroy", resources={"sim_vm.a": ("destroyed", "delete", "vm-1")})
    ev = evidence(record=rec, state=state(), refresh=quiet())
    assert decide(ev).verdict is Verdict.TO_DESTROYED

    out = settled_record(ev, Verdict.TO_DESTROYED, RUN)
    (out.resources or {})["sim_vm.a"].id = "changed"

    assert rec.resources == {"sim_vm.a": ResourceEntry(ResourceStatus.DESTROYED, "delete", "vm-1")}


@pytest.mark.parametrize("verdict", [Verdict.NONE, Verdict.REFRESH_THEN_OK])
def test_a_verdict_that_settles_nothing_writes_no_record_and_says_which_it_was(verdict: Verdict) -> None:
    ev = evidence(record=record(Status.ERROR), state=state("sim_vm.a"), refresh=quiet(), plan=quiet())

    with pytest.raises(ValueError, match=f"^verdict {verdict} writes no record$"):
        settled_record(ev, verdict, RUN)
