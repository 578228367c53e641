"""`stack apply|destroy --junit FILE`: the stack run as a JUnit XML file CI systems show.

Each member is a <testcase> (classname = the stack's name, name = the member): ok,
skipped (`--resume`), destroyed, absent and retained pass; error and interrupted (a signal
stopped it mid-way) fail with
<failure message=its error>; pending is <skipped message="blocked by X">. A run refused
before any member ran is one failing case, `(preflight)`, so the CI view is never empty.
Built from the run report (report.StackReport) only: what the file says, latest.json says.
The run writes the file with its report as it goes (report.LiveReport), so a runner killed
mid-run leaves a file that fails: a `(run)` case saying the run did not finish, and each
member it saw start and not end failing as `running` (its outcome unknown).

A queued run (stack/queue) is the same report merged across its workers: each member's case
names the worker that ran it and when, and members still `waiting` or `queued` are skipped.
`stack status --junit FILE` writes the last run as `stack status` shows it (status_xml): the
run's state decides the `(run)` case, and a member whose outcome is uncertain fails.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hybridops_tf.base import notices
from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.record.advice import ADVISE
from hybridops_tf.stack import view
from hybridops_tf.stack.report import MemberEntry, StackReport

PREFLIGHT = "(preflight)"  # the case of a run refused before any member ran (not a member name)
UNFINISHED = "(run)"  # the case of a run whose report has no end yet (not a member name)
_FAILED = frozenset({"error", "running", "interrupted"})  # interrupted: a signal stopped it mid-way
# not run (yet): pending, and a queued run's members no worker has taken (stack/queue/tables.py)
# or that were withdrawn from it (`hyops stack cancel`, `--supersede`)
_NOT_RUN = frozenset({"pending", "waiting", "queued", "cancelled"})
# Characters XML 1.0 cannot carry (an engine's ANSI escape, say): shown as \xNN instead.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(started: str | None, finished: str | None) -> str | None:
    try:
        begin, end = datetime.fromisoformat(started or ""), datetime.fromisoformat(finished or "")
    except ValueError:
        return None
    return f"{max((end - begin).total_seconds(), 0.0):.3f}"


def _blocked(member: MemberEntry) -> str:
    if member.blocked_by:
        return f"blocked by {member.blocked_by}"
    if member.status == "queued":
        return "queued: no worker took it yet"
    if member.status == "cancelled":
        return member.error or "cancelled before a worker took it"
    if member.status == "waiting":
        return "waiting for its upstreams"
    return "not started: the run was interrupted"


def _case(suite: ET.Element, stack: str, member: MemberEntry, uncertain: list[str] | None = None,
          stack_file: str | None = None) -> None:
    case = ET.SubElement(suite, "testcase", classname=_clean(stack), name=_clean(member.name))
    where = f"{member.module_ref}: {member.status}" + (f" (run {member.run_id})" if member.run_id else "")
    if member.worker:  # a queued run: the worker that ran it, and when
        where += f" on worker {member.worker} ({member.started_at or '?'} to {member.finished_at or '?'})"
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="worker", value=_clean(member.worker))
    if uncertain:  # what exists is not known whatever the status says (stack/view.py)
        why = "; ".join(uncertain)
        failure = ET.SubElement(case, "failure", message=_clean(f"uncertain: {why}"), type="uncertain")
        reconcile = ADVISE.reconcile_stack(stack_file)
        failure.text = _clean(f"uncertain: {why}\n{where}\nnext: `{reconcile}` says what is live")
        return
    if member.status in _FAILED:
        reconcile = ADVISE.reconcile_stack(stack_file)
        error = member.error or (f"did not finish: its outcome is unknown until `{reconcile}` reads "
                                 "its record" if member.status == "running"
                                 else "failed (no detail recorded)")
        failure = ET.SubElement(case, "failure", message=_clean(error), type=member.status)
        failure.text = _clean(f"{error}\n{where}")
        return
    if member.status in _NOT_RUN:
        ET.SubElement(case, "skipped", message=_clean(_blocked(member)))
    out = ET.SubElement(case, "system-out")
    skip = f"\nskipped by --resume, which {member.compared}" if member.compared else ""  # never more than it did
    out.text = _clean(where + (f"\n{member.error}" if member.error else "") + skip)


def _suite(root: ET.Element, name: str, cases: int, failures: int, skipped: int, **extra: str | None) -> ET.Element:
    attrs = {"name": _clean(name), "tests": str(cases), "failures": str(failures), "errors": "0",
             "skipped": str(skipped), **{k: _clean(v) for k, v in extra.items() if v is not None}}
    root.attrib.update({k: attrs[k] for k in ("tests", "failures", "errors", "skipped")})
    return ET.SubElement(root, "testsuite", attrs)


def _properties(suite: ET.Element, values: dict[str, str | None]) -> None:
    props = ET.SubElement(suite, "properties")
    for key, value in values.items():
        if value is not None:
            ET.SubElement(props, "property", name=key, value=_clean(value))


def _document(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def report_xml(report: StackReport, *, unfinished: tuple[str, str] | None = None,
               uncertain: Mapping[str, list[str]] | None = None) -> str:
    """The JUnit document of one stack run. A run without an end gets a failing `(run)` case;
    `unfinished` (type, message) says why when the caller knows better than "it was written
    while it ran"; `uncertain`: member -> why its outcome is not known (each such case fails)."""
    root = ET.Element("testsuites", name=_clean(f"hyops stack {report.command or 'status'} {report.stack}"))
    members = report.members
    uncertain = uncertain or {}
    if report.finished_at is None and unfinished is None:
        unfinished = ("unfinished", _unfinished(report))
    failing = [m for m in members if m.status in _FAILED or uncertain.get(m.name)]
    suite = _suite(root, report.stack, len(members) + (unfinished is not None),
                   len(failing) + (unfinished is not None),
                   sum(m.status in _NOT_RUN and not uncertain.get(m.name) for m in members),
                   timestamp=report.started_at, time=_seconds(report.started_at, report.finished_at))
    _properties(suite, {"command": report.command, "run_id": report.run_id, "stack_file": report.stack_file})
    if unfinished is not None:
        kind, message = unfinished
        case = ET.SubElement(suite, "testcase", classname=_clean(report.stack), name=UNFINISHED)
        ET.SubElement(case, "failure", message=_clean(message), type=kind).text = _clean(message)
    for member in members:
        _case(suite, report.stack, member, uncertain.get(member.name), report.stack_file)
    return _document(root)


