"""The objects reconcile saw another writer put in a module's state, which the record does not
hold (docs/recovery.md: Another writer).

Why: a teammate's raw apply makes an object (a `-replace`, a new key); reconcile reports the
state written outside, read-only, and the record keeps its own objects. When the teammate then
rolls the state back (`state push -force` of an older copy), the state equals what hyops left,
and nothing but reconcile's earlier look says the new object exists: an apply would make a
second one. So reconcile keeps what it saw, and an object seen so, held now by no state and no
record, counts as state_missing for reconcile and the apply guard alike (operation/missing.py).

A sighting leaves only on proof, as the record's objects do (record/gate.py): the record holds
the id (it governs it from then on: a run that found it in its state records it, or records its
completed delete), a refresh shows the id gone while a state held it, or a person forgets it
naming the id (`reconcile --forget-missing ID`). While a state holds it, it is not missing.

Where: the store's document of kind `outside_seen` (store/documents.py), whose local file is
`<root>/state/modules/<module_id>/outside_seen.json`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hybridops_tf.record.model import OperationRecord, utc_now
from hybridops_tf.store import Documents
from hybridops_tf.store.documents import OUTSIDE_SEEN

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Sighting:
    """One object reconcile saw in the state that the record did not hold: where, its id, when."""

    address: str
    id: str
    seen_at: str

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "id": self.id, "seen_at": self.seen_at}


class OutsideSeenUnreadable(ValueError):
    """A kept list hyops cannot read: what reconcile saw is not known (never "nothing")."""


def read(store: Documents, key: str) -> tuple[Sighting, ...]:
    """The sightings kept for `key` (none kept: ()); OutsideSeenUnreadable when they cannot
    be read or understood."""
    path = store.fetch_document(OUTSIDE_SEEN, key)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise OutsideSeenUnreadable(f"{path}: {err}") from None
    objects = doc.get("objects") if isinstance(doc, dict) and doc.get("schema_version") == SCHEMA_VERSION else None
    if not isinstance(objects, list) or not all(
            isinstance(o, dict) and all(isinstance(o.get(f), str) for f in ("address", "id", "seen_at"))
            for o in objects):
        raise OutsideSeenUnreadable(f"{path}: not a schema_version {SCHEMA_VERSION} outside_seen document; "
                                    "a reconcile of the module looks again")
    return tuple(Sighting(o["address"], o["id"], o["seen_at"]) for o in objects)


def _write(store: Documents, key: str, module_ref: str, sightings: Iterable[Sighting]) -> None:
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "module_ref": module_ref,
                           "objects": [s.to_json() for s in sightings]}
    store.put_document(OUTSIDE_SEEN, key, json.dumps(doc, indent=2) + "\n")


def record_ids(record: OperationRecord | None) -> set[str]:
    """Every id the record holds an entry of (whatever its status: the record governs it)."""
    return {e.id for e in ((record.resources or {}) if record is not None else {}).values() if e.id}


def look(before: Iterable[Sighting], record: OperationRecord | None, state: Mapping[str, str],
         gone: Collection[str]) -> tuple[Sighting, ...]:
    """The sightings after one look: `before`, less those the record holds or a refresh showed
    `gone` (ids), plus each object of the state (address -> id) that the record does not hold."""
    held = record_ids(record)
    kept = {s.id: s for s in before if s.id not in held and s.id not in gone}
    now = utc_now()
    for address, ident in state.items():
        if ident not in held and ident not in gone and ident not in kept:
            kept[ident] = Sighting(address, ident, now)
    return tuple(kept.values())


def unheld(sightings: Iterable[Sighting], record: OperationRecord | None, held: Collection[str],
           deleted: Collection[str] = ()) -> list[tuple[str, str]]:
    """(address, id) of the sightings no state (`held`: the ids the module's state holds) and no
    record holds, and no completed delete removed (`deleted`: a stale run's): objects seen live
    that nothing manages now (state_missing)."""
    ids = record_ids(record)
    return [(s.address, s.id) for s in sightings if s.id not in held and s.id not in ids and s.id not in deleted]


def keep(store: Documents, key: str, module_ref: str, record: OperationRecord | None,
         state: Mapping[str, str], gone: Collection[str],
         kept: tuple[Sighting, ...] | None = None) -> tuple[Sighting, ...]:
    """Reconcile's look (see `look`), written only when it changed what was kept: a quiet
    module's read-only reconcile writes nothing. `kept`: the list as the caller read it (None:
    read it here). A kept list that cannot be read is replaced by this look. OSError when it
    cannot be written."""
    before = kept
    if before is None:
        try:
            before = read(store, key)
        except OutsideSeenUnreadable:
            before = None
    after = look(before or (), record, state, gone)
    if before is None or after != before:
        _write(store, key, module_ref, after)
    return after


def drop(store: Documents, key: str, module_ref: str, ids: Collection[str]) -> tuple[Sighting, ...]:
    """Let go of the sightings of `ids` (a person forgot them, naming each); returns those
    dropped. OSError when the list cannot be written."""
    kept = read(store, key)
    dropped = tuple(s for s in kept if s.id in ids)
    if dropped:
        _write(store, key, module_ref, (s for s in kept if s.id not in ids))
    return dropped
