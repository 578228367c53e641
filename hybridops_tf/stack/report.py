"""The stack run report `<runtime_root>/stacks/<stack>/latest.json` (docs/contract.md: Stacks, schema 1).

After a red stack run this is the honest picture: which members are ok, which failed, and
which never ran (pending, with the member that blocked them), each with the run_id of its
own run folder. `stack status` prints it, filling in members it does not know yet from
their records, so the answer never depends on having run the stack before.

A run writes its report before any member starts (`finished_at` null, the runner named),
journals each member's start (`running`, with the run_id its record will carry) and end
(runtime/live_journal.py, folded in by read_report), and writes it last with `finished_at`:
a runner killed at any point leaves a report that says so, and stack/status.py reads it
with every member's record now (stack/view.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hybridops_tf.base import notices
from hybridops_tf.base.errors import UsageError
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime import live_journal
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.store.documents import STACK_REPORT, local_path

SCHEMA_VERSION = 1
NO_RECORD = "none"


@dataclass(frozen=True, slots=True)
class MemberEntry:
    """One member line: status is a MemberStatus value, or a record status / "none" in a
    status document for a member the last run did not include."""

    name: str
    module_ref: str
    status: str
    blocked_by: str | None = None
    run_id: str | None = None
    error: str | None = None
    worker: str | None = None  # a queued run: the worker that ran it (stack/queue), and when
    started_at: str | None = None
    finished_at: str | None = None
    compared: str | None = None  # `skipped`: what the --resume skip compared, and what not (stack/skip.py)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "module_ref": self.module_ref, "status": self.status}
        for key in ("blocked_by", "run_id", "error", "worker", "started_at", "finished_at", "compared"):
            value = getattr(self, key)
            if value is not None:
                doc[key] = value
        return doc


@dataclass
class StackReport:
    stack: str
    stack_file: str
    run_id: str | None
    command: str | None
    started_at: str | None
    finished_at: str | None
    members: list[MemberEntry] = field(default_factory=list)
    runner: dict[str, Any] | None = None  # liveness.process_note of the run's process
    queue: bool = False  # a queued run (stack/queue): kept by the shared store, not by one process

    def to_dict(self) -> dict[str, Any]:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "stack": self.stack,
            "stack_file": self.stack_file,
            "run_id": self.run_id,
            "command": self.command,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "members": [m.to_dict() for m in self.members],
        }
        if self.runner is not None:
            doc["runner"] = self.runner
        if self.queue:
            doc["queue"] = True
        return doc

    def counts(self) -> dict[str, int]:
        """status -> how many members, in the vocabulary's order (ok, error, pending, ...)."""
        order = [s.value for s in MemberStatus]
        out: dict[str, int] = {}
        for m in sorted(self.members, key=lambda m: order.index(m.status) if m.status in order else 99):
            out[m.status] = out.get(m.status, 0) + 1
        return out


def report_text(report: StackReport) -> str:
    """The report's JSON, as the store keeps it and `stack status --json` reads it."""
    return json.dumps(report.to_dict(), indent=2) + "\n"


def write_report(runtime: Runtime, report: StackReport) -> Path:
    """The report beside the records (the store's document, whose local file this returns)."""
    runtime.store.put_document(STACK_REPORT, report.stack, report_text(report))
    return local_path(runtime.root, STACK_REPORT, report.stack)


def read_report(runtime: Runtime, stack_name: str) -> dict[str, Any] | None:
    """The stored report, None when the stack never ran; refused loudly when unreadable."""
    store = runtime.store
    path = store.fetch_document(STACK_REPORT, stack_name)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise UsageError(f"stack report {path} is unreadable ({err}); it was left untouched: "
                         "inspect it, or move it aside (the next stack run writes a new one)") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION \
            or not isinstance(doc.get("members"), list):
        raise UsageError(f"stack report {path} is not a schema_version {SCHEMA_VERSION} report; "
                         "it was left untouched: move it aside to start over")
    if doc.get("finished_at") or not isinstance(doc.get("run_id"), str):
        return doc
    if doc.get("queue"):  # an unfinished queued run: its rows in the store say more (stack/status.py)
        return doc
    return live_journal.fold_lines(doc, store.document_lines(STACK_REPORT, stack_name, doc["run_id"]))


class LiveReport:
    """The report of a run in progress: written whole before any member starts, then each
    member's start and end appended as a line of the report's document (runtime/live_journal.py;
    the store keeps them, every reader folds them in), so that a runner killed at any point
    leaves a report saying how far it got, and an update costs the same at 500 members as at 5.
    The first write raises (the run must not start unseen); later ones warn once and let the
    run go on (the member records still say what happened). `also` gets every version (the
    JUnit file). Member threads call it: one write at a time. `finish` after the finished
    report is written drops the lines."""

    def __init__(self, runtime: Runtime, report: StackReport,
                 also: Callable[[StackReport], None] | None = None) -> None:
        self.runtime = runtime
        self.report = report
        self.also = also
        self._index = {m.name: i for i, m in enumerate(report.members)}
        self._lock = threading.Lock()
        self._warned = False

    def start(self) -> None:
        with self._lock:
            write_report(self.runtime, self.report)
            # after the report that names its run (another run's lines are ignored): the lines an
            # earlier run left (killed before its finish) go
            self._update(lambda: self.runtime.store.drop_document_lines(STACK_REPORT, self.report.stack))
            if self.also is not None:
                self.also(self.report)

    def member(self, name: str, status: MemberStatus, run_id: str | None = None, error: str | None = None) -> None:
        """`name` is now `status` (run_id: its run, which its record carries or will)."""
        with self._lock:
            i = self._index[name]
            members = self.report.members
            members[i] = replace(members[i], status=status.value, run_id=run_id, blocked_by=None, error=error)

            def update() -> None:
                line = live_journal.line_of(self.report.run_id, name, status.value, run_id, error)
                self.runtime.store.append_document_line(STACK_REPORT, self.report.stack, self.report.run_id or "", line)
                if self.also is not None:
                    self.also(self.report)

            self._update(update)

    def _update(self, write: Callable[[], None]) -> None:
        try:
            write()
        except OSError as err:  # the store's StoreUnavailable too
            if not self._warned:
                self._warned = True
                notices.warning(f"could not update the stack report under {self.runtime.root}: "
                                f"{err.strerror or err}; the member records still say what happened")

    def finish(self, written: bool) -> None:
        """The run's end: its lines go once the finished report was `written`, else they stay
        (folded into the report they belong to, they are the run's last word)."""
        with self._lock:
            try:
                if written:  # the finished report says all its lines said
                    self.runtime.store.drop_document_lines(STACK_REPORT, self.report.stack)
            except OSError:
                pass
