"""engine/process.py: the one spawn point.

Streaming, exit codes, crashes mid-line, stderr tee, signal forwarding and spawn failures
are proven with real tiny Python children (sys.executable -c) where timing of delivery
matters, and with pytest-subprocess (`fp`) where only the byte stream matters.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import EngineError, ExitCode, HyopsError, Interrupted
from hybridops_tf.engine import process
from hybridops_tf.engine.process import ProcessResult

# A child that prints a line and then waits (bounded, as a safety net only) for a file the
# parent's callback creates. Exit 0 means it saw the file while still running.
WAIT_FOR_FLAG = """
import os, sys, time
flag = sys.argv[1]
print("first", flush=True)
for _ in range(1200):
    if os.path.exists(flag):
        print("saw-flag", flush=True)
        sys.exit(0)
    time.sleep(0.05)
print("never-saw-flag", flush=True)
sys.exit(9)
"""

# A child that handles SIGINT/SIGTERM like an engine stopping gracefully: writes a marker
# naming the signal, exits 3. Without a signal it gives up (exit 0) after a safety delay.
SIGNAL_AWARE = """
import os, signal, sys, time
marker = sys.argv[1]
def on_signal(signum, frame):
    with open(marker, "w") as fh:
        fh.write(str(signum))
    os._exit(3)
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)
print("ready", flush=True)
for _ in range(1200):
    time.sleep(0.05)
sys.exit(0)
"""

# A child killed mid-write: a complete line, then half a line with no newline.
CRASH_MID_LINE = """
import os, signal, sys
sys.stdout.write('{"type":"version"}\\n{"type":"apply_sta')
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def py(script: str, *args: object) -> list[str]:
    return [sys.executable, "-c", script, *map(str, args)]


@pytest.fixture(autouse=True)
def clean_forwarder():
    """Every test starts and ends with no remembered signal and no open forwarder scope."""
    process.FORWARDER.received = None
    handlers = {sig: signal.getsignal(sig) for sig in process.FORWARDED_SIGNALS}
    yield
    process.FORWARDER.received = None
    assert process.FORWARDER._depth == 0, "a forwarder scope was left open"
    for sig, handler in handlers.items():
        assert signal.getsignal(sig) is handler, f"handler for {sig!r} was not restored"


@pytest.fixture
def guard_signals():
    """Catch SIGINT/SIGTERM if hyops failed to: the test fails instead of pytest dying."""
    caught: list[int] = []

    def guard(signum: int, frame: object) -> None:
        caught.append(signum)

    saved = {sig: signal.signal(sig, guard) for sig in process.FORWARDED_SIGNALS}
    try:
        yield caught
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


# --- streaming ---------------------------------------------------------------------------


def test_stdout_lines_reach_the_callback_while_the_engine_is_still_running(tmp_path: Path) -> None:
    flag = tmp_path / "callback-saw-first-line"
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        if line == "first":
            flag.write_text("seen")

    result = process.run_streaming(py(WAIT_FOR_FLAG, flag), on_stdout_line=on_line)

    # Had lines been delivered only after exit, the child would never have seen the flag.
    assert lines == ["first", "saw-flag"]
    assert result == ProcessResult(returncode=0, interrupted=None, started=True)


def test_nonzero_exit_code_is_returned_not_raised(fp) -> None:
    fp.register(["tofu", "apply"], stdout=['{"type":"version"}'], returncode=1)
    lines: list[str] = []

    result = process.run_streaming(["tofu", "apply"], on_stdout_line=lines.append)

    assert result.returncode == 1
    assert result.started is True
    assert result.interrupted is None
    assert lines == ['{"type":"version"}']


def test_crash_mid_stream_delivers_the_partial_last_line(tmp_path: Path) -> None:
    lines: list[str] = []

    result = process.run_streaming(py(CRASH_MID_LINE), on_stdout_line=lines.append)

    assert lines == ['{"type":"version"}', '{"type":"apply_sta']
    assert result.returncode == -signal.SIGKILL
    assert result.interrupted is None


