"""reconcile's rules read whole (reconcile/rules.py): what scripts/mutation.py found surviving
the tests that read them through compare and --write.

Each test is one rule where it alone decides: the record `--write` settles from a stale run
(ids whose delete completed are forgotten, a completed create's are not), the entries an `ok`
settle takes from state, which moves the configuration undoes, and a record the engine's lost
object rule does not apply to."""

from __future__ import annotations

from hybridops_tf.engine.state import StateResource, StateSnapshot
from hybridops_tf.reconcile.model import ModuleEvidence
from hybridops_tf.reconcile.rules import (
    Verdict,
    claimed_missing,
    decide,
    empty_confirmed,
    fully_applied,
    interrupted_orphans,
    lost_from_state,
    missing_from_state,
    moved_in_state,
    moves_undone,
    no_longer_managed,
    settled_record,
)
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ReleasedObject, ResourceEntry, SuspectOrphan
from hybridops_tf.record.stamp import SeenObject, StateStamp
from tests.unit.reconcile_builders import drift, evidence, plan_with, progress, quiet, record, state


def _resource(address: str, ident: object = None, *, mode: str = "managed", deposed: str | None = None
              ) -> StateResource:
    kind, _, name = address.removeprefix("data.").partition(".")
    return StateResource(address, mode, kind, name, values={} if ident is None else {"id": ident},
                         deposed_key=deposed)


def test_a_module_without_a_record_lost_nothing_to_the_engine_and_moved_nothing() -> None:
    assert lost_from_state(evidence(record=None, state=state())) == {}
    assert moved_in_state(evidence(record=None, state=state("sim_vm.b"))) == {}


def test_a_move_the_plan_leaves_alone_is_kept_and_one_under_an_unnamed_change_is_not_trusted() -> None:
    moved = record(Status.OK, resources={"sim_vm.a": ("complete", "create", "vm-1")})
    after_mv = state("sim_vm.b", ids={"sim_vm.b": "vm-1"})

    quiet_elsewhere = evidence(record=moved, state=after_mv, plan=plan_with(("sim_network.n", "update")))
    unnamed = evidence(record=moved, state=after_mv, plan=plan_with(("(unnamed)", "update")))

    assert moves_undone(quiet_elsewhere) == {}
    assert moves_undone(unnamed) == {"sim_vm.a": "sim_vm.b"}


def test_an_ok_settle_takes_each_managed_current_object_from_state_keeping_what_the_record_knew() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": ("error", "create", "vm-1")})
    snapshot = StateSnapshot("1.0", "1.8.0", resources=(
        _resource("data.sim_image.i", "img-1", mode="data"),  # a read, not an object
        _resource("sim_vm.a", None),  # the state gives no id: the record's is kept
        _resource("sim_vm.a", "vm-0", deposed="d1"),  # a deposed object is no entry of its own
        _resource("sim_network.n", "net-1"),
    ))

    out = settled_record(evidence(record=rec, state=snapshot), Verdict.TO_OK, "reconcile-1", "2026-01-01T00:00:00Z")

    assert out.resources == {"sim_vm.a": ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1"),
                             "sim_network.n": ResourceEntry(ResourceStatus.COMPLETE, "reconcile", "net-1")}


def test_a_stale_runs_settle_forgets_each_id_whose_delete_completed_but_not_a_completed_creates() -> None:
    rec = record(Status.RUNNING, resources={"sim_network.n": ("complete", "create", None),
                                            "sim_vm.b": ("complete", "create", "vm-2"),
                                            "sim_vm.live": ("complete", "create", "vm-5"),
                                            "sim_vm.a": ("complete", "create", "vm-1")})
    ev = evidence(record=rec, lock_free=True, state=state(),
                  last_run=progress(sim_vm__b=("complete", "create", "vm-2")),
                  deleted={"sim_vm.a": ("vm-1",), "sim_vm.b": ("vm-2",)})

    out = settled_record(ev, Verdict.STALE_TO_ERROR, "reconcile-1", "2026-01-01T00:00:00Z")

    assert out.resources is not None
    assert {a: e.id for a, e in out.resources.items()} == {"sim_network.n": None, "sim_vm.a": None,
                                                          "sim_vm.b": "vm-2", "sim_vm.live": "vm-5"}


NOW = "2026-02-02T00:00:00Z"


