"""Park a real `hyops` at a chosen phase of a command, to send it SIGINT or SIGTERM there
(tests/integration/test_signal_matrix.py; tests/reliability/test_signal_drill.py).

No hook in the product and no sleep: each phase is reached through what hyops and its
engine really do, and the test waits for evidence (/proc, files) that it is parked there.

- start-up: hyops is started with SIGINT and SIGTERM blocked (a signal mask survives exec)
  and the signal is sent at once: it waits, pending, through Python's start-up, until hyops
  installs its handling (cli/console.py), which unblocks them. That is the moment a signal
  sent during start-up reaches hyops's own code. (Before it, a signal meets the inherited
  disposition: docs/running.md says so; no test can promise more.)
- root discovery: a `.hyops` that is a file lies on the walk up, so discovery warns, and
  hyops's stderr is a pipe the test filled: hyops parks in write(2) inside root discovery.
- lock: the test holds the module lock (a flock(2) on the lock file, as hyops takes it);
  hyops waits for it with `--lock-timeout`, polling: its main thread sleeps between tries
  (time.sleep, clock_nanosleep), which nothing else before the lock does.
- engine probe: TF_CLI_CONFIG_FILE names a FIFO. The version probe is the one engine run
  that gets the caller's own CLI config (for a sim module hyops gives every other run its
  own, sim/install.py, since a FIFO is no file), so `version -json` parks opening it.
- init: the module's `.terraform.lock.hcl` is a FIFO, which `init` opens and hyops never does.
- plan, apply: the sim's `hang` gates (gates.py) on a refresh read, on a create.
- settle: while the apply's first create is parked, the CLI config hyops gave the engine
  (<runtime root>/sim/terraform.rc) is made a FIFO; the run then fails, and the `show -json`
  that settles it parks opening that file.
- between two members: while the first member's create is parked, the test takes the
  second member's lock; the first ends, and the second, handed out by the scheduler, waits
  for its lock (`--lock-timeout`): nothing of it has started.
- report: stdout is a full pipe: hyops parks printing the run report it has written.

A FIFO is fed (`feed`) once the signal was sent, so the parked process goes on and the
test sees what hyops does with the signal.
"""

from __future__ import annotations

import fcntl
import os
import platform
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.integration.hyops_cli import HYOPS
from tests.reliability import procs

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
INHERITED = ("SIGINT-default", "SIGINT-ignored")  # how hyops's parent left SIGINT
WRITE_SYSCALL = {"x86_64": 1, "aarch64": 64}.get(platform.machine(), 1)
SLEEP_SYSCALL = {"x86_64": 230, "aarch64": 115}.get(platform.machine(), 230)  # clock_nanosleep
LINE = re.compile(r"^hyops: interrupted by (SIG[A-Z]+)\b.*; next: \S")


@dataclass
class Run:
    """One hyops process and what it printed (pipes drained by threads, or left full)."""

    proc: subprocess.Popen[bytes]
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    _threads: list[threading.Thread] = field(default_factory=list)
    _full: list[tuple[int, bytearray]] = field(default_factory=list)  # read once `unblock`ed

    @property
    def pid(self) -> int:
        return self.proc.pid

    def drain(self, fd: int, into: bytearray) -> None:
        """Read fd to its end on a thread (it takes ownership of fd)."""
        def read() -> None:
            with os.fdopen(fd, "rb", buffering=0) as stream:
                while chunk := stream.read(65536):
                    into.extend(chunk)

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        self._threads.append(thread)

    def unblock(self) -> None:
        """Start reading the full pipes: hyops's parked write goes through."""
        while self._full:
            self.drain(*self._full.pop())

    def finish(self, timeout: float = 180) -> tuple[int, str, str]:
        """Wait for hyops; its exit code, stdout and stderr (as text, filler removed)."""
        self.unblock()
        code = self.proc.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=60)
        return code, text_of(self.out), text_of(self.err)


