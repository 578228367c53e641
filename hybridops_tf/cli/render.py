"""Human rendering: live per-resource progress, tables, end-of-run summaries, and the
ASCII fallback of the console streams. No command logic.

Plain terminals: hyops prints no colour (so NO_COLOR has nothing to turn off). Where the
locale is not UTF-8 (LC_ALL=C, POSIX) `ascii_streams()` makes stdout/stderr ASCII: hyops's
glyphs become ASCII words or signs (`ok`, `x`, `...`), any other character an escape
(`\\xe9`), never mojibake. Values a script reads (`outputs --raw`) bypass it.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import click

from hybridops_tf.base.errors import ExitCode

if TYPE_CHECKING:
    from hybridops_tf.engine import events
    from hybridops_tf.operation.request import Outcome

_VERBS = {"create": "creating", "delete": "destroying", "update": "updating", "replace": "replacing",
          "read": "reading", "noop": "checking"}
_DONE = {"create": "created", "delete": "destroyed", "update": "updated", "replace": "replaced",
         "read": "read"}

# The glyphs hyops prints, and the engine's typographic ones, as ASCII.
ASCII_GLYPHS = {"✓": "ok", "✗": "x", "…": "...", "—": "-", "–": "-", "‘": "'", "’": "'",
                "“": '"', "”": '"', "→": "->", "←": "<-", "│": "|", "╷": "|", "╵": "|"}
ASCII_ERRORS = "hyops-ascii"  # the codec error handler that writes glyphs as ASCII_GLYPHS
_LOCALE_VARS = ("LC_ALL", "LC_CTYPE", "LANG")


def _ascii_errors(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    part = err.object[err.start:err.end]
    return "".join(ASCII_GLYPHS.get(ch) or ch.encode("ascii", "backslashreplace").decode() for ch in part), err.end


codecs.register_error(ASCII_ERRORS, _ascii_errors)


class _AsciiEncoder(codecs.IncrementalEncoder):
    def encode(self, input: str, final: bool = False) -> bytes:
        return input.encode("ascii", ASCII_ERRORS)


def _codec(name: str) -> codecs.CodecInfo | None:
    """`hyops-ascii`: ASCII with the glyph fallback as its own codec, not `ascii` plus an
    error handler, because Click rewraps a stream whose encoding is `ascii` as UTF-8."""
    if name.replace("_", "-") != "hyops-ascii":
        return None
    ascii_ = codecs.lookup("ascii")
    return codecs.CodecInfo(name="hyops-ascii", encode=_encode, decode=ascii_.decode,
                            incrementalencoder=_AsciiEncoder, incrementaldecoder=ascii_.incrementaldecoder)


def _encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
    return text.encode("ascii", ASCII_ERRORS), len(text)


codecs.register(_codec)


def wants_ascii(environ: Mapping[str, str], encoding: str | None) -> bool:
    """True when the output should be ASCII: the stream cannot encode UTF-8, or the locale
    (the first of LC_ALL, LC_CTYPE, LANG that is set) does not name UTF-8. Python's UTF-8
    mode writes UTF-8 under LC_ALL=C, which such a terminal shows as mojibake, so the locale
    decides. PYTHONIOENCODING, when set, is taken as the user's choice."""
    if environ.get("PYTHONIOENCODING"):
        return False
    try:
        if not encoding or codecs.lookup(encoding).name != "utf-8":
            return True
    except LookupError:
        return True
    name = next((environ[v] for v in _LOCALE_VARS if environ.get(v)), "")
    return re.search(r"utf-?8", name, re.IGNORECASE) is None


