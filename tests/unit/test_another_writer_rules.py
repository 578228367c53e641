"""The pure rules of "another writer" (docs/recovery.md: Another writer): the state's stamp and
its diff, ids before addresses for state_missing, a move the configuration disagrees with, and
what `--write` may record. Each fixture is one in which the rule alone decides."""

from __future__ import annotations

import dataclasses
import json

from hybridops_tf.reconcile import rules
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Change, Code, ModuleEvidence, PlanEvidence
from hybridops_tf.reconcile.rules import Verdict
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry
from hybridops_tf.record.objects import mark_outside
from hybridops_tf.record.stamp import NO_STATE, SeenObject, StateStamp, parse_state_stamp, written
from tests.unit.reconcile_builders import WHERE, record, state

C = ResourceStatus.COMPLETE
QUIET = PlanEvidence()  # a plan with no change


def stamp(serial: int, lineage: str = "L", **objects: tuple[str, str]) -> StateStamp:
    return StateStamp(lineage, serial, {k.replace("__", "."): SeenObject(i, d) for k, (i, d) in objects.items()},
                      run_id="apply-1")


def evidence(rec: OperationRecord, now: StateStamp, *addresses: str, ids: dict[str, str] | None = None,
             plan: PlanEvidence | None = QUIET) -> ModuleEvidence:
    return ModuleEvidence(where=WHERE, record=rec, state=state(*addresses, ids=ids), stamp=now,
                          refresh=PlanEvidence(), plan=plan)


def test_a_state_file_stamp_keeps_lineage_serial_and_per_object_id_and_digest_never_a_value() -> None:
    doc = {"version": 4, "serial": 7, "lineage": "abc", "resources": [
        {"mode": "managed", "type": "sim_vm", "name": "web", "instances": [
            {"attributes": {"id": "vm-1", "size": "secret-large"}},
            {"index_key": 1, "deposed": "d1", "attributes": {"id": "vm-0"}}]},
        {"mode": "data", "type": "sim_image", "name": "x", "instances": [{"attributes": {"id": "img"}}]}]}
    got = parse_state_stamp(json.dumps(doc))
    assert (got.lineage, got.serial, sorted(got.objects)) == ("abc", 7, ["sim_vm.web", "sim_vm.web[1] (deposed d1)"])
    assert "secret-large" not in json.dumps(got.to_json())
    assert parse_state_stamp(b"") == NO_STATE
    assert StateStamp.from_json(got.to_json()) == got


def test_written_tells_added_removed_changed_and_moved_by_id() -> None:
    before = stamp(3, web=("vm-1", "a"), db=("db-1", "a"), net=("net-1", "a"))
    now = stamp(5, web=("vm-1", "b"), db2=("db-1", "a"), extra=("x-1", "a"))
    w = written(before, now)
    assert w is not None and not w.other_lineage
    assert (w.added, w.removed, w.changed, w.moved) == (
        (("extra", "x-1"),), (("net", "net-1"),), (("web", "vm-1"),), (("db", "db2", "db-1"),))
    assert written(before, dataclasses.replace(before, objects={})) is None  # same serial and lineage
    assert written(before, dataclasses.replace(before, lineage="M")) is not None


def test_a_serial_that_moved_is_state_written_outside_advising_a_plan_first_and_write_records_it() -> None:
    rec = record(resources={"sim_vm.web": (C, "create", "vm-1")})
    rec.state_seen = stamp(3, sim_vm__web=("vm-1", "a"))
    ev = evidence(rec, stamp(4, sim_vm__web=("vm-1", "b")), "sim_vm.web", ids={"sim_vm.web": "vm-1"})

    [found] = compare(ev)
    assert found.code is Code.STATE_WRITTEN_OUTSIDE and found.addresses == ("sim_vm.web",)
    assert [a.split()[1] for a in found.next_actions] == ["plan"]
    decision = rules.decide(ev)
    assert decision.verdict is Verdict.RECORD_WRITER
    settled = rules.settled_record(ev, decision.verdict, "reconcile-2")
    assert settled.state_seen is not None and settled.state_seen.serial == 4
    assert settled.resources == rec.resources
    assert compare(dataclasses.replace(ev, record=settled)) == []


