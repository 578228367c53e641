"""Each run's journal in the shared store (store/postgres.py): the engine lines recovery needs,
written by a thread so the engine never waits on the database.

psycopg 3 is used only through store/pgconn.py.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from hybridops_tf.store.pgconn import _first_line, connect
from hybridops_tf.store.queued_journal import JOURNAL_FLUSH_TIMEOUT, STOP, QueuedJournal
from hybridops_tf.store.schema import SCHEMA
from hybridops_tf.store.url import redact_url

JOURNAL_QUEUE = 10000  # lines; beyond that the journal drops lines (and says so) rather than block


class PgJournal(QueuedJournal):
    """The engine lines recovery needs, written by a thread on its own connection.

    `line()` never blocks the engine: it queues, and a full queue drops the line and says so
    at close (the journal is then incomplete, and recovery stays conservative: a run whose
    journal is not complete may have created what it does not name)."""

    def __init__(self, url: str, key: str, run_id: str, connection: Callable[[], Any] | None = None) -> None:
        """connection: the store's (shared with the run's lock and writes); without it the
        journal opens one of its own and closes it at the end."""
        self.url = url
        self._shared = connection
        super().__init__(key, run_id, JOURNAL_QUEUE)

    def target(self) -> str:
        return redact_url(self.url)

    def _drain(self) -> None:
        """Write each line in order; lines a lost connection did not take wait in `pending`
        and are written again, first, on a new one (the lock's again once it was taken anew,
        else the store's: a journal line needs no lock), when the next line comes and at close."""
        conn = None
        pending: deque[tuple[str, str]] = deque()
        while True:
            item = self._queue.get()
            if item is STOP:
                break
            if len(pending) >= JOURNAL_QUEUE:
                self.dropped += 1
                continue
            pending.append(item)
            conn = self._flush(conn, pending)
        deadline = time.monotonic() + JOURNAL_FLUSH_TIMEOUT / 2
        wait = 0.2
        while pending and time.monotonic() + wait < deadline:
            time.sleep(wait)
            wait = min(2.0, wait * 2)
            conn = self._flush(conn, pending)
        self.dropped += len(pending)
        if conn is not None and self._shared is None:
            try:
                conn.close()
            except Exception:  # closing: nothing more to learn
                pass

    def _flush(self, conn: Any, pending: deque[tuple[str, str]]) -> Any:
        """Write the pending lines, oldest first; the connection to use next (None: get one)."""
        try:
            if conn is None or conn.closed:
                conn = self._shared() if self._shared is not None else connect(self.url)
            while pending:
                kind, text = pending[0]
                conn.execute(f"INSERT INTO {SCHEMA}.journal (key, run_id, kind, body) VALUES (%s, %s, %s, %s)",
                             (self.key, self.run_id, kind, text))
                pending.popleft()
        except Exception as err:  # noqa: BLE001 - any failure: the run goes on, the line is tried again
            self.error = _first_line(err)
            if conn is not None and self._shared is None:
                try:
                    conn.close()
                except Exception:  # closing a broken connection
                    pass
            return None
        return conn
