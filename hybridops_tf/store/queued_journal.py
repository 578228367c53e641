"""A run's journal that never makes the engine wait (store/pgjournal.py, store/sqlite.py).

`line()` queues and returns; a thread of the store's own (`_drain`) writes what is queued to
the database. A full queue drops the line and counts it, and `close()` says so: the journal is
then incomplete, and recovery stays conservative (a run whose journal is not complete may have
created what it does not name). `complete()` marks the journal whole only when nothing was
dropped.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Sequence
from typing import Any

from hybridops_tf.record.model import utc_now
from hybridops_tf.store.ports import JournalRead

JOURNAL_FLUSH_TIMEOUT = 10.0
STOP = object()  # queued by close(): the thread writes what came before it, then ends
# the kinds of a journal's rows: an engine line, the engine spawned, every line kept
EVENT, ENGINE, COMPLETE = "event", "engine", "complete"


def read_rows(rows: Sequence[tuple[str, str]]) -> JournalRead | None:
    """A run's journal rows, (kind, body) in the order they were written, as what the journal
    holds of it; None when it holds nothing of it."""
    if not rows:
        return None
    kinds = {kind for kind, _ in rows}
    return JournalRead(tuple(body for kind, body in rows if kind == EVENT),
                       engine_started=ENGINE in kinds, complete=COMPLETE in kinds)


class QueuedJournal:
    """The queue and its thread; a store's journal writes in `_drain` and names itself in
    `target` (never a password)."""

    def __init__(self, key: str, run_id: str, capacity: int) -> None:
        self.key = key
        self.run_id = run_id
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self.dropped = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._drain, name="hyops-journal", daemon=True)
        self._thread.start()

    def target(self) -> str:
        raise NotImplementedError

    def _drain(self) -> None:
        raise NotImplementedError

    def line(self, text: str, kind: str = EVENT) -> None:
        try:
            self._queue.put_nowait((kind, text))
        except queue.Full:
            self.dropped += 1

    def engine_started(self, pid: int, host: str) -> None:
        self.line(json.dumps({"pid": pid, "host": host, "at": utc_now()}), ENGINE)

    def complete(self) -> None:
        """Every engine line reached the journal (only when none was dropped)."""
        if not self.dropped:
            self.line("", COMPLETE)

    def close(self) -> str | None:
        """What went wrong, in one line, or None: every line reached the store."""
        try:
            self._queue.put(STOP, timeout=JOURNAL_FLUSH_TIMEOUT)
        except queue.Full:
            pass
        self._thread.join(JOURNAL_FLUSH_TIMEOUT)
        if self._thread.is_alive():
            return f"the journal of {self.run_id} could not be flushed to {self.target()} in time"
        if self.dropped:
            why = f": {self.error}" if self.error else " (the store was too slow)"
            return f"{self.dropped} engine lines of {self.run_id} did not reach the store's journal{why}"
        return None
