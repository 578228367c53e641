"""procrastinate, as the queue of member jobs (store/schema.py installs its schema in
QUEUE_SCHEMA of the shared store's database).

A member's job carries `{run_id, member}`; its `lock` is the member's record key (procrastinate
never runs two jobs with one lock at once, so a module is never taken twice, even by two runs)
and its `queueing_lock` the run and member (one queued job per member). Jobs are deferred and
cancelled on a connection of ours, inside the transaction that records why (procrastinate's
`connection=` argument), so the run's rows and its jobs never disagree.

procrastinate and psycopg are imported only here and only for queued runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.stack.queue.outage import MAX_WAIT, Outage, lost_connection
from hybridops_tf.store import QueueStore, Store, pgconn
from hybridops_tf.store.schema import QUEUE_SCHEMA, QUEUE_SEARCH_PATH
from hybridops_tf.store.url import redact_url

QUEUE = "hyops-stack"  # each run's jobs are in a queue of their own: queue_of(run_id)
TASK = "hyops.stack_member"
RETRIES = 2  # a member's job is tried again at most this often, only when nothing could have changed
RETRY_WAIT = 2  # seconds before such a retry

HEARTBEAT_ENV = "HYOPS_QUEUE_HEARTBEAT"
LOST_AFTER_ENV = "HYOPS_QUEUE_LOST_AFTER"
HEARTBEAT = 10.0  # seconds between a worker's heartbeats
LOST_AFTER = 60.0  # seconds without a heartbeat before a worker counts as lost


@dataclass(frozen=True)
class Heartbeat:
    """How often a worker says it lives, and how long a silence means it is gone; the same on
    every runner (HYOPS_QUEUE_HEARTBEAT, HYOPS_QUEUE_LOST_AFTER, in seconds)."""

    interval: float = HEARTBEAT
    lost_after: float = LOST_AFTER

    @classmethod
    def from_env(cls) -> Heartbeat:
        interval = _seconds(HEARTBEAT_ENV, HEARTBEAT)
        lost_after = _seconds(LOST_AFTER_ENV, LOST_AFTER)
        if lost_after <= 2 * interval:
            raise UsageError(f"{LOST_AFTER_ENV}={lost_after:g} must be more than twice {HEARTBEAT_ENV}={interval:g}: "
                             "a live worker would be taken for lost between two heartbeats")
        return cls(interval, lost_after)


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UsageError(f"{name}={text!r} is not a number of seconds above 0")
    return value


class NotYetRun(Exception):
    """Raised by a member's job to have procrastinate queue it again: it stopped before
    anything could change (init, lock timeout, a checkout that cannot serve the run)."""


def quiet() -> None:
    """procrastinate logs through `logging`; hyops prints its own lines (and no tracebacks)."""
    log = logging.getLogger("procrastinate")
    log.addHandler(logging.NullHandler())
    log.propagate = False


def queue_store(store: Store, command: str) -> QueueStore:
    """The store's queue port; UsageError naming `command` when the store holds no queue."""
    port = store.queue()
    if port is None:
        raise UsageError(f"{command} needs the shared PostgreSQL store, and {store.describe()} holds no queue: pass "
                         "--store postgresql://USER@HOST:PORT/DB or set HYOPS_STORE (docs/shared-store.md), the same "
                         "on this runner and every worker")
    return port


def connect(url: str) -> Any:
    """An autocommit connection (store/pgconn.connect) with the queue's schema on its path."""
    conn = pgconn.connect(url)
    conn.execute(f"SET search_path TO {QUEUE_SCHEMA}")
    return conn


