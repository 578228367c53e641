"""The shared record store on PostgreSQL (`--store postgresql://...`, issue #12).

Records (same schema, JSONB), the per-module lock and its holder, each run's journal (meta,
the engine lines recovery needs, the spawn, the result) and documents (rerun inputs, stack
reports) live in the `hyops` schema of one database, so a runner that never saw a run's
folder can recover from it. Run folders stay local as artifacts.

The lock (store/pglock.py) is a session advisory lock held for the whole operation: a runner that dies loses
its connection and so its lock, which makes "a `running` record whose lock is free is
stale" exact across machines. Every write of an operation goes through the lock's connection
in one statement that writes only if the server still shows this session holding the lock
(`_IF_HELD`), so a runner cut off from the server (the server ended its session: see
KEEPALIVE) cannot overwrite what the next holder wrote.

A command uses one connection (issue 37): the store's own, which the first module lock
borrows; reads, writes and the run's journal go through it too. Only a lock taken while
another rides on that connection (a stack's members, each in its thread) gets one of its
own, and that run's journal goes through it (members journal side by side). Each step is
one statement, so one round trip: the schema check (with the keepalive settings), taking the
lock (with naming its holder), each guarded write, letting go.

psycopg 3 is imported only by store/pgconn.py (the connection, the schema), and only when a
PostgreSQL store is selected.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import RefusedError
from hybridops_tf.base.files import keep_copy, register_private_root
from hybridops_tf.record.model import OperationRecord, utc_now
from hybridops_tf.store.documents import lines_key, local_path
from hybridops_tf.store.pgconn import (
    _HELD_BY,
    StoreUnavailable,
    _first_line,
    _lock_parts,
    _psycopg,
    check_schema,
    connect,
)
from hybridops_tf.store.pgjournal import PgJournal
from hybridops_tf.store.pglock import _IF_HELD, PgLock, guarded
from hybridops_tf.store.ports import JournalRead
from hybridops_tf.store.queued_journal import read_rows
from hybridops_tf.store.record_rows import doc_from_row, record_from_row
from hybridops_tf.store.schema import SCHEMA
from hybridops_tf.store.url import redact_url

_REPLACE_DOCUMENT = "ON CONFLICT (kind, name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()"


class PgStore:
    """The Store port (store/ports.py) on PostgreSQL; run folders stay under `root`."""

    spans_roots = True  # every runner, in any folder, reads the same records

    def __init__(self, url: str, runtime_root: Path) -> None:
        self.url = url
        self.root = runtime_root
        register_private_root(runtime_root)
        self._conn: Any = None
        self._conn_lock = threading.Lock()
        self._lent = False  # a module lock rides on self._conn
        self._schema_checked = False
        self._held: dict[str, PgLock] = {}
        self._held_lock = threading.Lock()
        self._digest_key: bytes | None = None  # once read, the same for the store's life

    # -- connections ---------------------------------------------------------------------

    def _open(self) -> Any:
        """A new connection with the server's keepalives set; the process's first also checks
        the schema, in the same round trip."""
        if self._schema_checked:
            return connect(self.url, server_keepalive=True)
        conn = connect(self.url)
        try:
            check_schema(conn, self.url, keepalive=True)
        except BaseException:
            conn.close()
            raise
        self._schema_checked = True
        return conn

    def _connection(self) -> Any:
        """The store's connection: the command's one (a lock may ride on it)."""
        with self._conn_lock:
            if self._conn is None or self._conn.closed:
                self._conn = self._open()
                self._lent = False
            return self._conn

    def _borrow(self) -> tuple[Any, bool]:
        """A connection for a module lock, and whether it is the store's own: that one when no
        other lock rides on it, else a new one (the members of a stack lock at once)."""
        with self._conn_lock:
            if self._conn is None or self._conn.closed:
                self._conn = self._open()
                self._lent = False
            if not self._lent:
                self._lent = True
                return self._conn, True
        return self._open(), False

    def _give_back(self, conn: Any, own: bool, unlocked: bool) -> None:
        """A lock's connection after the lock: the store's own stays open unless its unlock
        was not confirmed (the lock might still ride on it: closing ends it for sure)."""
        with self._conn_lock:
            if own and conn is self._conn:
                self._lent = False
                if unlocked:
                    return
                self._conn = None
        try:
            conn.close()
        except Exception:  # a broken connection: closing it is all that is left
            pass

    def _query(self, sql: str, params: tuple[Any, ...] = (), key: str | None = None) -> list[tuple[Any, ...]]:
        """Rows of a read (on the lock's connection when this process holds `key`'s lock: an
        operation then needs no other); RefusedError (exit 4) when the server cannot answer."""
        held = self._held.get(key) if key is not None else None
        if held is not None:
            return self._reading(lambda: held.query(sql, params))
        return self._reading(lambda: list(self._connection().execute(sql, params).fetchall()))

    def read_with(self, read: Callable[[Any], Any]) -> Any:
        """`read` called with the store's connection, for reads whose SQL is the caller's (a
        queued run's tables, stack/report.py); RefusedError (exit 4) as `_query`."""
        return self._reading(lambda: read(self._connection()))

    def _reading(self, call: Callable[[], Any]) -> Any:
        """A read's result; RefusedError when the server cannot answer (the store's connection
        is then dropped, so the next use reconnects)."""
        psycopg = _psycopg()
        for again in (True, False):
            try:
                return call()
            except StoreUnavailable as err:
                raise RefusedError(f"{err.strerror}; nothing was changed") from None
            except psycopg.Error as err:
                self._drop_connection()
                if again and isinstance(err, psycopg.OperationalError):
                    continue  # the server closed the connection (a restart, an idle timeout): once more on a new one
                raise RefusedError(f"the store {redact_url(self.url)} could not be read: "
                                   f"{_first_line(err)}; nothing was changed") from None
        raise AssertionError("unreachable")

    def check_idle_connection(self) -> None:
        """For a process that lives on between commands' worth of work (a queue worker, before
        each member): the store's connection, idle since its last use, answers an empty query
        or is dropped (a server restart, a proxy's idle timeout closed it), so the next use
        reconnects instead of failing. Left alone while a module lock rides on it."""
        with self._conn_lock:
            conn = self._conn
            if conn is None or self._lent:
                return
            try:
                conn.execute("")
                return
            except Exception:  # noqa: BLE001 - any failure of the probe: the connection is not usable
                pass
        self._drop_connection()

    def _drop_connection(self) -> None:
        """Forget the store's connection after an error, so the next use reconnects; kept
        while a module lock rides on it and it is still open (closing it would end the lock)."""
        with self._conn_lock:
            if self._conn is not None:
                if self._lent and not self._conn.closed:
                    return
                try:
                    self._conn.close()
                except Exception:  # closing a broken connection: nothing more to learn
                    pass
                self._conn = None
                self._lent = False

    def _write(self, key: str | None, sql: str, params: tuple[Any, ...]) -> None:
        """One write, on the lock's connection when this process holds `key`'s lock (and
        only while the server still says it does); StoreUnavailable otherwise."""
        psycopg = _psycopg()
        held = self._held.get(key) if key is not None else None
        for again in (held is None, False):
            try:
                if held is not None:
                    held.write(sql, params)
                else:
                    self._connection().execute(guarded(sql, False), params)
                return
            except StoreUnavailable:
                raise
            except psycopg.Error as err:
                if held is None:
                    self._drop_connection()
                if again and isinstance(err, psycopg.OperationalError):
                    continue  # a connection the server closed while it sat idle: once more on a new one
                raise StoreUnavailable(f"the store {redact_url(self.url)} could not be written: "
                                       f"{_first_line(err)}") from None

    # -- records -------------------------------------------------------------------------

    def where(self, key: str) -> str:
        return f"record {key} in {redact_url(self.url)}"

    def describe(self) -> str:
        return f"PostgreSQL store {redact_url(self.url)}"

    def read(self, key: str) -> OperationRecord | None:
        rows = self._query(f"SELECT doc::text FROM {SCHEMA}.records WHERE key = %s", (key,), key)
        return record_from_row(rows[0][0], key, self.where(key)) if rows else None

    def read_raw(self, key: str) -> dict[str, Any] | None:
        rows = self._query(f"SELECT doc::text FROM {SCHEMA}.records WHERE key = %s", (key,), key)
        return doc_from_row(rows[0][0] if rows else None)

    def write(self, record: OperationRecord, *, stamp: bool = True) -> None:
        """Upsert the record (`updated_at` set to now unless `stamp` is False: an import, a record
        put back as it was)."""
        from hybridops_tf.record.address import record_key

        if stamp:
            record.updated_at = utc_now()
        key = record_key(record.module_ref, record.workspace)
        doc = numbers.dumps(record.to_dict())  # numbers keep their text
        self._write(key, f"INSERT INTO {SCHEMA}.records (key, doc, updated_at) SELECT %s, %s::jsonb, now() "
                         f"WHERE {_IF_HELD} ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc, updated_at = now()",
                    (key, doc))
        held = self._held.get(key)
        if held is not None:
            held.fence = doc if record.run_id == held.run_id else None

    def delete(self, key: str) -> None:
        self._write(key, f"DELETE FROM {SCHEMA}.records WHERE key = %s AND {_IF_HELD}", (key,))
        held = self._held.get(key)
        if held is not None:
            held.fence = None

    def keys(self) -> list[str]:
        return [row[0] for row in self._query(f"SELECT key FROM {SCHEMA}.records ORDER BY key")]

    # -- locks ---------------------------------------------------------------------------

    def lock(self, key: str, run_id: str, timeout: float = 0) -> PgLock:
        return PgLock(self, key, run_id, timeout)

    def lock_is_free(self, key: str) -> bool:
        rows = self._query(f"SELECT count(*) {_HELD_BY}", _lock_parts(key))
        return rows[0][0] == 0

    def read_lock_needs_files(self, key: str) -> bool:
        return False

    def holder(self, key: str) -> str | None:
        """The live holder of `key`'s lock, as `pid P on HOST (user U, run R, since S)`."""
        classid, objid = _lock_parts(key)
        rows = self._query(
            f"SELECT host, pid, os_user, run_id, since FROM {SCHEMA}.lock_holders WHERE key = %s "
            f"AND backend_pid IN (SELECT pid {_HELD_BY})", (key, classid, objid))
        if not rows:
            return None
        host, pid, user, run_id, since = rows[0]
        return f"pid {pid} on {host} (user {user}, run {run_id}, since {since})"

    def locks_held(self) -> list[tuple[str, str]]:
        """(key, holder) of every lock a live session holds."""
        rows = self._query(f"SELECT key FROM {SCHEMA}.lock_holders ORDER BY key")
        return [(key, who) for (key,) in rows if (who := self.holder(key)) is not None]

    # -- the journal of each run ---------------------------------------------------------

    def journal(self, key: str, run_id: str) -> PgJournal:
        return PgJournal(self.url, key, run_id, connection=lambda: self._journal_connection(key))

    def _journal_connection(self, key: str) -> Any:
        """The connection of `key`'s lock while this process holds it (the members of a stack
        journal side by side, each on its own lock's connection), else the store's."""
        held = self._held.get(key)
        conn = held._conn if held is not None else None
        return conn if conn is not None and not conn.closed else self._connection()

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        """A run's meta or result, written now (StoreUnavailable when it cannot be)."""
        self._write(key, f"INSERT INTO {SCHEMA}.journal (key, run_id, kind, body) SELECT %s, %s, %s, %s "
                         f"WHERE {_IF_HELD}", (key, run_id, kind, json.dumps(doc, default=str)))

    def journal_lines(self, key: str, run_id: str) -> JournalRead | None:
        """What the journal holds of a run; None when it holds nothing of it."""
        return read_rows(self._query(
            f"SELECT kind, body FROM {SCHEMA}.journal WHERE key = %s AND run_id = %s ORDER BY id", (key, run_id), key))

    # -- documents (rerun inputs, stack reports) -----------------------------------------

    def put_document(self, kind: str, name: str, text: str) -> None:
        """The store's copy, then the local one (store/documents.py) readers use."""
        self._write(name, f"INSERT INTO {SCHEMA}.documents (kind, name, body, updated_at) SELECT %s, %s, %s, now() "
                          f"WHERE {_IF_HELD} {_REPLACE_DOCUMENT}", (kind, name, text))
        keep_copy(local_path(self.root, kind, name), text)

    # -- the stack queue's port (store/__init__.py: QueueStore) --------------------------

    def queue(self) -> PgStore:
        """This store holds the stack queue (procrastinate's schema beside its own)."""
        return self

    def admin(self) -> PgStore:
        """`hyops store status` (summary) and the target of `store import-local`."""
        return self

    def put_document_on(self, conn: Any, kind: str, name: str, text: str) -> None:
        """A document written on the queue's connection, in its transaction (a queued run's
        report, under the run's row lock: no module lock guards it)."""
        conn.execute(f"INSERT INTO {SCHEMA}.documents (kind, name, body, updated_at) VALUES (%s, %s, %s, now()) "
                     f"{_REPLACE_DOCUMENT}", (kind, name, text))

    def fetch_document(self, kind: str, name: str) -> Path:
        """The document's local file (store/documents.py), the store's copy brought there first."""
        path = local_path(self.root, kind, name)
        rows = self._query(f"SELECT body FROM {SCHEMA}.documents WHERE kind = %s AND name = %s", (kind, name), name)
        if rows:
            keep_copy(path, rows[0][0])
        return path

    # A document's appended lines (a stack run's member updates, runtime/live_journal.py): one
    # short insert each in the journal table (store/documents.lines_key), instead of the whole
    # document rewritten on every update.

    def append_document_line(self, kind: str, name: str, run_id: str, line: str) -> None:
        self._write(None, f"INSERT INTO {SCHEMA}.journal (key, run_id, kind, body) SELECT %s, %s, 'line', %s "
                          f"WHERE {_IF_HELD}", (lines_key(kind, name), run_id, line))

    def document_lines(self, kind: str, name: str, run_id: str) -> list[str]:
        rows = self._query(f"SELECT body FROM {SCHEMA}.journal WHERE key = %s AND run_id = %s ORDER BY id",
                           (lines_key(kind, name), run_id))
        return [body for (body,) in rows]

    def drop_document_lines(self, kind: str, name: str) -> None:
        self._write(None, f"DELETE FROM {SCHEMA}.journal WHERE key = %s AND {_IF_HELD}", (lines_key(kind, name),))

    def digest_key(self, create: bool) -> bytes | None:
        """The store's key for `inputs_digest`, shared by every runner (the first one makes it;
        a concurrent first maker's insert loses and reads the winner's). Read once a command:
        the inputs digest and the configuration digest both need it."""
        import secrets

        if self._digest_key is not None:
            return self._digest_key

        query = f"SELECT body FROM {SCHEMA}.documents WHERE kind = 'secret' AND name = 'digest.key'"
        rows = self._query(query)
        if not rows and create:
            self._write(None, f"INSERT INTO {SCHEMA}.documents (kind, name, body) SELECT 'secret', 'digest.key', %s "
                              f"WHERE {_IF_HELD} ON CONFLICT (kind, name) DO NOTHING", (secrets.token_hex(32),))
            rows = self._query(query)
        if not rows:
            return None
        try:
            self._digest_key = bytes.fromhex(rows[0][0])
            return self._digest_key
        except ValueError:
            raise StoreUnavailable("the store's digest key is damaged (not hex); delete the row "
                                   "(documents, kind 'secret'): a new one is made, and `stack apply "
                                   "--resume` then reruns every member") from None

    # -- `hyops store status` --------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        version = self._query(f"SELECT max(version) FROM {SCHEMA}.schema_version")[0][0]
        server = self._query("SHOW server_version")[0][0]
        records = self._query(f"SELECT count(*) FROM {SCHEMA}.records")[0][0]
        return {"store": redact_url(self.url), "server": f"PostgreSQL {server}", "server_version": server,
                "schema_version": version,
                "records": records, "locks_held": [{"key": k, "holder": h} for k, h in self.locks_held()]}
