"""What `--write` may conclude (reconcile/rules.py): each rule, and a seeded random search
for evidence that would make it claim ok/destroyed/absent without proof (docs/contract.md: Statuses, Reconcile)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from hybridops_tf.reconcile.model import ModuleEvidence, PlanEvidence
from hybridops_tf.reconcile.rules import Verdict, decide, settled_record
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from tests.unit.reconcile_builders import (
    REF,
    drift,
    evidence,
    plan_with,
    progress,
    quiet,
    record,
    state,
)

RUN = "reconcile-20260101T000000Z-00000000"


def test_a_stale_running_record_becomes_error_listing_the_creates_that_left_no_state() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9", outputs={"network_id": "n-1"}), lock_free=True,
                  state=state("sim_network.this", outputs={"network_id": "n-1"}),
                  last_run=progress(sim_network__this=("complete", "create", "n-1"),
                                    sim_vm__this=("started", "create")))

    assert decide(ev).verdict is Verdict.STALE_TO_ERROR
    rec = settled_record(ev, Verdict.STALE_TO_ERROR, RUN)

    assert rec.status is Status.ERROR and rec.failed_command == "apply" and "apply-9" in (rec.last_error or "")
    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [("sim_vm.this", "apply-9")]
    assert rec.resources is not None and rec.resources["sim_network.this"].status == "complete"
    assert rec.owner is None and rec.active_command is None and rec.run_id == RUN
    assert rec.outputs == {"network_id": "n-1"}


def test_a_running_record_whose_lock_is_held_is_never_settled() -> None:
    assert decide(evidence(record=record(Status.RUNNING), lock_free=False, state=state())).verdict is Verdict.NONE


def test_an_error_record_with_the_full_configuration_in_state_becomes_ok_with_outputs_from_state() -> None:
    ev = evidence(record=record(Status.ERROR, outputs={"network_id": "n-old"}),
                  state=state("sim_network.this", outputs={"network_id": "n-1"}, ids={"sim_network.this": "n-1"}),
                  refresh=quiet(), plan=quiet())

    assert decide(ev).verdict is Verdict.TO_OK
    rec = settled_record(ev, Verdict.TO_OK, RUN)

    assert rec.status is Status.OK and rec.failed_command is None and rec.last_error is None
    assert rec.outputs == {"network_id": "n-1"}
    assert rec.resources is not None and rec.resources["sim_network.this"].id == "n-1"


def test_state_lacking_only_output_values_asks_for_a_refresh_before_ok() -> None:
    ev = evidence(record=record(Status.ERROR), state=state("sim_network.this"), refresh=quiet(),
                  plan=plan_with(outputs_changed=True))

    assert decide(ev).verdict is Verdict.REFRESH_THEN_OK


@pytest.mark.parametrize(("failed", "verdict"), [("destroy", Verdict.TO_DESTROYED), ("apply", Verdict.TO_ABSENT)])
def test_an_error_record_over_a_refreshed_empty_state_becomes_destroyed_or_absent(failed: str,
                                                                                  verdict: Verdict) -> None:
    ev = evidence(record=record(Status.ERROR, failed_command=failed, outputs={"network_id": "n-1"},
                                orphans=["sim_vm.this"]),
                  state=state(), refresh=quiet(), plan=plan_with(("sim_network.this", "create")))

    assert decide(ev).verdict is verdict
    rec = settled_record(ev, verdict, RUN)

    assert rec.status.value == verdict.value.removeprefix("to_")
    assert rec.previous_outputs == {"network_id": "n-1"} and rec.outputs is None
    assert [o.address for o in rec.suspect_orphans] == ["sim_vm.this"]  # never dropped


def test_no_record_over_a_refreshed_empty_state_becomes_absent() -> None:
    ev = evidence(state=state(), refresh=quiet())

    assert decide(ev).verdict is Verdict.TO_ABSENT
    rec = settled_record(ev, Verdict.TO_ABSENT, RUN)
    assert rec.module_ref == REF and rec.status is Status.ABSENT and rec.run_id == RUN


def test_a_destroyed_record_over_a_live_state_is_demoted_to_error() -> None:
    ev = evidence(record=record(Status.DESTROYED), state=state("sim_network.this"), refresh=quiet())

    assert decide(ev).verdict is Verdict.DEMOTE_TO_ERROR
    rec = settled_record(ev, Verdict.DEMOTE_TO_ERROR, RUN)
    assert rec.status is Status.ERROR and "sim_network.this" in (rec.last_error or "")


@pytest.mark.parametrize("blocker", [
    {"record": record(Status.ERROR, orphans=["sim_vm.this"])},
    {"errored_state": True},
    {"state": state("sim_network.this", tainted=["sim_network.this"])},
    {"refresh": drift(("sim_network.this", "delete"))},
    {"plan": plan_with(("sim_vm.this", "create"))},
    {"refresh": None},
    {"plan": None},
    {"record": record(Status.ERROR, resources={"sim_vm.this": ("complete", "create", "vm-1")})},
])
def test_any_missing_piece_of_evidence_keeps_an_error_record_error(blocker: dict) -> None:
    base = {"record": record(Status.ERROR), "state": state("sim_network.this"), "refresh": quiet(), "plan": quiet()}

    assert decide(evidence(**{**base, **blocker})).verdict is Verdict.NONE


def test_a_corrupt_record_is_never_written() -> None:
    assert decide(evidence(record_problem="bad json", state=state(), refresh=quiet())).verdict is Verdict.NONE


# --- the property: no verdict claims more than its evidence ------------------------------------

ADDRESSES = ["sim_network.this", "sim_vm.this", "sim_vm.vm[0]", "sim_config.this"]


def _random_evidence(rng: random.Random) -> ModuleEvidence:
    """Any mix of record, state, plans, events, orphans, errored.tfstate and lock."""
    def pick() -> list[str]:
        return rng.sample(ADDRESSES, rng.randint(0, len(ADDRESSES)))

    status = rng.choice([None, *Status])
    rec = None
    if status is not None:
        res = {a: (rng.choice(["complete", "error", "pending", "destroyed"]), rng.choice(["create", "delete", "read"]),
                   rng.choice([None, "id-1"])) for a in pick()}
        rec = record(status, resources=res if rng.random() < 0.8 else None,
                     orphans=pick() if rng.random() < 0.3 else (),
                     outputs={"o": 1} if rng.random() < 0.5 else None,
                     failed_command=rng.choice([None, "apply", "destroy", "import"]))
    live = pick() if rng.random() < 0.6 else []
    snap = state(*live, tainted=[a for a in live if rng.random() < 0.2]) if rng.random() < 0.9 else None
    plans = [None, quiet(), drift((rng.choice(ADDRESSES), rng.choice(["delete", "update"]))),
             plan_with((rng.choice(ADDRESSES), "create")), plan_with(outputs_changed=True)]
    runs = {a.replace(".", "__"): (rng.choice(["started", "complete", "error", "pending"]),
                                   rng.choice(["create", "update"]))
            for a in pick()}
    return evidence(record=rec, record_problem="corrupt" if rng.random() < 0.05 else None,
                    lock_free=rng.random() < 0.85, state=snap, refresh=rng.choice(plans), plan=rng.choice(plans),
                    last_run=progress(**{k.replace("[", "_").replace("]", ""): v for k, v in runs.items()}) or None,
                    errored_state=rng.random() < 0.15)


def _quiet(p: PlanEvidence | None, *, drift_only: bool = False) -> bool:
    return p is not None and not p.drift and (drift_only or not p.changes)


def _complete_addresses(ev: ModuleEvidence) -> set[str]:
    rec = ev.record
    known = {a for a, e in ((rec.resources or {}) if rec else {}).items()
             if e.status == "complete" and e.action not in ("read", "delete")}
    if rec is not None and rec.status is Status.RUNNING:
        known |= {a for a, p in (ev.last_run or {}).items() if p.status.value == "complete"}
    return known


def _oracle_allows(ev: ModuleEvidence, status: Status, rec: OperationRecord | None = None) -> bool:
    """The evidence each claim needs, written independently of rules.py. An object the
    settled record `rec` lists as released (alive, unmanaged) needs no place in state."""
    snap = ev.state
    if snap is None or ev.errored_state or ev.record_problem:
        return False
    in_state = set(snap.addresses())
    released = {o.address for o in rec.released} if rec is not None else set()
    if _complete_addresses(ev) - in_state - released:
        return False
    if status in (Status.DESTROYED, Status.ABSENT):
        return snap.is_empty and _quiet(ev.refresh, drift_only=True)
    if status is Status.OK:
        orphans = bool(ev.record and ev.record.suspect_orphans)
        started = {a for a, p in (ev.last_run or {}).items() if p.status.value in ("started", "error")} - in_state
        if ev.record is not None and ev.record.status is Status.RUNNING and started:
            orphans = True
        return (not orphans and not snap.tainted and _quiet(ev.refresh, drift_only=True) and _quiet(ev.plan))
    return True


def _live_ids(rec: OperationRecord) -> set[str]:
    """Ids a record says may live: in resources (not destroyed) or released."""
    ids = {e.id for e in (rec.resources or {}).values() if e.id and e.status != "destroyed"}
    return ids | {o.id for o in rec.released}


def test_no_random_evidence_ever_settles_ok_destroyed_or_absent_without_proof() -> None:
    rng = random.Random(20260101)
    claims = {Status.OK: 0, Status.DESTROYED: 0, Status.ABSENT: 0}
    for _ in range(6000):
        ev = _random_evidence(rng)
        before = {o.address for o in ev.record.suspect_orphans} if ev.record else set()
        for _step in range(4):  # follow the chain --write follows
            verdict = decide(ev).verdict
            if verdict in (Verdict.NONE, Verdict.REFRESH_THEN_OK):
                break
            rec = settled_record(ev, verdict, RUN, now="2026-01-01T00:00:00Z")
            if verdict is Verdict.FOLLOW_OBJECTS:  # no new claim: the status stays, objects follow
                assert ev.record is not None and rec.status is ev.record.status
                assert _live_ids(ev.record) <= _live_ids(rec), "an object the record knew was lost"
            elif rec.status in claims:
                assert _oracle_allows(ev, rec.status, rec), (verdict, ev)
                claims[rec.status] += 1
            assert before <= {o.address for o in rec.suspect_orphans}, "an orphan was dropped"
            before = {o.address for o in rec.suspect_orphans}
            ev = dataclasses.replace(ev, record=rec)
            if verdict is Verdict.DEMOTE_TO_ERROR:
                break
    assert all(n >= 10 for n in claims.values()), claims  # the generator really reaches each claim


def test_a_stale_run_whose_plan_was_never_read_lists_the_replanned_creates_as_orphans() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state("sim_network.this"),
                  last_run={}, replanned_creates=("sim_vm.this",), refresh=quiet(),
                  plan=plan_with(("sim_vm.this", "create")))

    assert decide(ev).verdict is Verdict.STALE_TO_ERROR
    rec = settled_record(ev, Verdict.STALE_TO_ERROR, RUN)

    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [("sim_vm.this", "apply-9")]


def test_a_stale_run_nobody_could_plan_keeps_an_unnamed_orphan() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run={}, replanned_creates=None, refresh=quiet())

    rec = settled_record(ev, decide(ev).verdict, RUN)

    assert rec.status is Status.ERROR
    assert [o.address for o in rec.suspect_orphans] == ["*"]
