"""The only place hyops starts a process.

`run_streaming` hands each stdout line to a callback while the engine runs (not after it
exits), tees stderr to a log, and forwards SIGINT/SIGTERM to the engine, then waits for
it: an engine killed mid-write would leave state worse than an engine told to stop.
The child runs in its own session so a terminal Ctrl-C reaches it once, through us, not
twice (a second interrupt makes Terraform exit immediately).

hyops may itself be killed outright (SIGKILL, alone or with its process group, as a CI
runner does on cancel). So that its engine does not run on, mutating, unobserved:
- with a journal (events.jsonl: every mutating run), the engine's stdout goes through the
  event relay (relay.py), a small process in its own session that writes each line to
  events.jsonl and forwards it to us. When we die it sends the engine ONE SIGTERM (its
  graceful stop), drains it to EOF into events.jsonl (no SIGPIPE for a stopping engine, no
  line lost in a pipe buffer) and SIGKILLs the engine's process group if it is still there
  GRACE_SECONDS later. It learns of our death from a pipe whose other end only we hold (its
  end of file), not from a parent-death signal: so it needs no code run between fork and
  exec, and starts by vfork like the engine, without copying our address space.
- every other engine (read-only: show, output, init, a plan) gets SIGTERM as its
  parent-death signal, armed in the child before exec. Not the mutating one: Linux sends
  that signal when the THREAD that spawned the child ends and again at each re-parenting
  (to another of our threads, then to init), so a multi-threaded hyops dying sends it two
  or more times, and a second interrupt makes Terraform exit at once ("data loss may have
  occurred") instead of stopping gracefully.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from hybridops_tf.base.errors import EngineNotStarted
from hybridops_tf.base.files import open_append
from hybridops_tf.base.interrupts import HANDLED, INTERRUPTS
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.relay import GRACE_SECONDS, LOG_ERROR, NOTICE_PREFIX, notice

FORWARDED_SIGNALS = HANDLED

# Set for every engine run: no prompts, no "run terraform apply next" hints, no update check.
AUTOMATION_ENV = {"TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}


@dataclass(frozen=True, slots=True)
class Journal:
    """Where the relay keeps the engine's stdout: events.jsonl, open for append by the caller.

    on_spawn gets the engine's pid right after the spawn (hyops notes it in the run folder);
    complete_marker is the file the relay creates once events.jsonl holds all the engine wrote.
    """

    events_fd: int
    on_spawn: Callable[[int], None] | None = None
    complete_marker: Path | None = None


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
    timed_out: bool = False  # the timeout passed: its process group was killed (returncode is then -9)


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


# The process-wide signal state (base/interrupts.py), under the name the engine's callers use.
FORWARDER = INTERRUPTS


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment, plus automation settings, plus per-run additions."""
    env = dict(os.environ)
    env.update(AUTOMATION_ENV)
    if extra:
        env.update(extra)
    return env


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PRCTL: list[Callable[..., int] | None] = []  # resolved once, in the parent, never after a fork
RELAY_PATH = Path(__file__).with_name("relay.py")
# The relay's interpreter: isolated (-I: no PYTHON* variables, no user site), no site (-S);
# it imports relay.py from the package root put after the standard library (never shadowing
# it), so its compiled form is used as for any module rather than the source compiled anew.
RELAY_BOOT = "import sys; sys.path.append(sys.argv[1]); from hybridops_tf.engine.relay import run; run()"


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up before any fork (None off Linux)."""
    if not _PRCTL:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).prctl
                fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
                fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                fn = None
        _PRCTL.append(fn)
    return _PRCTL[0]


def _dies_with_us(signum: int | None) -> Callable[[], None] | None:
    """A preexec_fn arming `signum` as the child's parent-death signal (None: no preexec_fn,
    which also keeps the cheaper vfork spawn: a preexec_fn costs ~2 ms of fork).

    A child whose parent died between fork and prctl would never get the signal: it sees
    another parent and kills itself before exec.
    """
    if signum is None:
        return None
    prctl = _prctl()  # ctypes: imported only for a spawn that needs it
    if prctl is None:
        return None
    parent = os.getpid()
    sig = int(signum)

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def _spawn(argv: Sequence[str], env: Mapping[str, str] | None, stdin_data: bytes | None = None,
           death_signal: int | None = signal.SIGTERM, **kwargs: Any) -> subprocess.Popen[Any]:
    if stdin_data is not None:  # the run's var file, read by the engine as /dev/fd/0 (stdin_feed.py)
        from hybridops_tf.engine import stdin_feed

        with stdin_feed.feeding(stdin_data) as read_end:
            return _spawn(argv, env, stdin=read_end, death_signal=death_signal, **kwargs)
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    try:
        return subprocess.Popen(
            list(argv),
            env=child_env(env),
            start_new_session=True,
            preexec_fn=_dies_with_us(death_signal),
            **kwargs,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as err:  # ValueError: a NUL byte in argv or env
        raise EngineNotStarted(f"cannot run engine {argv[0]}: {getattr(err, 'strerror', None) or err}") from err


def _spawn_relay(control_fd: int, events_fd: int, stdin_fd: int, err_fd: int,
                 err_log_fd: int, marker: Path | None) -> subprocess.Popen[bytes]:
    """The relay, in its own session, before the engine (see relay.py)."""
    dir_fd = -1
    if marker is not None:
        try:
            dir_fd = os.open(marker.parent, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            dir_fd = -1  # no marker then: the run's events are only not proven complete
    flags = ["-I", "-S", *(["-B"] if sys.dont_write_bytecode else [])]  # -I would drop PYTHONDONTWRITEBYTECODE
    argv = [sys.executable, *flags, "-c", RELAY_BOOT, str(RELAY_PATH.parents[2]), str(os.getpid()), str(control_fd),
            str(events_fd), str(GRACE_SECONDS), str(err_fd), str(err_log_fd), str(dir_fd),
            marker.name if marker is not None else ""]
    kept = tuple(fd for fd in (control_fd, events_fd, err_fd, err_log_fd, dir_fd) if fd >= 0)
    try:
        return _popen_relay(argv, stdin_fd, kept)
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)


def _popen_relay(argv: list[str], stdin_fd: int, kept: tuple[int, ...]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(argv, stdin=stdin_fd, stdout=subprocess.PIPE, pass_fds=kept, start_new_session=True)
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        raise EngineNotStarted(f"cannot start the event relay {RELAY_PATH}: "
                               f"{getattr(err, 'strerror', None) or err}") from err


def run_streaming(
    argv: Sequence[str],
    *,
    on_stdout_line: Callable[[str], None],
    stderr_log: Path | None = None,
    on_stderr_line: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    journal: Journal | None = None,
    stdin_data: bytes | None = None,
) -> ProcessResult:
    """Run argv; call on_stdout_line for each line as it arrives; return the exit status.

    With a journal, each line reaches events.jsonl (through the relay) before the callback;
    the relay's own notices (relay.NOTICE_PREFIX) come through the callback too.
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
            control = -1  # our end of the relay's control pipe: open while the relay may need us
            if journal is None:
                proc = _spawn(argv, env, stdin_data=stdin_data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                relay, stderr = None, proc.stderr
            else:
                proc, relay, stderr, control = _spawn_with_relay(argv, env, journal, log.fileno() if log else -1,
                                                                 stdin_data)
        except BaseException:
            if log is not None:
                log.close()
            raise
        key = FORWARDER.register(lambda signum: _send(proc, signum), catch_up=True)
        source = relay.stdout if relay is not None else proc.stdout
        try:
            assert source is not None and stderr is not None
            tee = threading.Thread(target=_tee_stderr, args=(stderr, log, on_stderr_line), daemon=True)
            tee.start()
            if relay is not None and journal is not None and journal.on_spawn is not None:
                journal.on_spawn(proc.pid)
            noticed = False
            for raw in source:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                noticed = noticed or line.startswith(NOTICE_PREFIX)
                on_stdout_line(line)
            if relay is not None:
                relay_code = relay.wait()
                if relay_code != 0 and not noticed:  # it died: what it did not say, we say
                    on_stdout_line(notice(
                        LOG_ERROR, 0, f"the event relay exited with code {relay_code}"
                    ).decode("utf-8").rstrip("\n"))
            returncode = proc.wait()
            tee.join()
        finally:
            interrupted = FORWARDER.received
            FORWARDER.unregister(key)
            if proc.poll() is None:  # our own callback failed: never leave the engine orphaned
                _send(proc, signal.SIGINT)
                if relay is not None and relay.stdout is not None:
                    for _unread in relay.stdout:  # keep the relay forwarding until the engine ends
                        pass
                proc.wait()
            if relay is not None:
                relay.wait()
                if relay.stdout is not None:
                    relay.stdout.close()
                os.close(control)  # only now: its end of file tells a relay that we are gone
        return ProcessResult(returncode=returncode, interrupted=interrupted)


def _spawn_with_relay(
    argv: Sequence[str], env: Mapping[str, str] | None, journal: Journal, stderr_log_fd: int,
    stdin_data: bytes | None = None,
) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes], IO[bytes], int]:
    """Relay first, then the engine writing into it; then tell the relay the engine's pid.

    Returns the engine, the relay, the engine's stderr for us to tee (the relay holds a copy
    of its read end, to drain it should we die) and our end of the control pipe, for the
    caller to close once the relay has exited: until then its end of file means we died.
    """
    data_r, data_w = os.pipe()
    control_r, control_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        relay = _spawn_relay(control_r, journal.events_fd, data_r, err_r, stderr_log_fd, journal.complete_marker)
    except BaseException:
        for fd in (data_r, data_w, control_r, control_w, err_r, err_w):
            os.close(fd)
        raise
    os.close(data_r)
    os.close(control_r)
    try:
        # no parent-death signal: the relay sends the one SIGTERM (see the module docstring);
        # should we die before telling the relay this pid, it finds the engine through /proc
        proc = _spawn(argv, env, stdin_data=stdin_data, death_signal=None, stdout=data_w, stderr=err_w)
    except BaseException:
        for fd in (data_w, err_r, err_w):  # the relay sees EOF at once and exits
            os.close(fd)
        relay.wait()
        os.close(control_w)  # after it: the relay must not take this end of file for our death
        if relay.stdout is not None:
            relay.stdout.close()
        raise
    os.close(data_w)
    os.close(err_w)
    try:
        os.write(control_w, f"{proc.pid}\n".encode("ascii"))
    except OSError:
        pass  # the relay is gone already: its exit code says so, and the engine's next line meets a broken pipe
    return proc, relay, os.fdopen(err_r, "rb"), control_w


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


