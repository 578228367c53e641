"""`stack status`: the stack's last run report read with every member's record now
(stack/view.py judges it); an unfinished queued run as its rows in the store say now
(stack/queue/view.py). Read by `stack status`, `stack graph --status`, `hyops report`."""

from __future__ import annotations

from typing import Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack import view
from hybridops_tf.stack.model import Stack
from hybridops_tf.stack.report import NO_RECORD, MemberEntry, StackReport, read_report


def records_now(stack: Stack, runtime: Runtime) -> dict[str, Any]:
    """member name -> its status entry now (runtime.status.StatusEntry: the record, stale or
    engine alive, or the reason it is unreadable)."""
    from hybridops_tf.runtime.status import entry

    store = runtime.store
    return {m.name: entry(store, m.key, m.directory) for m in stack.members}


def record_now(e: Any) -> view.RecordNow:
    """A status entry as stack/view.py reads it."""
    rec = e.record
    if rec is None:
        return view.RecordNow("corrupt" if e.problem else NO_RECORD)
    written = e.written
    return view.RecordNow(rec.status.value, rec.run_id, stale=e.stale, engine_alive=e.engine_alive is not None,
                          active_command=rec.active_command, last_error=rec.last_error,
                          orphans=tuple(o.address for o in rec.suspect_orphans),
                          written=written.to_json() if written is not None else None,
                          written_line=written.headline() if written is not None else None,
                          not_read=e.not_looked)


def status_document(stack: Stack, runtime: Runtime, entries: dict[str, Any] | None = None) -> dict[str, Any]:
    """`stack status --json`: the last run report read with every member's record now
    (stack/view.py: the run's `state`, members as their records say, `uncertain`); members
    it does not list (never run by this stack) are added with their record's status, or
    "none". `entries`: records_now, when the caller has read them already."""
    from hybridops_tf.runtime.liveness import process_alive

    entries = records_now(stack, runtime) if entries is None else entries
    doc = read_report(runtime, stack.name)
    port = runtime.store.queue()
    if doc is not None and doc.get("queue") and not doc.get("finished_at") and port is not None:
        from hybridops_tf.stack.queue.view import as_it_stands

        doc = as_it_stands(port, doc)
    if doc is None:
        doc = StackReport(stack.name, str(stack.file), None, None, None, None).to_dict()
    known = {m.get("name") for m in doc["members"] if isinstance(m, dict)}
    for member in stack.members:
        if member.name not in known:
            e = entries[member.name]
            shown = NO_RECORD if e.record is None else e.record.status.value
            if e.record is None and e.problem:
                raise UsageError(e.problem)  # a corrupt record: exit 2, as reading it always was
            doc["members"].append(MemberEntry(member.name, member.module_ref, shown).to_dict())
    records = {name: record_now(e) for name, e in entries.items()}
    return view.judge(doc, records, process_alive(doc.get("runner")))
