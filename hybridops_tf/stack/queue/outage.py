"""A worker's weather: the store's server closed a connection, restarted, or froze.

Servers restart, proxies and managed databases close idle connections: for a fleet of CI
runners that is weather, not a bug. Every call a worker makes to the queue (procrastinate's
fetch, finish and heartbeat, hyops's claims, ends and sweeps) goes through one `Outage`: a
call that fails because the connection or the server is gone is tried again with backoff,
and the worker says so in one line when the outage starts and one when it ends. Only when
the server stays away longer than the worker's lost-after time (after which the other
workers take it for lost and give its members up, stack/queue/lost.py) does the worker
stop, with a one-line error (exit 4), never a bug.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from hybridops_tf.base import notices
from hybridops_tf.base.errors import RefusedError
from hybridops_tf.record.advice import ADVISE
from hybridops_tf.store import pgconn

T = TypeVar("T")

FIRST_WAIT = 0.2  # seconds before the first retry; doubled each time up to MAX_WAIT
MAX_WAIT = 5.0


def lost_connection(exc: BaseException) -> bool:
    """Whether `exc` (or what it wraps) says the server or the connection to it is gone:
    psycopg's OperationalError (a closed or terminated connection, a server starting up or
    shutting down, a pool that could not connect in time) or the store's StoreUnavailable.
    A query the server refused for its own reasons (a constraint, a raised error) is not."""
    import psycopg

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, (psycopg.OperationalError, pgconn.StoreUnavailable)):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


class Outage:
    """Retries of one worker's calls to the store while its server is away (shared by the
    worker's event loop and its members' threads)."""

    def __init__(self, within: float, what: str, say: Callable[[str], None] = notices.warning) -> None:
        self.within = within  # seconds the server may stay away before the worker gives up
        self.what = what  # the store, as the worker names it
        self._say = say
        self._lock = threading.Lock()
        self._since: float | None = None  # when the current outage started
        self.outages = 0  # how many began (for the drill and the tests)
        self.gave_up: RefusedError | None = None  # why the worker stopped, once the server stayed away

    def failed(self, exc: BaseException, doing: str, attempt: int = 0) -> float:
        """Note one failed try; the seconds to wait before the next. RefusedError when the
        server has been away for longer than `within`."""
        now = time.monotonic()
        with self._lock:
            if self._since is None:
                self._since = now
                self.outages += 1
                self._say(f"the store {self.what} did not answer ({doing}: {pgconn._first_line(exc)}); "
                          f"retrying for up to {self.within:g}s")
            away = now - self._since
        if away >= self.within:
            self.gave_up = RefusedError(f"the store {self.what} stayed away for {away:.0f}s ({doing}: "
                               f"{pgconn._first_line(exc)}), past this worker's lost-after time: it stops; "
                               f"the other workers give its members up, `{ADVISE.stack_status(None)}` shows them")
            raise self.gave_up
        return min(MAX_WAIT, FIRST_WAIT * 2 ** min(attempt, 10))

    def answered(self) -> None:
        with self._lock:
            if self._since is None:
                return
            away, self._since = time.monotonic() - self._since, None
        self._say(f"the store {self.what} answers again (after {away:.0f}s)")

    def call(self, fn: Callable[[], T], doing: str, *, before_retry: Callable[[], None] | None = None) -> T:
        """`fn()`, tried again while the connection or the server is gone (in a thread)."""
        attempt = 0
        while True:
            try:
                if attempt and before_retry is not None:
                    before_retry()
                result = fn()
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                time.sleep(self.failed(exc, doing, attempt))
                attempt += 1
                continue
            self.answered()
            return result

    async def call_async(self, fn: Callable[[], Awaitable[T]], doing: str, *,
                         before_retry: Callable[[], Awaitable[Any]] | None = None) -> T:
        """`await fn()`, tried again while the connection or the server is gone."""
        attempt = 0
        while True:
            try:
                if attempt and before_retry is not None:
                    await before_retry()
                result = await fn()
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                await asyncio.sleep(self.failed(exc, doing, attempt))
                attempt += 1
                continue
            self.answered()
            return result
