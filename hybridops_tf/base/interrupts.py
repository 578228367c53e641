"""SIGINT and SIGTERM, one rule from a command's first line to its exit (docs/running.md: Signals).

The console script (cli/console.py) calls `INTERRUPTS.install()` before it imports anything
else, whatever disposition it inherited: a SIGINT ignored by the shell that started hyops in
the background, or SIGINT/SIGTERM blocked, is handled all the same (the engines do the same).
From then on a signal is never lost and never a traceback:

- while nothing has begun that must settle (start-up, option parsing, root discovery, a
  read-only command, a question at the terminal: `at_rest`), hyops says one line and exits
  at once, 130 for SIGINT and 143 for SIGTERM: nothing was changed;
- inside a scope (`with INTERRUPTS:`, entered by every command that can change anything and
  around every engine run) the signal is remembered (`received`) and passed to every engine
  that runs (`register`), once per signal; nothing new starts after it (the module lock, the
  engine probe, `init`, a member, an engine run all ask `received` first); what runs stops,
  the record is settled from evidence, and the command exits 130 or 143.

A read that settles a run from evidence (`settling`) may start after the first signal and is
not sent it (it ends in a moment and the record needs it); a second signal reaches it too.

Handlers run in the main thread only; engines run from worker threads too (stack members,
reconcile), which is why forwarding goes through this one process-wide object. Nothing here
takes a lock: a handler that waited on one its own thread held would never return.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from hybridops_tf.base.errors import Interrupted

HANDLED = (signal.SIGINT, signal.SIGTERM)

# What a signal says while nothing has begun that must settle: exit at once (the process owns
# its handlers), and this line, with the signal's name.
AT_ONCE = "hyops: interrupted by {signal} before anything was changed; next: run the command again when wanted"


def exit_code(signum: int) -> int:
    """130 for SIGINT, 143 for SIGTERM: 128 + the signal, as a shell reports a process it ended."""
    return 128 + int(signum)


def name(signum: int) -> str:
    return signal.Signals(signum).name


class _Child:
    """One running engine (or read) to pass signals to. `settling`: a read that settles a run
    from evidence, which the first signal does not stop."""

    __slots__ = ("stop", "settling", "sent", "forwarded")

    def __init__(self, stop: Callable[[int], None], settling: bool) -> None:
        self.stop = stop
        self.settling = settling
        self.sent: dict[int, object] = {}  # the signals (1, 2, ...) already sent to it
        self.forwarded: int | None = None  # the first signal passed on to it

    def deliver(self, number: int, signum: int) -> None:
        """Send signal `number` (the first, the second, ...) once: the handler and a worker
        catching up may both try, and dict.setdefault, atomic under the GIL, lets one through."""
        if self.settling and number == 1:
            return
        mine = object()
        if self.sent.setdefault(number, mine) is not mine:
            return
        if self.forwarded is None:
            self.forwarded = signum
        self.stop(signum)


class Interrupts:
    """The process-wide signal state: which signal came first, how many came, who gets them."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first SIGINT/SIGTERM, until the process exits
        self.count = 0  # how many have come
        self.last: int | None = None
        self.reported = False  # the command has said its one line about the signal
        self._process = False  # installed for the whole process by the console script
        self._held = False  # a command that can change anything began: never at once again
        self._depth = 0  # open scopes in the main thread
        self._rest = 0  # open at_rest scopes
        self._saved: dict[int, Any] = {}
        self._children: dict[int, _Child] = {}
        self._next = 0
        self._at_once = AT_ONCE

    # --- installing ---------------------------------------------------------------------------
    def install(self) -> None:
        """The console script's first act: handle SIGINT and SIGTERM until the process exits,
        whatever it inherited (ignored, or blocked: a signal that came while blocked arrives now)."""
        for sig in HANDLED:
            signal.signal(sig, self._handle)
        self._process = True
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)

    @property
    def installed(self) -> bool:
        return self._process

    def hold(self) -> None:
        """A command that can change anything begins: from here to the process's exit a
        signal is remembered and forwarded, never acted on at once (its command settles
        what ran, says one line and exits 130/143)."""
        self._held = True

    def __enter__(self) -> Interrupts:
        """A scope in which a signal is remembered and forwarded, not acted on at once.

        Installed for the process (the console), a scope only changes what a signal does. Used
        as a library (tests, in-process callers), the outermost scope of the main thread
        installs the handlers, forgetting any signal of an earlier scope, and its end puts the
        caller's handlers back. Worker threads use the scope their main thread holds."""
        if threading.current_thread() is threading.main_thread():
            if self._depth == 0 and not self._process:
                self.received, self.count, self.last, self.reported = None, 0, None, False
                for sig in HANDLED:
                    self._saved[sig] = signal.signal(sig, self._handle)
            self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        if threading.current_thread() is threading.main_thread():
            self._depth -= 1
            if self._depth == 0 and not self._process:
                for sig, handler in self._saved.items():
                    signal.signal(sig, handler)
                self._saved.clear()

    def at_rest(self, line: str | None = None) -> _AtRest:
        """A wait in which nothing runs that must settle (a question at the terminal): a signal
        exits at once with `line` (its `{signal}` filled in), as before any command began."""
        return _AtRest(self, line or AT_ONCE)

    # --- engines --------------------------------------------------------------------------------
    def register(self, stop: Callable[[int], None], *, settling: bool = False, catch_up: bool = False) -> int:
        """Pass every later signal to `stop` (a settling read: every one after the first);
        with catch_up, also the last one already received (it came while this was spawning).
        Returns the key to unregister with."""
        self._next += 1
        key = self._next
        child = _Child(stop, settling)
        self._children[key] = child
        count, last = self.count, self.last
        if catch_up and count and last is not None:
            child.deliver(count, last)
        return key

    def forwarded(self, key: int) -> int | None:
        """The first signal passed to the child registered under `key`, if any."""
        child = self._children.get(key)
        return child.forwarded if child is not None else None

    def unregister(self, key: int) -> None:
        self._children.pop(key, None)

    # --- the handler ----------------------------------------------------------------------------
    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        self.last = signum
        if self.received is None:
            self.received = signum
        if self._process and (self._rest or not (self._held or self._depth)):
            self._exit_now(signum)
        number = self.count
        for child in list(self._children.values()):
            child.deliver(number, signum)

    def _exit_now(self, signum: int) -> None:
        """One line on stderr, straight to the descriptor (a handler may interrupt a print),
        and exit without unwinding: nothing has begun that needs finishing."""
        line = self._at_once.format(signal=name(self.received or signum)) + "\n"
        try:
            os.write(2, line.encode("utf-8", errors="replace"))
        except OSError:
            pass
        os._exit(exit_code(self.received or signum))

    def name(self) -> str:
        """The first signal's name (SIGINT, SIGTERM); "" when none came."""
        return name(self.received) if self.received is not None else ""

    def check(self, what: str) -> None:
        """Nothing new starts after a signal: Interrupted("interrupted by SIGINT <what>")."""
        if self.received is not None:
            raise Interrupted(f"interrupted by {self.name()} {what}")


class _AtRest:
    def __init__(self, owner: Interrupts, line: str) -> None:
        self.owner = owner
        self.line = line
        self._before = owner._at_once

    def __enter__(self) -> None:
        self.owner._rest += 1
        self.owner._at_once = self.line
        if self.owner._process and self.owner.received is not None:
            self.owner._exit_now(self.owner.received)

    def __exit__(self, *exc: object) -> None:
        self.owner._rest -= 1
        self.owner._at_once = self._before


INTERRUPTS = Interrupts()
