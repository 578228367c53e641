"""What the core tells the user while it works, and the one place that decides where it goes.

The core never prints. A warning it survived, a note, an error it could not fix, a line of
the engine's stderr: each is handed to the sink the CLI installs with `listen()`, which
writes them (`hyops: warning: ...` on stderr). Without a sink, a library caller finds them
in `unheard()`, in order, so nothing the core had to say is silently lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import StrEnum


class Level(StrEnum):
    PLAIN = ""  # `hyops: TEXT`
    NOTE = "note"
    WARNING = "warning"
    ERROR = "ERROR"
    ENGINE = "engine"  # a line of the engine's stderr, shown as it is


Sink = Callable[[Level, str], None]

_KEEP_AT_MOST = 1000
_unheard: list[tuple[Level, str]] = []
_lock = threading.Lock()


def _keep(level: Level, text: str) -> None:
    with _lock:
        _unheard.append((level, text))
        del _unheard[:-_KEEP_AT_MOST]


_sink: Sink = _keep


def listen(sink: Sink | None) -> None:
    """Send every notice from now on to `sink` (None: keep them for `unheard()` again)."""
    global _sink
    _sink = sink if sink is not None else _keep


def unheard() -> list[tuple[Level, str]]:
    """The notices told while no sink listened, oldest first; taking them clears the list."""
    with _lock:
        taken = list(_unheard)
        _unheard.clear()
    return taken


def tell(level: Level, text: str) -> None:
    _sink(level, text)


def note(text: str) -> None:
    tell(Level.NOTE, text)


def warning(text: str) -> None:
    tell(Level.WARNING, text)


def error(text: str) -> None:
    tell(Level.ERROR, text)


def plain(text: str) -> None:
    tell(Level.PLAIN, text)


def engine_stderr(line: str) -> None:
    """The default stderr tee of an engine run: the line goes to the user as the engine wrote it."""
    tell(Level.ENGINE, line)