def ascii_streams() -> None:
    """At the console entry: make stdout and stderr ASCII when wants_ascii says so."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and wants_ascii(os.environ, getattr(stream, "encoding", None)):
            try:
                reconfigure(encoding="hyops-ascii")
            except (OSError, ValueError):  # a closed or odd stream: leave it as Python made it
                pass


def clip(text: str, width: int) -> str:
    """The first line of `text`, cut to `width` characters at a word with an ellipsis when
    longer (a word longer than that is cut inside), for a table cell."""
    line = (text.strip().splitlines() or [""])[0]
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    words = cut.rsplit(" ", 1)[0] if " " in cut.strip() and line[width - 1] != " " else cut
    return words.rstrip() + "…"


# An action (Terraform 1.14+) is an operation, not an object: one line as it starts and ends.
_ACTION_LINES = {"action_start": ("~", "invoking…"), "action_complete": ("✓", "action complete"),
                 "action_errored": ("✗", "action errored")}


class ProgressPrinter:
    """Prints one line per resource event; on a TTY the line carries elapsed time live."""

    def __init__(self, stream: IO[str] | io.TextIOBase | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._started: dict[str, float] = {}

    def _out(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def __call__(self, event: events.Event) -> None:
        from hybridops_tf.engine import events  # loaded by then: events reach us after the spawn

        if isinstance(event, events.ApplyStart):
            self._started[event.addr] = time.monotonic()
            self._out(f"  ~ {event.addr}: {_VERBS.get(event.action, event.action)}…")
        elif isinstance(event, events.ApplyProgress) and self.tty:
            self._out(f"  ~ {event.addr}: still {_VERBS.get(event.action, event.action)} "
                      f"({event.elapsed_seconds:.0f}s)")
        elif isinstance(event, events.ApplyComplete):
            ident = f" [{event.id_value}]" if event.id_value else ""
            self._out(f"  ✓ {event.addr}: {_DONE.get(event.action, event.action)}{ident} "
                      f"({self._elapsed(event.addr, event.elapsed_seconds)})")
        elif isinstance(event, events.ApplyErrored):
            self._out(f"  ✗ {event.addr}: {event.action} errored after "
                      f"{self._elapsed(event.addr, event.elapsed_seconds)}")
        elif isinstance(event, events.ActionMessage) and event.type in _ACTION_LINES:
            from hybridops_tf.record.action_fold import trigger_of

            mark, said = _ACTION_LINES[event.type]
            error = f": {event.error}" if event.type == "action_errored" and event.error else ""
            self._out(f"  {mark} {event.action_addr} ({trigger_of(event)}): {said}{error}")
        elif isinstance(event, events.Diagnostic) and event.is_error:
            where = f" ({event.address})" if getattr(event, "address", None) else ""
            self._out(f"  error{where}: {event.summary}")

    def _elapsed(self, addr: str, reported: float) -> str:
        start = self._started.pop(addr, None)
        seconds = reported or (time.monotonic() - start if start is not None else 0.0)
        return f"{seconds:.1f}s"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MIN_LAST = 20  # the free-text column never wraps narrower than this


def cell(text: str) -> str:
    """One line of a table cell: a newline shows as `\\n`, a tab as `\\t`, other control
    characters as `\\xNN`, so a multi-line value stays on its row and says it had lines."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: {"\n": "\\n", "\t": "\\t"}.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def format_table(rows: Sequence[Sequence[str]], indent: str = "", width: int | None = None) -> list[str]:
    """Rows (the header first) as columns two spaces apart: each column but the last is
    padded to its widest cell. The last (free text) wraps on whole words to `width` (None:
    never), its continuation lines indented under it; a word longer than the room is kept whole."""
    import textwrap  # only here: its wrapper compiles regular expressions at import

    rows = [[cell(str(c)) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines: list[str] = []
    for r in rows:
        head = indent + "".join(c.ljust(w) + "  " for c, w in zip(r[:-1], widths, strict=True))
        room = max(width - len(head), _MIN_LAST) if width else 0
        parts = (textwrap.wrap(r[-1], room, break_long_words=False, break_on_hyphens=False) or [""]
                 if room else [r[-1]])
        lines.append((head + parts[0]).rstrip())
        lines.extend((" " * len(head) + p).rstrip() for p in parts[1:])
    return lines


def table(rows: Sequence[Sequence[str]], indent: str = "") -> None:
    """Echo format_table(rows): wrapped to the terminal's width on a terminal, one line a
    row otherwise (pipes and CI logs stay greppable)."""
    width = None
    if sys.stdout.isatty():
        import shutil  # here: it loads its compression modules, which a table into a pipe never needs

        width = shutil.get_terminal_size().columns
    for line in format_table(rows, indent, width):
        click.echo(line)


def echo_outcome(outcome: Outcome, command: str, ref: str, module_dir: str, workspace: str | None,
                 hyops: str = "hyops") -> None:
    """The run's outcome lines; a `next:` command names the module's ref and workspace, and the
    global options given (`hyops`), so pasting it acts on this record (record/advice.py)."""
    from hybridops_tf.cli import interrupted
    from hybridops_tf.record.advice import reconcile_command

    reconcile = reconcile_command(ref, module_dir, workspace, hyops=hyops)
    line = interrupted.module_line(outcome, command, ref, reconcile)
    if line is not None and outcome.unchanged:  # a signal before anything changed: that line says it all
        interrupted.say(line)
        return
    _echo_settled(outcome, command, ref, reconcile)
    if line is not None:
        interrupted.say(line)


def _echo_settled(outcome: Outcome, command: str, ref: str, reconcile: str) -> None:
    from hybridops_tf.record.actions import never_started

    rec = outcome.record
    if outcome.exit_code in (ExitCode.USAGE, ExitCode.REFUSED):  # refused: nothing changed, the record neither
        kept = f"still {rec.status.value}, from run {rec.run_id}" if rec is not None else "still no record"
        click.echo(f"hyops: error: {outcome.message} ({kept}; this attempt was run {outcome.run_id})", err=True)
        return
    status = rec.status.value if rec is not None else "unknown"
    click.echo(f"{command} {ref}: {status} (run {outcome.run_id})")
    if rec is None:
        return
    if rec.last_error:
        click.echo(f"  last_error: {rec.last_error}")
    if rec.suspect_orphans:
        click.echo(f"  suspect orphans: {', '.join(o.address for o in rec.suspect_orphans)}")
    waiting = never_started(rec.actions)
    if waiting:
        click.echo(f"  planned actions never started: {', '.join(a.address for a in waiting)}")
    if status == "error":
        click.echo(f"  next: {reconcile}   (what is live, what to do)")


FORMATS = ("text", "json", "markdown")


def format_option(func: Any) -> Any:
    """`--format [text|json|markdown]` beside a command's `--json` (kept as the alias of
    `--format json`); read the choice with `output_format`."""
    return click.option(
        "--format", "output_format", type=click.Choice(FORMATS), default=None,
        help="text (default), json (as --json), or markdown: a table for a PR comment or "
             "$GITHUB_STEP_SUMMARY.",
    )(func)


def output_format(as_json: bool, chosen: str | None) -> str:
    """The format asked for; UsageError (exit 2) for `--json` with another `--format`."""
    from hybridops_tf.base.errors import UsageError

    if as_json and chosen not in (None, "json"):
        raise UsageError(f"--json and --format {chosen} cannot be combined: --json is --format json")
    return "json" if as_json else chosen or "text"
