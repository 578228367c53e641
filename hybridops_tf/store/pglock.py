"""The PostgreSQL store's module lock (store/postgres.py): a session advisory lock held for the
whole operation, on the store's connection (or, while another lock rides on that, on one of
its own), with its holder named in `lock_holders`. Every write under it is one statement that
writes only while the server still shows this session holding the lock (`_IF_HELD`,
`guarded`); a lock whose connection the server closed is taken again on a new one only while
the record is exactly what this run last wrote (`PgLock._retake`).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.record.model import LockBusyError, Owner, utc_now
from hybridops_tf.store.pgconn import _HELD_BY, StoreUnavailable, _first_line, _lock_parts, _psycopg, lock_id
from hybridops_tf.store.schema import SCHEMA
from hybridops_tf.store.url import redact_url

RETAKE_WITHIN = 45.0  # seconds to take a lost lock again: a restart, or the server ending the old session

# Held by this session: what a guarded write checks, in the statement that writes (PgLock.write).
_IF_HELD = "(SELECT yes FROM held)"


def guarded(sql: str, classid_objid: bool) -> str:
    """`sql` (a write that names _IF_HELD in its condition) as one statement: it writes only
    while this session holds the lock whose (classid, objid) lead the parameters, and
    answers whether it does. Without them (no lock to check) it always writes."""
    held = (f"SELECT count(*) > 0 AS yes {_HELD_BY} AND pid = pg_backend_pid()" if classid_objid
            else "SELECT true AS yes")
    return f"WITH held AS ({held}), done AS ({sql}) SELECT yes FROM held"


class LockHost(Protocol):
    """What a lock needs of its store (store/postgres.PgStore): its URL, connections to borrow
    and give back, new ones, the locks this process holds, and who holds a key's lock."""

    url: str
    _held: dict[str, PgLock]
    _held_lock: threading.Lock

    def _borrow(self) -> tuple[Any, bool]: ...
    def _give_back(self, conn: Any, own: bool, unlocked: bool) -> None: ...
    def _open(self) -> Any: ...
    def _connection(self) -> Any: ...
    def holder(self, key: str) -> str | None: ...


class _Fenced(StoreUnavailable):
    """A lost lock that must not be taken again: the record or the lock is another run's now."""