def _moved_and_released() -> OperationRecord:
    """An ok record whose vm-1 the state now holds at sim_vm.b (`state mv`), whose vm-3 no
    block declares any more (`state rm` with the block removed), with one object released
    before and one released object the state holds again."""
    rec = record(Status.OK, resources={"sim_vm.a": ("complete", "create", "vm-1"),
                                       "sim_vm.c": ("complete", "create", "vm-3"),
                                       "sim_network.n": ("complete", "create", "net-1")})
    rec.released = [ReleasedObject("sim_vm.old", "vm-0", "apply-0", "2025-01-01T00:00:00Z"),
                    ReleasedObject("sim_vm.x", "net-1", "apply-0", "2025-01-01T00:00:00Z")]
    return rec


def _moved_state() -> StateSnapshot:
    return state("sim_vm.b", "sim_network.n", ids={"sim_vm.b": "vm-1", "sim_network.n": "net-1"})


RELEASED_NOW = [ReleasedObject("sim_vm.old", "vm-0", "apply-0", "2025-01-01T00:00:00Z"),
                ReleasedObject("sim_vm.c", "vm-3", "reconcile-2", NOW)]


def test_following_objects_moves_each_entry_to_where_the_state_holds_it_and_lists_the_released() -> None:
    rec = _moved_and_released()
    ev = evidence(record=rec, state=_moved_state(), plan=quiet())

    out = settled_record(ev, Verdict.FOLLOW_OBJECTS, "reconcile-2", NOW)

    assert out.resources == {"sim_network.n": ResourceEntry(ResourceStatus.COMPLETE, "create", "net-1"),
                             "sim_vm.b": ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1")}
    assert out.released == RELEASED_NOW
    assert (out.status, out.run_id, out.updated_at) == (Status.OK, "reconcile-2", NOW)
    assert rec == _moved_and_released()


def test_an_ok_settle_lists_the_objects_released_by_hand_once_and_drops_those_the_state_holds_again() -> None:
    out = settled_record(evidence(record=_moved_and_released(), state=_moved_state(), plan=quiet()), Verdict.TO_OK,
                         "reconcile-2", NOW)
    assert out.released == RELEASED_NOW and out.updated_at == NOW


def test_a_record_another_writer_changed_is_kept_as_it_is_under_the_settles_run() -> None:
    rec = _moved_and_released()
    out = settled_record(evidence(record=rec, state=_moved_state()), Verdict.RECORD_WRITER, "reconcile-2", NOW)
    assert (out.resources, out.released, out.run_id) == (rec.resources, rec.released, "reconcile-2")


def test_a_stale_runs_settle_names_its_command_orphans_outputs_and_the_states_objects() -> None:
    rec = record(Status.RUNNING, resources={"sim_vm.a": ("complete", "create", "vm-1")}, active_command="destroy")
    ev = evidence(record=rec, lock_free=True, last_run=progress(sim_vm__z=("started", "create")),
                  state=state("sim_network.n", ids={"sim_network.n": "net-1"}, outputs={"ip": "10.0.0.1"}))

    out = settled_record(ev, Verdict.STALE_TO_ERROR, "reconcile-2", NOW)

    assert out.suspect_orphans == [SuspectOrphan("sim_vm.z", "create", "apply-1", NOW)]
    assert (out.status, out.failed_command, out.outputs) == (Status.ERROR, Command.DESTROY, {"ip": "10.0.0.1"})
    assert out.last_error == ("interrupted: hyops stopped while `destroy` run apply-1 was running (stale running "
                              "record); settled by reconcile from state and the run's events")
    assert out.resources is not None and out.resources["sim_network.n"].id == "net-1"  # the state's, read too


def _identified(address: str, ident: str, identity: dict[str, str] | None = None) -> StateResource:
    kind, _, name = address.partition(".")
    return StateResource(address, "managed", kind, name, values={"id": ident}, identity=identity,
                         identity_schema_version=3 if identity else None)


def test_an_ok_settle_keeps_an_objects_identity_from_the_state_else_from_the_entry_of_the_same_object() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": ("complete", "create", "vm-1"),
                                          "sim_vm.b": ("complete", "create", "vm-2"),
                                          "sim_vm.c": ("complete", "create", "vm-3")})
    assert rec.resources is not None
    for entry in rec.resources.values():
        entry.identity, entry.identity_schema_version = {"id": f"old-{entry.id}"}, 1
    snapshot = StateSnapshot("1.0", "1.12.0", resources=(
        _identified("sim_vm.a", "vm-1"),  # none in state: the entry's, of the same object
        _identified("sim_vm.b", "vm-9"),  # another object now: nothing known of its identity
        _identified("sim_vm.c", "vm-3", {"id": "new-vm-3"}),  # the state's own
    ))

    out = settled_record(evidence(record=rec, state=snapshot), Verdict.TO_OK, "reconcile-2", NOW)

    assert out.resources is not None
    assert {a: (e.identity, e.identity_schema_version) for a, e in out.resources.items()} == {
        "sim_vm.a": ({"id": "old-vm-1"}, 1), "sim_vm.b": (None, None), "sim_vm.c": ({"id": "new-vm-3"}, 3)}


