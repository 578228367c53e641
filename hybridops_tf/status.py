"""Read-only views of records for `hyops status` and `hyops outputs`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.lifecycle import Status, is_stale
from hybridops_tf.record import CorruptRecordError, OperationRecord, RecordStore


@dataclass(frozen=True, slots=True)
class StatusEntry:
    module_ref: str
    record: OperationRecord | None
    raw: dict[str, Any] | None  # the record exactly as stored
    stale: bool = False
    problem: str | None = None  # corrupt record

    @property
    def inconsistent(self) -> bool:
        """What makes `status` exit 3: no/corrupt record, stale running, suspect orphans."""
        if self.record is None:
            return True
        return self.stale or bool(self.record.suspect_orphans)

    @property
    def shown_status(self) -> str:
        if self.problem:
            return "corrupt"
        if self.record is None:
            return "none"
        if self.stale:
            return "running (stale)"
        return self.record.status.value


def entry(store: RecordStore, module_ref: str) -> StatusEntry:
    try:
        record = store.read(module_ref)
    except CorruptRecordError as err:
        return StatusEntry(module_ref, None, None, problem=err.message)
    if record is None:
        return StatusEntry(module_ref, None, None)
    raw = json.loads(store.record_path(module_ref).read_text(encoding="utf-8"))
    stale = record.status is Status.RUNNING and is_stale(record.status, store.lock_is_free(module_ref))
    return StatusEntry(module_ref, record, raw, stale=stale)


def all_entries(runtime_root: Path) -> list[StatusEntry]:
    store = RecordStore(runtime_root)
    entries = []
    for folder in store.module_dirs():
        ref = store.ref_of(folder)
        entries.append(entry(store, ref))
    return sorted(entries, key=lambda e: e.module_ref)