class PgLock:
    """The module lock as a session advisory lock, on the store's connection (or, while
    another lock rides on that, on one of its own)."""

    def __init__(self, store: LockHost, key: str, run_id: str, timeout: float) -> None:
        self.store = store
        self.key = key
        self.run_id = run_id
        self.timeout = timeout
        self._conn: Any = None
        self._own = False  # self._conn is the store's connection, given back after the lock
        self._guard = threading.Lock()
        self.fence: str | None = None  # the record as this run last wrote it under this lock
        self.retaken = 0  # how often the lock was taken again on a new connection

    def __enter__(self) -> PgLock:
        psycopg = _psycopg()
        try:
            self._conn, self._own = self.store._borrow()
        except StoreUnavailable as err:
            raise RefusedError(f"{err.strerror}; nothing was changed") from None
        deadline = time.monotonic() + self.timeout
        try:
            owner = Owner.current(self.run_id)
            while not self._take(owner):
                INTERRUPTS.check(f"before the lock of {self.key} was taken; nothing was changed")
                if time.monotonic() >= deadline:
                    raise LockBusyError(self._busy_message())
                time.sleep(0.2)
            INTERRUPTS.check(f"as the lock of {self.key} was taken; nothing was changed")  # released below
        except LockBusyError:
            self._release(unlocked=True)  # never taken: the connection carries no lock
            raise
        except psycopg.Error as err:
            self._release(unlocked=False)
            raise RefusedError(f"cannot take the lock of {self.key} in {redact_url(self.store.url)}: "
                               f"{_first_line(err)}; nothing was changed") from None
        except BaseException:
            self._release(unlocked=False)
            raise
        with self.store._held_lock:
            self.store._held[self.key] = self
        return self

    def _take(self, owner: Owner) -> bool:
        """Try the lock and, when it is granted, name its holder: one statement."""
        return self._take_on(self._conn, owner)

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
        """A read on the lock's connection; on a new one when the server closed it (the lock
        is taken again first when this run's record can fence it, `_retake`; else the read
        goes on the store's connection, and the next write finds the lock gone)."""
        psycopg = _psycopg()
        with self._guard:
            if self._conn is not None and not self._conn.closed:
                try:
                    return list(self._conn.execute(sql, params).fetchall())
                except psycopg.OperationalError:
                    if not self._conn.closed:
                        raise
            if self.fence is not None:
                self._retake()
                return list(self._conn.execute(sql, params).fetchall())
        return list(self.store._connection().execute(sql, params).fetchall())

    def write(self, sql: str, params: tuple[Any, ...]) -> None:
        """A write (`sql` names _IF_HELD in its condition) in one statement that writes only
        while the server shows this session holding the lock. When the server closed the
        lock's connection (a restart, an administrator, a proxy), the lock is taken again on a
        new one if the record still is what this run last wrote (`_retake`), and the write
        made there; StoreUnavailable when it cannot be."""
        psycopg = _psycopg()
        with self._guard:
            held = lost = False
            if self._conn is not None and not self._conn.closed:
                try:
                    held = self._write_once(sql, params)
                except psycopg.OperationalError:
                    if not self._conn.closed:
                        raise
                    lost = True
            else:
                lost = True
            if lost:  # a live session that no longer holds the lock is refused below, never retaken
                if self.fence is None:
                    raise StoreUnavailable(f"the connection holding the lock of {self.key} was lost before "
                                           "this run wrote its record")
                self._retake()
                held = self._write_once(sql, params)
        if not held:
            raise StoreUnavailable(f"the store no longer shows this run holding the lock of {self.key}")

    def _write_once(self, sql: str, params: tuple[Any, ...]) -> bool:
        return bool(self._conn.execute(guarded(sql, True), (*_lock_parts(self.key), *params)).fetchone()[0])

    def _retake(self) -> None:
        """The lock again, on a new connection, after the server closed the one that held it:
        only while the record is exactly what this run last wrote (`fence`: no other run took
        the lock meanwhile and wrote, no reconcile settled it). The lock of a session the
        server has not ended yet (a frozen server, a cut network: it ends it within the
        keepalive time, store/pgconn.py) is waited for up to RETAKE_WITHIN seconds, as is a
        server that is restarting. StoreUnavailable (the outcome is then uncertain) when the
        record changed or the lock cannot be had."""
        psycopg = _psycopg()
        where = f"the lock of {self.key} (its connection was lost)"
        deadline = time.monotonic() + RETAKE_WITHIN
        owner = Owner.current(self.run_id)
        wait, last = 0.2, "no answer"
        while True:
            conn = None
            try:
                conn = self.store._open()
                if self._take_on(conn, owner):
                    same = conn.execute(f"SELECT doc = %s::jsonb FROM {SCHEMA}.records WHERE key = %s",
                                        (self.fence, self.key)).fetchone()
                    if same is not None and same[0]:
                        break
                    conn.close()  # its lock with it
                    raise _Fenced(f"{where} was taken again, but the record is no longer what this run "
                                  "wrote: another run or a reconcile wrote it meanwhile")
                holder = conn.execute(f"SELECT run_id FROM {SCHEMA}.lock_holders WHERE key = %s AND backend_pid IN "
                                      f"(SELECT pid {_HELD_BY})", (self.key, *_lock_parts(self.key))).fetchone()
                if holder is not None and holder[0] != self.run_id:
                    conn.close()
                    raise _Fenced(f"{where} is held by run {holder[0]} now")
                last = "the server has not ended the session that held it yet"
            except _Fenced:
                raise
            except StoreUnavailable as err:
                last = err.strerror or str(err)
            except psycopg.OperationalError as err:
                last = _first_line(err)
            if conn is not None and not conn.closed:
                conn.close()
            if time.monotonic() + wait > deadline:
                raise StoreUnavailable(f"{where} could not be taken again in {RETAKE_WITHIN:g}s: {last}")
            time.sleep(wait)
            wait = min(2.0, wait * 2)
        old, own = self._conn, self._own
        self._conn, self._own = conn, False
        self.retaken += 1
        if old is not None:
            self.store._give_back(old, own, unlocked=False)

    def _take_on(self, conn: Any, owner: Owner) -> bool:
        row = conn.execute(
            f"INSERT INTO {SCHEMA}.lock_holders (key, backend_pid, host, pid, os_user, run_id, since) "
            "SELECT %s, pg_backend_pid(), %s, %s, %s, %s, %s WHERE pg_try_advisory_lock(%s) "
            "ON CONFLICT (key) DO UPDATE SET backend_pid = EXCLUDED.backend_pid, host = EXCLUDED.host, "
            "pid = EXCLUDED.pid, os_user = EXCLUDED.os_user, run_id = EXCLUDED.run_id, since = EXCLUDED.since "
            "RETURNING true",
            (self.key, owner.host, owner.pid, owner.user, owner.run_id, utc_now(), lock_id(self.key))).fetchone()
        return row is not None

    def __exit__(self, *exc: object) -> None:
        with self.store._held_lock:
            if self.store._held.get(self.key) is self:
                del self.store._held[self.key]
        unlocked = False
        try:
            unlocked = bool(self._conn.execute(
                f"WITH gone AS (DELETE FROM {SCHEMA}.lock_holders WHERE key = %s AND backend_pid = pg_backend_pid()) "
                "SELECT pg_advisory_unlock(%s)", (self.key, lock_id(self.key))).fetchone()[0])
        except Exception:  # the session is gone, and its lock with it
            pass
        self._release(unlocked)

    def _release(self, unlocked: bool) -> None:
        """Done with the connection: the store's own goes back to it (closed, unless the lock
        is surely gone from it), one of its own is closed."""
        if self._conn is not None:
            self.store._give_back(self._conn, self._own, unlocked)
            self._conn = None