def test_an_empty_state_without_a_record_settles_a_new_absent_record_started_now() -> None:
    out = settled_record(evidence(record=None, state=state()), Verdict.TO_ABSENT, "reconcile-2", NOW)
    assert (out.status, out.run_id, out.started_at, out.updated_at) == (Status.ABSENT, "reconcile-2", NOW, NOW)


SIX = tuple(f"sim_vm.v{i}" for i in range(6))


def test_a_destroyed_record_over_objects_in_state_is_a_failed_destroy_naming_five_of_them() -> None:
    ev = evidence(record=record(Status.DESTROYED), state=state(*SIX, outputs={"ip": "10.0.0.1"}))

    out = settled_record(ev, Verdict.DEMOTE_TO_ERROR, "reconcile-2", NOW)

    assert (out.status, out.failed_command, out.outputs) == (Status.ERROR, Command.DESTROY, {"ip": "10.0.0.1"})
    assert out.last_error == ("reconcile found 6 resource(s) in state although the record said destroyed: "
                              "sim_vm.v0, sim_vm.v1, sim_vm.v2, sim_vm.v3, sim_vm.v4")


def test_an_absent_record_over_objects_in_state_is_a_failed_reconcile() -> None:
    out = settled_record(evidence(record=record(Status.ABSENT), state=state("sim_vm.v0")), Verdict.DEMOTE_TO_ERROR,
                         "reconcile-2", NOW)
    assert out.failed_command == Command.RECONCILE


def test_objects_the_state_lost_are_state_missing_naming_five_with_their_ids() -> None:
    known = {a: ("complete", "create", f"vm-{i}") for i, a in enumerate(SIX)}
    known["sim_vm.v0"] = ("complete", "create", None)  # no id known: named alone
    ev = evidence(record=record(Status.OK, resources=known), state=state("sim_network.n"), plan=plan_with(
        *((a, "create") for a in SIX)))

    out = settled_record(ev, Verdict.MISSING_TO_ERROR, "reconcile-2", NOW)

    assert (out.status, out.failed_command) == (Status.ERROR, Command.RECONCILE)
    assert out.last_error == (
        "state_missing: the state lacks 6 object(s) the record knows: sim_vm.v0, sim_vm.v1 (vm-1), sim_vm.v2 "
        "(vm-2), sim_vm.v3 (vm-3), sim_vm.v4 (vm-4); import each back (reconcile --import ADDRESS=ID) or "
        "apply if really gone")


def _written_outside(**blocker: object) -> ModuleEvidence:
    """An ok record whose state another writer moved on (serial 3 -> 4), and one blocker."""
    rec = record(resources={"sim_vm.web": ("complete", "create", "vm-1")})
    rec.state_seen = StateStamp("L", 3, {"sim_vm.web": SeenObject("vm-1", "a")}, run_id="apply-1")
    return evidence(record=rec, state=state("sim_vm.web", ids={"sim_vm.web": "vm-1"}), refresh=quiet(),
                    plan=quiet(), stamp=StateStamp("L", 4, {"sim_vm.web": SeenObject("vm-1", "b")}), **blocker)


def test_a_state_written_outside_is_recorded_only_when_nothing_else_stands_in_the_way() -> None:
    assert decide(_written_outside()).verdict is Verdict.RECORD_WRITER
    assert decide(_written_outside(record_problem="latest.json: not JSON")).verdict is Verdict.NONE
    assert decide(_written_outside(unchecked=("the plan",))).verdict is Verdict.NONE


def test_a_plan_that_did_not_run_or_a_deposed_object_keeps_a_module_from_ok() -> None:
    deposed = StateSnapshot("1.0", "1.8.0", resources=(_resource("sim_vm.a", "vm-1"),
                                                        _resource("sim_vm.a", "vm-0", deposed="d1")))
    ev = evidence(record=record(Status.ERROR), state=deposed, refresh=quiet(), plan=None)
    assert fully_applied(ev) == "1 deposed object(s) remain; the plan did not run"
    assert fully_applied(evidence(record=None, state=state("sim_vm.a"), refresh=quiet(), plan=quiet())) is None


def _entries(**by_address: tuple[str, str, str | None]) -> OperationRecord:
    return record(Status.ERROR, resources={a.replace("__", "."): spec for a, spec in by_address.items()})