def test_a_running_record_is_not_judged_for_another_writer() -> None:
    rec = record(Status.RUNNING, resources={"sim_vm.web": (C, "create", "vm-1")})
    rec.state_seen = stamp(3)
    ev = evidence(rec, stamp(9), "sim_vm.web", ids={"sim_vm.web": "vm-1"})
    assert not any(f.code is Code.STATE_WRITTEN_OUTSIDE for f in compare(ev))


def test_an_id_no_state_holds_is_missing_even_when_its_address_holds_another_object() -> None:
    rec = record(resources={"sim_vm.web": (C, "create", "vm-1")})
    ev = evidence(rec, stamp(3), "sim_vm.web", ids={"sim_vm.web": "vm-2"},
                  plan=PlanEvidence())  # the plan has nothing to do: the address is declared and held
    assert rules.missing_from_state(ev) == {"sim_vm.web": "vm-1"}
    assert rules.no_longer_managed(ev) == {}
    [found] = [f for f in compare(ev) if f.code is Code.STATE_MISSING]
    assert "vm-1" in found.detail and "vm-2" in found.detail
    commands = list(found.next_actions) + [a.command for a in found.alternatives]
    assert not any(" apply " in c for c in commands) and not any("--import" in c for c in found.next_actions)
    assert any("--forget-missing vm-1" in c for c in commands) and any("state rm sim_vm.web" in c for c in commands)
    assert rules.decide(ev).verdict is Verdict.MISSING_TO_ERROR


def test_a_move_the_plan_undoes_is_never_followed_by_write() -> None:
    rec = record(resources={"sim_vm.web": (C, "create", "vm-1")})
    plan = PlanEvidence(changes=(Change("sim_vm.web2", "delete"), Change("sim_vm.web", "create")))
    ev = evidence(rec, stamp(3), "sim_vm.web2", ids={"sim_vm.web2": "vm-1"}, plan=plan)
    assert rules.moves_undone(ev) == {"sim_vm.web": "sim_vm.web2"}
    [found] = [f for f in compare(ev) if f.code is Code.MOVED_IN_STATE]
    assert not found.next_actions and not any("--write" in a.command for a in found.alternatives)
    assert rules.decide(ev).verdict is Verdict.NONE

    agreed = dataclasses.replace(ev, plan=PlanEvidence())
    assert rules.moves_undone(agreed) == {} and rules.decide(agreed).verdict is Verdict.FOLLOW_OBJECTS
    assert rules.moves_undone(dataclasses.replace(ev, plan=None)) == {"sim_vm.web": "sim_vm.web2"}


def test_objects_another_writer_added_are_listed_outside_and_objects_hyops_made_are_not() -> None:
    resources = {"sim_vm.web": ResourceEntry(C, "create", "vm-1"), "sim_vm.new": ResourceEntry(C, "create", "vm-3")}
    now = stamp(4, sim_vm__web=("vm-1", "a"), sim_vm__new=("vm-3", "a"), sim_vm__extra=("vm-2", "a"))
    mark_outside(resources, {"vm-1"}, now, made={"sim_vm.new"})
    assert resources["sim_vm.extra"].outside is True and resources["sim_vm.extra"].id == "vm-2"
    assert resources["sim_vm.new"].outside is None and resources["sim_vm.web"].outside is None
    assert resources["sim_vm.extra"].to_dict()["outside"] is True


def test_an_object_another_writer_made_where_hyops_deleted_one_takes_the_destroyed_entrys_key() -> None:
    """Drill seed 7110 on 1.15.5: hyops deleted vm["db"], a teammate's apply made a new one
    there; the record (`reconcile --write`, an apply's stamp) must hold the new object, not
    the destroyed entry, or reconcile calls a record consistent that lacks a state object."""
    resources = {"sim_vm.db": ResourceEntry(ResourceStatus.DESTROYED, "delete", "vm-old"),
                 "sim_vm.web": ResourceEntry(ResourceStatus.ERROR, "update", "vm-1")}
    now = stamp(9, sim_vm__db=("vm-new", "a"), sim_vm__web=("vm-2", "a"))
    mark_outside(resources, {"vm-old", "vm-1"}, now, made=set())
    assert resources["sim_vm.db"] == ResourceEntry(C, "outside", "vm-new", outside=True)
    assert resources["sim_vm.web"].id == "vm-1"  # a live object hyops knows: state_missing speaks of it
