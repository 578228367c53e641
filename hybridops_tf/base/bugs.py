"""An exception nobody expected is a bug in hyops: its trace goes to a file, the user gets one line.

A user error is a HyopsError with its own message and exit code (base/errors.py). Anything else
that escapes is hyops's fault; a traceback on a terminal or in a CI log tells the user nothing
they can act on and may hide the one line that matters: what the record says now. So the CLI's
entry (cli/main.py) hands it here: the trace is written beside the run it broke (the run folder
the process opened last), else into `<runtime root>/bugs/`, else a temporary file, and
`one_line` says where, that it is a bug, and how to see what the record says (docs/contract.md:
Exit codes, `70`).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

BUG_EXIT = 70  # EX_SOFTWARE (sysexits.h): an internal error
BUG_FILE = "hyops-bug.txt"

_places: dict[str, Path] = {}


def remember_run_folder(path: Path) -> None:
    """The run folder this process opened last: a bug's trace is written there."""
    _places["run"] = Path(path)


def remember_runtime_root(path: Path) -> None:
    """The runtime root of this command: a bug outside any run goes to its `bugs/` folder."""
    _places["root"] = Path(path)


def write_trace(exc: BaseException) -> Path | None:
    """The exception's full trace in a private file; its path, or None when no file could be written.
    tempfile and traceback are loaded here, on a bug only: every command imports this module."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(exc))
    header = f"hyops bug, pid {os.getpid()}, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\nargv: "
    # argv is not kept: it may hold a secret (`--var password=...`); meta.json keeps a redacted one
    body = header + f"{len(sys.argv)} words (see the run's meta.json)\n\n{text}"
    candidates = []
    if "run" in _places:
        candidates.append(_places["run"] / BUG_FILE)
    if "root" in _places:
        candidates.append(_places["root"] / "bugs" / f"bug-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
                                                     f"-{os.getpid()}.txt")
    for path in candidates:
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(body)
            return path
        except OSError:
            continue
    try:
        fd, name = tempfile.mkstemp(prefix="hyops-bug-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        return Path(name)
    except OSError:
        return None


def one_line(exc: BaseException, trace: Path | None, status_all: str, reconcile: str) -> str:
    """What the user reads: a bug, where its trace is, what to run to see the record's word
    (`status_all` and `reconcile` as the CLI's one builder of commands spells them)."""
    what = type(exc).__name__
    where = f"the full trace is in {trace}" if trace is not None else "its trace could not be written anywhere"
    return (f"hyops: bug: an unexpected {what} inside hyops (not an error in your configuration or inputs); "
            f"{where}; records are as its last step left them: `{status_all}` shows them, and a "
            f"`running` one is settled by `{reconcile}`")
