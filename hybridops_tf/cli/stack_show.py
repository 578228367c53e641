"""How `hyops stack` commands show a stack: a run's live lines, the members' table, the
Markdown status (a Mermaid picture, then a table) and the picture `stack graph --status` draws.

cli/stack_cmds.py parses the options and calls these; cli/queue_cmds.py prints a queued run's
members with the same table."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hybridops_tf.cli import render
from hybridops_tf.cli.render import ProgressPrinter, table
from hybridops_tf.cli.settings import settings

_STATUS_MARK = {"ok": "✓", "skipped": "=", "destroyed": "✓", "absent": "✓", "retained": "~",
                "error": "✗", "interrupted": "■", "pending": "…", "cancelled": "⊘"}


class RunPrinter:
    """Live lines on stderr, one per member step and per resource, prefixed by member."""

    def member_started(self, name: str, action: str) -> None:
        click.echo(f"[{name}] {action}…", err=True)

    def member_finished(self, name: str, result: Any) -> None:
        status = result.status.value
        run = f" (run {result.run_id})" if result.run_id else ""
        error = f": {result.error.splitlines()[0]}" if result.error else ""
        click.echo(f"[{name}] {_STATUS_MARK.get(status, ' ')} {status}{run}{error}", err=True)

    def event_sink(self, name: str) -> Callable[[Any], None]:
        return _MemberProgress(name)

    def stderr_sink(self, name: str) -> Callable[[str], None]:
        return lambda line: click.echo(f"[{name}] {line}", err=True)


class _MemberProgress(ProgressPrinter):
    """The module commands' per-resource progress, each line prefixed with the member."""

    def __init__(self, name: str) -> None:
        super().__init__(_Prefixed(f"[{name}]"))


class _Prefixed(io.TextIOBase):
    """stderr, with a prefix on every line (members run at once; lines must say whose)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            click.echo(f"{self.prefix}{line}", err=True)
        return len(text)

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def picture(ctx: click.Context, stack: Any, with_status: bool = True) -> Any:
    """The stack as a picture, with each member's status (status document and record) or bare."""
    from hybridops_tf.picture.collect import stack_picture
    from hybridops_tf.picture.model import picture as bare

    if not with_status:
        return bare(stack)
    return stack_picture(stack, settings(ctx).runtime)


def markdown_status(ctx: click.Context, stack: Any, stack_file: Path, doc: dict[str, Any],
                    heading: str = "hyops stack status", entries: dict[str, Any] | None = None) -> None:
    """`stack status --format markdown` (and `stack apply|destroy`'s): the stack as a Mermaid
    flowchart with each member's status, then the members' table with each one's next command."""
    from hybridops_tf.cli import markdown
    from hybridops_tf.cli.settings import commands
    from hybridops_tf.picture.mermaid import markdown_block
    from hybridops_tf.stack.status import records_now

    entries = records_now(stack, settings(ctx).runtime) if entries is None else entries
    now = {name: e.shown_status for name, e in entries.items()}
    diagram = markdown_block(picture(ctx, stack))
    for line in markdown.stack_status(doc, now, str(stack_file), commands(ctx), diagram, heading):
        click.echo(line)


def members_table(members: list[dict[str, Any]], record_now: dict[str, str] | None,
                  state: str | None = None) -> None:
    """Members with their status and why; pending ones name what blocked them."""
    by_name = {m.get("name"): m for m in members}
    header = ("MEMBER", "REF", "STATUS", *(("RECORD",) if record_now is not None else ()), "RUN / WHY")
    rows = [header]
    for m in members:
        status = str(m.get("status"))
        if status == "pending":
            blocker = m.get("blocked_by")
            why = (f"blocked by {blocker} ({by_name.get(blocker, {}).get('status', '?')})" if blocker
                   else "waiting to start" if state == "running" else "not started: the run was interrupted")
        else:
            why = str(m.get("run_id") or "")
        if m.get("worker"):  # a queued run: which worker ran it
            why = f"{why} on {m['worker']}".strip()
        if status == "skipped" and m.get("compared"):  # what the skip vouches for, never more
            why = f"{why}: {m['compared']}".strip(": ")
        if m.get("error"):
            error = render.clip(str(m["error"]), 100)
            why = f"{why}: {error}" if why else error
        row = (str(m.get("name")), str(m.get("module_ref")), status,
               *((record_now.get(str(m.get("name")), "none"),) if record_now is not None else ()), why)
        rows.append(row)
    table(rows, indent="  ")
