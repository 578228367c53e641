"""What reconcile last saw of a module's live objects: the drift its refresh-only plan showed
(docs/stacks.md: Resume; docs/recovery.md: Another writer).

Why: an object deleted or changed in the cloud's console leaves the state as hyops left it (its
serial does not move), so nothing read without the engine tells. Reconcile sees it, and keeps
what it saw here against the record's run, so that `stack apply --resume` applies that member
instead of skipping it as unchanged. An observation speaks of one record: once a hyops run
writes the record again (an apply puts the objects back), it no longer counts.

Kept only when reconcile saw drift, or to replace an observation that saw some (a later
reconcile that sees none says so), so a read-only reconcile of a quiet module still writes
nothing. Where: the store's document of kind `drift_seen` (store/documents.py), whose local file
is `<root>/state/modules/<module_id>/drift_seen.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hybridops_tf.record.model import OperationRecord, utc_now
from hybridops_tf.store import Documents
from hybridops_tf.store.documents import DRIFT_SEEN

SCHEMA_VERSION = 1
_LISTED = 3


@dataclass(frozen=True, slots=True)
class DriftSeen:
    """One reconcile's look at a module's live objects: against which record run, when, and
    the drift it saw, as (address, action) pairs (none: it saw no drift)."""

    module_ref: str
    record_run_id: str
    seen_at: str
    drift: tuple[tuple[str, str], ...] = ()

    def about(self, record: OperationRecord) -> bool:
        """It speaks of `record`: no hyops run wrote the record since reconcile looked."""
        return record.run_id == self.record_run_id

    def describe(self) -> str:
        """In words: `reconcile saw ... at T: sim_vm.web vanished (delete)`."""
        if not self.drift:
            return f"reconcile saw no drift in its live objects at {self.seen_at}"
        parts = [f"{a} vanished" if act == "delete" else f"{a} changed ({act})" for a, act in self.drift[:_LISTED]]
        more = f" and {len(self.drift) - _LISTED} more" if len(self.drift) > _LISTED else ""
        return f"reconcile saw its live objects differ from its state at {self.seen_at}: {', '.join(parts)}{more}"

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "module_ref": self.module_ref,
                "record_run_id": self.record_run_id, "seen_at": self.seen_at,
                "drift": [{"address": a, "action": act} for a, act in self.drift]}

    @classmethod
    def from_json(cls, doc: Any) -> DriftSeen | None:
        """None for anything but a document to_json wrote (an unknown one is no observation)."""
        if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
            return None
        ref, run, at, drift = doc.get("module_ref"), doc.get("record_run_id"), doc.get("seen_at"), doc.get("drift")
        if not (isinstance(ref, str) and isinstance(run, str) and isinstance(at, str) and isinstance(drift, list)):
            return None
        pairs = tuple((str(d.get("address")), str(d.get("action"))) for d in drift if isinstance(d, dict))
        return cls(ref, run, at, pairs)


class DriftSeenUnreadable(ValueError):
    """A kept observation hyops cannot read: what reconcile saw is not known (the caller
    must not take that for "no drift")."""


def read(store: Documents, key: str) -> DriftSeen | None:
    """The observation kept for `key`; None when none is kept; DriftSeenUnreadable for one that
    cannot be read or understood."""
    path = store.fetch_document(DRIFT_SEEN, key)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise DriftSeenUnreadable(f"{path}: {err}") from None
    try:
        seen = DriftSeen.from_json(json.loads(text))
    except (ValueError, RecursionError) as err:
        raise DriftSeenUnreadable(f"{path}: not JSON ({err})") from None
    if seen is None:
        raise DriftSeenUnreadable(f"{path}: not a schema_version {SCHEMA_VERSION} drift_seen document")
    return seen


def keep(store: Documents, key: str, record: OperationRecord, drift: Sequence[tuple[str, str]]) -> DriftSeen | None:
    """Keep what reconcile saw of `record`'s live objects (the kept observation, or None when
    there was nothing to keep: no drift, and none seen before). OSError when it cannot be written."""
    try:
        before = read(store, key)
        replaces = before is not None and bool(before.drift)
    except DriftSeenUnreadable:
        replaces = True  # a look that cannot be read is replaced by this one
    if not drift and not replaces:
        return None
    seen = DriftSeen(record.module_ref, record.run_id, utc_now(), tuple(drift))
    text = json.dumps(seen.to_json(), indent=2) + "\n"
    store.put_document(DRIFT_SEEN, key, text)
    return seen