def test_an_object_is_missing_only_when_its_id_is_held_nowhere_or_without_an_id_it_completed_where_nothing_is() -> None:
    rec = _entries(
        sim_vm__gone=("complete", "delete", "vm-0"),  # a delete that completed: nothing live
        sim_vm__deleted=("complete", "create", "vm-d"),  # the interrupted run completed its delete
        sim_vm__here=("complete", "create", None),  # no id, its address in state: judged there
        sim_vm__failed=("error", "create", None),  # no id, never completed: nothing proven live
        sim_vm__moved=("complete", "create", "vm-m"),  # held at another address
        sim_vm__lost=("complete", "create", "vm-l"),
        sim_vm__noid=("complete", "create", None),
        sim_vm__later=("complete", "create", "vm-7"))
    events = progress(sim_vm__made=("complete", "create", "vm-9"),  # the run's own completed create
                      sim_vm__read=("complete", "read", "img-1"),  # a read is no object
                      sim_vm__here=("complete", "create", "vm-h"),  # its address is in state
                      sim_vm__heldelse=("complete", "create", "vm-m"),  # its id is held elsewhere
                      sim_vm__later=("complete", "update"))  # no id in the events: the record's

    missing = claimed_missing(rec, events, {"sim_vm.here", "sim_vm.other"}, {"sim_vm.deleted": ("vm-d",)},
                              {"vm-m", "vm-h"})

    assert missing == {"sim_vm.lost": "vm-l", "sim_vm.noid": None, "sim_vm.later": "vm-7", "sim_vm.made": "vm-9"}


def test_only_a_stale_runs_events_and_deletes_count_for_what_the_state_lost() -> None:
    events = progress(sim_vm__made=("complete", "create", "vm-9"))
    ok = record(Status.OK, resources={"sim_vm.a": ("complete", "create", "vm-1")})
    running = record(Status.RUNNING, resources={"sim_vm.a": ("complete", "create", "vm-1")})
    after = state("sim_vm.a", ids={"sim_vm.a": "vm-1"})

    assert missing_from_state(evidence(record=ok, state=after, last_run=events, plan=quiet())) == {}
    assert missing_from_state(evidence(record=running, state=after, last_run=events, lock_free=True)) == {
        "sim_vm.made": "vm-9"}
    # a delete an earlier, finished run saw is no proof now: the object the ok record knows is missing
    assert missing_from_state(evidence(record=ok, state=state(), deleted={"sim_vm.a": ("vm-1",)},
                                       plan=plan_with(("sim_vm.a", "create")))) == {"sim_vm.a": "vm-1"}


def test_a_started_create_is_a_suspect_orphan_only_of_a_stale_run_and_only_where_the_state_lacks_it() -> None:
    started = progress(sim_vm__z=("started", "create"))
    ok = record(Status.OK)
    running = record(Status.RUNNING)

    assert interrupted_orphans(evidence(record=ok, state=state(), last_run=started)) == []
    assert interrupted_orphans(evidence(record=running, lock_free=True, state=state(), last_run=started)) == [
        "sim_vm.z"]
    assert interrupted_orphans(evidence(record=running, lock_free=True, state=state("sim_vm.z"),
                                        last_run=started)) == []
    assert fully_applied(evidence(record=running, lock_free=True, state=state(), last_run=started, refresh=quiet(),
                                  plan=quiet())) == "the interrupted run left 1 suspect orphan(s)"


def test_an_object_is_released_by_hand_only_under_a_plan_that_names_every_change() -> None:
    ok = record(Status.OK, resources={"sim_vm.c": ("complete", "create", "vm-3")})
    assert no_longer_managed(evidence(record=ok, state=state(), plan=plan_with(("sim_network.n", "update")))) == {
        "sim_vm.c": "vm-3"}
    assert no_longer_managed(evidence(record=ok, state=state(), plan=plan_with(("(unnamed)", "update")))) == {}
    assert no_longer_managed(evidence(record=ok, state=None, plan=quiet())) == {}


def test_why_the_state_is_no_evidence_of_ok_or_of_empty_is_said_in_words() -> None:
    error = record(Status.ERROR)
    assert fully_applied(evidence(record=error, state=None, refresh=quiet(), plan=quiet())) == (
        "the state could not be read")
    assert fully_applied(evidence(record=error, state=state(), errored_state=True, refresh=quiet(),
                                  plan=quiet())) == "errored.tfstate has not been pushed"
    assert empty_confirmed(evidence(record=error, state=state(), refresh=None)) == "the refresh-only plan did not run"
    assert empty_confirmed(evidence(record=error, state=state(), refresh=drift(("sim_vm.a", "delete")))) == (
        "the refresh-only plan shows drift")
