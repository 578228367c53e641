"""`hyops stack work`: a worker of queued runs, on procrastinate's worker.

procrastinate's Worker fetches member jobs (`-p N` at a time), keeps the worker's heartbeat,
and retries a job that asks for it (jobs.NotYetRun). Beside it, a watch in the same event loop:
after SIGINT/SIGTERM (process.FORWARDER, which also stops running engines once) it stops the
worker, which takes nothing new and waits for its members to settle; every heartbeat it looks
for lost workers (lost.py); with `--until-idle` it stops once no run it serves has a job
queued or running.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.engine import process
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.member import MemberResult, StackListener
from hybridops_tf.stack.queue import jobs, lost, tables
from hybridops_tf.stack.queue.outage import Outage, lost_connection
from hybridops_tf.stack.queue.take import MemberEnd, Taker
from hybridops_tf.store.url import redact_url

_TICK = 0.1  # how soon a signal stops the worker
IDLE_LOOK = 0.5  # seconds between two `--until-idle` looks at the queue


def default_name() -> str:
    return f"{os.uname().nodename}:{os.getpid()}"


@dataclass
class WorkRequest:
    runtime: Runtime
    name: str
    parallelism: int = 1
    until_idle: bool = False
    run_id: str | None = None
    listener: StackListener | None = None
    on_lost: Callable[[lost.Lost], None] | None = None
    on_given_up: Callable[[MemberEnd], None] | None = None  # a member that ended after the run gave it up
    on_handed_back: Callable[[MemberEnd], None] | None = None  # a member this worker did not run
    argv: Sequence[str] = ()


@dataclass
class WorkResult:
    """What this worker ran, member by member, and its exit code: 130/143 after a signal, 1
    when a member it ran failed or was interrupted, or ended after the run had given it up
    (this worker was found lost meanwhile), else 0. Members it handed back (its checkout
    cannot serve their run, or they went back to the queue before anything changed) are not
    its members: they count for the worker that runs them."""

    ran: list[tuple[str, MemberResult]] = field(default_factory=list)
    given_up: list[MemberEnd] = field(default_factory=list)
    handed_back: list[MemberEnd] = field(default_factory=list)
    exit_code: int = ExitCode.OK


def work(req: WorkRequest) -> WorkResult:
    store = req.runtime.store
    port = jobs.queue_store(store, "`stack work`")
    url = port.url
    heartbeat = jobs.Heartbeat.from_env()
    store.keys()  # the store answers and its schema is this hyops's (exit 2/4 otherwise)
    # a member's job lends one connection for its claim, its run id and its end, and one for
    # its upstreams' rows; the worker's looks and sweeps one more
    connections = jobs.Connections(port, 2 * req.parallelism + 1)
    if req.run_id is not None:
        try:
            with connections.connection() as conn:
                known = tables.read_run(conn, req.run_id)
        except BaseException:
            connections.close()
            raise
        if known is None:
            connections.close()
            raise UsageError(f"no queued run {req.run_id} in {store.describe()}")
    result = WorkResult()
    guard = threading.Lock()

    def ended(end: MemberEnd) -> None:
        with guard:
            if end.handed_back:
                result.handed_back.append(end)
            else:
                result.ran.append((end.member, end.result))
            if not end.counted:
                result.given_up.append(end)
        if end.handed_back and req.on_handed_back is not None:
            req.on_handed_back(end)
        if not end.counted and req.on_given_up is not None:
            req.on_given_up(end)

    # the server may close a connection or restart under a worker that lives for hours: its
    # calls are tried again until the server is back, for up to its lost-after time (outage.py)
    outage = Outage(heartbeat.lost_after, redact_url(url))
    taker = Taker(req.name, req.runtime, connections, req.listener, req.argv, ended, outage=outage)
    app = jobs.worker_app(url, taker.job, pool_size=req.parallelism + 2, outage=outage)
    req.runtime.ensure_root()
    with process.FORWARDER, closing(connections):
        try:
            asyncio.run(_serve(app, req, connections, heartbeat, taker, outage))
        except Exception as exc:
            if outage.gave_up is not None and lost_connection(exc) or exc is outage.gave_up:
                raise outage.gave_up from None
            raise
        if outage.gave_up is not None:  # a side task of procrastinate's met it, and stopped the worker
            raise outage.gave_up
        signum = process.FORWARDER.received
    if signum is not None:
        result.exit_code = 128 + signum
    elif result.given_up or any(r.status in (MemberStatus.ERROR, MemberStatus.INTERRUPTED) for _, r in result.ran):
        result.exit_code = ExitCode.FAILED
    return result


async def _serve(app: Any, req: WorkRequest, connections: jobs.Connections, heartbeat: jobs.Heartbeat,
                 taker: Taker, outage: Outage) -> None:
    from procrastinate.worker import Worker

    asyncio.get_running_loop().set_exception_handler(_quiet_given_up(taker))
    async with app.open_async():
        worker = Worker(app, queues=[jobs.queue_of(req.run_id)] if req.run_id else None, name=req.name,
                        concurrency=req.parallelism, wait=True, install_signal_handlers=False,
                        update_heartbeat_interval=heartbeat.interval, stalled_worker_timeout=heartbeat.lost_after,
                        fetch_job_polling_interval=min(heartbeat.interval, 5.0),
                        abort_job_polling_interval=min(heartbeat.interval, 5.0))
        running = asyncio.create_task(worker.run(), name="hyops worker")
        next_sweep = next_idle = 0.0
        while not running.done():
            await asyncio.wait({running}, timeout=_TICK)
            if process.FORWARDER.received is not None:
                worker.stop()
                continue
            now = time.monotonic()
            try:
                if now >= next_sweep:
                    next_sweep = now + heartbeat.interval
                    for found in await asyncio.to_thread(lost.sweep, connections, heartbeat.lost_after):
                        if req.on_lost is not None:
                            req.on_lost(found)
                if req.until_idle and now >= next_idle:
                    next_idle = now + IDLE_LOOK
                    if await asyncio.to_thread(_idle, connections, req.run_id):
                        worker.stop()
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                next_sweep = next_idle = now + outage.failed(exc, "looking at the queue")  # past lost-after: raises
            else:
                outage.answered()
                if outage.gave_up is not None:
                    worker.stop()
        await running


def _quiet_given_up(taker: Taker) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """The event loop's error handler: procrastinate cannot end the job of a member the run
    gave up (lost.py closed it as failed when this worker was found lost), and says so as an
    unretrieved task error; the worker has said it plainly already (MemberEnd.counted). Any
    other error is the loop's default report."""
    from procrastinate.exceptions import ConnectorException

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), ConnectorException) and taker.given_up:
            return
        loop.default_exception_handler(context)

    return handle


def _idle(connections: jobs.Connections, run_id: str | None) -> bool:
    """No job of the runs this worker serves is queued or running (a lost worker's job counts
    until lost.sweep settles it)."""
    with connections.connection() as conn:
        return jobs.open_jobs(conn, [run_id] if run_id else None) == 0
