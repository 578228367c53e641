"""Withdraw a queued run: `hyops stack cancel RUN`, and `stack apply|destroy --queue
--supersede`, which cancels the stack's unfinished runs in the transaction that queues the new one.

Under the run's row lock, in the caller's transaction: each member no worker took yet (waiting
for its upstreams, or queued) becomes `cancelled` and its job leaves the queue; a member a
worker runs goes on and settles as usual, and the run finishes at its end (progress.advance);
with nothing running it finishes now. A worker that fetched a cancelled member's job before it
was withdrawn finds the member no longer queued and never runs it (tables.claim is the one door).
Records are not touched: a cancelled member never started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.record.advice import ADVISE
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.record.model import Owner, utc_now
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.queue import jobs, tables, view
from hybridops_tf.stack.queue.tables import QUEUED, RUNNING, WAITING, QueuedRun
from hybridops_tf.store import QueueStore, pgconn


@dataclass(frozen=True)
class Cancelled:
    """What cancelling one run did: the members withdrawn, and those a worker still runs (each
    with its worker), which finish and settle as usual. `already_finished`: nothing was left."""

    run: QueuedRun
    withdrawn: tuple[str, ...]
    running: tuple[tuple[str, str], ...]
    already_finished: bool = False


def cancel_run(conn: Any, app: Any, port: QueueStore, run_id: str, why: str, now: str) -> Cancelled | None:
    """Cancel one run in the caller's transaction; None when the store has no such run."""
    run = tables.lock_run(conn, run_id)
    if run is None:
        return None
    if run.finished_at is not None:
        return Cancelled(run, (), (), already_finished=True)
    rows = tables.members(conn, run_id)
    withdrawn: list[str] = []
    for row in rows:
        if row.status not in (WAITING, QUEUED):
            continue
        if row.status == QUEUED and row.job_id is not None:
            jobs.cancel(app, conn, row.job_id)  # False: a worker fetched it; its claim will refuse
        row.set(status=MemberStatus.CANCELLED.value, error=why, finished_at=now)
        withdrawn.append(row.name)
    running = tuple((r.name, r.worker or "?") for r in rows if r.status == RUNNING)
    if not running:
        tables.finish_run(conn, run_id, now)
    tables.save(conn, run_id, rows)
    view.publish(conn, port, run_id)
    return Cancelled(run, tuple(withdrawn), running)


def guard_stack(conn: Any, stack: str) -> list[QueuedRun]:
    """Take the stack's queueing lock for the caller's transaction (two `--queue` of one stack
    at once see each other's run), and the stack's unfinished runs, oldest first."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (pgconn.lock_id(f"queue:{stack}"),))
    return [run for run in tables.open_runs(conn) if run.stack == stack]


def withdraw(runtime: Runtime, run_id: str) -> Cancelled:
    """`hyops stack cancel RUN`: cancel the run in one transaction of its own."""
    store = runtime.store
    port = jobs.queue_store(store, "`stack cancel`")
    store.keys()  # the store answers and its schema is this hyops's (exit 2/4 otherwise)
    INTERRUPTS.check("before the run was cancelled; nothing changed")
    owner = Owner.current(run_id)
    try:
        conn = jobs.connect(port.url)
    except OSError as err:
        raise RefusedError(f"{getattr(err, 'strerror', None) or err}; nothing was cancelled") from None
    try:
        with conn.transaction():
            done = cancel_run(conn, jobs.deferring_app(port.url), port, run_id,
                              f"cancelled by `{ADVISE.stack_cancel(run_id)}` (pid {owner.pid} on {owner.host})",
                              utc_now())
    finally:
        conn.close()
    if done is None:
        raise UsageError(f"no queued run {run_id} in {store.describe()}: pass the id `stack apply --queue` "
                         f"printed (`{ADVISE.stack_status(None)}` names the last run)")
    return done
