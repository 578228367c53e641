"""`--format markdown`: GitHub-flavoured markdown tables for a PR comment or
`$GITHUB_STEP_SUMMARY` (member or module, status, why, next action). Pure functions from
what the commands already have (status entries, the stack status document, the reconcile
report) to lines; no Click, and no I/O but finding a record's module in this checkout.

A cell is one line: `|` is escaped, a newline becomes `<br>`, markdown punctuation is
backslash-escaped so an address or error shows as written, and commands are code spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hybridops_tf.record.advice import ADVISE, Commands, Where, display_dir

_PUNCTUATION = re.compile(r"([\\`*_\[\]<>|~&])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BACKTICKS = re.compile(r"`+")

# Statuses with nothing left to do: their next-action cell stays empty.
_SETTLED = frozenset({"ok", "skipped", "destroyed", "absent", "retained"})
# Member statuses that are also record statuses: a record that says otherwise now is shown.
_RECORDED = frozenset({"ok", "error", "destroyed", "retained"})


def text(value: str) -> str:
    """Free text as one table cell: punctuation escaped, lines joined by `<br>`."""
    value = _CONTROL.sub(" ", value.replace("\r\n", "\n").replace("\t", " ")).strip()
    return "<br>".join(_PUNCTUATION.sub(r"\\\1", line) for line in value.split("\n"))


def code(value: str) -> str:
    """A command as an inline code span: a fence longer than any backtick run inside, and
    `|` escaped (GitHub splits table cells before it reads code spans). A backslash before
    a `|` cannot be kept in a code span there: such a value is shown as escaped text."""
    value = _CONTROL.sub(" ", value.replace("\n", " ").replace("\t", " "))
    if "\\|" in value:
        return text(value)
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value.replace('|', chr(92) + '|')}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Header, delimiter row, one line per row. Cells are used as given (already `text`
    or `code`); a row shorter than the header is padded with empty cells."""
    width = len(header)
    lines = [_row(header), _row(["---"] * width)]
    for row in rows:
        cells = list(row)[:width]
        lines.append(_row(cells + [""] * (width - len(cells))))
    return lines


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _join(parts: Iterable[str]) -> str:
    return "<br>".join(p for p in parts if p)


# --- hyops status -----------------------------------------------------------------------------

def status(entries: Sequence[Any], cmd: Commands = ADVISE, project_top: Path | None = None) -> list[str]:
    """`hyops status [--all] --format markdown`: one row per record (status.StatusEntry);
    `project_top` (the folder holding the runtime root) helps name each module's directory."""
    lines = ["### hyops status", ""]
    if not entries:
        return [*lines, "no records"]
    rows = [(text(e.module_ref), text(e.shown_status), _status_why(e), _status_next(e, cmd, project_top))
            for e in entries]
    attention = sum(1 for e in entries if _needs_attention(e))
    summary = (f"{attention} of {len(entries)} record(s) need attention" if attention
               else f"{len(entries)} record(s), nothing to do")
    return [*lines, *table(("Module", "Status", "Why", "Next action"), rows), "", summary]


def _needs_attention(e: Any) -> bool:
    """Inconsistent (status exits 3 for it) or a record that says its last command failed."""
    return e.inconsistent or (e.record is not None and e.record.status.value == "error")


def _status_why(e: Any) -> str:
    from hybridops_tf.record.actions import never_started

    rec = e.record
    if rec is None:
        return text(e.problem or "no record")
    notes = []
    if rec.suspect_orphans:
        notes.append(f"{len(rec.suspect_orphans)} suspect orphan(s): "
                     + ", ".join(o.address for o in rec.suspect_orphans))
    if e.stale:
        notes.append("outcome uncertain: hyops stopped while it ran")
    waiting = never_started(rec.actions)
    if waiting:
        notes.append(f"planned action(s) never started: {', '.join(a.address for a in waiting)}")
    if e.engine_alive is not None:
        notes.append(f"engine still running (pid {e.engine_alive.pid}, run {e.engine_alive.run_id}): its hyops died")
    if e.written is not None:
        notes.append(f"state_written_outside: {e.written.headline()}")
    elif e.not_looked is not None:
        notes.append(f"state not compared with the record: {e.not_looked}")
    if rec.last_error:
        notes.append(rec.last_error)
    return _join(text(n) for n in notes)


def _status_next(e: Any, cmd: Commands, project_top: Path | None = None) -> str:
    rec = e.record
    if rec is None and e.problem is None:
        return ""  # no record: nothing was ever run here
    if rec is None:
        return code(cmd.reconcile_all())  # corrupt: its directory is unknown
    if not _needs_attention(e):
        return ""
    shown = display_dir(rec.module_dir, project_top) if rec.module_dir else None
    command = code(cmd.reconcile(Where(rec.module_ref, shown, rec.workspace if rec.workspace != "default" else None)))
    if e.engine_alive is not None:
        return f"wait for pid {e.engine_alive.pid} to stop, then {command}"
    return command


# --- hyops stack status -----------------------------------------------------------------------

