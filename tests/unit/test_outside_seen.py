"""What reconcile saw another writer put in a state (runtime/outside_seen.py): a sighting stays
until proof, and one no state or record holds is state_missing for reconcile and the apply
guard alike. The real-engine story (a teammate's replace, then a rollback) is
tests/integration/test_another_writer.py and the writers drill's named test."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.operation.guards import guard_missing
from hybridops_tf.operation.missing import missing_at_start
from hybridops_tf.operation.request import ModuleRequest
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Code
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.runtime import outside_seen
from hybridops_tf.runtime.outside_seen import Sighting
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.store.local import RecordStore
from tests.unit.reconcile_builders import REF, drift, evidence, quiet, record, state

C = ResourceStatus.COMPLETE
WEB = 'sim_vm.vm["web"]'
MINE = record(Status.OK, resources={WEB: (C, "create", "vm-mine")})
CMD = Commands("hyops", "terraform")


def test_an_object_in_the_state_the_record_does_not_hold_is_seen_and_stays_seen_after_the_state_lets_go() -> None:
    seen = outside_seen.look((), MINE, {WEB: "vm-theirs"}, gone=set())
    assert [(s.address, s.id) for s in seen] == [(WEB, "vm-theirs")]

    rolled_back = outside_seen.look(seen, MINE, {WEB: "vm-mine"}, gone=set())

    assert rolled_back == seen  # a rollback is no proof: it stays, with when it was first seen
    assert outside_seen.unheld(rolled_back, MINE, held={"vm-mine"}) == [(WEB, "vm-theirs")]


def test_a_sighting_leaves_on_proof_only_the_record_holding_it_or_a_refresh_showing_it_gone() -> None:
    seen = (Sighting(WEB, "vm-theirs", "2026-01-01T00:00:00Z"),)
    adopted = record(Status.OK, resources={WEB: (C, "create", "vm-theirs")})
    deleted = record(Status.OK, resources={WEB: (ResourceStatus.DESTROYED, "delete", "vm-theirs")})

    assert outside_seen.look(seen, adopted, {}, gone=set()) == ()
    assert outside_seen.look(seen, deleted, {}, gone=set()) == ()  # the record holds its completed delete
    assert outside_seen.look(seen, MINE, {WEB: "vm-theirs"}, gone={"vm-theirs"}) == ()
    assert outside_seen.look(seen, MINE, {}, gone=set()) == seen
    assert outside_seen.unheld(seen, MINE, held=set(), deleted={"vm-theirs"}) == []  # a stale run deleted it


def test_the_apply_guard_counts_a_sighting_no_state_or_record_holds(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / ".hyops")
    store.write(MINE)
    outside_seen.keep(store, REF, REF, MINE, {WEB: "vm-theirs"}, gone=set())

    lacks = missing_at_start(Command.APPLY, MINE, {"vm-mine"}, tmp_path, store, REF)
    held = missing_at_start(Command.APPLY, MINE, {"vm-mine", "vm-theirs"}, tmp_path, store, REF)

    assert lacks == [(WEB, "vm-theirs")] and held == []
    assert missing_at_start(Command.APPLY, MINE, None, tmp_path, store, REF) == []  # state not read: not judged


def test_a_quiet_look_writes_nothing_and_a_list_that_cannot_be_read_is_never_taken_for_none(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / ".hyops")
    store.write(MINE)
    assert outside_seen.keep(store, REF, REF, MINE, {WEB: "vm-mine"}, gone=set()) == ()
    assert not layout.outside_seen(store.root, REF).exists()

    layout.outside_seen(store.root, REF).write_text('{"schema_version": 9}')
    with pytest.raises(outside_seen.OutsideSeenUnreadable):
        missing_at_start(Command.APPLY, MINE, {"vm-mine"}, tmp_path, store, REF)
    assert outside_seen.keep(store, REF, REF, MINE, {WEB: "vm-mine"}, gone=set()) == ()  # replaced by the look
    assert outside_seen.read(store, REF) == ()


def test_forgetting_a_sighting_by_id_drops_that_one_only(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / ".hyops")
    outside_seen.keep(store, REF, REF, MINE, {WEB: "vm-a", 'sim_vm.vm["db"]': "vm-b"}, gone=set())

    assert [s.id for s in outside_seen.drop(store, REF, REF, {"vm-a"})] == ["vm-a"]
    assert [s.id for s in outside_seen.read(store, REF)] == ["vm-b"]


def test_reconcile_calls_a_seen_object_after_a_rollback_state_missing_and_lets_the_gone_one_go_by_refresh() -> None:
    """The state holds hyops's vm again, which the refresh shows gone; the teammate's vm lives and
    nothing holds it: no apply, the state lets go of the gone one by a refresh, then an import."""
    seen = (Sighting(WEB, "vm-theirs", "2026-01-01T00:00:00Z"),)
    ev = evidence(record=MINE, state=state(WEB, ids={WEB: "vm-mine"}), refresh=drift((WEB, "delete")),
                  seen_outside=seen)

    finding = next(f for f in compare(ev, CMD) if f.code is Code.STATE_MISSING)

    assert "vm-theirs" in finding.detail and finding.addresses == (WEB,)
    assert finding.next_actions[0].endswith("-- -refresh-only")
    assert finding.next_actions[1].endswith("--import 'sim_vm.vm[\"web\"]=vm-theirs'")
    quiet_ev = evidence(record=MINE, state=state(WEB, ids={WEB: "vm-mine"}), refresh=quiet(), seen_outside=seen)
    assert any(f.code is Code.STATE_MISSING for f in compare(quiet_ev, CMD))


@pytest.mark.parametrize(("passthrough", "refused"), [
    ((), True), (("-refresh-only",), False), (("--refresh-only=true",), False), (("-refresh-only=false",), True),
    (("--", "-refresh-only"), True),
])
def test_only_a_refresh_only_apply_goes_ahead_while_a_seen_object_is_held_by_nothing(
        tmp_path: Path, passthrough: tuple[str, ...], refused: bool) -> None:
    """A refresh-only apply creates and deletes nothing: it is how the state lets go of a gone
    object with proof, so the guard that stops an apply over a missing object lets it through."""
    module = tmp_path / "m"
    module.mkdir()
    (module / "terraform.tfstate").write_text('{"version": 4, "serial": 1, "lineage": "L", "resources": []}')
    runtime = Runtime(tmp_path / ".hyops")
    runtime.store.write(MINE)
    outside_seen.keep(runtime.store, REF, REF, MINE, {WEB: "vm-theirs"}, gone=set())
    req = ModuleRequest(command="apply", target=ModuleTarget(module, REF), runtime=runtime, passthrough=passthrough)

    if refused:
        with pytest.raises(RefusedError, match="vm-theirs"):
            guard_missing(req, MINE)
    else:
        assert guard_missing(req, MINE) == {}


T = "2026-01-01T00:00:00Z"
NO_STATE = (" but no state holds them, under any address: the state was lost, rewritten (a state older than them "
            "put back) or never saved; adopt each object back with --import (an import that finds no such object "
            "in the provider makes hyops forget it)")


def _missing_detail(missing: dict[str, str], seen: tuple[Sighting, ...], **kw: object) -> str:
    from hybridops_tf.reconcile.lost import state_missing

    ev = evidence(record=kw.pop("rec", MINE), state=kw.pop("st", state()), seen_outside=seen, **kw)
    return state_missing(ev, missing, CMD).detail


def test_state_missing_names_the_records_objects_and_those_reconcile_saw_apart() -> None:
    theirs = (Sighting(WEB, "vm-theirs", T), Sighting("sim_vm.b", "vm-b", T))
    both = {"sim_vm.a": "vm-a", WEB: "vm-theirs", "sim_vm.b": "vm-b"}
    seen_part = (f'reconcile saw another writer put {WEB} (vm-theirs, at {T}), sim_vm.b (vm-b, at {T}) in the '
                 "state, which the record never held")

    assert _missing_detail(both, theirs) == f"the record says sim_vm.a (vm-a) exist(s); {seen_part}{NO_STATE}"
    assert _missing_detail({WEB: "vm-theirs", "sim_vm.b": "vm-b"}, theirs) == seen_part + NO_STATE
    assert _missing_detail({"sim_vm.a": "vm-a"}, theirs) == "the record says sim_vm.a (vm-a) exist(s)" + NO_STATE
    many = {f"sim_vm.n{i}": f"vm-{i}" for i in range(7)}
    assert _missing_detail(many, ()).startswith("the record says " + ", ".join(
        f"sim_vm.n{i} (vm-{i})" for i in range(5)) + " and 2 more exist(s) but")


def test_state_missing_says_whose_object_lost_its_address_and_lets_gone_ones_go_by_one_refresh() -> None:
    two = record(Status.OK, resources={WEB: (C, "create", "vm-mine"), "sim_vm.b": (C, "create", "vm-b-mine")})
    st = state(WEB, "sim_vm.b", ids={WEB: "vm-now", "sim_vm.b": "vm-b-now"})
    ev_kw = {"rec": two, "st": st, "refresh": drift((WEB, "delete"), ("sim_vm.b", "delete"))}
    from hybridops_tf.reconcile.lost import state_missing

    seen = (Sighting(WEB, "vm-theirs", T),)
    detail = _missing_detail({WEB: "vm-theirs", "sim_vm.b": "vm-b-mine"}, seen, **dict(ev_kw))
    assert "and the one reconcile saw vm-theirs (likely its replacement" in detail
    assert "and the record's vm-b-mine (likely its replacement" in detail
    ev = evidence(record=two, state=st, refresh=drift((WEB, "delete"), ("sim_vm.b", "delete")), seen_outside=seen)
    actions = state_missing(ev, {WEB: "vm-theirs", "sim_vm.b": "vm-b-mine"}, CMD).next_actions
    assert [a.endswith("-- -refresh-only") for a in actions] == [True, False, False]  # one refresh lets both go


def test_state_missing_offers_a_forget_only_for_a_type_the_engine_cannot_import() -> None:
    from hybridops_tf.record.gate import NOT_IMPORTABLE

    rec = record(Status.OK, resources={"null_resource.x": (C, "create", "n-1")})
    rec.extra[NOT_IMPORTABLE] = ["null_resource"]

    assert _missing_detail({"null_resource.x": "n-1"}, (), rec=rec).endswith(
        NO_STATE + " (or forget it, once checked gone)")
    assert _missing_detail({"sim_vm.a": "vm-a"}, ()).endswith(NO_STATE)