def test_garbage_lines_are_passed_through_unchanged(fp) -> None:
    garbage = ["not json at all", "}{ \t trailing spaces kept  ", "", '{"type": "x", "@level": 1']
    fp.register(["tofu", "apply"], stdout=garbage)
    lines: list[str] = []

    process.run_streaming(["tofu", "apply"], on_stdout_line=lines.append)

    assert lines == garbage


def test_crlf_line_endings_are_stripped_but_nothing_else(fp) -> None:
    fp.register(["tofu", "apply"], stdout=b"  a\r\nb \r\n")
    lines: list[str] = []

    process.run_streaming(["tofu", "apply"], on_stdout_line=lines.append)

    assert lines == ["  a", "b "]


def test_invalid_utf8_is_replaced_not_fatal(fp) -> None:
    fp.register(["tofu", "apply"], stdout=b"ok \xff\xfe end\n")
    lines: list[str] = []

    result = process.run_streaming(["tofu", "apply"], on_stdout_line=lines.append)

    assert lines == ["ok \ufffd\ufffd end"]
    assert result.returncode == 0


# --- stderr tee --------------------------------------------------------------------------


def test_stderr_is_teed_to_a_0600_log_and_to_the_callback(tmp_path: Path) -> None:
    log = tmp_path / "run" / "engine.stderr.log"
    script = (
        "import sys\n"
        "sys.stderr.write('Error: boom\\n  detail line\\n'); sys.stderr.flush()\n"
        'print(\'{"type":"version"}\', flush=True)\n'
    )
    out: list[str] = []
    err: list[str] = []

    result = process.run_streaming(
        py(script), on_stdout_line=out.append, stderr_log=log, on_stderr_line=err.append
    )

    assert result.returncode == 0
    assert out == ['{"type":"version"}']
    assert err == ["Error: boom", "  detail line"]
    assert log.read_bytes() == b"Error: boom\n  detail line\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_stderr_does_not_leak_into_stdout_callback(fp, tmp_path: Path) -> None:
    fp.register(["tofu", "apply"], stdout=["out-1"], stderr=["err-1", "err-2"], returncode=1)
    out: list[str] = []
    err: list[str] = []

    process.run_streaming(
        ["tofu", "apply"],
        on_stdout_line=out.append,
        stderr_log=tmp_path / "e.log",
        on_stderr_line=err.append,
    )

    assert out == ["out-1"]
    assert err == ["err-1", "err-2"]
    assert (tmp_path / "e.log").read_text().splitlines() == ["err-1", "err-2"]


def test_unopenable_stderr_log_is_an_error_before_the_engine_starts(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    started = tmp_path / "engine-started"
    script = f"open({str(started)!r}, 'w').close(); import sys; sys.stderr.write('E\\n')"

    with pytest.raises((OSError, HyopsError)):
        process.run_streaming(
            py(script),
            on_stdout_line=lambda _line: None,
            stderr_log=not_a_dir / "engine.stderr.log",
        )
    assert not started.exists()


# --- a failing callback never orphans the engine -------------------------------------------


def test_a_raising_callback_stops_and_reaps_the_engine(tmp_path: Path) -> None:
    marker = tmp_path / "child-got-signal"

    def explode(line: str) -> None:
        raise RuntimeError(f"callback failed on {line!r}")

    with pytest.raises(RuntimeError, match="callback failed on 'ready'"):
        process.run_streaming(py(SIGNAL_AWARE, marker), on_stdout_line=explode)

    assert marker.read_text() == str(int(signal.SIGINT))


# --- signals -------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_hyops_is_forwarded_to_the_engine_and_waited_for(
    tmp_path: Path, guard_signals: list[int], sig: signal.Signals
) -> None:
    marker = tmp_path / "child-got-signal"
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        if line == "ready":
            os.kill(os.getpid(), sig)  # as if the user pressed Ctrl-C / CI sent TERM

    result = process.run_streaming(py(SIGNAL_AWARE, marker), on_stdout_line=on_line)

    assert marker.read_text() == str(int(sig)), "the engine never received the signal"
    assert result.returncode == 3, "hyops did not wait for the engine's own exit"
    assert result.interrupted == sig
    assert result.started is True
    assert guard_signals == [], "the signal reached the surrounding process instead of hyops"
    assert lines == ["ready"]