def stack_status(doc: Mapping[str, Any], record_now: Mapping[str, str], stack_file: str,
                 cmd: Commands = ADVISE, diagram: Sequence[str] = (), heading: str = "hyops stack status") -> list[str]:
    """`hyops stack status --format markdown`: one row per member of the status document
    (stack.status.status_document), with the member's record status now when it differs;
    `diagram` (a ```mermaid block of the stack) goes above the table. `stack apply|destroy
    --format markdown` print their run report the same way, under their own heading."""
    from hybridops_tf.stack import view

    name = str(doc.get("stack"))
    if "state" not in doc:  # a run's own report, as `stack apply|destroy` print it: it finished
        doc = {**doc, "state": view.NEVER_RUN if doc.get("run_id") is None else view.FINISHED}
    uncertain = [f"**uncertain**: {text(line)}" for line in view.uncertain_lines(doc)]
    members = [m for m in doc.get("members", []) if isinstance(m, dict)]
    by_name = {m.get("name"): m for m in members}
    rows = [(text(str(m.get("name"))), text(str(m.get("status"))),
             _member_why(m, by_name, record_now, doc.get("state") == view.RUNNING),
             _member_next(m, doc.get("command"), cmd, stack_file))
            for m in members]
    return [f"### {heading} {text(name)}", "", text(view.headline(doc)), "",
            *([*uncertain, ""] if uncertain else []), *([*diagram, ""] if diagram else []),
            *table(("Member", "Status", "Why", "Next action"), rows)]


def _member_why(m: Mapping[str, Any], by_name: Mapping[Any, Mapping[str, Any]],
                record_now: Mapping[str, str], running: bool = False) -> str:
    status, parts = str(m.get("status")), [f"uncertain: {why}" for why in m.get("uncertain") or ()]
    if status == "pending":
        blocker = m.get("blocked_by")
        parts.append(f"blocked by {blocker} ({by_name.get(blocker, {}).get('status', '?')})" if blocker
                     else "waiting to start" if running else "not started: the run was interrupted")
    if m.get("error"):
        parts.append(str(m["error"]))
    if m.get("run_id"):
        parts.append(f"run {m['run_id']}")
    if m.get("worker"):  # a queued run: which worker ran it, and when
        parts.append(f"on {m['worker']} {m.get('started_at') or ''}..{m.get('finished_at') or ''}")
    if status == "skipped" and m.get("compared"):  # what the skip vouches for, never more
        parts.append(f"skipped by --resume, which {m['compared']}")
    if m.get("state_not_read"):
        parts.append(f"state not compared with the record: {m['state_not_read']}")
    now = record_now.get(str(m.get("name")))
    if now is not None and now != status and status in _RECORDED:
        parts.append(f"record now: {now}")
    return _join(text(p) for p in parts)


def _member_next(m: Mapping[str, Any], command: Any, cmd: Commands, stack_file: str) -> str:
    status = str(m.get("status"))
    reconcile = cmd.reconcile_stack(stack_file)
    if m.get("uncertain"):
        return code(reconcile)  # what exists is not known: reconcile says, before anything runs
    run = cmd.stack_destroy(stack_file) if command == "destroy" else cmd.stack_resume(stack_file)
    if status == "error":
        return f"fix the cause, then {code(run)} ({code(reconcile)} shows what is live)"
    if status == "interrupted":  # stopped by a signal: what is live first, then go on
        return f"{code(reconcile)}, then {code(run)}"
    if status == "pending":
        blocker = m.get("blocked_by")
        return f"{code(run)} once {text(str(blocker))} is fixed" if blocker else code(run)
    if status == "cancelled":  # withdrawn before it started: a newer run does it, or this one
        return code(run)
    if status == "none":
        return code(cmd.stack("apply", stack_file))
    if m.get("error"):  # a retained member whose last command failed
        return code(reconcile)
    if status in _SETTLED:
        return ""
    return code(reconcile)  # a record status such as running: reconcile says what it means


# --- hyops reconcile --------------------------------------------------------------------------

def reconcile(report: Any, diagram: Sequence[str] = ()) -> list[str]:
    """`hyops reconcile --format markdown`: a row per finding (a consistent module gets one
    row saying so); next actions are the exact commands, steps numbered, choices as "one of".
    `diagram` (with `--stack`: a ```mermaid block of the stack) goes above the table."""
    from hybridops_tf.reconcile.model import FORGOTTEN

    rows: list[tuple[str, ...]] = []
    for mod in report.modules:
        name, status = text(mod.name), text(str(mod.status))
        for act in mod.actions:
            rows.append((name, status, text(f"{'done' if act.ok else 'FAILED'}: {act.kind}: {act.detail}"), ""))
        for f in mod.findings:
            rows.append((name, status, text(f"{f.code.value}: {f.detail}"), _finding_next(f)))
        for why in mod.unchecked:
            rows.append((name, status, text(f"could_not_check: {why}"), ""))
        if not mod.findings and not mod.unchecked and mod.status != FORGOTTEN:
            rows.append((name, status, text("consistent: the record agrees with the state and the live objects"), ""))
    lines = ["### hyops reconcile", "", *([*diagram, ""] if diagram else [])]
    if rows:
        lines += [*table(("Module", "Status", "Why", "Next action"), rows), ""]
    else:
        lines += ["no modules to reconcile (no records under the runtime root)", ""]
    lines += [text(message) for message, _ in report.errors]
    lines.append(report.summary())
    return lines


def _finding_next(f: Any) -> str:
    steps = [code(s) for s in f.next_actions]
    numbered = [f"{i}. {s}" for i, s in enumerate(steps, 1)] if len(steps) > 1 else steps
    if f.alternatives:
        numbered.append("one of (run only the one that fits):")
        numbered += [f"{code(a.command)} when {text(a.when)}" for a in f.alternatives]
    return _join(numbered)
