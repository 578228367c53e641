"""The shared record store on PostgreSQL (`--store postgresql://...`, issue #12).

Records (same schema, JSONB), the per-module lock and its holder, each run's journal (meta,
the engine lines recovery needs, the spawn, the result) and documents (rerun inputs, stack
reports) live in the `hyops` schema of one database, so a runner that never saw a run's
folder can recover from it. Run folders stay local as artifacts.

The lock is a session advisory lock held on a dedicated connection for the whole
operation: a runner that dies loses its connection and so its lock, which makes "a
`running` record whose lock is free is stale" exact across machines. Every write of an
operation goes through that connection and first checks the lock is still held, so a
runner cut off from the server (the server ended its session: see KEEPALIVE) cannot
overwrite what the next holder wrote.

psycopg 3 is imported only here, and only when a PostgreSQL store is selected.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.base.files import atomic_write_text, register_private_root
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.record.model import CorruptRecordError, LockBusyError, OperationRecord, Owner, utc_now
from hybridops_tf.store.local import JournalRead
from hybridops_tf.store.schema import LATEST, MIGRATIONS, SCHEMA
from hybridops_tf.store.url import redact_url

# TCP keepalives on both ends of every connection: the client notices a dead server, and
# the server ends the session of a runner it cannot reach after about idle + interval *
# count seconds (10 + 5 * 3 = 25 s), which releases that runner's advisory locks.
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
SERVER_KEEPALIVE = ("SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; "
                    "SET tcp_keepalives_count = 3")
CONNECT_TIMEOUT = 5
JOURNAL_QUEUE = 10000  # lines; beyond that the journal drops lines (and says so) rather than block
JOURNAL_FLUSH_TIMEOUT = 10.0


class StoreUnavailable(OSError):
    """The server could not be reached or written: callers treat it as a failed write."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError("--store postgresql://... needs psycopg 3: pip install "
                         "'hybridops-tf[postgres]'") from None
    return psycopg


def lock_id(key: str) -> int:
    """The advisory lock of a record key: 64 bits of its SHA-256, as PostgreSQL's bigint."""
    return int.from_bytes(hashlib.sha256(b"hyops-record:" + key.encode("utf-8")).digest()[:8],
                          "big", signed=True)


def _lock_parts(key: str) -> tuple[int, int]:
    """(classid, objid) under which pg_locks shows the bigint advisory lock of `key`."""
    unsigned = lock_id(key) & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


_HELD_BY = ("FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND classid = %s::oid AND objid = %s::oid "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


def connect(url: str, *, server_keepalive: bool = False) -> Any:
    """An autocommit connection; StoreUnavailable when the server cannot be reached."""
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                               application_name="hyops", **KEEPALIVE)
        if server_keepalive:
            conn.execute(SERVER_KEEPALIVE)
    except psycopg.Error as err:
        line = _first_line(err)
        raise StoreUnavailable(f"cannot reach the store {redact_url(url)}: {line}{_login_hint(line)}") from None
    return conn


def _login_hint(line: str) -> str:
    """Where the password goes, when the server asked for one and got none (or a wrong one)."""
    if "no password supplied" in line:
        return ("; the server asks for a password: give it in PGPASSWORD (a CI secret) or in "
                "a PGPASSFILE, never in the store URL")
    if "password authentication failed" in line:
        return "; check the password given in PGPASSWORD or PGPASSFILE"
    return ""


def _first_line(err: BaseException) -> str:
    """The driver's message, first line, with any URL password in it masked (libpq may quote
    the connection string it could not parse)."""
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    from hybridops_tf.store.url import selected_url

    url = selected_url()
    password = urlsplit(url).password if url else None
    if password:
        line = line.replace(password, "***")
    return redact_url(line)


