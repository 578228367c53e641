"""Read-only views of records for `hyops status` and `hyops outputs`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Status, is_stale
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.runtime.liveness import LiveEngine, live_engine
from hybridops_tf.store import Store

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


def entry(store: Store, module_ref: str) -> StatusEntry:
    try:
        record = store.read(module_ref)
    except CorruptRecordError as err:
        return StatusEntry(module_ref, None, None, problem=err.message)
    if record is None:
        return StatusEntry(module_ref, None, None)
    raw = store.read_raw(module_ref)
    stale = record.status is Status.RUNNING and is_stale(record.status, store.lock_is_free(module_ref))
    alive = live_engine(store.root, module_ref, record.run_id) if stale else None
    written, not_looked = _state_written(record)
    return StatusEntry(module_ref, record, raw, stale=stale and alive is None, engine_alive=alive,
                       written=written, not_looked=not_looked)


def _state_written(record: OperationRecord) -> tuple[Written | None, str | None]:
    """The state against the record's stamp, without the engine: only a local state file is read."""
    from pathlib import Path

    from hybridops_tf.record.stamp import cheap_stamp, written

    if record.state_seen is None or record.status is Status.RUNNING:
        return None, None  # nothing to compare with, or its own run may be writing the state
    if not record.module_dir or not Path(record.module_dir).is_dir():
        if record.status in CLAIMS_EMPTY:
            return None, None  # destroyed, and its folder removed since: nothing there to compare
        return None, "the module directory is unknown or gone: the state was not read"
    now = cheap_stamp(Path(record.module_dir), record.workspace)
    if now is None:
        return None, ("the state is not a local file hyops reads without the engine: not compared with the "
                      "record (hyops reconcile compares it)")
    return written(record.state_seen, now), None


def all_entries(store: Store) -> list[StatusEntry]:
    entries = []
    for key in store.keys():
        entries.append(entry(store, key))
    return sorted(entries, key=lambda e: e.module_ref)
