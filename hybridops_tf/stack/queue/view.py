"""A queued run as one stack run report (stack/report.py), merged across its workers: each
member's end, the worker that ran it, and when. It is written as the stack's report document
in the same transaction as every change of the run, so `stack status`, `stack graph
--status`, `hyops report`, JUnit and markdown read the run as it stands, in order.
"""

from __future__ import annotations

from typing import Any

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import STACK_REPORT
from hybridops_tf.stack.queue import tables
from hybridops_tf.stack.queue.tables import MemberRow, QueuedRun
from hybridops_tf.stack.report import MemberEntry, StackReport, report_text
from hybridops_tf.store.schema import SCHEMA


def report_of(run: QueuedRun, rows: list[MemberRow]) -> StackReport:
    members = [MemberEntry(name=r.name, module_ref=r.module_ref, status=r.status, blocked_by=r.blocked_by,
                           run_id=r.member_run_id, error=r.error, worker=r.worker, started_at=r.started_at,
                           finished_at=r.finished_at if r.ended else None)
               for r in sorted(rows, key=lambda r: r.position)]
    return StackReport(run.stack, run.stack_file, run.run_id, run.command, run.started_at, run.finished_at, members,
                       queue=True)


def publish(conn: Any, run_id: str) -> None:
    """The run's report as the stack's report document, in the caller's transaction."""
    run = tables.read_run(conn, run_id)
    assert run is not None
    rows = tables.members(conn, run_id)
    conn.execute(f"INSERT INTO {SCHEMA}.documents (kind, name, body, updated_at) VALUES (%s, %s, %s, now()) "
                 "ON CONFLICT (kind, name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()",
                 (STACK_REPORT, run.stack, report_text(report_of(run, rows))))


def exit_code(rows: list[MemberRow]) -> int:
    """`--wait`'s exit code: 0 when every member ended as it should (pending alone is not a
    failure: something else failed), 1 when one failed or its worker was lost (uncertain)."""
    bad = {MemberStatus.ERROR.value, MemberStatus.INTERRUPTED.value}
    return ExitCode.FAILED if any(r.status in bad for r in rows) else ExitCode.OK