def _unfinished(report: StackReport) -> str:
    if report.queue:  # kept by the store: its workers may still be at it
        return (f"the queued stack {report.command} {report.run_id} had not finished when this file was "
                f"written: its workers (`{ADVISE.stack_work()}`) go on with it; "
                f"`{ADVISE.stack('status', report.stack_file, '--junit', 'FILE')}` writes it again")
    return (f"the stack {report.command} {report.run_id} did not finish (this file was written while it "
            f"ran): if nothing replaced it, its runner stopped; `{ADVISE.stack_status(report.stack_file)}` says "
            "what each member's record holds now")


_ENTRY_KEYS = ("blocked_by", "run_id", "error", "worker", "started_at", "finished_at", "compared")


def status_xml(document: Mapping[str, Any]) -> str:
    """`stack status --junit FILE`: the status document (status.status_document) as JUnit.

    The run's state decides the `(run)` case: none when it finished; failing when it never
    ran, still runs (a queued run whose workers go on) or was interrupted. Members are as the
    status shows them (a member the report saw running, as its record says now); a member
    whose outcome is uncertain fails whatever its status."""
    members = [m for m in document.get("members") or [] if isinstance(m, Mapping)]
    entries = [MemberEntry(str(m.get("name")), str(m.get("module_ref")), str(m.get("status")),
                           **{k: (str(m[k]) if m.get(k) is not None else None) for k in _ENTRY_KEYS})
               for m in members]
    report = StackReport(str(document.get("stack")), str(document.get("stack_file")), document.get("run_id"),
                         document.get("command"), document.get("started_at"), document.get("finished_at"),
                         entries, queue=document.get("queue") is True)
    state, stack_file = document.get("state"), report.stack_file
    unfinished: tuple[str, str] | None = None
    if state == view.NEVER_RUN:
        unfinished = ("never_run", f"the stack {report.stack} has no run report: it never ran from this root or "
                                   "store; each member is as its record says")
    elif state == view.RUNNING:
        unfinished = ("running", f"{view.headline(document)}; this file was written before its end: "
                                 f"`{ADVISE.stack('status', stack_file, '--junit', 'FILE')}` writes it again")
    elif state == view.INTERRUPTED:
        unfinished = ("interrupted", view.headline(document))
    uncertain = {str(m.get("name")): [str(w) for w in m["uncertain"]] for m in members if m.get("uncertain")}
    return report_xml(report, unfinished=unfinished, uncertain=uncertain)


def refusal_xml(stack: str, command: str, stack_file: str, message: str) -> str:
    """The JUnit document of a run refused before any member ran: one failing case."""
    root = ET.Element("testsuites", name=_clean(f"hyops stack {command} {stack}"))
    suite = _suite(root, stack, 1, 1, 0)
    _properties(suite, {"command": command, "stack_file": stack_file})
    case = ET.SubElement(suite, "testcase", classname=_clean(stack), name=PREFLIGHT)
    failure = ET.SubElement(case, "failure", message=_clean(message), type="refused")
    failure.text = _clean(f"{message}\nnothing was run")
    return _document(root)


def write(path: Path, document: str) -> None:
    """Atomically (a reader never sees half a file), mode 0600 like every hyops file."""
    atomic_write_text(path, document)


def write_or_say(path: Path, document: str) -> bool:
    """write(), and a file that cannot be written is an error notice: False (the caller's
    green exit becomes 1, as docs/contract.md says)."""
    try:
        write(path, document)
    except OSError as err:
        notices.error(f"could not write the JUnit file {path}: {err.strerror or err}")
        return False
    return True