def test_signal_reaches_an_engine_run_from_a_worker_thread(
    tmp_path: Path, guard_signals: list[int]
) -> None:
    """Stack runs: handlers live in the main thread, engines run in workers."""
    marker = tmp_path / "child-got-signal"
    ready = threading.Event()
    results: list[ProcessResult] = []

    def worker() -> None:
        results.append(
            process.run_streaming(py(SIGNAL_AWARE, marker), on_stdout_line=lambda line: ready.set())
        )

    with process.FORWARDER:
        thread = threading.Thread(target=worker)
        thread.start()
        assert ready.wait(60), "child never printed its ready line"
        os.kill(os.getpid(), signal.SIGINT)
        thread.join()

    assert marker.read_text() == str(int(signal.SIGINT))
    assert results[0].returncode == 3
    assert results[0].interrupted == signal.SIGINT
    assert guard_signals == []


def test_a_signal_received_before_spawn_means_the_engine_never_starts(
    tmp_path: Path, guard_signals: list[int]
) -> None:
    started = tmp_path / "engine-started"
    lines: list[str] = []

    with process.FORWARDER:  # the operation's scope, entered before the engine is spawned
        signal.raise_signal(signal.SIGINT)  # synchronous: handled before the next line
        result = process.run_streaming(
            py(f"open({str(started)!r}, 'w').close()"), on_stdout_line=lines.append
        )

    assert result == ProcessResult(
        returncode=128 + signal.SIGINT, interrupted=signal.SIGINT, started=False
    )
    assert not started.exists()
    assert lines == []
    assert guard_signals == []


def test_a_settling_read_still_runs_after_a_signal_and_is_not_sent_it(
    tmp_path: Path, guard_signals: list[int]
) -> None:
    """Settling an interrupted apply needs `show -json`: it must run, and not be killed."""
    started = tmp_path / "engine-started"

    with process.FORWARDER:
        signal.raise_signal(signal.SIGTERM)
        captured = process.run_capture(py(f"open({str(started)!r}, 'w').close(); print('state')"),
                                       settling=True)

    assert started.exists()
    assert captured.returncode == 0, "the earlier signal was forwarded to the read-only command"
    assert captured.stdout == "state\n"
    assert captured.interrupted is None  # no signal reached it
    assert guard_signals == []


def test_after_a_signal_an_ordinary_read_does_not_start(tmp_path: Path, guard_signals: list[int]) -> None:
    """Nothing new starts after the first signal (an `init`, a version probe, a plan's read)."""
    started = tmp_path / "engine-started"

    with process.FORWARDER:
        signal.raise_signal(signal.SIGINT)
        with pytest.raises(Interrupted, match="^interrupted by SIGINT before"):
            process.run_capture(py(f"open({str(started)!r}, 'w').close()"))

    assert not started.exists()
    assert guard_signals == []


def test_a_signal_that_reaches_a_read_is_said_on_its_result(tmp_path: Path, guard_signals: list[int]) -> None:
    marker = tmp_path / "child-got-signal"
    result: list[process.Captured] = []

    ready = tmp_path / "child-got-signal.ready"  # its handlers are in place
    script = SIGNAL_AWARE.replace('print("ready", flush=True)', 'open(marker + ".ready", "w").close()')

    def read() -> None:
        result.append(process.run_capture(py(script, marker)))

    with process.FORWARDER:
        thread = threading.Thread(target=read)
        thread.start()
        _wait_for(ready.exists)
        os.kill(os.getpid(), signal.SIGTERM)
        thread.join()

    assert marker.read_text() == str(int(signal.SIGTERM))
    assert result[0].interrupted == signal.SIGTERM
    assert guard_signals == []


