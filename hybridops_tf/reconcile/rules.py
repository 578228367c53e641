"""What `--write` may conclude from evidence, as pure functions (docs/contract.md: Statuses, Reconcile).

Why pure: the one promise that matters here is negative — reconcile never writes `ok`,
`destroyed` or `absent` without the evidence for it, and never drops a suspect orphan —
and a negative promise is only believable when it can be hammered by a generator in a unit
test. write.py does the locking and writing; this module decides.

The rules:
- nothing is written while any evidence could not be read (the state, a plan, the module
  directory) or while the engine of the dead hyops still runs;
- a stale `running` record becomes `error`; creates its run started that left nothing in
  state become suspect orphans (the run's events.jsonl against `show -json`);
- an `error` record (or no record) whose state is empty, with a successful refresh-only
  plan, no drift, no errored.tfstate and no recorded object missing from state, becomes
  `destroyed` (after a destroy) or `absent`;
- an `error` record whose state holds the full configuration — refresh-only plan and normal
  plan both without a resource change, nothing tainted or deposed, no suspect orphan, no
  errored.tfstate, no action of its last run unfinished (record/actions.py) — becomes `ok`
  with outputs from state (after a refresh when only the
  state's output values lag, e.g. after an import);
- a `destroyed`/`absent` record whose state holds resources becomes `error`: a record
  that claims "nothing exists" over a non-empty state would make a stack destroy skip it;
- an `ok`/`retained` record that knows an object id the state holds under no address (no
  completed delete) becomes `error` (state_missing) when the configuration still declares
  its address: the object is live and unmanaged until imported; after a failed apply whose
  update of it errored, the engine dropped it (lost_from_state): no write drops it either;
- an `ok`/`retained` record whose objects the state holds at other addresses (`state mv`)
  follows them; one whose address the configuration no longer declares (`state rm` with its
  block removed) lists the object as released. Status unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from hybridops_tf.engine.progress import ResourceProgress
from hybridops_tf.engine.state import StateSnapshot, outputs_plain
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.reconcile import outside
from hybridops_tf.reconcile.model import ModuleEvidence
from hybridops_tf.record import actions, transitions
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Command, ResourceStatus, Status
from hybridops_tf.record.model import (
    OperationRecord,
    ReleasedObject,
    ResourceEntry,
    SuspectOrphan,
    entry_address,
    utc_now,
)
from hybridops_tf.record.objects import (
    interrupted_run_orphans,
    is_data_source,
    mark_outside,
    objects_after_run,
    released_after,
    resources_after_run,
    state_view,
)
from hybridops_tf.runtime import outside_seen

_LIVE_ACTIONS_SKIPPED = frozenset({"read", "delete"})  # data reads and deletes claim no object


class Verdict(StrEnum):
    NONE = "none"
    STALE_TO_ERROR = "stale_to_error"
    TO_OK = "to_ok"
    REFRESH_THEN_OK = "refresh_then_ok"  # state lacks only output values: refresh, then ok
    TO_DESTROYED = "to_destroyed"
    TO_ABSENT = "to_absent"
    DEMOTE_TO_ERROR = "demote_to_error"
    MISSING_TO_ERROR = "missing_to_error"  # ok/retained, but objects it knows left the state
    FOLLOW_OBJECTS = "follow_objects"  # ok/retained: objects moved in state, or released by hand
    RECORD_WRITER = "record_writer"  # another writer changed the state: the record takes it as it is now


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str


# --- evidence predicates, shared with compare -------------------------------------------------


def interrupted_orphans(ev: ModuleEvidence) -> list[str]:
    """Addresses the interrupted run may have created that the state does not hold (run
    order kept; record/objects.py's interrupted_run_orphans rules): [] unless the record is a stale running."""
    if not ev.stale or ev.record is None:
        return []
    view = state_view(ev.state.resources) if ev.state is not None else None  # ids: per-object rule
    found = interrupted_run_orphans(ev.last_run or {}, view, ev.record.run_id, ev.replanned_creates,
                                    known=ev.record.resources, stream_complete=ev.stream_complete)
    return [o.address for o in found]


def delete_done(key: str, entry_id: str | None, deleted: Mapping[str, tuple[str | None, ...]] | None) -> bool:
    """Whether the record entry `key` (an address, or `ADDR (deposed KEY)`) holding `entry_id`
    names an object whose delete the interrupted run completed: its id among those deleted at
    its address, or, for the address's current object, a delete the events did not name."""
    ids = (deleted or {}).get(entry_address(key), ())
    return (entry_id is not None and entry_id in ids) or (None in ids and key == entry_address(key))


def claimed_missing(
    record: OperationRecord | None, progress: Mapping[str, ResourceProgress] | None, in_state: set[str],
    deleted: Mapping[str, tuple[str | None, ...]] | None = None, held: frozenset[str] | set[str] = frozenset(),
) -> dict[str, str | None]:
    """Objects the record (or the interrupted run's events) say exist, absent from state.

    Ids first: an id the state holds under any address (`held`) is not missing, wherever the
    record last saw it (a `state mv`, a `moved` block applied by hand); an id the state holds
    under none is, even when its address now holds another object (`state rm`, then another
    writer's apply made a second one there: two objects for one address). Only an entry
    without an id is judged by its address.

    address -> the object's id when known (for an exact `--import`). A recorded id counts
    whatever the entry's status (an update or a delete that errored leaves the object
    live) unless it is `destroyed`, its delete completed, or the interrupted run's events
    show that very object's delete completing (`deleted`: address -> deleted ids, see
    delete_done).
    """
    missing: dict[str, str | None] = {}
    if record is not None and record.status not in CLAIMS_EMPTY:
        for addr, entry in (record.resources or {}).items():
            if ((addr in in_state and not (entry.id and held)) or is_data_source(addr, entry)
                    or entry.status is ResourceStatus.DESTROYED
                    or (entry.action == "delete" and entry.status is ResourceStatus.COMPLETE)):
                continue  # nothing live, or a delete that completed
            if delete_done(addr, entry.id, deleted):
                continue  # that object's delete completed: it is not live
            if entry.id in held:
                continue  # the state holds this object, at another address
            if entry.id:  # a key the gate kept beside another object (record/gate.py) names its address
                address = addr.partition(" (missing ")[0]
                missing[address if address not in missing else addr] = entry.id
            elif entry.status is ResourceStatus.COMPLETE and entry.action not in _LIVE_ACTIONS_SKIPPED:
                missing[addr] = None
    for addr, p in (progress or {}).items():
        if (p.status is Progress.COMPLETE and p.action not in _LIVE_ACTIONS_SKIPPED and addr not in in_state
                and (p.id_value is None or p.id_value not in held)):
            missing[addr] = p.id_value or missing.get(addr)
    return missing


def _in_state(ev: ModuleEvidence) -> set[str]:
    return set(ev.state.addresses()) if ev.state is not None else set()


def _held_ids(ev: ModuleEvidence) -> set[str]:
    if ev.state is None:
        return set()
    return {o.id for o in state_view(ev.state.resources).values() if o.id}


def _lost(ev: ModuleEvidence) -> dict[str, str | None]:
    """claimed_missing over this evidence ({} when the state could not be read)."""
    if ev.state is None:
        return {}
    stale = ev.stale
    return claimed_missing(ev.record, ev.last_run if stale else None, _in_state(ev),
                           ev.deleted if stale else None, _held_ids(ev))


def no_longer_managed(ev: ModuleEvidence) -> dict[str, str]:
    """Objects a healthy (`ok`/`retained`) record knows, absent from state, at addresses the
    configuration no longer declares (the normal plan would not create them): released by hand
    (`state rm` with the block removed), alive and unmanaged on purpose. Never advised for
    `--import`, which needs an address the configuration declares. {} without a plan that
    names its changes."""
    plan, rec = ev.plan, ev.record
    if rec is None or rec.status not in (Status.OK, Status.RETAINED):
        return {}  # after a failure, a lost object stays state_missing: nothing was released on purpose
    if plan is None or any(c.address == "(unnamed)" for c in plan.changes):
        return {}
    planned = {c.address for c in plan.changes}
    in_state = _in_state(ev)  # an address the state holds is declared, or the plan would delete it
    return {a: i for a, i in _lost(ev).items()
            if i is not None and entry_address(a) not in planned and entry_address(a) not in in_state}


def missing_from_state(ev: ModuleEvidence) -> dict[str, str | None]:
    """Objects the record knows that the state holds under no address, at addresses the
    configuration still declares: the state lost them (`state_missing`)."""
    released = no_longer_managed(ev)
    missing = {a: i for a, i in _lost(ev).items() if a not in released}
    return {**missing, **seen_missing(ev, missing)}


def seen_missing(ev: ModuleEvidence, beside: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The objects reconcile saw another writer put in the state (runtime/outside_seen.py) that
    no state, no record and no completed delete holds now, by key: the address, or `ADDR
    (missing ID)` where `beside` (the record's missing objects) already names the address."""
    if ev.state is None:
        return {}
    deleted = {i for ids in (ev.deleted or {}).values() for i in ids if i} if ev.stale else set()
    out: dict[str, str] = {}
    for address, ident in outside_seen.unheld(ev.seen_outside or (), ev.record, _held_ids(ev), deleted):
        taken = address in out or (beside is not None and address in beside)
        out[f"{address} (missing {ident})" if taken else address] = ident
    return out


_KEEPS_OBJECT = frozenset({"update"})  # planned actions that neither delete nor replace the object


def lost_from_state(ev: ModuleEvidence) -> dict[str, str]:
    """The objects of missing_from_state that the engine itself dropped: the record is `error`
    after a failed apply whose update of the object errored (its entry: `error`, action
    `update`, with the id the prior state held), no delete planned or completed for it, and
    its address empty in the state. Terraform before 1.14.2 removes an object from state when
    its update fails on an early path (hashicorp/terraform#37981): the object lives, and only
    an import puts it back; an apply would create a second one (`lost_from_state`). The state
    as that very run left it (the record's `state_seen`, stamped by the run) must lack the id
    too: a state lost or rewritten since is state_missing's general case."""
    rec = ev.record
    if rec is None or rec.status is not Status.ERROR or rec.failed_command != Command.APPLY:
        return {}
    left = _left_by_run(rec)
    if left is None:
        return {}  # no stamp of the state as that run left it: it may have been lost since (state_missing)
    entries, in_state = rec.resources or {}, _in_state(ev)
    return {a: i for a, i in missing_from_state(ev).items()
            if i is not None and i not in left and a in entries and entries[a].status is ResourceStatus.ERROR
            and entries[a].action in _KEEPS_OBJECT and entry_address(a) not in in_state}


def _left_by_run(rec: OperationRecord) -> set[str] | None:
    """The ids the state held as the record's own apply left it (its `state_seen`, stamped by
    that run: run ids start with their command), None when the record keeps no such stamp (a
    later `--write` stamps the state as it found it, which says nothing of the apply)."""
    seen = rec.state_seen
    if seen is None or seen.run_id != rec.run_id or not seen.run_id.startswith(f"{Command.APPLY.value}-"):
        return None
    return {o.id for o in seen.objects.values() if o.id}


def moved_in_state(ev: ModuleEvidence) -> dict[str, str]:
    """Record keys whose object the state holds under another key (a `state mv`), each with
    that key."""
    if ev.state is None or ev.record is None:
        return {}
    view = state_view(ev.state.resources)
    where = {o.id: key for key, o in view.items() if o.id}
    return {key: where[entry.id] for key, entry in (ev.record.resources or {}).items()
            if key not in view and entry.id in where and entry.status is not ResourceStatus.DESTROYED}


_DELETES = frozenset({"delete", "replace", "remove"})


def moves_undone(ev: ModuleEvidence) -> dict[str, str]:
    """The moves of moved_in_state the configuration does not agree with: the plan deletes (or
    replaces) the object at its new key, which no block declares and no `moved` block explains,
    so the next apply destroys it and creates a new one at the old address. Every move, when no
    plan names its changes: nothing shows the configuration agrees."""
    moved = moved_in_state(ev)
    plan = ev.plan
    if not moved or plan is None or any(c.address == "(unnamed)" for c in plan.changes):
        return moved
    doomed = {c.address for c in plan.changes if c.action in _DELETES}
    return {old: new for old, new in moved.items() if entry_address(new) in doomed}


def orphan_blockers(ev: ModuleEvidence) -> list[str]:
    """Suspect orphans, recorded or derived: they forbid `ok` (never `destroyed`/`absent`,
    which speak of the state only and keep the orphans listed)."""
    why: list[str] = []
    if ev.record is not None and ev.record.suspect_orphans:
        why.append(f"{len(ev.record.suspect_orphans)} suspect orphan(s) are listed")
    derived = interrupted_orphans(ev)
    if derived:
        why.append(f"the interrupted run left {len(derived)} suspect orphan(s)")
    return why


def state_blockers(ev: ModuleEvidence) -> list[str]:
    """What makes the state itself untrustworthy as evidence."""
    why: list[str] = []
    if ev.errored_state:
        why.append("errored.tfstate has not been pushed")
    if ev.state is None:
        why.append("the state could not be read")
    elif missing_from_state(ev):
        why.append("objects the record knows are missing from state")
    return why


def empty_confirmed(ev: ModuleEvidence) -> str | None:
    """None when the evidence shows nothing of the module exists in state; else why not."""
    why = state_blockers(ev)
    if ev.state is not None and not ev.state.is_empty:
        why.append(f"the state holds {len(ev.state.addresses())} resource(s)")
    if ev.refresh is None:
        why.append("the refresh-only plan did not run")
    elif ev.refresh.drift:
        why.append("the refresh-only plan shows drift")
    return "; ".join(why) or None


def fully_applied(ev: ModuleEvidence) -> str | None:
    """None when the state holds the whole configuration (both plans quiet); else why not."""
    why = orphan_blockers(ev) + state_blockers(ev)
    unfinished = actions.failed([r for r in ev.record.actions if r.address not in ev.undeclared_actions]
                                ) if ev.record is not None else None
    if unfinished:
        why.append(unfinished)
    state = ev.state
    if state is not None and state.tainted:
        why.append(f"{len(state.tainted)} resource(s) are tainted")
    if state is not None and state.deposed:
        why.append(f"{len(state.deposed)} deposed object(s) remain")
    if ev.refresh is None:
        why.append("the refresh-only plan did not run")
    elif ev.refresh.drift:
        why.append(f"the refresh-only plan shows {len(ev.refresh.drift)} drifted resource(s)")
    if ev.plan is None:
        why.append("the plan did not run")
    elif ev.plan.changes:
        why.append(f"the plan still has {len(ev.plan.changes)} change(s)")
    elif ev.plan.drift:
        why.append(f"the plan shows {len(ev.plan.drift)} drifted resource(s)")
    return "; ".join(why) or None


def empty_status(record: OperationRecord | None) -> Status:
    """`destroyed` after a destroy, else `absent` (docs/contract.md: Statuses)."""
    if record is None:
        return Status.ABSENT
    if record.status is Status.DESTROYED or "destroy" in (record.failed_command, record.active_command):
        return Status.DESTROYED
    return Status.ABSENT


# --- the decision and the record it leads to ---------------------------------------------------


def decide(ev: ModuleEvidence) -> Decision:
    """The one settlement the evidence allows next (apply it, then decide again). When none
    is left and the state was written outside hyops since the record's stamp, the record takes
    the state's stamp as it is now (its entries stay: RECORD_WRITER drops nothing)."""
    decision = _decide(ev)
    if decision.verdict is not Verdict.NONE or ev.record_problem or ev.busy or ev.engine_alive or ev.unchecked:
        return decision
    written = outside.written_outside(ev)
    if written is None:
        return decision
    return Decision(Verdict.RECORD_WRITER, f"the state was written outside hyops since run {written.since} "
                    f"(serial {written.before.serial} -> {written.now.serial}"
                    f"{', another lineage' if written.other_lineage else ''}): the record takes it as it is now")


def _decide(ev: ModuleEvidence) -> Decision:
    rec = ev.record
    if ev.record_problem:
        return Decision(Verdict.NONE, "a corrupt record is never overwritten")
    if ev.busy:
        return Decision(Verdict.NONE, "a live process holds the module lock")
    if ev.engine_alive:
        pid = getattr(ev.live_engine, "pid", "?")
        return Decision(Verdict.NONE, f"not settled: the engine of the dead hyops still runs (pid {pid}): it may "
                        "still change objects; wait for it or kill it, then reconcile again")
    if ev.unchecked:
        return Decision(Verdict.NONE, "not settled: some evidence could not be read: "
                        + "; ".join(ev.unchecked))
    if rec is None or rec.status is Status.ERROR:
        no_empty = empty_confirmed(ev)
        if no_empty is None:
            status = empty_status(rec)
            return Decision(Verdict.TO_DESTROYED if status is Status.DESTROYED else Verdict.TO_ABSENT,
                            "the state is empty and the refresh-only plan confirms it")
        if rec is None:
            return Decision(Verdict.NONE, f"no record, and not provably empty: {no_empty}")
        not_applied = fully_applied(ev)
        if not_applied is None:
            assert ev.plan is not None
            if ev.plan.outputs_changed:
                return Decision(Verdict.REFRESH_THEN_OK, "the state holds the full configuration "
                                "but not yet its output values")
            return Decision(Verdict.TO_OK, "the state holds the full configuration and both plans "
                            "show no change")
        return Decision(Verdict.NONE, f"stays error: {not_applied}")
    if rec.status is Status.RUNNING:
        return Decision(Verdict.STALE_TO_ERROR, "no live process holds the lock of this running record")
    if rec.status in CLAIMS_EMPTY and ev.state is not None and not ev.state.is_empty:
        return Decision(Verdict.DEMOTE_TO_ERROR, f"the state holds {len(ev.state.addresses())} "
                        f"resource(s) although the record says {rec.status.value}")
    if rec.status in (Status.OK, Status.RETAINED):
        missing = missing_from_state(ev)
        if missing:
            return Decision(Verdict.MISSING_TO_ERROR, f"the state lacks {len(missing)} object(s) the "
                            f"record knows: {', '.join(sorted(missing)[:5])}")
        if moves_undone(ev):
            return Decision(Verdict.NONE, "objects moved in state to addresses the configuration does not "
                            "declare: the record keeps their old addresses (move them back, or declare the move)")
        if moved_in_state(ev) or no_longer_managed(ev):
            return Decision(Verdict.FOLLOW_OBJECTS, "the state holds objects the record knows at new "
                            "addresses, or the configuration no longer manages some")
    return Decision(Verdict.NONE, f"{rec.status.value} needs no settling")


def _resources_from_state(state: StateSnapshot, known: Mapping[str, ResourceEntry] | None) -> dict[str, ResourceEntry]:
    entries: dict[str, ResourceEntry] = {}
    for res in state.resources:
        if not res.is_managed or res.deposed_key is not None:
            continue
        before = (known or {}).get(res.address)
        ident = res.values.get("id")
        object_id = ident if isinstance(ident, str) else (before.id if before else None)
        identity = res.identity if res.identity is not None else (
            before.identity if before is not None and before.id == object_id else None)
        version = res.identity_schema_version if res.identity is not None else (
            before.identity_schema_version if identity is not None and before is not None else None)
        entries[res.address] = ResourceEntry(
            status=ResourceStatus.COMPLETE, action=before.action if before else "reconcile",
            id=object_id, identity=dict(identity) if identity is not None else None,
            identity_schema_version=version)
    return entries


def _released(ev: ModuleEvidence, run_id: str, now: str) -> list[ReleasedObject]:
    return [ReleasedObject(entry_address(a), i, run_id, now) for a, i in sorted(no_longer_managed(ev).items())]


def _forget_deleted_ids(out: OperationRecord, ev: ModuleEvidence) -> None:
    """An id whose delete completed in the interrupted run names no live object: drop it
    from the settled record, so no later reconcile offers it to --import."""
    progress = ev.last_run or {}
    for key, entry in (out.resources or {}).items():
        if entry.id is None or not delete_done(key, entry.id, ev.deleted):
            continue
        made = progress.get(key)
        if made is not None and made.status is Progress.COMPLETE and made.id_value == entry.id:
            continue  # a create that completed: its new id is live
        entry.id = None


def settled_record(ev: ModuleEvidence, verdict: Verdict, run_id: str, now: str | None = None) -> OperationRecord:
    """The record `verdict` leads to. Suspect orphans are only ever added, never dropped."""
    now = now or utc_now()
    rec = ev.record
    state = ev.state
    if verdict is Verdict.STALE_TO_ERROR:
        assert rec is not None
        progress = ev.last_run or {}
        orphans = [SuspectOrphan(a, "create", rec.run_id, now) for a in interrupted_orphans(ev)]
        command = rec.active_command or Command.APPLY
        out = transitions.failed(
            rec, command=command,
            error=(f"interrupted: hyops stopped while `{command}` run {rec.run_id} was running "
                   "(stale running record); settled by reconcile from state and the run's events"),
            recovered_outputs=outputs_plain(state.outputs) if state is not None else None,
            # what the record knew, the run's events merged in, and the state when read: an
            # object an earlier run made stays known when the state lost it (state_missing)
            resources=resources_after_run(
                rec.resources, progress, state_view(state.resources) if state is not None else None),
            orphans=orphans)
        _forget_deleted_ids(out, ev)
        if ev.last_run_actions is not None and command in (Command.APPLY, Command.DESTROY):
            out.actions = actions.after_run(  # the interrupted run's own, as it left them (record/actions.py)
                rec.actions if command == Command.APPLY else [], ev.last_run_actions,
                lambda address: address not in ev.undeclared_actions)
    elif verdict is Verdict.TO_OK:
        assert rec is not None and state is not None
        resources = _resources_from_state(state, rec.resources)
        out = transitions.apply_succeeded(rec, outputs_plain(state.outputs), resources)
        out.released = released_after(out.released, _released(ev, run_id, now), state_view(state.resources))
        out.actions = actions.still_asked(out.actions, lambda address: address not in ev.undeclared_actions)
    elif verdict is Verdict.FOLLOW_OBJECTS:
        assert rec is not None and state is not None
        out = copy.deepcopy(rec)
        unmanaged = no_longer_managed(ev)
        kept = {a: e for a, e in (rec.resources or {}).items() if a not in unmanaged}
        view = state_view(state.resources)
        out.resources = objects_after_run(kept, {}, view).resources
        out.released = released_after(out.released, _released(ev, run_id, now), view)
    elif verdict is Verdict.RECORD_WRITER:
        assert rec is not None
        out = copy.deepcopy(rec)
    elif verdict in (Verdict.TO_DESTROYED, Verdict.TO_ABSENT):
        status = Status.DESTROYED if verdict is Verdict.TO_DESTROYED else Status.ABSENT
        base = rec if rec is not None else OperationRecord(
            module_ref=ev.where.module_ref, status=Status.ABSENT, run_id=run_id, started_at=now)
        out = transitions.confirmed_empty(base, dict(base.resources or {}), status)
    elif verdict is Verdict.DEMOTE_TO_ERROR:
        assert rec is not None and state is not None
        live = sorted(state.addresses())
        out = transitions.failed(
            rec, command=Command.DESTROY if rec.status is Status.DESTROYED else Command.RECONCILE,
            error=(f"reconcile found {len(live)} resource(s) in state although the record said "
                   f"{rec.status.value}: {', '.join(live[:5])}"),
            recovered_outputs=outputs_plain(state.outputs), resources=None, orphans=[])
    elif verdict is Verdict.MISSING_TO_ERROR:
        assert rec is not None
        missing = missing_from_state(ev)
        shown = ", ".join(f"{a} ({i})" if i else a for a, i in sorted(missing.items())[:5])
        out = transitions.failed(
            rec, command=Command.RECONCILE,
            error=(f"state_missing: the state lacks {len(missing)} object(s) the record knows: {shown}; "
                   "import each back (reconcile --import ADDRESS=ID) or apply if really gone"),
            recovered_outputs=None, resources=None, orphans=[])
    else:
        raise ValueError(f"verdict {verdict} writes no record")
    out = copy.deepcopy(out)
    out.run_id = run_id
    out.updated_at = now
    if ev.stamp is not None:  # the state as this settle found it, under the lock: what hyops now vouches for
        if rec is not None and rec.state_seen is not None and verdict in _KEEPS_ENTRIES:
            out.resources = dict(out.resources or {})
            known = {e.id for e in (rec.resources or {}).values() if e.id}
            mark_outside(out.resources, known, ev.stamp, set())
        out.state_seen = dataclasses.replace(ev.stamp, run_id=run_id)
    return out


# settles that keep the record's entries, no run between: what the state holds beyond them, another writer put there
_KEEPS_ENTRIES = frozenset({Verdict.RECORD_WRITER, Verdict.FOLLOW_OBJECTS, Verdict.MISSING_TO_ERROR})
