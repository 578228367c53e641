"""The only place hyops starts a process.

`run_streaming` hands each stdout line to a callback while the engine runs (not after it
exits), tees stderr to a log, and forwards SIGINT/SIGTERM to the engine, then waits for
it: an engine killed mid-write would leave state worse than an engine told to stop.
The child runs in its own session so a terminal Ctrl-C reaches it once, through us, not
twice (a second interrupt makes Terraform exit immediately).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from hybridops_tf.errors import EngineNotStarted
from hybridops_tf.fsutil import open_append

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# Set for every engine run: no prompts, no "run terraform apply next" hints, no update check.
AUTOMATION_ENV = {"TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}


@dataclass(frozen=True, slots=True)
class ProcessResult:
    returncode: int
    interrupted: int | None = None  # signal forwarded while the process ran
    started: bool = True


@dataclass(frozen=True, slots=True)
class Captured:
    returncode: int
    stdout: str
    stderr: str
    interrupted: int | None = None


class SignalForwarder:
    """Process-wide: remembers SIGINT/SIGTERM and passes them to every live engine.

    Handlers can only be installed from the main thread; stack runs enter it once in the
    main thread and run engines from worker threads, which register their children here.
    """

    def __init__(self) -> None:
        self._children: set[subprocess.Popen[Any]] = set()
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: dict[int, Any] = {}
        self.received: int | None = None

    def __enter__(self) -> SignalForwarder:
        if threading.current_thread() is threading.main_thread():
            if self._depth == 0:
                self.received = None
                for sig in FORWARDED_SIGNALS:
                    self._saved[sig] = signal.signal(sig, self._handle)
            self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        if threading.current_thread() is threading.main_thread():
            self._depth -= 1
            if self._depth == 0:
                for sig, handler in self._saved.items():
                    signal.signal(sig, handler)
                self._saved.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        with self._lock:
            children = list(self._children)
        for child in children:
            _send(child, signum)

    def register(self, child: subprocess.Popen[Any], *, catch_up: bool = False) -> None:
        """Track child; with catch_up, pass on a signal that arrived while it was spawning."""
        with self._lock:
            self._children.add(child)
        if catch_up and self.received is not None:
            _send(child, self.received)

    def unregister(self, child: subprocess.Popen[Any]) -> None:
        with self._lock:
            self._children.discard(child)


def _send(child: subprocess.Popen[Any], signum: int) -> None:
    """Signal the engine's whole process group, as a terminal's Ctrl-C would.

    The engine leads its own group (start_new_session), so this reaches it and its
    provider plugins, and nothing else. Terraform 1.0 ignores a SIGINT sent to its pid
    alone but stops gracefully when its group gets one.
    """
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass


FORWARDER = SignalForwarder()


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment, plus automation settings, plus per-run additions."""
    env = dict(os.environ)
    env.update(AUTOMATION_ENV)
    if extra:
        env.update(extra)
    return env


def _spawn(argv: Sequence[str], env: Mapping[str, str] | None, **kwargs: Any) -> subprocess.Popen[Any]:
    try:
        return subprocess.Popen(
            list(argv),
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **kwargs,
        )
    except (OSError, ValueError) as err:  # ValueError: e.g. a NUL byte in argv or env
        raise EngineNotStarted(f"cannot run engine {argv[0]}: {getattr(err, 'strerror', None) or err}") from err


def run_streaming(
    argv: Sequence[str],
    *,
    on_stdout_line: Callable[[str], None],
    stderr_log: Path | None = None,
    on_stderr_line: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run argv; call on_stdout_line for each line as it arrives; return the exit status.

    If a signal was received before the spawn, the process is not started at all.
    """
    with FORWARDER:
        if FORWARDER.received is not None:
            return ProcessResult(returncode=128 + FORWARDER.received, interrupted=FORWARDER.received, started=False)
        try:
            log = open_append(stderr_log) if stderr_log is not None else None  # fails before any spawn
        except OSError as err:
            raise EngineNotStarted(f"cannot open {stderr_log}: {err.strerror or err}") from err
        try:
            proc = _spawn(argv, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except BaseException:
            if log is not None:
                log.close()
            raise
        FORWARDER.register(proc, catch_up=True)
        try:
            assert proc.stdout is not None and proc.stderr is not None
            tee = threading.Thread(target=_tee_stderr, args=(proc.stderr, log, on_stderr_line), daemon=True)
            tee.start()
            for raw in proc.stdout:
                on_stdout_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            returncode = proc.wait()
            tee.join()
        finally:
            FORWARDER.unregister(proc)
            if proc.poll() is None:  # our own callback failed: never leave the engine orphaned
                _send(proc, signal.SIGINT)
                proc.wait()
        return ProcessResult(returncode=returncode, interrupted=FORWARDER.received)


def _tee_stderr(stream: IO[bytes], log: IO[bytes] | None, on_line: Callable[[str], None] | None) -> None:
    """Drain the engine's stderr to the end, whatever happens to the log: a full pipe
    would block the engine."""
    try:
        for raw in stream:
            if log is not None:
                try:
                    log.write(raw)
                    log.flush()
                except OSError:
                    log = None  # keep draining; the run's result still records the outcome
            if on_line is not None:
                on_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    finally:
        if log is not None:
            log.close()


def run_capture(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> Captured:
    """Run a read-only engine command to completion and return its output.

    Unlike run_streaming it runs even after a signal: reading state after an interrupted
    apply is how the record learns what the engine left behind.
    """
    with FORWARDER:
        proc = _spawn(argv, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        FORWARDER.register(proc)
        try:
            out, err = proc.communicate()
        finally:
            FORWARDER.unregister(proc)
        return Captured(
            proc.returncode,
            out.decode("utf-8", errors="replace"),
            err.decode("utf-8", errors="replace"),
            interrupted=FORWARDER.received,
        )


def echo_stderr(line: str) -> None:
    """Default stderr tee target: the user's terminal."""
    print(line, file=sys.stderr, flush=True)