def _wait_for(predicate: Any, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_fresh_top_level_run_forgets_a_signal_from_an_earlier_run(tmp_path: Path) -> None:
    process.FORWARDER.received = signal.SIGINT  # left over from a previous, finished scope
    lines: list[str] = []

    result = process.run_streaming(py("print('hi')"), on_stdout_line=lines.append)

    assert result.started is True
    assert result.interrupted is None
    assert lines == ["hi"]


# --- spawn failure -------------------------------------------------------------------------


def test_a_missing_binary_raises_engine_error_with_exit_code_1(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-tofu"

    with pytest.raises(EngineError) as info:
        process.run_streaming([str(missing), "apply"], on_stdout_line=lambda _line: None)

    assert info.value.exit_code == ExitCode.FAILED == 1
    assert str(missing) in info.value.message
    assert "\n" not in info.value.message


def test_a_non_executable_binary_raises_engine_error(tmp_path: Path) -> None:
    binary = tmp_path / "tofu"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o600)

    with pytest.raises(EngineError, match="cannot run engine"):
        process.run_capture([str(binary), "version", "-json"])


# --- run_capture ---------------------------------------------------------------------------


def test_run_capture_returns_exit_code_stdout_and_stderr(fp) -> None:
    fp.register(
        ["tofu", "-chdir=m", "show", "-json"],
        stdout='{"format_version":"1.0"}',
        stderr="Warning: something",
        returncode=0,
    )

    captured = process.run_capture(["tofu", "-chdir=m", "show", "-json"])

    assert captured.returncode == 0
    assert json.loads(captured.stdout) == {"format_version": "1.0"}
    assert captured.stderr.strip() == "Warning: something"
    assert captured.interrupted is None


def test_run_capture_reports_failure_exit_code(fp) -> None:
    fp.register(["tofu", "output", "-json"], stderr="Error: no state", returncode=1)

    captured = process.run_capture(["tofu", "output", "-json"])

    assert captured.returncode == 1
    assert captured.stdout == ""
    assert "Error: no state" in captured.stderr


# --- environment ---------------------------------------------------------------------------


def test_child_env_adds_automation_settings_and_keeps_the_callers_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HYOPS_TEST_CALLER", "kept")
    monkeypatch.setenv("TF_INPUT", "1")  # a prompt would hang an unattended run

    env = process.child_env({"TF_VAR_password": "s3cret"})

    assert env["TF_IN_AUTOMATION"] == "1"
    assert env["TF_INPUT"] == "0"
    assert env["CHECKPOINT_DISABLE"] == "1"
    assert env["HYOPS_TEST_CALLER"] == "kept"
    assert env["PATH"] == os.environ["PATH"]
    assert env["TF_VAR_password"] == "s3cret"
    assert "TF_VAR_password" not in os.environ, "per-run additions must not leak into our env"


def test_the_engine_process_receives_the_child_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYOPS_TEST_CALLER", "kept")
    script = (
        "import json, os\n"
        "keys = ['TF_IN_AUTOMATION', 'TF_INPUT', 'CHECKPOINT_DISABLE',\n"
        "        'HYOPS_TEST_CALLER', 'TF_VAR_x']\n"
        "print(json.dumps({k: os.environ.get(k) for k in keys}))\n"
    )

    captured = process.run_capture(py(script), env={"TF_VAR_x": "1"})

    assert json.loads(captured.stdout) == {
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
        "CHECKPOINT_DISABLE": "1",
        "HYOPS_TEST_CALLER": "kept",
        "TF_VAR_x": "1",
    }


def test_the_engine_gets_no_stdin_and_its_own_session() -> None:
    script = "import os, sys\nprint(sys.stdin.read() == '', os.getsid(0) == os.getpid())\n"

    captured = process.run_capture(py(script))

    assert captured.stdout.split() == ["True", "True"]
