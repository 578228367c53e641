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
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.stack.report import MemberEntry, StackReport

PREFLIGHT = "(preflight)"  # the case of a run refused before any member ran (not a member name)
UNFINISHED = "(run)"  # the case of a run whose report has no end yet (not a member name)
_FAILED = frozenset({"error", "running", "interrupted"})  # interrupted: a signal stopped it mid-way
_NOT_RUN = frozenset({"pending"})
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
    return "not started: the run was interrupted"


def _case(suite: ET.Element, stack: str, member: MemberEntry) -> None:
    case = ET.SubElement(suite, "testcase", classname=_clean(stack), name=_clean(member.name))
    where = f"{member.module_ref}: {member.status}" + (f" (run {member.run_id})" if member.run_id else "")
    if member.worker:  # a queued run: the worker that ran it, and when
        where += f" on worker {member.worker} ({member.started_at or '?'} to {member.finished_at or '?'})"
    if member.status in _FAILED:
        error = member.error or ("did not finish: its outcome is unknown until `hyops stack status` or "
                                 "`hyops reconcile` reads its record" if member.status == "running"
                                 else "failed (no detail recorded)")
        failure = ET.SubElement(case, "failure", message=_clean(error), type=member.status)
        failure.text = _clean(f"{error}\n{where}")
        return
    if member.status in _NOT_RUN:
        ET.SubElement(case, "skipped", message=_clean(_blocked(member)))
    out = ET.SubElement(case, "system-out")
    out.text = _clean(where + (f"\n{member.error}" if member.error else ""))


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


def report_xml(report: StackReport) -> str:
    """The JUnit document of one stack run."""
    root = ET.Element("testsuites", name=_clean(f"hyops stack {report.command} {report.stack}"))
    members = report.members
    unfinished = report.finished_at is None
    suite = _suite(root, report.stack, len(members) + unfinished,
                   sum(m.status in _FAILED for m in members) + unfinished,
                   sum(m.status in _NOT_RUN for m in members), timestamp=report.started_at,
                   time=_seconds(report.started_at, report.finished_at))
    _properties(suite, {"command": report.command, "run_id": report.run_id, "stack_file": report.stack_file})
    if unfinished:
        case = ET.SubElement(suite, "testcase", classname=_clean(report.stack), name=UNFINISHED)
        message = (f"the stack {report.command} {report.run_id} did not finish (this file was written while it "
                   "ran): if nothing replaced it, its runner stopped; `hyops stack status "
                   f"{report.stack_file}` says what each member's record holds now")
        ET.SubElement(case, "failure", message=_clean(message), type="unfinished").text = _clean(message)
    for member in members:
        _case(suite, report.stack, member)
    return _document(root)


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
