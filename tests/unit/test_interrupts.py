"""SIGINT/SIGTERM handling (base/interrupts.py, cli/console.py, cli/interrupted.py) without an
engine: who gets a signal and how often, what exits at once and what is remembered, which
commands hold the handling to their end, and the stack runner's loop when a signal comes
between two members (docs/running.md: Signals).

The whole-process behaviour (installed first, exit 130/143, one line, no traceback) is
checked in child interpreters, so this test process keeps its own handlers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.interrupts import Interrupts, exit_code
from hybridops_tf.cli.interrupted import SIGNALLED
from hybridops_tf.cli.main import cli
from hybridops_tf.engine import process
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack import runner
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport
from tests.unit.clitree import walk

# --- who gets a signal ------------------------------------------------------------------------


def test_every_running_engine_gets_each_signal_once() -> None:
    state, got = Interrupts(), []
    state.register(got.append)

    state._handle(signal.SIGINT, None)
    state._handle(signal.SIGINT, None)

    assert got == [signal.SIGINT, signal.SIGINT]  # a second Ctrl-C still reaches it, as from a terminal
    assert state.received == signal.SIGINT and state.count == 2


def test_a_settling_read_is_not_sent_the_first_signal_but_is_sent_the_second() -> None:
    state, got = Interrupts(), []
    key = state.register(got.append, settling=True)

    state._handle(signal.SIGTERM, None)
    assert got == [] and state.forwarded(key) is None
    state._handle(signal.SIGINT, None)

    assert got == [signal.SIGINT]
    assert state.forwarded(key) == signal.SIGINT


def test_an_engine_spawned_as_the_signal_came_is_caught_up_exactly_once() -> None:
    state, got = Interrupts(), []
    state._handle(signal.SIGTERM, None)  # before it was registered

    key = state.register(got.append, catch_up=True)
    state.register(lambda _s: None, catch_up=True)
    state._children[key].deliver(1, signal.SIGTERM)  # the handler racing the catch-up: no second send

    assert got == [signal.SIGTERM]
    assert state.forwarded(key) == signal.SIGTERM


def test_an_engine_registered_after_the_signal_is_told_to_stop_by_the_catch_up_alone() -> None:
    state, got = Interrupts(), []
    state._handle(signal.SIGTERM, None)  # it came while the engine was spawning: no handler passed it on

    key = state.register(got.append, catch_up=True)

    assert got == [signal.SIGTERM] and state.forwarded(key) == signal.SIGTERM


def forget_the_signal_afterwards(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope leaves its signal remembered (as the process would until its exit): put the
    forwarder back as it was, so no later test in this process starts after a signal."""
    for name in ("received", "count", "last"):
        monkeypatch.setattr(process.FORWARDER, name, getattr(process.FORWARDER, name))


@pytest.mark.parametrize("how", ["run_streaming", "run_capture"])
def test_an_engine_spawned_just_as_the_signal_came_is_still_told_to_stop(
    monkeypatch: pytest.MonkeyPatch, how: str,
) -> None:
    """The signal lands after the check that nothing new starts and before the engine is
    registered: only the catch-up reaches it (missed, the command would run its 20 s)."""
    spawn = process._spawn

    def spawn_as_the_signal_comes(*args: Any, **kwargs: Any) -> Any:
        proc = spawn(*args, **kwargs)
        signal.raise_signal(signal.SIGTERM)
        return proc

    monkeypatch.setattr(process, "_spawn", spawn_as_the_signal_comes)
    forget_the_signal_afterwards(monkeypatch)
    argv = [sys.executable, "-c", "import time; time.sleep(20)"]
    with process.FORWARDER:
        ran = (process.run_streaming(argv, on_stdout_line=lambda _line: None) if how == "run_streaming"
               else process.run_capture(argv, timeout=60))

    assert ran.interrupted == signal.SIGTERM and ran.returncode == -signal.SIGTERM


def test_an_engine_run_asked_for_after_the_signal_is_never_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    forget_the_signal_afterwards(monkeypatch)
    started = tmp_path / "started"
    with process.FORWARDER:
        signal.raise_signal(signal.SIGTERM)
        result = process.run_streaming([sys.executable, "-c", f"open({str(started)!r}, 'w').close()"],
                                       on_stdout_line=lambda _line: None)

    assert result.started is False and result.interrupted == signal.SIGTERM
    assert not started.exists()


def test_a_member_handed_out_as_the_signal_came_never_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hybridops_tf.stack.member import MemberSteps, StackRequest

    stack = Stack("demo", tmp_path / "stack.yml", (Member("network", tmp_path / "network", "demo/network"),))
    steps = MemberSteps(StackRequest(stack=stack, command="apply", runtime=Runtime(tmp_path / "rt")), "stack-apply-1")
    monkeypatch.setattr(MemberSteps, "_apply", lambda *_a: pytest.fail("the member started after the signal"))
    monkeypatch.setattr(process.FORWARDER, "received", signal.SIGINT)

    result = steps.step("network")

    assert result.status is MemberStatus.PENDING and result.retryable and not result.changed