class PgStore:
    """The RecordStore interface (store/local.py) on PostgreSQL; run folders stay under `root`."""

    shared = True

    def __init__(self, url: str, runtime_root: Path) -> None:
        self.url = url
        self.root = runtime_root
        register_private_root(runtime_root)
        self._conn: Any = None
        self._conn_lock = threading.Lock()
        self._held: dict[str, PgLock] = {}
        self._held_lock = threading.Lock()

    # -- connections ---------------------------------------------------------------------

    def _connection(self) -> Any:
        with self._conn_lock:
            if self._conn is None or self._conn.closed:
                conn = connect(self.url)
                check_schema(conn, self.url)
                self._conn = conn
            return self._conn

    def _query(self, sql: str, params: tuple[Any, ...] = (), key: str | None = None) -> list[tuple[Any, ...]]:
        """Rows of a read (on the lock's connection when this process holds `key`'s lock: an
        operation then needs no other); RefusedError (exit 4) when the server cannot answer."""
        psycopg = _psycopg()
        held = self._held.get(key) if key is not None else None
        try:
            if held is not None:
                return held.query(sql, params)
            conn = self._connection()
            return list(conn.execute(sql, params).fetchall())
        except StoreUnavailable as err:
            raise RefusedError(f"{err.strerror}; nothing was changed") from None
        except psycopg.Error as err:
            self._drop_connection()
            raise RefusedError(f"the store {redact_url(self.url)} could not be read: "
                               f"{_first_line(err)}; nothing was changed") from None

    def _drop_connection(self) -> None:
        with self._conn_lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # closing a broken connection: nothing more to learn
                    pass
                self._conn = None

    def _write(self, key: str | None, sql: str, params: tuple[Any, ...]) -> None:
        """One write, on the lock's connection when this process holds `key`'s lock (and
        only while the server still says it does); StoreUnavailable otherwise."""
        psycopg = _psycopg()
        held = self._held.get(key) if key is not None else None
        try:
            if held is not None:
                held.write(sql, params)
            else:
                self._connection().execute(sql, params)
        except StoreUnavailable:
            raise
        except psycopg.Error as err:
            if held is None:
                self._drop_connection()
            raise StoreUnavailable(f"the store {redact_url(self.url)} could not be written: "
                                   f"{_first_line(err)}") from None

    # -- records -------------------------------------------------------------------------

    def where(self, key: str) -> str:
        return f"record {key} in {redact_url(self.url)}"

    def describe(self) -> str:
        return f"PostgreSQL store {redact_url(self.url)}"

    def read(self, key: str) -> OperationRecord | None:
        rows = self._query(f"SELECT doc::text FROM {SCHEMA}.records WHERE key = %s", (key,), key)
        if not rows:
            return None
        try:
            return OperationRecord.from_dict(json.loads(rows[0][0]))
        except (ValueError, RecursionError) as err:
            raise CorruptRecordError(Path(key), str(err), where=self.where(key)) from None

    def read_raw(self, key: str) -> dict[str, Any] | None:
        rows = self._query(f"SELECT doc::text FROM {SCHEMA}.records WHERE key = %s", (key,), key)
        doc = json.loads(rows[0][0]) if rows else None
        return doc if isinstance(doc, dict) else None

    def write(self, record: OperationRecord, *, stamp: bool = True) -> None:
        """Upsert the record (`updated_at` set to now unless `stamp` is False: an import)."""
        from hybridops_tf.record.address import record_key

        if stamp:
            record.updated_at = utc_now()
        key = record_key(record.module_ref, record.workspace)
        self._write(key, f"INSERT INTO {SCHEMA}.records (key, doc, updated_at) VALUES (%s, %s::jsonb, now()) "
                         "ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc, updated_at = now()",
                    (key, json.dumps(record.to_dict())))

    def delete(self, key: str) -> None:
        self._write(key, f"DELETE FROM {SCHEMA}.records WHERE key = %s", (key,))

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
        return PgJournal(self.url, key, run_id)

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        """A run's meta or result, written now (StoreUnavailable when it cannot be)."""
        self._write(key, f"INSERT INTO {SCHEMA}.journal (key, run_id, kind, body) VALUES (%s, %s, %s, %s)",
                    (key, run_id, kind, json.dumps(doc, default=str)))

    def journal_lines(self, key: str, run_id: str) -> JournalRead | None:
        """What the journal holds of a run; None when it holds nothing of it."""
        rows = self._query(f"SELECT kind, body FROM {SCHEMA}.journal WHERE key = %s AND run_id = %s ORDER BY id",
                           (key, run_id), key)
        if not rows:
            return None
        kinds = {kind for kind, _ in rows}
        return JournalRead(tuple(body for kind, body in rows if kind == "event"),
                           engine_started="engine" in kinds, complete="complete" in kinds)

    # -- documents (rerun inputs, stack reports) -----------------------------------------

    def put_document(self, kind: str, name: str, text: str) -> None:
        self._write(name, f"INSERT INTO {SCHEMA}.documents (kind, name, body, updated_at) VALUES (%s, %s, %s, now()) "
                          "ON CONFLICT (kind, name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()",
                    (kind, name, text))

    def fetch_document(self, kind: str, name: str, path: Path) -> None:
        """Bring the store's copy of a document to `path` (the local file readers use)."""
        rows = self._query(f"SELECT body FROM {SCHEMA}.documents WHERE kind = %s AND name = %s", (kind, name), name)
        if not rows:
            return
        try:
            if path.is_file() and path.read_text(encoding="utf-8") == rows[0][0]:
                return
            atomic_write_text(path, rows[0][0])
        except OSError:
            pass  # the local copy is a cache; its readers treat a missing file as no document

    def digest_key(self, create: bool) -> bytes | None:
        """The store's key for `inputs_digest`, shared by every runner (the first one makes it;
        a concurrent first maker's insert loses and reads the winner's)."""
        import secrets

        query = f"SELECT body FROM {SCHEMA}.documents WHERE kind = 'secret' AND name = 'digest.key'"
        rows = self._query(query)
        if not rows and create:
            self._write(None, f"INSERT INTO {SCHEMA}.documents (kind, name, body) VALUES ('secret', 'digest.key', %s) "
                              "ON CONFLICT (kind, name) DO NOTHING", (secrets.token_hex(32),))
            rows = self._query(query)
        if not rows:
            return None
        try:
            return bytes.fromhex(rows[0][0])
        except ValueError:
            raise StoreUnavailable("the store's digest key is damaged (not hex); delete the row "
                                   "(documents, kind 'secret'): a new one is made, and `stack apply "
                                   "--resume` then reruns every member") from None

    # -- `hyops store status` --------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        version = self._query(f"SELECT max(version) FROM {SCHEMA}.schema_version")[0][0]
        server = self._query("SHOW server_version")[0][0]
        records = self._query(f"SELECT count(*) FROM {SCHEMA}.records")[0][0]
        return {"store": redact_url(self.url), "server_version": server, "schema_version": version,
                "records": records, "locks_held": [{"key": k, "holder": h} for k, h in self.locks_held()]}


