"""What the record knows of each object after a run (docs/contract.md: Statuses, Reconcile).

Pure merges of the record's object entries with what the run's events, the state and the
plan say: entries follow objects (ids), not addresses; what the run released, what the state
lost (`state_missing`), what another writer added (`outside`), and the creates that may have
made an object nobody recorded (suspect orphans). No I/O, so every rule is unit-tested
without a process; record/transitions.py turns these into the record's status.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.vocabulary import CREATE_ACTIONS, Progress
from hybridops_tf.record.lifecycle import ResourceStatus
from hybridops_tf.record.model import (
    ReleasedObject,
    ResourceEntry,
    SuspectOrphan,
    deposed_entry_key,
    entry_address,
    utc_now,
)

if TYPE_CHECKING:  # the event parser loads only once the engine runs (start-up cost)
    from hybridops_tf.engine.progress import ResourceProgress
    from hybridops_tf.record.stamp import StateStamp


_PROGRESS_TO_STATUS = {
    Progress.PENDING: ResourceStatus.PENDING,
    Progress.STARTED: ResourceStatus.ERROR,  # in flight when the engine stopped: not complete
    Progress.COMPLETE: ResourceStatus.COMPLETE,
    Progress.DESTROYED: ResourceStatus.DESTROYED,
    Progress.ERROR: ResourceStatus.ERROR,
}


@dataclass(frozen=True, slots=True)
class StateObject:
    """One object provider state holds: the current one at an address, or a deposed one
    (keyed record.deposed_entry_key in a StateView)."""

    id: str | None = None
    tainted: bool = False
    deposed: str | None = None
    identity: Mapping[str, Any] | None = None  # the provider's key for it (engines >= 1.12)
    identity_schema_version: int | None = None


StateView = Mapping[str, StateObject]
"""What a state read proved it holds, by record key (address, or a deposed object's key);
None where it could not be read."""


def state_view(resources: Iterable[Any]) -> dict[str, StateObject]:
    """A StateView from parsed state resources (engine.state.StateResource): managed objects,
    current and deposed."""
    view: dict[str, StateObject] = {}
    for r in resources:
        if r.mode != "managed":
            continue
        ident = r.values.get("id") if isinstance(r.values, Mapping) else None
        ident = str(ident) if ident not in (None, "") else None
        identity = getattr(r, "identity", None)
        version = getattr(r, "identity_schema_version", None)
        if r.deposed_key is not None:
            view[deposed_entry_key(r.address, r.deposed_key)] = StateObject(ident, bool(r.tainted), r.deposed_key,
                                                                            identity, version)
        else:
            view[r.address] = StateObject(ident, bool(r.tainted), None, identity, version)
    return view


def as_view(state: StateView | Iterable[str] | None) -> StateView | None:
    """Accept a StateView, a plain list of addresses (ids unknown), or None (not read)."""
    if state is None or isinstance(state, Mapping):
        return state
    return {address: StateObject() for address in state}


# Planned actions the apply carries out without a provider call for the object (no
# apply_start): the state after the run is their only evidence.
_STATE_ONLY_ACTIONS = frozenset({"move", "remove", "forget", "import", "no-op", "read"})
_FORGET_ACTIONS = frozenset({"remove", "forget"})  # `removed` with destroy = false (Terraform, OpenTofu)


@dataclass(slots=True)
class Objects:
    """What the record knows after a run: `resources` by record key, and the objects the run
    released (forgotten on purpose, alive)."""

    resources: dict[str, ResourceEntry]
    released: list[ReleasedObject]


def resources_after_run(
    known: Mapping[str, ResourceEntry] | None,
    progress: Mapping[str, ResourceProgress],
    state: StateView | None,
) -> dict[str, ResourceEntry]:
    """objects_after_run's resources (for callers that release nothing: no state, or a read)."""
    return objects_after_run(known, progress, state).resources


def objects_after_run(
    known: Mapping[str, ResourceEntry] | None,
    progress: Mapping[str, ResourceProgress],
    state: StateView | None,
    *,
    run_id: str = "",
    converged: bool = False,
) -> Objects:
    """What the record knows after a run: earlier knowledge, the run's changes merged in, and
    every object the state holds (when it was read) with its id.

    Entries follow objects, not addresses. An object's identity is its id: a `moved` block
    (the plan's previous address) or a `state mv` (the state holds the id elsewhere) moves its
    entry; an object the run forgot (`removed` with destroy = false) leaves `resources` for
    `released`; a completed delete retires an id, which no later entry inherits; a deposed
    object is its own entry. Knowledge accumulates: an address this run did not touch keeps
    its entry, so a no-op apply never forgets an object. An entry whose id the state lacks
    everywhere is kept: it is the evidence `state_missing` is made of.

    `converged`: the run applied the whole configuration successfully, so what the state holds
    is complete and nothing planned is left pending.
    """
    merged = {a: copy.copy(e) for a, e in (known or {}).items()}
    for addr, p in progress.items():  # moved blocks: the entry goes with its object
        old = p.previous_address
        if old and old in merged and (addr not in merged or not _live(merged[addr])):
            merged[addr] = merged.pop(old)
    for addr, p in progress.items():
        prev = merged.get(addr)
        if _deposed_delete(prev, p, state.get(addr) if state is not None else None):
            continue  # only a deposed object was deleted there: the current one's entry stands
        prev_id = prev.id if prev is not None and _live(prev) else None  # a destroyed id never comes back
        ident = p.id_value
        if ident is None and prev_id is not None:
            replaced = p.status is Progress.COMPLETE and p.action == "create"
            if not replaced and prev_id not in p.deleted_ids:
                ident = prev_id
        if ident is None and p.status is Progress.DESTROYED and p.deleted_ids:
            ident = p.deleted_ids[-1]
        status, action = _PROGRESS_TO_STATUS[p.status], p.action or (p.planned_action or "")
        if p.status is Progress.PENDING and p.planned_action in _STATE_ONLY_ACTIONS and prev is not None:
            status = prev.status  # no provider call: the state, below, tells what became of it
        merged[addr] = ResourceEntry(
            status=status, action=action, id=ident,
            tainted=prev.tainted if prev is not None and p.status is Progress.PENDING else None,
            **_identity_kept(prev, ident),
        )
    released: list[ReleasedObject] = []
    if state is not None:
        _merge_state(merged, progress, state, converged)
        released = _settle_absent(merged, progress, state, run_id, converged)
    return Objects(merged, released)


def _deposed_delete(prev: ResourceEntry | None, p: ResourceProgress, now: StateObject | None) -> bool:
    """The run's deletes at this address were all of deposed objects (a create_before_destroy's
    old one, left by an earlier run): none was of the object the entry knows, which the state
    still holds at the address."""
    return (p.action == "delete" and prev is not None and _live(prev) and now is not None
            and now.deposed is None and now.id == prev.id and bool(p.deleting_ids)
            and prev.id not in p.deleting_ids)


def released_after(known: list[ReleasedObject], new: Iterable[ReleasedObject],
                   state: StateView | None,
                   resources: Mapping[str, ResourceEntry] | None = None) -> list[ReleasedObject]:
    """The released list after a run: what was known plus what the run released (once per
    object), less any object the state holds again (an `import` adopted it back) or that
    `resources` lists destroyed (adopted back, then deleted: it lives on no more)."""
    held = {obj.id for obj in state.values() if obj.id is not None} if state is not None else set()
    held |= {e.id for e in (resources or {}).values() if e.id is not None and e.status is ResourceStatus.DESTROYED}
    out: list[ReleasedObject] = []
    seen: set[tuple[str, str]] = set()
    for obj in [*known, *new]:
        if (obj.address, obj.id) not in seen and obj.id not in held:
            seen.add((obj.address, obj.id))
            out.append(obj)
    return out


def _live(entry: ResourceEntry) -> bool:
    return entry.id is not None and entry.status is not ResourceStatus.DESTROYED


def _merge_state(merged: dict[str, ResourceEntry], progress: Mapping[str, ResourceProgress],
                 state: StateView, converged: bool = False) -> None:
    """Every object the state holds, at its key, with its id; an entry the record kept at
    another key for the same id lends it what it knew (a `state mv`). After a converged apply
    every current object is `complete`: the engine judged the whole configuration, conditions
    included (an object whose postcondition failed before and holds now)."""
    by_id = {e.id: k for k, e in merged.items() if e.id is not None and k not in state and _live(e)}
    for key, obj in state.items():
        prev = merged.get(key)
        if prev is None and obj.id in by_id:
            prev = merged[by_id[obj.id]]
        run = progress.get(key)
        if prev is not None and run is not None and obj.id is not None and obj.id in run.deleted_ids:
            continue  # the run saw this object's delete complete: a state that still lists it
            # is stale (the engine could not save it: errored.tfstate), not a live object
        if obj.deposed is not None:  # an old object a replace could not delete: still to remove
            merged[key] = ResourceEntry(ResourceStatus.ERROR, "delete", obj.id,
                                        True if obj.tainted else None, obj.deposed,
                                        **identity_of(obj, prev))
            continue
        status = prev.status if prev is not None else ResourceStatus.COMPLETE
        if status in (ResourceStatus.DESTROYED, ResourceStatus.PENDING) or converged:
            status = ResourceStatus.COMPLETE  # the state holds an object there now
        if prev is not None and prev.id is not None and obj.id is not None and prev.id != obj.id \
                and run is None and status is ResourceStatus.ERROR:
            status = ResourceStatus.COMPLETE  # another object than the one that failed
        merged[key] = ResourceEntry(
            status=status,
            action=prev.action if prev is not None else "",
            id=obj.id or (prev.id if prev is not None else None),
            tainted=True if obj.tainted else None,
            outside=prev.outside if prev is not None and prev.id == obj.id else None,
            **identity_of(obj, prev),
        )
    for key, entry in merged.items():
        if key not in state:
            entry.tainted = None


def _identity_kept(prev: ResourceEntry | None, ident: str | None) -> dict[str, Any]:
    """The identity an entry knew, kept while it names the same object (its id)."""
    if prev is None or prev.identity is None or ident is None or prev.id != ident:
        return {}
    return {"identity": prev.identity, "identity_schema_version": prev.identity_schema_version}


def identity_of(obj: StateObject, prev: ResourceEntry | None) -> dict[str, Any]:
    """The object's identity as the state gives it now; else what the entry knew of the same
    object (a state read through an engine or provider that gives none)."""
    if obj.identity is not None:
        return {"identity": dict(obj.identity), "identity_schema_version": obj.identity_schema_version}
    return _identity_kept(prev, obj.id) if obj.id is not None else {}


def _identity_pair(obj: Any) -> tuple[dict[str, Any] | None, int | None]:
    """(identity, identity_schema_version) of a state object that may carry them
    (engine/state.py's StateResource): (None, None) where it has none."""
    identity = getattr(obj, "identity", None)
    if not identity:
        return None, None
    return dict(identity), getattr(obj, "identity_schema_version", None)


def _settle_absent(merged: dict[str, ResourceEntry], progress: Mapping[str, ResourceProgress],
                   state: StateView, run_id: str, converged: bool) -> list[ReleasedObject]:
    """Entries at keys the state does not hold: moved elsewhere (the id is there), released
    (the run forgot the object), nothing (planned, never made) or kept (may live unseen)."""
    where = {obj.id: key for key, obj in state.items() if obj.id is not None}
    released: list[ReleasedObject] = []
    now = utc_now()
    for key in [k for k in merged if k not in state]:
        entry, run = merged[key], progress.get(key)
        deleted = progress.get(entry_address(key))
        if entry.id is not None and where.get(entry.id, key) != key:
            del merged[key]  # the state holds this object under another key: a `state mv`
        elif run is not None and run.planned_action in _FORGET_ACTIONS and _live(entry):
            assert entry.id is not None
            released.append(ReleasedObject(entry_address(key), entry.id, run_id, now))
            del merged[key]
        elif entry.id is not None and deleted is not None and entry.id in deleted.deleted_ids:
            entry.status = ResourceStatus.DESTROYED  # e.g. a deposed object's delete completed
        elif entry.id is None and (converged or (
                entry.status is not ResourceStatus.ERROR and run is not None
                and run.planned_action in _STATE_ONLY_ACTIONS)):
            del merged[key]  # nothing was made there, and nothing is left to make
        elif converged and entry.status is ResourceStatus.PENDING:
            entry.status = ResourceStatus.ERROR  # a whole apply left it undone: not `pending`, not gone
    return released


def gone_on_refresh(
    resources: dict[str, ResourceEntry], read_addresses: Iterable[str], state: StateView
) -> dict[str, ResourceEntry]:
    """After a refresh: an object the run asked the provider about and the state then dropped
    is confirmed gone (the provider said so), as good as a completed delete."""
    for addr in read_addresses:
        entry = resources.get(addr)
        if entry is not None and addr not in state:
            entry.status = ResourceStatus.DESTROYED
            entry.tainted = None
    return resources


def missing_from_state(
    resources: Mapping[str, ResourceEntry] | None, state: StateView
) -> list[tuple[str, str]]:
    """(record key, id) the record knows as live that no completed delete removed and the state
    holds under no key (ids first: an object moved by `state mv` is not missing, and one whose
    key now holds another object is): the object may live on, unseen by the engine
    (`state_missing`)."""
    held = {obj.id for obj in state.values() if obj.id is not None}
    return [
        (addr, entry.id)
        for addr, entry in sorted((resources or {}).items())
        if entry.id and entry.status is not ResourceStatus.DESTROYED
        and entry.id not in held and not is_data_source(addr, entry)
    ]


def is_data_source(address: str, entry: ResourceEntry) -> bool:
    """A data source (a read, not an object anyone creates or must delete)."""
    return entry.action == "read" or address.startswith("data.") or ".data." in address


def new_suspect_orphans(
    progress: Mapping[str, ResourceProgress],
    state: StateView | Iterable[str] | None,
    run_id: str,
    *,
    known: Mapping[str, ResourceEntry] | None = None,
    interrupted_run: bool = False,
) -> list[SuspectOrphan]:
    """Creates that started and whose object the state does not hold: it may exist, unrecorded.

    Orphans are about objects, not addresses: during a replace the address still holds the old
    object, so a lost create is suspect unless the state's object there is a new one (an id
    that was not at the address before the run). `state` None means the state could not be
    read: then every create that started without completing is suspect. For an interrupted
    run (hyops died), planned creates count too: the engine may have started them after hyops
    stopped reading its output, so no apply_start was recorded.
    """
    view = as_view(state)
    now = utc_now()
    statuses = {Progress.STARTED, Progress.ERROR} | ({Progress.PENDING} if interrupted_run else set())
    return [
        SuspectOrphan(address=addr, action="create", run_id=run_id, at=now)
        for addr, p in progress.items()
        if p.action in CREATE_ACTIONS
        and p.status in statuses
        and not _create_landed_in_state(addr, p, view, (known or {}).get(addr))
    ]


def _create_landed_in_state(
    addr: str, p: ResourceProgress, state: StateView | None, known: ResourceEntry | None
) -> bool:
    """Does the state hold the object this unfinished create was making?"""
    if state is None or addr not in state:
        return False
    before = set(p.prior_ids) | set(p.deleted_ids)
    if known is not None and known.id and known.status is not ResourceStatus.DESTROYED:
        before.add(known.id)
    current = state[addr].id
    if not before:  # nothing was at the address before, unless this was a replace we cannot see
        return p.planned_action != "replace"
    return current is not None and current not in before


UNNAMED_ORPHAN = "*"
"""The address of a suspect orphan nobody could name: an interrupted apply may have created
objects, and neither its events nor a fresh plan can say which (look in the provider)."""


def interrupted_run_orphans(
    progress: Mapping[str, ResourceProgress],
    state: StateView | Iterable[str] | None,
    run_id: str,
    replanned: Sequence[str] | None = (),
    *,
    known: Mapping[str, ResourceEntry] | None = None,
    stream_complete: bool = False,
) -> list[SuspectOrphan]:
    """Suspect orphans of a run hyops died in.

    `replanned` matters when hyops read none of the run's plan (it froze or died before):
    the creates a fresh plan shows and the state does not hold may have been started
    unseen; None means that plan failed too, so one unnamed suspect keeps the doubt listed.
    `stream_complete`: the run's events hold all the engine wrote, to its end, so a planned
    create with no start in them never started (not a suspect), whatever stopped hyops.
    """
    view = as_view(state)
    found = new_suspect_orphans(progress, view, run_id, known=known, interrupted_run=not stream_complete)
    named = {o.address for o in found} | set(progress)
    in_state = set(view or ())
    extra = [UNNAMED_ORPHAN] if replanned is None else [
        a for a in replanned if a not in in_state and a not in named]
    now = utc_now()
    return found + [SuspectOrphan(address=a, action="create", run_id=run_id, at=now)
                    for a in dict.fromkeys(extra)]


def mark_outside(resources: dict[str, ResourceEntry], known_ids: set[str], state: StateStamp, made: set[str]) -> None:
    """Add to `resources` (record entries by key) each object `state` holds that the record did
    not know (its id not in `known_ids`, its key not listed) and no hyops run made (`made`:
    keys this run created or imported), marked `outside`: another writer's apply or import.
    An entry already at its key (another object hyops knows) is left alone: state_missing
    speaks of that one; a `destroyed` one names no live object, so the state's takes its key
    (else the record would never hold an object another writer made where hyops deleted one)."""
    for key, obj in state.objects.items():
        if " (deposed " in key or key in made or (obj.id and obj.id in known_ids):
            continue
        entry = resources.get(key)
        if entry is None or (entry.status is ResourceStatus.DESTROYED and entry.id != obj.id):
            resources[key] = ResourceEntry(ResourceStatus.COMPLETE, "outside", obj.id, outside=True)
            resources[key].identity, resources[key].identity_schema_version = _identity_pair(obj)
        elif entry.id == obj.id and obj.id is not None:
            entry.outside = True