def test_an_unregistered_engine_gets_nothing() -> None:
    state, got = Interrupts(), []
    key = state.register(got.append)
    state.unregister(key)

    state._handle(signal.SIGINT, None)

    assert got == []


def test_nothing_new_starts_after_a_signal() -> None:
    state = Interrupts()
    state.check("before the lock was taken")  # no signal: nothing to say

    state._handle(signal.SIGINT, None)

    with pytest.raises(Exception) as info:
        state.check("before the lock was taken")
    assert type(info.value).__name__ == "Interrupted"
    assert str(info.value) == "interrupted by SIGINT before the lock was taken"
    assert info.value.exit_code == 130  # type: ignore[attr-defined]


def test_a_settling_read_still_runs_after_a_signal_and_an_ordinary_one_does_not(tmp_path: Path) -> None:
    from hybridops_tf.base.errors import Interrupted

    started = tmp_path / "started"
    argv = [sys.executable, "-c", f"open({str(started)!r}, 'w').close()"]
    with process.FORWARDER:
        signal.raise_signal(signal.SIGINT)
        with pytest.raises(Interrupted, match="^interrupted by SIGINT before `.*` started$"):
            process.run_capture(argv)
        assert not started.exists()
        captured = process.run_capture(argv, settling=True)

    assert captured.returncode == 0 and started.exists()
    assert captured.interrupted is None  # it was not sent the signal


# An engine that, asked for `init` or `version`, says it is ready, waits for a signal and exits
# 1 on it, as Terraform does when an interrupt cuts a command short.
STOPPABLE_ENGINE = """#!{python}
import os, signal, sys, time
def stop(signum, frame):
    sys.exit(1)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
open(os.environ["READY_FILE"], "w").close()
time.sleep(60)
"""


@pytest.fixture
def stoppable_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    binary = tmp_path / "tofu"
    binary.write_text(STOPPABLE_ENGINE.format(python=sys.executable))
    binary.chmod(0o755)
    monkeypatch.setenv("READY_FILE", str(tmp_path / "ready"))
    return binary


def _signal_when_ready(ready: Path, sig: int) -> None:
    import threading
    import time

    def send() -> None:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), sig)  # to the process: its main thread runs the handler

    threading.Thread(target=send, daemon=True).start()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_init_cut_short_by_the_signal_is_interrupted_not_failed(
    stoppable_engine: Path, tmp_path: Path, sig: int
) -> None:
    from hybridops_tf.base.errors import Interrupted
    from hybridops_tf.engine.binary import EngineInfo
    from hybridops_tf.engine.runner import Engine

    engine = Engine(EngineInfo(stoppable_engine, "1.0.3", "terraform"), tmp_path)
    with process.FORWARDER:
        _signal_when_ready(tmp_path / "ready", sig)
        with pytest.raises(Interrupted) as info:
            engine.init(None)

    assert info.value.message.startswith(f"interrupted by {signal.Signals(sig).name}: `init`")
    assert "failed" not in info.value.message


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_version_probe_cut_short_by_the_signal_is_interrupted_not_failed(
    stoppable_engine: Path, tmp_path: Path, sig: int
) -> None:
    from hybridops_tf.base.errors import Interrupted
    from hybridops_tf.engine import binary

    with process.FORWARDER:
        _signal_when_ready(tmp_path / "ready", sig)
        with pytest.raises(Interrupted) as info:
            binary.engine_info(stoppable_engine, None)

    assert info.value.message.startswith(f"interrupted by {signal.Signals(sig).name}: the engine's version probe")
    assert "failed" not in info.value.message


def test_exit_codes_are_128_plus_the_signal() -> None:
    assert exit_code(signal.SIGINT) == 130
    assert exit_code(signal.SIGTERM) == 143


# --- the whole process: installed first, then one rule -------------------------------------------

# A child interpreter that installs the handling as the console script does, then signals
# itself at a chosen moment. argv: what to do (at_once | held | at_rest), the signal.
CHILD = """
import os, signal, sys, time
from hybridops_tf.base.interrupts import INTERRUPTS
INTERRUPTS.install()
mode, sig = sys.argv[1], getattr(signal, sys.argv[2])
if mode == "held":
    INTERRUPTS.hold()
if mode == "at_rest":
    INTERRUPTS.hold()
    with INTERRUPTS.at_rest("hyops: at the question: {signal}"):
        os.kill(os.getpid(), sig)
        time.sleep(30)
os.kill(os.getpid(), sig)
print("went on", INTERRUPTS.received, flush=True)
sys.exit(7)
"""


def _child(mode: str, sig: str, *, ignore_sigint: bool = False, block: bool = False,
           script: str = CHILD) -> subprocess.CompletedProcess[str]:
    def prepare() -> None:
        if ignore_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if block:  # the signal comes while hyops is still starting: it waits, pending, for the install
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

    return subprocess.run([sys.executable, "-c", script, mode, sig], capture_output=True, text=True,
                          timeout=60, preexec_fn=prepare)


