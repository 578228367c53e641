"""A queued run as one stack run report (queued_report), merged across its
workers: each member's end, the worker that ran it, and when. The stack's report document
names the run from its queueing on and holds it whole once it finished, written in the same
transaction as those changes; in between, `stack status`, `stack graph --status`, `hyops
report`, JUnit and markdown read the unfinished run from its rows (as_it_stands, called by
stack/status.py), as it stands, so that a member's claim, start and end cost the same in a
500-member run as in a 5-member one (the document rewritten whole on each was ~8 ms at 500
members, under the run's row lock).
"""

from __future__ import annotations

from typing import Any

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.queue import tables
from hybridops_tf.stack.queue.tables import MemberRow, QueuedRun
from hybridops_tf.stack.report import MemberEntry, StackReport, report_text
from hybridops_tf.store import QueueStore
from hybridops_tf.store.documents import STACK_REPORT


def publish(conn: Any, port: QueueStore, run_id: str, *, queued: bool = False) -> None:
    """The run's report as the stack's report document, written through the store in the
    caller's transaction, when it was just `queued` or it has finished; an unfinished run's
    readers read its rows."""
    run = tables.read_run(conn, run_id)
    assert run is not None
    if not queued and run.finished_at is None:
        return
    rows = tables.members(conn, run_id)
    port.put_document_on(conn, STACK_REPORT, run.stack, report_text(queued_report(run, rows)))


def exit_code(rows: list[MemberRow]) -> int:
    """`--wait`'s exit code: 0 when every member ended as it should (pending alone is not a
    failure: something else failed), 1 when one failed or its worker was lost (uncertain), or
    the run was cancelled before it was done."""
    bad = {MemberStatus.ERROR.value, MemberStatus.INTERRUPTED.value, MemberStatus.CANCELLED.value}
    return ExitCode.FAILED if any(r.status in bad for r in rows) else ExitCode.OK


def queued_report(run: QueuedRun, rows: list[MemberRow]) -> StackReport:
    """A queued run and its member rows (stack/queue/tables.py) as one report."""
    members = [MemberEntry(name=r.name, module_ref=r.module_ref, status=r.status, blocked_by=r.blocked_by,
                           run_id=r.member_run_id, error=r.error, worker=r.worker, started_at=r.started_at,
                           finished_at=r.finished_at if r.ended else None)
               for r in sorted(rows, key=lambda r: r.position)]
    return StackReport(run.stack, run.stack_file, run.run_id, run.command, run.started_at, run.finished_at, members,
                       queue=True)


def as_it_stands(port: QueueStore, doc: dict[str, Any]) -> dict[str, Any]:
    """The stored report `doc` of an unfinished queued run as the run's rows in the store say
    now (publish writes the document only when the run is queued and when it ends); `doc`
    itself when the store holds no such run any more."""
    def read(conn: Any) -> dict[str, Any]:
        run = tables.read_run(conn, doc["run_id"])
        return doc if run is None else queued_report(run, tables.members(conn, run.run_id)).to_dict()

    now: dict[str, Any] = port.read_with(read)
    return now