class PgLock:
    """The module lock as a session advisory lock on its own connection."""

    def __init__(self, store: PgStore, key: str, run_id: str, timeout: float) -> None:
        self.store = store
        self.key = key
        self.run_id = run_id
        self.timeout = timeout
        self._conn: Any = None
        self._guard = threading.Lock()

    def __enter__(self) -> PgLock:
        psycopg = _psycopg()
        try:
            self._conn = connect(self.store.url, server_keepalive=True)
            check_schema(self._conn, self.store.url)
        except StoreUnavailable as err:
            raise RefusedError(f"{err.strerror}; nothing was changed") from None
        deadline = time.monotonic() + self.timeout
        try:
            while not self._conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_id(self.key),)).fetchone()[0]:
                INTERRUPTS.check(f"before the lock of {self.key} was taken; nothing was changed")
                if time.monotonic() >= deadline:
                    raise LockBusyError(self._busy_message())
                time.sleep(0.2)
            INTERRUPTS.check(f"as the lock of {self.key} was taken; nothing was changed")  # closed below
            owner = Owner.current(self.run_id)
            self._conn.execute(
                f"INSERT INTO {SCHEMA}.lock_holders (key, backend_pid, host, pid, os_user, run_id, since) "
                "VALUES (%s, pg_backend_pid(), %s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
                "backend_pid = EXCLUDED.backend_pid, host = EXCLUDED.host, pid = EXCLUDED.pid, "
                "os_user = EXCLUDED.os_user, run_id = EXCLUDED.run_id, since = EXCLUDED.since",
                (self.key, owner.host, owner.pid, owner.user, owner.run_id, utc_now()))
        except psycopg.Error as err:
            self._close()
            raise RefusedError(f"cannot take the lock of {self.key} in {redact_url(self.store.url)}: "
                               f"{_first_line(err)}; nothing was changed") from None
        except BaseException:
            self._close()
            raise
        with self.store._held_lock:
            self.store._held[self.key] = self
        return self

    def _busy_message(self) -> str:
        deadline = time.monotonic() + 2.0  # the holder names itself right after it locks
        while True:
            who = self.store.holder(self.key)
            if who is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if self.timeout > 0:
            return (f"module {self.key} is locked by {who or 'another process'} after waiting "
                    f"{self.timeout:g}s; wait for it to finish or raise --lock-timeout")
        return (f"module {self.key} is locked by {who or 'another process'}; "
                "wait for it to finish or pass --lock-timeout SECONDS")

    def query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._guard:
            if self._conn is None or self._conn.closed:
                raise StoreUnavailable(f"the connection holding the lock of {self.key} was lost")
            return list(self._conn.execute(sql, params).fetchall())

    def write(self, sql: str, params: tuple[Any, ...]) -> None:
        """A write in one transaction that first proves this session still holds the lock."""
        classid, objid = _lock_parts(self.key)
        with self._guard:
            if self._conn is None or self._conn.closed:
                raise StoreUnavailable(f"the connection holding the lock of {self.key} was lost")
            with self._conn.transaction():
                held = self._conn.execute(f"SELECT count(*) {_HELD_BY} AND pid = pg_backend_pid()",
                                          (classid, objid)).fetchone()[0]
                if not held:
                    raise StoreUnavailable(f"the store no longer shows this run holding the lock of {self.key}")
                self._conn.execute(sql, params)

    def __exit__(self, *exc: object) -> None:
        with self.store._held_lock:
            if self.store._held.get(self.key) is self:
                del self.store._held[self.key]
        try:
            self._conn.execute(f"DELETE FROM {SCHEMA}.lock_holders WHERE key = %s AND backend_pid = pg_backend_pid()",
                               (self.key,))
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id(self.key),))
        except Exception:  # the session is gone, and its lock with it
            pass
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # a broken connection: closing it is all that is left
                pass
            self._conn = None