@pytest.mark.parametrize("ignored", [False, True], ids=["SIGINT-default", "SIGINT-ignored"])
@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_before_any_command_began_a_signal_exits_at_once_with_one_line(sig: str, code: int, ignored: bool) -> None:
    result = _child("at_once", sig, ignore_sigint=ignored)

    assert result.returncode == code, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"hyops: interrupted by {sig} before anything was changed; next: run the command again when wanted"]


@pytest.mark.parametrize("ignored", [False, True], ids=["SIGINT-default", "SIGINT-ignored"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_once_a_command_holds_the_handling_a_signal_is_remembered_not_acted_on(sig: str, ignored: bool) -> None:
    result = _child("held", sig, ignore_sigint=ignored)

    assert result.returncode == 7, result.stderr
    assert result.stdout.split() == ["went", "on", str(int(getattr(signal, sig)))]
    assert "Traceback" not in result.stderr


def test_a_signal_at_the_question_exits_at_once_with_the_question_s_line() -> None:
    result = _child("at_rest", "SIGINT")

    assert result.returncode == 130
    assert result.stderr.splitlines() == ["hyops: at the question: SIGINT"]


INSTALL_SPY = """
import sys
from hybridops_tf.base import interrupts
from hybridops_tf.cli import console
seen = []
def spy():
    seen.append(sorted(m for m in sys.modules if m.startswith(("hybridops_tf", "click", "filelock", "subprocess"))))
    print(seen[0], flush=True)
    raise SystemExit(0)
interrupts.INTERRUPTS.install = spy
console.entry()
"""


def test_the_console_script_installs_the_handling_before_it_loads_anything_else() -> None:
    result = subprocess.run([sys.executable, "-c", INSTALL_SPY], capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(["hybridops_tf", "hybridops_tf.base", "hybridops_tf.base.errors",
                                         "hybridops_tf.base.interrupts", "hybridops_tf.cli",
                                         "hybridops_tf.cli.console"])


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_that_came_while_blocked_during_start_up_is_handled_at_the_install(sig: str) -> None:
    script = ("import os, signal, sys\n"
              "os.kill(os.getpid(), getattr(signal, sys.argv[2]))  # blocked: pending until the install\n"
              + CHILD)
    result = _child("at_once", sig, block=True, script=script)

    assert result.returncode == exit_code(getattr(signal, sig)), result.stderr
    assert result.stdout == ""  # it never went on


# --- which commands hold the handling to their end ------------------------------------------------

CHANGING = {("apply",), ("destroy",), ("init",), ("plan",), ("reconcile",), ("stack", "apply"),
            ("stack", "destroy"), ("stack", "work"), ("stack", "cancel"), ("store", "init"), ("store", "import-local")}


def test_every_command_that_can_change_anything_holds_the_signal_handling_and_no_other() -> None:
    leaves = {path: cmd for path, cmd in walk(cli) if path and cmd.callback is not None
              and not hasattr(cmd, "commands")}

    marked = {path for path, cmd in leaves.items() if getattr(cmd.callback, SIGNALLED, False)}

    assert marked == CHANGING


# --- the stack runner between two members ---------------------------------------------------------


class _Finished:
    """A listener whose member_finished is where the signal lands: right after the first
    member ended and before the scheduler hands out the next (the main thread's loop)."""

    def member_started(self, name: str, action: str) -> None:
        pass

    def member_finished(self, name: str, result: Any) -> None:
        process.FORWARDER.received = signal.SIGINT
        process.FORWARDER.count = 1

    def event_sink(self, name: str) -> None:
        return None

    def stderr_sink(self, name: str) -> None:
        return None


def test_a_signal_between_two_members_ends_the_run_with_the_rest_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = Stack("demo", tmp_path / "stack.yml", (
        Member(name="network", directory=tmp_path / "network", module_ref="demo/network"),
        Member(name="vm", directory=tmp_path / "vm", module_ref="demo/vm", depends_on=("network",)),
    ))
    started: list[str] = []

    def step(self: Any, name: str) -> runner.MemberResult:
        started.append(name)
        return runner.MemberResult(MemberStatus.OK, run_id=f"apply-{name}", outputs={})

    monkeypatch.setattr(runner._Execution, "step", step)
    rt = Runtime(tmp_path / "rt")
    req = runner.StackRequest(stack=stack, command="apply", runtime=rt, listener=_Finished())
    live = LiveReport(rt, StackReport("demo", str(stack.file), "stack-apply-1", "apply", "2026-01-01T00:00:00Z", None,
                                      [MemberEntry(m.name, m.module_ref, "pending") for m in stack.members]))
    execution = runner._Execution(req, "stack-apply-1", live)

    resolutions = execution.run()

    assert started == ["network"]
    assert {n: r.status for n, r in resolutions.items()} == {"network": MemberStatus.OK, "vm": MemberStatus.PENDING}
    assert execution.interrupted
    assert runner.exit_code_of(execution.interrupted, execution.results) == 130


@pytest.fixture(autouse=True)
def _no_signal_left() -> Any:
    """The process-wide state as a fresh process has it, before and after each test."""
    process.FORWARDER.received, process.FORWARDER.count = None, 0
    yield
    process.FORWARDER.received, process.FORWARDER.count = None, 0
