"""Human rendering: live per-resource progress and end-of-run summaries. No logic."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from hybridops_tf.engine import events as ev

_VERBS = {"create": "creating", "delete": "destroying", "update": "updating", "replace": "replacing",
          "read": "reading", "noop": "checking"}
_DONE = {"create": "created", "delete": "destroyed", "update": "updated", "replace": "replaced",
         "read": "read"}


class ProgressPrinter:
    """Prints one line per resource event; on a TTY the line carries elapsed time live."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._started: dict[str, float] = {}

    def _out(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def __call__(self, event: ev.Event) -> None:
        from hybridops_tf.engine import (
            events as ev,  # loaded by then: events reach us after the spawn
        )

        if isinstance(event, ev.ApplyStart):
            self._started[event.addr] = time.monotonic()
            self._out(f"  ~ {event.addr}: {_VERBS.get(event.action, event.action)}…")
        elif isinstance(event, ev.ApplyProgress) and self.tty:
            self._out(f"  ~ {event.addr}: still {_VERBS.get(event.action, event.action)} "
                      f"({event.elapsed_seconds:.0f}s)")
        elif isinstance(event, ev.ApplyComplete):
            ident = f" [{event.id_value}]" if event.id_value else ""
            self._out(f"  ✓ {event.addr}: {_DONE.get(event.action, event.action)}{ident} "
                      f"({self._elapsed(event.addr, event.elapsed_seconds)})")
        elif isinstance(event, ev.ApplyErrored):
            self._out(f"  ✗ {event.addr}: {event.action} errored after "
                      f"{self._elapsed(event.addr, event.elapsed_seconds)}")
        elif isinstance(event, ev.Diagnostic) and event.is_error:
            where = f" ({event.address})" if getattr(event, "address", None) else ""
            self._out(f"  error{where}: {event.summary}")

    def _elapsed(self, addr: str, reported: float) -> str:
        start = self._started.pop(addr, None)
        seconds = reported or (time.monotonic() - start if start is not None else 0.0)
        return f"{seconds:.1f}s"


def table(rows: Sequence[Sequence[str]], indent: str = "") -> None:
    """Echo rows (the header first) as columns two spaces apart: each column but the last is
    padded to its widest cell; the last (free text) is printed as it is."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        click.echo(indent + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])


def echo_outcome(outcome: Any, command: str, ref: str, module_dir: str) -> None:
    rec = outcome.record
    if outcome.exit_code == 2:  # the engine refused the run: nothing changed, the record neither
        kept = rec.status.value if rec is not None else "no record"
        click.echo(f"hyops: error: {outcome.message} (still {kept}, run {outcome.run_id})", err=True)
        return
    status = rec.status.value if rec is not None else "unknown"
    click.echo(f"{command} {ref}: {status} (run {outcome.run_id})")
    if rec is None:
        return
    if rec.last_error:
        click.echo(f"  last_error: {rec.last_error}")
    if rec.suspect_orphans:
        click.echo(f"  suspect orphans: {', '.join(o.address for o in rec.suspect_orphans)}")
    if status == "error":
        click.echo(f"  next: hyops reconcile {module_dir} --ref {ref}   (what is live, what to do)")
