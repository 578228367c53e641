"""Workers that vanished (SIGKILL, a runner gone): found by procrastinate's heartbeats.

A member job whose worker has sent no heartbeat for `lost_after` seconds (procrastinate's
stalled-job query) is settled here, once, by whichever process looks first (every worker and
every `--wait` looks): the run marks the member `interrupted: worker NAME lost`, its
dependants become pending (blocked by it) and the job leaves the queue as failed. It is never
run again by itself: its record is a stale `running` as after any kill, and `hyops reconcile`
decides. A worker whose session still holds the member's module lock is not gone but frozen
(a stopped process, a runner paused): the run gives it up all the same, and says it may still
be running the member, so nobody reconciles under it. A job whose member was not started yet
(the worker died before it claimed it) goes back to the queue: nothing ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.record.model import utc_now
from hybridops_tf.stack.queue import jobs, progress, tables, view
from hybridops_tf.stack.queue.tables import QUEUED, RUNNING
from hybridops_tf.store import QueueStore, pgconn
from hybridops_tf.store.schema import SCHEMA


@dataclass(frozen=True)
class Lost:
    """A member whose worker fell silent. `frozen`: its session still holds the module lock."""

    run_id: str
    member: str
    worker: str
    frozen: bool = False


def sweep(connections: jobs.Connections, lost_after: float) -> list[Lost]:
    """Settle every stalled member job; what was found lost."""
    found: list[Lost] = []
    with connections.connection() as conn:
        stalled = jobs.stalled_jobs(conn, lost_after)
        app = jobs.deferring_app(connections.url) if stalled else None
        for job_id, _worker_id in stalled:
            with conn.transaction():
                lost = _settle(conn, app, connections.port, job_id, lost_after)
            if lost is not None:
                found.append(lost)
    return found


def _settle(conn: Any, app: Any, port: QueueStore, job_id: int, lost_after: float) -> Lost | None:
    status = conn.execute("SELECT status FROM procrastinate_jobs WHERE id = %s FOR UPDATE", (job_id,)).fetchone()
    if status is None or status[0] != "doing":
        return None  # another process settled it meanwhile
    row = conn.execute(f"SELECT run_id, name FROM {SCHEMA}.queue_members WHERE job_id = %s", (job_id,)).fetchone()
    run = tables.lock_run(conn, row[0]) if row is not None else None
    if row is None or run is None:
        jobs.close_job(conn, job_id)
        return None
    rows = tables.members(conn, run.run_id)
    member = next(r for r in rows if r.name == row[1])
    if member.status == QUEUED:  # taken from the queue, never claimed: nothing ran
        jobs.retry_job(conn, job_id)
        return None
    if member.status != RUNNING or member.job_id != job_id:
        jobs.close_job(conn, job_id)  # its end is recorded; only procrastinate's bookkeeping was left
        return None
    worker = member.worker or "?"
    now = utc_now()
    frozen = pgconn.lock_held(conn, member.key)
    member.set(status=MemberStatus.INTERRUPTED.value, end_seq=tables.next_end(conn, run.run_id), finished_at=now,
               error=silent_worker(worker, lost_after, frozen))
    progress.advance(conn, app, run, rows, now)
    view.publish(conn, port, run.run_id)
    jobs.close_job(conn, job_id)
    return Lost(run.run_id, member.name, worker, frozen)


def silent_worker(worker: str, lost_after: float, frozen: bool) -> str:
    """The run's word for a member whose worker fell silent."""
    if frozen:
        return (f"interrupted: worker {worker} silent (no heartbeat for {lost_after:g}s) but still holding the "
                "module lock: frozen, not gone, it may still be running the member; the run no longer waits "
                "for it; once the lock is free, reconcile it; never run again by the queue")
    return (f"interrupted: worker {worker} lost (no heartbeat for {lost_after:g}s); its record may be "
            "a stale 'running': reconcile it, never run again by the queue")
