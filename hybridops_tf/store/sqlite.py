"""The SQLite store (`--store sqlite:///PATH`): records, run journals and documents in one
database file, for one machine with several processes (a CI runner's parallel jobs, a stack
run beside a reconcile, runs from several project folders).

It spans roots (`spans_roots`, store/ports.Records): every process, from any folder and any
runtime root, reads and writes the same records, as with the PostgreSQL store (documents kept
in the database, each root holding the local copy readers use; no per-root place markers; a
run's journal kept for a runner that never saw its folder). Run folders stay under each
runtime root. `hyops store status` and `store import-local` administer it (`admin()`).

The module lock is the local store's file lock (store/local.ModuleLock), in a folder of its
own per key under `<database>.locks/` (0700): the kernel frees it when its holder dies, so "a
`running` record whose lock is free is stale" holds as it does for the local store, and its
holder's note names a live process only. A lock never rides on a database connection, so a
write needs no fence: the lock is held for as long as its process lives.

It holds no stack queue (procrastinate is PostgreSQL's): `queue()` is None, and `--queue`
is refused naming the PostgreSQL store. The database and connections: store/sqlitedb.py.
"""

from __future__ import annotations

import json
import queue
import sqlite3
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import RefusedError
from hybridops_tf.base.files import ensure_dir, keep_copy, register_private_root
from hybridops_tf.record.address import key_of_module_id, module_id, record_key
from hybridops_tf.record.model import OperationRecord, utc_now
from hybridops_tf.store.documents import lines_key, local_path
from hybridops_tf.store.local import OWNER_NOTE, ModuleLock, live_holder, lock_file_is_free
from hybridops_tf.store.ports import JournalRead
from hybridops_tf.store.queued_journal import STOP, QueuedJournal, read_rows
from hybridops_tf.store.record_rows import doc_from_row, record_from_row
from hybridops_tf.store.sqlitedb import SqliteUnavailable, connect, connection, database_path, open_database

JOURNAL_QUEUE = 10000  # lines; beyond that the journal drops lines (and says so) rather than block the engine


