"""The stack run report `<runtime_root>/stacks/<stack>/latest.json` (docs/contract.md: Stacks, schema 1).

After a red stack run this is the honest picture: which members are ok, which failed, and
which never ran (pending, with the member that blocked them), each with the run_id of its
own run folder. `stack status` prints it, filling in members it does not know yet from
their records, so the answer never depends on having run the stack before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.record import layout
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import STACK_REPORT, Runtime
from hybridops_tf.stack.model import Stack
from hybridops_tf.store import Store

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

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "module_ref": self.module_ref, "status": self.status}
        for key in ("blocked_by", "run_id", "error", "worker", "started_at", "finished_at"):
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "stack": self.stack,
            "stack_file": self.stack_file,
            "run_id": self.run_id,
            "command": self.command,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "members": [m.to_dict() for m in self.members],
        }

    def counts(self) -> dict[str, int]:
        """status -> how many members, in the vocabulary's order (ok, error, pending, ...)."""
        order = [s.value for s in MemberStatus]
        out: dict[str, int] = {}
        for m in sorted(self.members, key=lambda m: order.index(m.status) if m.status in order else 99):
            out[m.status] = out.get(m.status, 0) + 1
        return out


def report_text(report: StackReport) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def write_report(runtime: Runtime, report: StackReport) -> Path:
    """The report beside the records: the local file, and the shared store's copy when one is used."""
    path = layout.stack_report(runtime.root, report.stack)
    text = report_text(report)
    atomic_write_text(path, text)
    store = runtime.store
    if store.shared:
        store.put_document(STACK_REPORT, report.stack, text)
    return path


def read_report(runtime: Runtime, stack_name: str) -> dict[str, Any] | None:
    """The stored report, None when the stack never ran; refused loudly when unreadable."""
    path = layout.stack_report(runtime.root, stack_name)
    store = runtime.store
    if store.shared:
        store.fetch_document(STACK_REPORT, stack_name, path)
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
    return doc


def record_status(store: Store, module_ref: str) -> str:
    """A member's record status now, "none" without a record (a corrupt one raises, exit 2)."""
    rec = store.read(module_ref)
    return rec.status.value if rec is not None else NO_RECORD


def status_document(stack: Stack, runtime: Runtime) -> dict[str, Any]:
    """`stack status --json`: the last run report as stored; members it does not list (never
    run by this stack) are added with their record's status, or "none"."""
    store = runtime.store
    doc = read_report(runtime, stack.name)
    if doc is None:
        doc = StackReport(stack.name, str(stack.file), None, None, None, None).to_dict()
    known = {m.get("name") for m in doc["members"] if isinstance(m, dict)}
    for member in stack.members:
        if member.name not in known:
            doc["members"].append(MemberEntry(member.name, member.module_ref,
                                              record_status(store, member.key)).to_dict())
    return doc