class Connections:
    """A long-lived process's connections to the queue (a worker, a `--wait`), reused across its
    members' jobs, looks and sweeps (psycopg_pool): each new connection is a login, which costs
    more than most of what a job asks of the server. Autocommit, the queue's schema on the path,
    keepalives as store/pgconn.connect's. `connection()` lends one for a `with` block, checked
    before it is lent; a connection that broke in it is not lent again."""

    def __init__(self, port: QueueStore, size: int) -> None:
        from psycopg_pool import ConnectionPool

        self.port = port
        self.url = url = port.url
        self._pool = ConnectionPool(
            url, min_size=1, max_size=max(1, size), open=True, timeout=2 * pgconn.CONNECT_TIMEOUT,
            # each lent connection is checked first (one empty query, no login): one the server
            # or a proxy closed while it sat idle is replaced, not handed to a claim or an end
            check=ConnectionPool.check_connection,
            name="hyops-queue", kwargs={"autocommit": True, "connect_timeout": pgconn.CONNECT_TIMEOUT,
                                        "options": QUEUE_SEARCH_PATH, "application_name": "hyops-queue",
                                        **pgconn.KEEPALIVE})

    @contextmanager
    def connection(self) -> Iterator[Any]:
        from psycopg_pool import PoolTimeout

        try:
            conn = self._pool.getconn()
        except PoolTimeout as err:
            raise pgconn.StoreUnavailable(f"cannot reach the store {redact_url(self.url)}: {err}") from None
        try:
            yield conn
        finally:
            self._pool.putconn(conn)  # a broken one is dropped, an open transaction rolled back

    def close(self) -> None:
        self._pool.close()


def deferring_app(url: str) -> Any:
    """An App that only defers and cancels, on connections it is given (never opened)."""
    import procrastinate

    quiet()
    return procrastinate.App(connector=procrastinate.SyncPsycopgConnector(conninfo=url))


def worker_app(url: str, task: Callable[..., Any], pool_size: int, outage: Outage) -> Any:
    """The App a worker runs: an async pool on the queue's schema (procrastinate checks each
    lent connection first), every query tried again through `outage` while the server is
    away (a check cannot see a session the server ends between the check and the query; a
    connection asked for while the server is down fails after the pool's timeout, as
    Connections' does, and is asked for again there), and the member task."""
    import procrastinate

    quiet()
    connector = _weathered_connector()(
        outage, conninfo=url, min_size=1, max_size=pool_size, timeout=2 * pgconn.CONNECT_TIMEOUT,
        kwargs={"options": QUEUE_SEARCH_PATH, "application_name": "hyops-worker", **pgconn.KEEPALIVE})
    app = procrastinate.App(connector=connector)
    app.task(name=TASK, pass_context=True,
             retry=procrastinate.RetryStrategy(max_attempts=RETRIES, wait=RETRY_WAIT,
                                               retry_exceptions={NotYetRun}))(task)
    return app