class SqliteStore:
    """The Store port (store/__init__.py) on a SQLite database file; run folders under `root`."""

    spans_roots = True  # one database for every process and folder of the machine: see the module docstring

    def __init__(self, url: str, runtime_root: Path) -> None:
        self.url = url
        self.path = database_path(url)
        self.root = runtime_root
        register_private_root(runtime_root)
        open_database(self.path)
        self.locks = Path(f"{self.path}.locks")
        try:
            ensure_dir(self.locks)
        except OSError as err:
            raise RefusedError(f"the SQLite store's lock folder {self.locks} could not be made: "
                               f"{err.strerror or err}; nothing was changed") from None
        self._digest_key: bytes | None = None

    # -- one statement, one transaction -------------------------------------------------

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read; RefusedError (exit 4) when the database cannot answer."""
        try:
            with connection(self.path) as conn:
                return list(conn.execute(sql, params).fetchall())
        except sqlite3.Error as err:
            raise RefusedError(f"the SQLite store {self.path} could not be read: {err}; nothing was changed") from None

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        """One write, one transaction; SqliteUnavailable (an OSError) when it cannot be made."""
        try:
            with connection(self.path) as conn:
                conn.execute(sql, params)
        except sqlite3.Error as err:
            raise SqliteUnavailable(f"the SQLite store {self.path} could not be written: {err}") from None

    # -- records -------------------------------------------------------------------------

    def where(self, key: str) -> str:
        return f"record {key} in {self.path}"

    def describe(self) -> str:
        return f"SQLite store {self.path}"

    def read(self, key: str) -> OperationRecord | None:
        rows = self._rows("SELECT doc FROM records WHERE key = ?", (key,))
        return record_from_row(rows[0][0], key, self.where(key)) if rows else None

    def read_raw(self, key: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT doc FROM records WHERE key = ?", (key,))
        return doc_from_row(rows[0][0] if rows else None)

    def write(self, record: OperationRecord, *, stamp: bool = True) -> None:
        """Replace the record whole, in one statement (`updated_at` set to now unless `stamp` is
        False: an import, a record put back as it was)."""
        if stamp:
            record.updated_at = utc_now()
        key = record_key(record.module_ref, record.workspace)
        doc = numbers.dumps(record.to_dict())  # numbers keep their text
        self._write("INSERT INTO records (key, doc, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) "
                    "DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at", (key, doc, utc_now()))

    def delete(self, key: str) -> None:
        self._write("DELETE FROM records WHERE key = ?", (key,))

    def keys(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT key FROM records ORDER BY key")]

    # -- locks: a file lock per key beside the database (store/local.ModuleLock) --------

    def module_dir(self, key: str) -> Path:
        """The key's lock folder (its lock file and its holder's note)."""
        return self.locks / module_id(key)

    def lock_path(self, key: str) -> Path:
        return self.module_dir(key) / ".lock"

    def lock(self, key: str, run_id: str, timeout: float = 0) -> ModuleLock:
        return ModuleLock(self, key, run_id, timeout)

    def lock_is_free(self, key: str) -> bool:
        return lock_file_is_free(self.lock_path(key))

    def read_lock_needs_files(self, key: str) -> bool:
        """Whether taking the lock for a read would create files (its folder, beside the
        database, does not exist yet)."""
        return not self.lock_path(key).exists()

    # -- the journal of each run ---------------------------------------------------------

    def journal(self, key: str, run_id: str) -> SqliteJournal:
        return SqliteJournal(self.path, key, run_id)

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        """A run's meta or result, written now (SqliteUnavailable when it cannot be)."""
        self._write("INSERT INTO journal (key, run_id, kind, body) VALUES (?, ?, ?, ?)",
                    (key, run_id, kind, json.dumps(doc, default=str)))

    def journal_lines(self, key: str, run_id: str) -> JournalRead | None:
        return read_rows(self._rows("SELECT kind, body FROM journal WHERE key = ? AND run_id = ? ORDER BY id",
                                    (key, run_id)))

    # -- documents (rerun inputs, stack reports, drift seen) -----------------------------

    def put_document(self, kind: str, name: str, text: str) -> None:
        """The store's copy, then the local one (store/documents.py) readers use."""
        self._write("INSERT INTO documents (kind, name, body, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT "
                    "(kind, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
                    (kind, name, text, utc_now()))
        keep_copy(local_path(self.root, kind, name), text)

    def fetch_document(self, kind: str, name: str) -> Path:
        """The document's local file (store/documents.py), the store's copy brought there first."""
        path = local_path(self.root, kind, name)
        rows = self._rows("SELECT body FROM documents WHERE kind = ? AND name = ?", (kind, name))
        if rows:
            keep_copy(path, rows[0][0])
        return path

    # A document's appended lines (a stack run's member updates, runtime/live_journal.py): one
    # short insert each in the journal table (store/documents.lines_key), instead of the whole
    # document rewritten on every update.

    def append_document_line(self, kind: str, name: str, run_id: str, line: str) -> None:
        self._write("INSERT INTO journal (key, run_id, kind, body) VALUES (?, ?, 'line', ?)",
                    (lines_key(kind, name), run_id, line))

    def document_lines(self, kind: str, name: str, run_id: str) -> list[str]:
        rows = self._rows("SELECT body FROM journal WHERE key = ? AND run_id = ? ORDER BY id",
                          (lines_key(kind, name), run_id))
        return [body for (body,) in rows]

    def drop_document_lines(self, kind: str, name: str) -> None:
        self._write("DELETE FROM journal WHERE key = ?", (lines_key(kind, name),))

    def digest_key(self, create: bool) -> bytes | None:
        """The store's key for `inputs_digest`, one for every process (the first one makes it;
        a concurrent first maker's insert is ignored and it reads the winner's)."""
        import secrets

        if self._digest_key is not None:
            return self._digest_key
        query = "SELECT body FROM documents WHERE kind = 'secret' AND name = 'digest.key'"
        rows = self._rows(query)
        if not rows and create:
            self._write("INSERT INTO documents (kind, name, body) VALUES ('secret', 'digest.key', ?) "
                        "ON CONFLICT (kind, name) DO NOTHING", (secrets.token_hex(32),))
            rows = self._rows(query)
        if not rows:
            return None
        try:
            self._digest_key = bytes.fromhex(rows[0][0])
        except ValueError:
            raise SqliteUnavailable(f"the digest key in {self.path} is damaged (not hex); delete it (documents, "
                                    "kind 'secret'): a new one is made, and `stack apply --resume` then reruns "
                                    "every member") from None
        return self._digest_key

    def queue(self) -> None:
        """No stack queue here: procrastinate runs on PostgreSQL only."""
        return None

    def admin(self) -> SqliteStore:
        """`hyops store status` (summary) and the target of `store import-local`."""
        return self

    def summary(self) -> dict[str, Any]:
        """What `hyops store status` shows: the file, SQLite's version, the schema version, the
        records, and every lock a live process holds (store/ports.Admin)."""
        from hybridops_tf.store.sqlitedb import SCHEMA_VERSION

        return {"store": str(self.path), "server": f"SQLite {sqlite3.sqlite_version} (file {self.path})",
                "server_version": sqlite3.sqlite_version, "schema_version": SCHEMA_VERSION,
                "records": self._rows("SELECT count(*) FROM records")[0][0],
                "locks_held": [{"key": key, "holder": holder} for key, holder in self.locks_held()]}

    def locks_held(self) -> list[tuple[str, str]]:
        """(key, holder) of every lock a live process holds, by its lock folder under `locks`
        (a folder whose lock is free, or whose holder's note names no live process, is none)."""
        held = []
        for folder in sorted(self.locks.iterdir()) if self.locks.is_dir() else []:
            key = key_of_module_id(folder.name)
            if not lock_file_is_free(self.lock_path(key)):
                held.append((key, live_holder(folder / OWNER_NOTE) or "a live process (it names no holder yet)"))
        return held


class SqliteJournal(QueuedJournal):
    """The engine lines recovery needs, written by a thread so the engine never waits on the
    database: `line()` queues, a full queue drops the line and says so at close (the journal
    is then incomplete, and recovery stays conservative), as store/pgjournal.PgJournal."""

    def __init__(self, path: Path, key: str, run_id: str) -> None:
        self.path = path
        super().__init__(key, run_id, JOURNAL_QUEUE)

    def target(self) -> str:
        return str(self.path)

    def _drain(self) -> None:
        """Write what is queued, a batch per transaction, in order, until told to stop."""
        conn: sqlite3.Connection | None
        try:
            conn = connect(self.path)
        except sqlite3.Error as err:
            self.error = str(err)
            conn = None
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < 500:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is STOP for item in batch)
            rows = [(self.key, self.run_id, kind, text) for kind, text in (i for i in batch if i is not STOP)]
            if not rows:
                continue
            if conn is None:
                self.dropped += len(rows)
                continue
            try:
                with conn:  # one transaction for the batch
                    conn.execute("BEGIN")
                    conn.executemany("INSERT INTO journal (key, run_id, kind, body) VALUES (?, ?, ?, ?)", rows)
            except sqlite3.Error as err:
                self.error = str(err)
                self.dropped += len(rows)
        if conn is not None:
            conn.close()