_STOP = object()


class PgJournal:
    """The engine lines recovery needs, written by a thread on its own connection.

    `line()` never blocks the engine: it queues, and a full queue drops the line and says so
    at close (the journal is then incomplete, and recovery stays conservative: a run whose
    journal is not complete may have created what it does not name)."""

    def __init__(self, url: str, key: str, run_id: str) -> None:
        self.url = url
        self.key = key
        self.run_id = run_id
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=JOURNAL_QUEUE)
        self.dropped = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._drain, name="hyops-journal", daemon=True)
        self._thread.start()

    def line(self, text: str, kind: str = "event") -> None:
        try:
            self._queue.put_nowait((kind, text))
        except queue.Full:
            self.dropped += 1

    def engine_started(self, pid: int, host: str) -> None:
        self.line(json.dumps({"pid": pid, "host": host, "at": utc_now()}), "engine")

    def complete(self) -> None:
        """Every engine line reached the journal (only when none was dropped)."""
        if not self.dropped:
            self.line("", "complete")

    def _drain(self) -> None:
        conn = None
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            if self.error is not None:
                self.dropped += 1
                continue
            kind, text = item
            try:
                if conn is None:
                    conn = connect(self.url)
                conn.execute(f"INSERT INTO {SCHEMA}.journal (key, run_id, kind, body) VALUES (%s, %s, %s, %s)",
                             (self.key, self.run_id, kind, text))
            except Exception as err:  # noqa: BLE001 - any failure: the run goes on, the journal says so
                self.error = _first_line(err)
                self.dropped += 1
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing: nothing more to learn
                pass

    def close(self) -> str | None:
        try:
            self._queue.put(_STOP, timeout=JOURNAL_FLUSH_TIMEOUT)
        except queue.Full:
            pass
        self._thread.join(JOURNAL_FLUSH_TIMEOUT)
        if self._thread.is_alive():
            return f"the journal of {self.run_id} could not be flushed to {redact_url(self.url)} in time"
        if self.dropped:
            why = f": {self.error}" if self.error else " (the store was too slow)"
            return f"{self.dropped} engine lines of {self.run_id} did not reach the store's journal{why}"
        return None


def check_schema(conn: Any, url: str) -> int:
    """The store's schema version; UsageError (exit 2) when it is missing, older or newer."""
    psycopg = _psycopg()
    try:
        row = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.schema_version",)).fetchone()
        version = None
        if row[0] is not None:
            version = conn.execute(f"SELECT max(version) FROM {SCHEMA}.schema_version").fetchone()[0]
    except psycopg.Error as err:
        raise StoreUnavailable(f"cannot read the store {redact_url(url)}: {_first_line(err)}") from None
    if version is None:
        raise UsageError(f"the store {redact_url(url)} has no hyops schema: run `hyops store init` "
                         "(with the same --store) once")
    if version > LATEST:
        raise UsageError(f"the store {redact_url(url)} has schema version {version}, newer than this hyops "
                         f"knows ({LATEST}): upgrade hyops; nothing was changed")
    if version < LATEST:
        raise UsageError(f"the store {redact_url(url)} has schema version {version}: run `hyops store init` "
                         f"to migrate it to {LATEST}")
    return version


def migrate(url: str) -> tuple[int, int]:
    """Apply the migrations the store lacks; (version before, version after)."""
    psycopg = _psycopg()
    conn = connect(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id("hyops-schema"),))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_version "
                         "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            before = conn.execute(f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_version").fetchone()[0]
            if before > LATEST:
                raise UsageError(f"the store {redact_url(url)} has schema version {before}, newer than this "
                                 f"hyops knows ({LATEST}): upgrade hyops; nothing was changed")
            for version, sql in MIGRATIONS:
                if version > before:
                    conn.execute(sql)
                    conn.execute(f"INSERT INTO {SCHEMA}.schema_version (version) VALUES (%s)", (version,))
    except psycopg.Error as err:
        raise RefusedError(f"cannot migrate the store {redact_url(url)}: {_first_line(err)}") from None
    finally:
        conn.close()
    return before, LATEST