def start(args: Iterable[str], cwd: Path, env: dict[str, str], *, ignore_sigint: bool = False,
          block_signals: bool = False, full_stdout: bool = False, full_stderr: bool = False) -> Run:
    """`hyops ARGS` as a parent that ignores SIGINT (a shell's background job) or not would
    start it; optionally with SIGINT/SIGTERM blocked, or with stdout/stderr a full pipe."""
    def prepare() -> None:  # in the child, before exec: what it inherits
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else signal.SIG_DFL)
        if block_signals:
            signal.pthread_sigmask(signal.SIG_BLOCK, set(SIGNALS.values()))

    out_r, out_w = full_pipe() if full_stdout else os.pipe()
    err_r, err_w = full_pipe() if full_stderr else os.pipe()
    try:
        proc = subprocess.Popen([HYOPS, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out_w,
                                stderr=err_w, preexec_fn=prepare)
    finally:
        os.close(out_w)
        os.close(err_w)
    run = Run(proc)
    for fd, into, full in ((out_r, run.out, full_stdout), (err_r, run.err, full_stderr)):
        if full:
            run._full.append((fd, into))
        else:
            run.drain(fd, into)
    return run


def full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full of NUL bytes: the first write to its write end blocks
    until the read end is read (Run.unblock)."""
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        while True:
            os.write(write_end, b"\0" * 4096)
    except BlockingIOError:
        pass
    try:
        while True:
            os.write(write_end, b"\0")
    except BlockingIOError:
        pass
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags)  # the child's writes must block, not fail
    return read_end, write_end


def text_of(data: bytearray | bytes) -> str:
    """What hyops wrote, without the filler of a full pipe."""
    return bytes(data).replace(b"\0", b"").decode("utf-8", "replace")


# --- evidence that hyops (or its engine) is parked -------------------------------------------

def _syscall(pid: int, task: int | None = None) -> list[str]:
    """The system call a thread of pid (its main thread by default) sleeps in, and its
    arguments (/proc/PID/task/TID/syscall)."""
    try:
        return Path(f"/proc/{pid}/task/{task or pid}/syscall").read_text().split()
    except OSError:
        return []


def writing_to(pid: int, fd: int) -> bool:
    """True while pid's main thread sleeps in write(fd, ...) (a full pipe)."""
    fields = _syscall(pid)
    return len(fields) > 1 and fields[0] == str(WRITE_SYSCALL) and int(fields[1], 16) == fd


def sleeping(pid: int, *, any_thread: bool = False) -> bool:
    """True while pid's main thread (or any of its threads) sleeps in time.sleep
    (clock_nanosleep): before and between engine runs, only a wait for a busy lock does."""
    try:
        tasks = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()] if any_thread else [pid]
    except OSError:
        return False
    return any((fields := _syscall(pid, task)) and fields[0] == str(SLEEP_SYSCALL) for task in tasks)


def delivered(pid: int, signum: int) -> bool:
    """True once `signum` is no longer pending for pid: its handler has been entered (a test
    that then frees what pid is parked on knows the signal came first)."""
    if procs.state(pid) in (None, "Z", "X"):
        return True  # it ended: nothing is pending any more
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return True
    bit = 1 << (signum - 1)
    masks = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd:", "ShdPnd:"))]
    return not any(mask & bit for mask in masks)


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in procs.children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def engine_parked_on_fifo(hyops_pid: int, verb: str) -> bool:
    """True when an engine process under hyops running `verb` sleeps opening a FIFO."""
    return any(verb in procs.cmdline(p)[1:] and procs.blocked_opening_fifo(p) for p in descendants(hyops_pid))


def feed(fifo: Path, data: bytes = b"") -> bool:
    """Give a process parked opening `fifo` (for reading) `data` and an end of file; False
    when nobody is parked there now."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader
        return False
    try:
        if data:
            os.write(fd, data)
    finally:
        os.close(fd)
    return True


def feed_while(parked: Callable[[], bool], fifo: Path, data: bytes, run: Run) -> None:
    """Feed `fifo` whenever something is parked on it, until hyops has exited: an engine may
    open it again later (init reads the lock file more than once), and a moment with nobody
    parked, on a loaded machine, is not the end of it."""
    def done() -> bool:
        if run.proc.poll() is not None:
            return True
        if parked():
            feed(fifo, data)
        return False

    procs.wait_until(done, f"hyops to exit, {fifo.name} fed whenever it is opened", interval=0.05)


# --- what hyops said ---------------------------------------------------------------------------

def interrupted_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("hyops: interrupted")]


def check_said(code: int, stderr: str, sig: str) -> str:
    """The rule's exit and words: 130/143, no traceback, exactly one `interrupted` line naming
    the signal and what to run next, and no `failed` in it. Returns that line."""
    assert code == 128 + SIGNALS[sig], f"exit {code}\n{stderr}"
    assert "Traceback" not in stderr, stderr
    lines = interrupted_lines(stderr)
    assert len(lines) == 1, stderr
    match = LINE.match(lines[0])
    assert match is not None and match.group(1) == sig, lines[0]
    assert "failed" not in lines[0], lines[0]
    return lines[0]


def hyops_env(base: dict[str, str], **changes: str | None) -> dict[str, str]:
    env = dict(base)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def holding_lock(lock_file: Path) -> Any:
    """The module lock, taken by the test as hyops takes it."""
    from filelock import FileLock

    lock_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = FileLock(str(lock_file), mode=0o600)
    lock.acquire()
    return lock
