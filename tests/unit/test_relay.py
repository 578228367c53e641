"""engine/relay.py and run_streaming's journal: events.jsonl is written by a process that
outlives hyops, and an engine whose hyops died is stopped.

Real tiny Python children stand in for the engine and for hyops (a script calling
run_streaming): what is proven is process behaviour (signals, pipes, process groups).
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.redact import REDACTED
from hybridops_tf.engine import process, relay
from tests.reliability.procs import alive

SECRET = "hunter2-very-secret"
SENSITIVE_OUTPUTS = json.dumps({"type": "outputs", "outputs": {"pw": {"sensitive": True, "value": SECRET}}})

# An engine that stops gracefully on SIGTERM, printing lines while it stops.
GRACEFUL = """
import json, signal, sys, time
marker = sys.argv[1]
def on_term(signum, frame):
    open(marker, "w").write(str(signum))
    for i in range(200):
        print(json.dumps({"type": "log", "@message": f"stopping {i}"}), flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
for _ in range(1200):
    time.sleep(0.05)
"""

# An engine that ignores SIGTERM and never closes its stdout; it starts a "plugin" in its
# process group that ignores SIGTERM too, and prints the plugin's pid.
STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
plugin = subprocess.Popen([sys.executable, "-c",
    "import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\ntime.sleep(120)"],
    stdout=subprocess.DEVNULL)
print(f"ready {plugin.pid}", flush=True)
time.sleep(120)
"""

# An engine that records every SIGTERM it gets, stops after a short grace (so that a second
# signal, which makes Terraform exit at once, would be seen), then exits 3.
COUNTING = """
import signal, sys, time
marker = sys.argv[1]
def on_term(signum, frame):
    with open(marker, "a") as fh:
        fh.write(f"{signum}\\n")
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
for _ in range(1200):
    time.sleep(0.05)
    try:
        if open(marker).read():
            break
    except OSError:
        pass
time.sleep(0.3)
print("stopped", flush=True)
sys.exit(3)
"""

# hyops, reduced to run_streaming with a journal: argv = EVENTS_FILE ENGINE_ARGV...
# Like hyops (a stderr tee, stack workers), it has several threads when it dies.
FAKE_HYOPS = """
import os, sys, threading, time
for _ in range(4):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
from pathlib import Path
from hybridops_tf.engine import process
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
journal = process.Journal(events_fd=fd, on_spawn=lambda pid: print(pid, flush=True),
                          complete_marker=Path(sys.argv[1] + ".complete"))
result = process.run_streaming(sys.argv[2:], on_stdout_line=lambda line: None, journal=journal)
print("returned", result.returncode, flush=True)
"""


def py(script: str, *args: object) -> list[str]:
    return [sys.executable, "-c", script, *map(str, args)]


@pytest.fixture(autouse=True)
def clean_forwarder():
    process.FORWARDER.received = None
    yield
    process.FORWARDER.received = None


def _journal(path: Path) -> tuple[process.Journal, int]:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return process.Journal(events_fd=fd), fd


def _wait(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# --- the protocol -------------------------------------------------------------------------


def test_a_notice_round_trips_and_engine_lines_are_not_notices() -> None:
    line = relay.notice(relay.LOG_ERROR, errno.ENOSPC, "No space\nleft on device").decode().rstrip("\n")

    assert relay.parse_notice(line) == (relay.LOG_ERROR, errno.ENOSPC, "No space left on device")
    assert relay.parse_notice('{"type":"version"}') is None
    assert relay.parse_notice("") is None


# --- with hyops alive -----------------------------------------------------------------------


def test_each_line_is_in_events_jsonl_redacted_before_hyops_sees_it_raw(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    journal, fd = _journal(events)
    script = f"print('first', flush=True)\nprint({SENSITIVE_OUTPUTS!r}, flush=True)\nprint('last', flush=True)"
    seen: list[tuple[str, list[str]]] = []

    try:
        result = process.run_streaming(py(script), on_stdout_line=lambda line: seen.append((line, _lines(events))),
                                       journal=journal)
    finally:
        os.close(fd)

    assert result.returncode == 0
    assert [line for line, _ in seen] == ["first", SENSITIVE_OUTPUTS, "last"]
    for index, (_line, logged) in enumerate(seen):
        assert len(logged) >= index + 1, "a line reached hyops before events.jsonl"  # ahead is fine
    logged = _lines(events)
    assert SECRET not in events.read_text()
    assert json.loads(logged[1])["outputs"]["pw"]["value"] == REDACTED
    assert logged[0] == "first" and logged[2] == "last"


def test_a_partial_last_line_of_a_crashed_engine_is_kept_in_both(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    journal, fd = _journal(events)
    crash = ("import os, signal, sys\nsys.stdout.write('{\"type\":\"version\"}\\n{\"type\":\"apply_sta')\n"
             "sys.stdout.flush()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    lines: list[str] = []

    try:
        result = process.run_streaming(py(crash), on_stdout_line=lines.append, journal=journal)
    finally:
        os.close(fd)

    assert result.returncode == -signal.SIGKILL
    assert lines == ['{"type":"version"}', '{"type":"apply_sta']
    assert _lines(events) == lines


def test_the_relay_marks_events_complete_at_the_engines_eof_only_when_every_line_was_logged(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "events.complete"
    fd = os.open(tmp_path / "events.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        process.run_streaming(py("print('a')"), on_stdout_line=lambda line: None,
                              journal=process.Journal(events_fd=full, complete_marker=marker))
        assert not marker.exists(), "a log that lost lines was called complete"
        process.run_streaming(py("print('a')"), on_stdout_line=lambda line: None,
                              journal=process.Journal(events_fd=fd, complete_marker=marker))
    finally:
        os.close(fd)
        os.close(full)
    assert json.loads(marker.read_text()) == {"schema_version": 1, "eof": True}
    assert oct(marker.stat().st_mode & 0o777) == oct(0o600)


def test_a_log_write_failure_reaches_hyops_in_band_and_every_line_still_does(tmp_path: Path) -> None:
    journal = process.Journal(events_fd=os.open("/dev/full", os.O_WRONLY))
    lines: list[str] = []

    try:
        result = process.run_streaming(py("print('a', flush=True)\nprint('b', flush=True)"),
                                       on_stdout_line=lines.append, journal=journal)
    finally:
        os.close(journal.events_fd)

    assert result.returncode == 0
    notices = [relay.parse_notice(line) for line in lines if relay.parse_notice(line)]
    assert notices == [(relay.LOG_ERROR, errno.ENOSPC, os.strerror(errno.ENOSPC))]
    assert [line for line in lines if not relay.parse_notice(line)] == ["a", "b"]


def test_a_relay_that_dies_is_reported_as_a_log_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "RELAY_PATH", tmp_path / "no-such-relay.py")
    journal, fd = _journal(tmp_path / "events.jsonl")
    lines: list[str] = []

    try:
        process.run_streaming(py("print('a', flush=True)"), on_stdout_line=lines.append, journal=journal)
    finally:
        os.close(fd)

    notices = [relay.parse_notice(line) for line in lines if relay.parse_notice(line)]
    assert len(notices) == 1 and notices[0][0] == relay.LOG_ERROR
    assert "event relay exited with code" in notices[0][2]


PDEATHSIG_PROBE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
sig = ctypes.c_int(-1)
libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
print(sig.value, os.getsid(0) == os.getpid(), flush=True)
"""


@pytest.mark.parametrize("with_journal", [True, False], ids=["relayed", "direct"])
def test_read_only_engines_get_sigterm_as_parent_death_signal_the_relayed_one_none(
    tmp_path: Path, with_journal: bool
) -> None:
    """The relayed (mutating) engine is stopped by the relay, once; a parent-death signal
    would reach it once per re-parenting (see process.py)."""
    journal, fd = _journal(tmp_path / "events.jsonl")
    lines: list[str] = []
    try:
        process.run_streaming(py(PDEATHSIG_PROBE), on_stdout_line=lines.append,
                              journal=journal if with_journal else None)
        captured = process.run_capture(py(PDEATHSIG_PROBE))
    finally:
        os.close(fd)
    assert lines == [f"{0 if with_journal else int(signal.SIGTERM)} True"]
    assert captured.stdout.split() == [str(int(signal.SIGTERM)), "True"]


def test_the_relay_and_the_relayed_engine_are_spawned_with_no_code_between_fork_and_exec(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No preexec_fn: subprocess then starts them by vfork, without copying hyops's address
    space; the relay learns of hyops's death from its control pipe instead (tests below)."""
    spawned: list[tuple[str, object]] = []
    real_popen = subprocess.Popen

    def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        spawned.append((argv[argv.index("-c") + 1] if "-c" in argv else argv[0], kwargs.get("preexec_fn")))
        return real_popen(argv, **kwargs)

    monkeypatch.setattr(process.subprocess, "Popen", popen)
    journal, fd = _journal(tmp_path / "events.jsonl")
    try:
        process.run_streaming(py("print('a')"), on_stdout_line=lambda line: None, journal=journal)
    finally:
        os.close(fd)
    assert [code for code, _ in spawned] == [process.RELAY_BOOT, "print('a')"]
    assert [preexec for _, preexec in spawned] == [None, None]


# --- hyops killed -----------------------------------------------------------------------------


def _start_fake_hyops(tmp_path: Path, engine: list[str]) -> tuple[subprocess.Popen[str], int, Path]:
    events = tmp_path / "events.jsonl"
    hyops = subprocess.Popen([sys.executable, "-c", FAKE_HYOPS, str(events), *engine],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert hyops.stdout is not None
    engine_pid = int(hyops.stdout.readline())
    return hyops, engine_pid, events


def test_when_hyops_is_killed_the_engine_gets_sigterm_and_every_line_it_writes_is_logged(tmp_path: Path) -> None:
    marker = tmp_path / "engine-got-signal"
    hyops, engine_pid, events = _start_fake_hyops(tmp_path, py(GRACEFUL, marker))
    try:
        _wait(lambda: "ready" in _lines(events), 30, "the engine's first line in events.jsonl")

        os.killpg(hyops.pid, signal.SIGKILL)  # hyops and its group; engine and relay have their own
        hyops.wait()

        # the engine's handler makes the file, then writes it: gate on what it wrote
        _wait(lambda: marker.exists() and marker.read_text() != "", 10, "the engine to get the relay's SIGTERM")
        assert marker.read_text() == str(int(signal.SIGTERM))
        _wait(lambda: not alive(engine_pid), 10, "the engine to stop")
        _wait(lambda: len(_lines(events)) == 201, 10, "the relay to drain the engine's stop")
        assert _lines(events) == ["ready"] + [json.dumps({"type": "log", "@message": f"stopping {i}"})
                                              for i in range(200)]
        _wait(Path(f"{events}.complete").exists, 10, "the relay to mark the events complete")
    finally:
        try:
            os.killpg(engine_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_an_engine_that_ignores_sigterm_is_killed_with_its_group_after_the_grace(tmp_path: Path) -> None:
    hyops, engine_pid, events = _start_fake_hyops(tmp_path, py(STUBBORN))
    try:
        ready = _wait(lambda: [line for line in _lines(events) if line.startswith("ready")], 30, "the engine")
        plugin_pid = int(ready[0].split()[1])

        hyops.kill()
        hyops.wait()
        killed_at = time.monotonic()

        _wait(lambda: not alive(engine_pid) and not alive(plugin_pid), 10, "the engine and its plugin to die")
        took = time.monotonic() - killed_at
        assert took >= relay.GRACE_SECONDS * 0.9, f"killed after {took:.2f}s: no grace for a graceful stop"
    finally:
        try:
            os.killpg(engine_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_an_engine_whose_multithreaded_hyops_is_killed_gets_exactly_one_sigterm(tmp_path: Path) -> None:
    """Two interrupts make Terraform exit at once ("data loss may have occurred") instead of
    stopping gracefully. When the relay learnt of hyops's death from a parent-death signal, a
    dying multi-threaded hyops sent it once per re-parenting (to another of its threads, then
    to init), and the relay's handler for the second ran nested inside the first: both sent
    SIGTERM (in about 1 run in 10 with six runs at once on 2 cores). It now learns it from its
    control pipe's end of file, which comes once, and a forward's broken pipe can still say it
    at the same time. The test kills several times and reads what arrived only once the
    engine has exited."""
    for attempt in range(KILLS):
        marker = tmp_path / f"signals-{attempt}"
        run = tmp_path / f"run-{attempt}"
        run.mkdir()
        hyops, engine_pid, events = _start_fake_hyops(run, py(COUNTING, marker))
        exited = os.pidfd_open(engine_pid)  # the engine is not our child: no wait(), but a pidfd
        try:
            _wait(lambda events=events: "ready" in _lines(events), 30, "the engine's first line in events.jsonl")

            os.killpg(hyops.pid, signal.SIGKILL)
            hyops.wait()

            readable, _, _ = select.select([exited], [], [], 30)
            assert readable, "the engine did not exit within 30s of hyops's death"
            _wait(Path(f"{events}.complete").exists, 30, "the relay to log the engine's last line")
            assert _lines(events)[-1] == "stopped", "the engine did not stop gracefully"
            assert marker.read_text().split() == [str(int(signal.SIGTERM))], f"kill {attempt + 1}"
        finally:
            os.close(exited)
            try:
                os.killpg(engine_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


KILLS = 6


def test_the_relay_finds_the_engine_through_proc_when_hyops_died_before_naming_it(tmp_path: Path) -> None:
    """hyops writes the engine's pid to the relay right after the spawn; killed before that,
    the relay still finds it: the session leader whose stdout is the relay's stdin."""
    read_end, write_end = os.pipe()
    engine = subprocess.Popen(py(SLEEP_FOREVER), stdout=write_end, start_new_session=True)
    os.close(write_end)
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "from hybridops_tf.engine.relay import _writer_of_stdin; print(_writer_of_stdin())"],
            stdin=read_end, capture_output=True, text=True, timeout=60)
    finally:
        os.close(read_end)
        engine.kill()
        engine.wait()
    assert probe.stdout.strip() == str(engine.pid), probe.stderr


SLEEP_FOREVER = "import time\ntime.sleep(120)\n"


def test_hyops_seen_gone_again_nested_in_the_first_sighting_sends_no_second_sigterm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of the test above, made certain: a second sighting of hyops gone (the
    control pipe's watcher and a broken pipe at once, or a signal handler) runs inside the
    first, at its first call (where CPython may run a pending signal handler or switch threads)."""
    r = relay.Relay(parent=os.getpid(), control_fd=None, log_fd=None, grace=1.0)
    r._engine = 999_999  # the engine's pid as hyops sent it
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(relay.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setattr(relay.signal, "setitimer", lambda *_args: (0.0, 0.0))
    clock = relay.time.monotonic
    nested: list[bool] = []

    def monotonic_with_a_signal_arriving() -> float:
        if not nested:
            nested.append(True)
            r.hyops_gone()  # the second sighting
        return clock()

    monkeypatch.setattr(relay.time, "monotonic", monotonic_with_a_signal_arriving)
    r.hyops_gone()

    assert sent == [(999_999, int(signal.SIGTERM))]
