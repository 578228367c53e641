"""A queued run moves on: after it is queued, after each member's end, after a worker is
found lost. Each function runs inside the caller's transaction, under the run's row lock
(tables.lock_run), so the end and what follows from it (dependants queued, queued jobs
withdrawn once the run stopped, members known pending, the run finished) commit as one.
"""

from __future__ import annotations

from typing import Any

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.queue import dispatch, jobs, tables
from hybridops_tf.stack.queue.tables import QUEUED, RUNNING, WAITING, MemberRow, QueuedRun


def advance(conn: Any, app: Any, run: QueuedRun, rows: list[MemberRow], now: str) -> dispatch.Progress:
    """Queue what the Scheduler starts; once the run stopped (a failure without
    --continue-on-error), withdraw jobs no worker took yet; mark pending what cannot start."""
    by_name = {r.name: r for r in rows}
    while True:
        progress = dispatch.replay(run.graph, run.options.continue_on_error, ends_of(rows))
        given_up = sorted((by_name[n] for n in progress.active if by_name[n].status == QUEUED),
                          key=lambda r: r.position)
        if not progress.stopped or not given_up:
            break
        failure = first_failure(rows)
        for row in given_up:
            if row.job_id is not None:
                jobs.cancel(app, conn, row.job_id)
            row.set(status=MemberStatus.PENDING.value, blocked_by=failure, end_seq=tables.next_end(conn, run.run_id),
                    finished_at=now)
    rank = {name: i for i, name in enumerate(run.graph.order)}
    for name in sorted(progress.active, key=rank.__getitem__):
        row = by_name[name]
        if row.status == WAITING:
            row.set(status=QUEUED, job_id=jobs.defer(app, conn, run.run_id, name, row.key))
    for name, res in (progress.final or progress.resolved).items():
        row = by_name[name]
        if row.status == WAITING:  # never started: pending, and who kept it from starting
            row.set(status=res.status.value, blocked_by=res.blocked_by, finished_at=now)
    if progress.done or all(r.ended for r in rows):  # the latter: a cancelled run's last member
        tables.finish_run(conn, run.run_id, now)
    tables.save(conn, run.run_id, rows)
    return progress


def ends_of(rows: list[MemberRow]) -> list[tuple[str, MemberStatus]]:
    """The members that ended after they were started, in the order the run recorded them."""
    ended = sorted((r for r in rows if r.end_seq is not None), key=lambda r: r.end_seq or 0)
    return [(r.name, MemberStatus(r.status)) for r in ended]


def first_failure(rows: list[MemberRow]) -> str | None:
    failed = [r for r in rows if r.end_seq is not None and r.status == MemberStatus.ERROR.value]
    return min(failed, key=lambda r: r.end_seq or 0).name if failed else None


def end_member(conn: Any, app: Any, run: QueuedRun, name: str, worker: str, now: str, **end: Any) -> bool:
    """Record how a member this worker runs ended (`status` and what else `end` says), then
    advance the run. False when the run no longer counts it as this worker's (it was given
    up as lost meanwhile): its end is then not the run's, and nothing else changes."""
    rows = tables.members(conn, run.run_id)
    row = next(r for r in rows if r.name == name)
    if row.status != RUNNING or row.worker != worker:
        return False
    row.set(**end, end_seq=tables.next_end(conn, run.run_id), finished_at=now)
    advance(conn, app, run, rows, now)
    return True


def requeue(conn: Any, run: QueuedRun, name: str, worker: str, error: str) -> bool:
    """A member that stopped before anything could change goes back to the queue (its job is
    retried by procrastinate); its last error is kept for the view."""
    rows = tables.members(conn, run.run_id)
    row = next(r for r in rows if r.name == name)
    if row.status != RUNNING or row.worker != worker:
        return False
    row.set(status=QUEUED, error=error, attempts=row.attempts + 1, worker=None, started_at=None, member_run_id=None)
    tables.save(conn, run.run_id, rows)
    return True
