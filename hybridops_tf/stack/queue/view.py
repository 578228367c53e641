"""A queued run as one stack run report (stack/report.py: queued_report), merged across its
workers: each member's end, the worker that ran it, and when. The stack's report document
names the run from its queueing on and holds it whole once it finished, written in the same
transaction as those changes; in between, `stack status`, `stack graph --status`, `hyops
report`, JUnit and markdown read the unfinished run from its rows (stack/report.py:
read_report), as it stands, so that a member's claim, start and end cost the same in a
500-member run as in a 5-member one (the document rewritten whole on each was ~8 ms at 500
members, under the run's row lock).
"""

from __future__ import annotations

from typing import Any

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import STACK_REPORT
from hybridops_tf.stack.queue import tables
from hybridops_tf.stack.queue.tables import MemberRow
from hybridops_tf.stack.report import queued_report, report_text
from hybridops_tf.store import QueueStore


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
