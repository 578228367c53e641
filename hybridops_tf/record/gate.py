"""The one gate through which an object leaves the record (docs/recovery.md: One gate).

Why: each way another writer found to lose an object (a rollback by `state push -force`, a
raw `-replace`, an apply over a state that lost it) dropped the record's entry somewhere else.
So every record hyops writes passes here, with the record it replaces: an object (an id) the
old record knew live, in `resources` or `released`, stays in the new one unless there is
proof it is gone: the engine's completed delete of that id, a refresh that showed the provider
no longer has it, or a person's forget naming it (`--forget-missing ID`, `--forget-released`).
Anything else keeps it: at its address when that is free, else at `ADDR (missing ID)`, where
record/objects.missing_from_state reports it as `state_missing` (the apply guard refuses on
it). tests/unit/test_gate.py keeps this the only function that lets an object go.

A refresh's proof works the other way too: an object the new record still claims live (a
run's refresh of an address the configuration no longer declares leaves an entry with the id
it read) while the refresh showed it gone, and the state the new record vouches for
(`state_seen`) holds it nowhere, is `destroyed` there: no later reconcile calls the record
consistent over an entry no state holds, nor releases it as alive. (A completed delete is
already settled by record/objects.py, which knows when a create made the same id again.)
"""

from __future__ import annotations

import copy
import re
from dataclasses import field

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.lifecycle import ResourceStatus
from hybridops_tf.record.model import OperationRecord, ResourceEntry, entry_address, missing_entry_key


@dataclass(frozen=True, slots=True)
class Proof:
    """What proves an object gone: ids whose delete the engine completed, ids a refresh showed
    the provider no longer has, ids a person forgot by name."""

    deleted: frozenset[str] = field(default_factory=frozenset)
    gone: frozenset[str] = field(default_factory=frozenset)
    forgotten: frozenset[str] = field(default_factory=frozenset)

    def covers(self, object_id: str) -> bool:
        return object_id in self.deleted or object_id in self.gone or object_id in self.forgotten


NO_PROOF = Proof()


@dataclass(frozen=True, slots=True)
class Kept:
    """An object the gate kept: the new record lacked it and nothing proved it gone."""

    key: str
    id: str


def _live(key: str, entry: ResourceEntry) -> bool:
    data = entry.action == "read" or key.startswith("data.") or ".data." in key
    return entry.id is not None and entry.status is not ResourceStatus.DESTROYED and not data


def gated(before: OperationRecord | None, after: OperationRecord, proof: Proof = NO_PROOF
          ) -> tuple[OperationRecord, list[Kept]]:
    """`after`, holding again every object `before` knew live that `after` lets go without
    `proof`, and the objects so kept (for the caller to say). `after` is not changed."""
    if before is None:
        return _retired(after, proof), []
    held = {e.id for e in (after.resources or {}).values() if e.id is not None}
    held |= {o.id for o in after.released}
    out: OperationRecord | None = None
    kept: list[Kept] = []
    for key, entry in sorted((before.resources or {}).items()):
        assert entry.id is not None or not _live(key, entry)
        if not _live(key, entry) or entry.id in held or proof.covers(entry.id or ""):
            continue
        out = out or copy.deepcopy(after)
        resources = out.resources if out.resources is not None else {}
        address = entry_address(key)
        at = key if key not in resources else missing_entry_key(address, entry.id or "")
        resources[at] = ResourceEntry(entry.status, entry.action, entry.id, outside=entry.outside,
                                      identity=entry.identity, identity_schema_version=entry.identity_schema_version)
        out.resources = resources
        held.add(entry.id or "")
        kept.append(Kept(at, entry.id or ""))
    for obj in before.released:
        if obj.id in held or proof.covers(obj.id):
            continue
        out = out or copy.deepcopy(after)
        out.released.append(copy.copy(obj))
        held.add(obj.id)
        kept.append(Kept(obj.address, obj.id))
    return _retired(out if out is not None else after, proof), kept


def _retired(rec: OperationRecord, proof: Proof) -> OperationRecord:
    """`rec`, every live entry whose id a refresh showed gone (`proof.gone`) and that the state
    it vouches for holds under no key marked `destroyed` (a copy when any is; `rec` when none).
    Without a stamp of the state nothing is retired: the object may be where no one read."""
    seen = rec.state_seen
    if seen is None or not proof.gone:
        return rec
    in_state = {o.id for o in seen.objects.values() if o.id}
    gone = [k for k, e in (rec.resources or {}).items()
            if _live(k, e) and e.id not in in_state and e.id in proof.gone]
    if not gone:
        return rec
    out = copy.deepcopy(rec)
    assert out.resources is not None
    for key in gone:
        out.resources[key].status = ResourceStatus.DESTROYED
        out.resources[key].tainted = None
    return out


def kept_note(kept: list[Kept], reconcile: str) -> str:
    """One line saying what the gate kept, and the command that settles it."""
    listed = ", ".join(f"{k.id} ({entry_address(k.key)})" for k in kept[:5])
    more = f" and {len(kept) - 5} more" if len(kept) > 5 else ""
    return (f"the record keeps {listed}{more}: no state holds it and nothing proved it deleted "
            f"(state_missing); run `{reconcile}`")


def held_missing(before: OperationRecord | None, held_ids: set[str] | None,
                 proof: Proof = NO_PROOF) -> list[tuple[str, str]]:
    """(key, id) of the objects `before` knows live that no state holds and nothing proved
    deleted: those `held_ids` (the ids the module's state holds now) lacks, or, where the
    state could not be read (None), those this gate kept at a missing key; never one `proof`
    covers (a stale record's own run completed its delete: its events say so)."""
    if before is None:
        return []
    out: list[tuple[str, str]] = []
    for key, entry in sorted((before.resources or {}).items()):
        if not _live(key, entry) or entry.id is None or proof.covers(entry.id):
            continue
        kept_here = key != entry_address(key) and " (deposed " not in key
        if (entry.id not in held_ids) if held_ids is not None else kept_here:
            out.append((key, entry.id))
    return out


def missing_refusal(command: str, ref: str, missing: list[tuple[str, str]], reconcile: str) -> str | None:
    """Why `command` must not run while the record holds objects no state holds (state_missing):
    the apply would act without them (make a second one, or leave them unmanaged). None: it may."""
    if not missing:
        return None
    listed = ", ".join(f"{ident} ({entry_address(key)})" for key, ident in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    article = "an" if command[:1] in "aeiou" else "a"
    return (f"{command} of {ref} refused: the record holds (or reconcile saw another writer make) {listed}{more}, "
            "which no state holds and no completed delete removed (state_missing): it may still be live, and "
            f"{article} {command} now would act without it; "
            f"run `{reconcile}` first, or pass --allow-uncertain to {command} anyway")


NOT_IMPORTABLE = "not_importable"  # the record's list of resource types the engine refused to import
_TYPE = re.compile(r"^(?:module\.[^.\[]+(?:\[[^\]]*\])?\.)*(?:data\.)?([A-Za-z0-9_-]+)\.")


def resource_type(address: str) -> str | None:
    """The resource type an address names (`module.a.sim_vm.web["x"]` -> sim_vm)."""
    m = _TYPE.match(entry_address(address))
    return m.group(1) if m else None


def not_importable(rec: OperationRecord | None) -> frozenset[str]:
    """The resource types the engine refused to import for this module (learnt from its
    refusal, "resource TYPE doesn't support import", and kept in the record)."""
    kept = rec.extra.get(NOT_IMPORTABLE) if rec is not None else None
    return frozenset(t for t in kept if isinstance(t, str)) if isinstance(kept, list) else frozenset()