def run_capture(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                stdin_data: bytes | None = None, settling: bool = False, timeout: float | None = None,
                cwd: Path | None = None) -> Captured:
    """Run a read-only command to completion and return its output.

    After a signal nothing new starts: Interrupted, unless `settling` (a read that settles
    a run from evidence, such as `show -json` after an interrupted apply: the record needs
    it). A settling read is not sent the first signal; any other run gets every signal, and
    `interrupted` says which one reached it first.

    With `timeout` (seconds), a command still running then is killed with its whole process
    group (it leads its own session) and `timed_out` says so: reconcile's lookups
    (reconcile/lookup/ask.py) run a user's command that may hang, and a hung read must not
    hang hyops. `cwd` is where the command starts (default: ours).
    """
    with FORWARDER:
        if not settling:
            FORWARDER.check(f"before `{next((a for a in argv[1:] if not a.startswith('-')), argv[0])}` started")
        # dies with us too
        proc = _spawn(argv, env, stdin_data=stdin_data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      cwd=str(cwd) if cwd is not None else None)
        key = FORWARDER.register(lambda signum: _send(proc, signum), settling=settling, catch_up=True)
        timed_out = False
        try:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                out, err = _kill_and_drain(proc)
        finally:
            forwarded = FORWARDER.forwarded(key)
            FORWARDER.unregister(key)
        return Captured(
            proc.returncode,
            out.decode("utf-8", errors="replace"),
            err.decode("utf-8", errors="replace"),
            interrupted=forwarded,
            timed_out=timed_out,
        )


_DRAIN_SECONDS = 5.0  # after the kill: a child that left the group may still hold our pipes


def _kill_and_drain(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """SIGKILL the command's process group, then read what it wrote; pipes a straying
    grandchild keeps open are abandoned after _DRAIN_SECONDS rather than waited on."""
    _send(proc, signal.SIGKILL)
    try:
        out, err = proc.communicate(timeout=_DRAIN_SECONDS)
    except subprocess.TimeoutExpired:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()
        out, err = b"", b""
    return out or b"", err or b""