def _weathered_connector() -> type:
    """procrastinate's connector whose queries outlive a closed connection or a restarting
    server (outage.py): the worker's fetch, heartbeat and job ends are tried again until the
    server answers, and its LISTEN connection is opened again. A retried statement may have
    run once already (the server ended the session after it committed, before it answered):
    a fetch then returns the job it took to the queue, a job's end that already landed is not
    written again."""
    import procrastinate
    from procrastinate import sql

    base = procrastinate.PsycopgConnector
    fetch, ends = sql.queries["fetch_job"], (sql.queries["finish_job"], sql.queries["retry_job"])

    class Weathered(base):  # type: ignore[misc, valid-type]
        def __init__(self, outage: Outage, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.outage = outage
            self.fetched: set[int] = set()  # the jobs a fetch of this worker returned

        async def execute_query_async(self, query: Any, **arguments: Any) -> None:
            if query in ends:
                job_id, tried = arguments["job_id"], False

                async def end() -> None:
                    nonlocal tried
                    if tried and await self._status(job_id) != "doing":
                        return  # the first try landed (the session ended before it answered)
                    tried = True
                    await base.execute_query_async(self, query, **arguments)

                await self.outage.call_async(end, f"ending job {job_id}")
                return
            await self.outage.call_async(lambda: base.execute_query_async(self, query, **arguments),
                                         "a queue query")

        async def execute_query_one_async(self, query: Any, **arguments: Any) -> dict[str, Any]:
            if query == fetch:
                row = await self.outage.call_async(
                    lambda: base.execute_query_one_async(self, query, **arguments), "fetching a job",
                    before_retry=lambda: self._return_untaken(arguments["worker_id"]))
                if row["id"] is not None:
                    self.fetched.add(int(row["id"]))
                return dict(row)
            return dict(await self.outage.call_async(
                lambda: base.execute_query_one_async(self, query, **arguments), "a queue query"))

        async def execute_query_all_async(self, query: Any, **arguments: Any) -> list[dict[str, Any]]:
            return list(await self.outage.call_async(
                lambda: base.execute_query_all_async(self, query, **arguments), "a queue query"))

        async def _status(self, job_id: int) -> str | None:
            rows = await base.execute_query_all_async(
                self, "SELECT status::text AS status FROM procrastinate_jobs WHERE id = %(job_id)s", job_id=job_id)
            return str(rows[0]["status"]) if rows else None

        async def _return_untaken(self, worker_id: int) -> None:
            """Before a fetch is tried again: a job the lost try took for this worker (it
            committed, its answer never came) goes back to the queue; nothing ran it."""
            rows = await base.execute_query_all_async(
                self, "SELECT id FROM procrastinate_jobs WHERE worker_id = %(worker_id)s AND status = 'doing'",
                worker_id=worker_id)
            from procrastinate import utils

            for row in rows:
                if int(row["id"]) not in self.fetched:
                    await base.execute_query_async(self, sql.queries["retry_job"], job_id=int(row["id"]),
                                                   retry_at=utils.utcnow(), new_priority=None,
                                                   new_queue_name=None, new_lock=None)

        async def listen_notify(self, on_notification: Any, channels: Any) -> None:
            """LISTEN again on a new connection when the server is away (procrastinate does
            when its connection dies, but stops the worker when it cannot open one); jobs are
            also fetched by polling meanwhile."""
            attempt = 0
            while True:
                try:
                    await base.listen_notify(self, on_notification, channels)
                except Exception as exc:
                    if not lost_connection(exc):
                        raise
                    await asyncio.sleep(min(MAX_WAIT, 0.2 * 2 ** min(attempt, 10)))
                    attempt += 1

    return Weathered


def queue_of(run_id: str) -> str:
    """A run's own queue, so `stack work --run ID` takes only that run's jobs (a digest of the
    run id: procrastinate notifies on a channel named after the queue, at most 63 bytes)."""
    return f"{QUEUE}-{hashlib.sha256(run_id.encode()).hexdigest()[:24]}"


def defer(app: Any, conn: Any, run_id: str, member: str, key: str) -> int:
    """Queue one member's job in the caller's transaction; its job id."""
    deferrer = app.configure_task(TASK, queue=queue_of(run_id), lock=key, queueing_lock=f"{run_id}/{member}",
                                  connection=conn)
    return int(deferrer.defer(run_id=run_id, member=member))


def cancel(app: Any, conn: Any, job_id: int) -> bool:
    """Withdraw a queued job in the caller's transaction; False when a worker already took it."""
    return bool(app.job_manager.cancel_job_by_id(job_id, connection=conn))


def stalled_jobs(conn: Any, lost_after: float) -> list[tuple[int, int | None]]:
    """(job id, worker id) of member jobs whose worker's heartbeat stopped `lost_after` ago
    (procrastinate's own query, on its worker heartbeats)."""
    from procrastinate import sql

    cur = conn.cursor()
    cur.execute(sql.queries["select_stalled_jobs_by_heartbeat"],
                {"queue": None, "task_name": TASK, "seconds_since_heartbeat": lost_after})
    return [(int(row[0]), row[10]) for row in cur.fetchall()]


def close_job(conn: Any, job_id: int) -> None:
    """A lost worker's job leaves `doing` as failed (procrastinate's finish function), so its
    lock frees the module for later runs; it is never retried."""
    from procrastinate import sql

    conn.execute(sql.queries["finish_job"], {"job_id": job_id, "status": "failed", "delete_job": False})


def retry_job(conn: Any, job_id: int) -> None:
    """Back to the queue now: a stalled job whose member never started (nothing ran)."""
    from procrastinate import sql, utils

    conn.execute(sql.queries["retry_job"], {"job_id": job_id, "retry_at": utils.utcnow(), "new_priority": None,
                                            "new_queue_name": None, "new_lock": None})


def open_jobs(conn: Any, run_ids: list[str] | None) -> int:
    """How many member jobs are queued or running (of these runs; of every run when None)."""
    query = "SELECT count(*) FROM procrastinate_jobs WHERE task_name = %s AND status IN ('todo', 'doing')"
    if run_ids is None:
        return int(conn.execute(query, (TASK,)).fetchone()[0])
    return int(conn.execute(query + " AND queue_name = ANY(%s)", (TASK, [queue_of(r) for r in run_ids])).fetchone()[0])
