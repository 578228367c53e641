"""Read-only views of records for `hyops status` and `hyops outputs`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.address import DEFAULT_WORKSPACE, record_key, split_key
from hybridops_tf.record.lifecycle import Status, is_stale
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.runtime.liveness import LiveEngine, live_engine
from hybridops_tf.runtime.state_look import look
from hybridops_tf.store import Records

if TYPE_CHECKING:
    from hybridops_tf.record.stamp import Written


@dataclass(frozen=True, slots=True)
class StatusEntry:
    module_ref: str
    record: OperationRecord | None
    raw: dict[str, Any] | None  # the record exactly as stored
    stale: bool = False
    problem: str | None = None  # corrupt record
    # A `running` record whose hyops died (lock free) while its engine still runs: not stale
    # yet, the engine may still be changing things (it is being stopped; see liveness.py).
    engine_alive: LiveEngine | None = None
    # The state moved since hyops left it (reconcile/outside.py), when it could be read cheaply.
    written: Written | None = None
    # Why the state was not compared with the record's stamp (None: it was, or nothing to compare).
    not_looked: str | None = None

    @property
    def inconsistent(self) -> bool:
        """What makes `status` exit 3: no/corrupt record, stale running, suspect orphans, or a
        `retained` module whose last command failed (kept on purpose, still not converged)."""
        if self.record is None:
            return True
        kept_failure = self.record.status is Status.RETAINED and self.record.failed_command is not None
        return (self.stale or self.engine_alive is not None or bool(self.record.suspect_orphans) or kept_failure
                or self.written is not None)

    @property
    def shown_status(self) -> str:
        if self.problem:
            return "corrupt"
        if self.record is None:
            return "none"
        if self.stale:
            return "running (stale)"
        if self.engine_alive is not None:
            return "running (engine alive)"
        return self.record.status.value

    @property
    def shown_doc(self) -> dict[str, Any] | None:
        """What `status --json` prints: the record as stored, plus `engine_alive`,
        `state_written_outside` or `state_not_read` when set."""
        if self.raw is None:
            return self.raw
        doc = dict(self.raw)
        if self.engine_alive is not None:
            alive = self.engine_alive
            doc["engine_alive"] = {"pid": alive.pid, "host": alive.host, "run_id": alive.run_id}
        if self.written is not None:
            doc["state_written_outside"] = self.written.to_json()
        if self.not_looked is not None:
            doc["state_not_read"] = self.not_looked
        return doc


def entry(store: Records, module_ref: str, directory: Path | None = None) -> StatusEntry:
    """`module_ref`'s record now. `directory`: where the module is in this checkout (a stack
    member's folder), read for its state instead of the record's module_dir."""
    try:
        record = store.read(module_ref)
    except CorruptRecordError as err:
        return StatusEntry(module_ref, None, None, problem=err.message)
    if record is None:
        return StatusEntry(module_ref, None, None)
    raw = store.read_raw(module_ref)
    stale = record.status is Status.RUNNING and is_stale(record.status, store.lock_is_free(module_ref))
    alive = live_engine(store.root, module_ref, record.run_id) if stale else None
    seen = look(record, directory)  # the one decision, shared with stack status and --resume
    return StatusEntry(module_ref, record, raw, stale=stale and alive is None, engine_alive=alive,
                       written=seen.written, not_looked=seen.shown_not_looked)


def all_entries(store: Records) -> list[StatusEntry]:
    entries = []
    for key in store.keys():
        entries.append(entry(store, key))
    return sorted(entries, key=lambda e: e.module_ref)


def record_of_folder(store: Records, ref: str, directory: Path, workspace: str | None) -> str:
    """The record key `hyops status DIR` (no --ref) reads: the ref derived from DIR when it has
    a record; else the one record whose module_dir is DIR in `workspace`, whatever its status
    (a stack member's record is filed under the stack's ref, not the folder's path). Two or
    more such records: UsageError naming the --ref of each; none: the derived key (no record)."""
    key = record_key(ref, workspace)
    if store.read(key) is not None:
        return key
    place = (os.path.realpath(directory), workspace or DEFAULT_WORKSPACE)  # as operation/places.py: Place
    found = []
    for other in store.keys():
        try:
            rec = store.read(other) if other != key else None
        except CorruptRecordError:
            continue
        if rec is not None and rec.module_dir and \
                (os.path.realpath(rec.module_dir), rec.workspace or DEFAULT_WORKSPACE) == place:
            found.append(other)
    if len(found) > 1:
        refs = " or ".join(f"--ref {split_key(k)[0]}" for k in sorted(found))
        raise UsageError(f"no record is filed under {ref}, and {len(found)} records claim the folder "
                         f"{directory}: name one with {refs}")
    return found[0] if found else key

