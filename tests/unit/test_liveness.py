"""liveness.py: is the engine a dead hyops started still running? And `hyops status` saying so.

Real processes (a sleeping child) stand in for the engine: what is checked is /proc.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.runtime import liveness
from hybridops_tf.runtime.liveness import LiveEngine, live_engine
from hybridops_tf.runtime.run_folder import run_path

REF = "m"
RUN = "apply-20260101T000000Z-0badf00d"
SLEEPER = "import time\nwhile True: time.sleep(1)\n"


@pytest.fixture
def engine() -> Iterator[subprocess.Popen[bytes]]:
    """A live process leading its own group, as the engine does."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEPER], start_new_session=True)
    yield proc
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _note(root: Path, pid: int, run_id: str = RUN) -> Path:
    folder = run_path(root, REF, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    liveness.write_note(folder, pid, run_id)
    return folder / liveness.NOTE_NAME


def test_a_noted_engine_that_runs_is_live(tmp_path: Path, engine: subprocess.Popen[bytes]) -> None:
    note = _note(tmp_path, engine.pid)

    found = live_engine(tmp_path, REF, RUN)

    assert isinstance(found, LiveEngine)
    assert (found.pid, found.host, found.run_id) == (engine.pid, os.uname().nodename, RUN)
    assert found.since.endswith("Z")
    doc = json.loads(note.read_text())
    assert doc["start_time"] == liveness.start_time(engine.pid)
    assert oct(note.stat().st_mode & 0o777) == oct(0o600)


def test_an_engine_that_exited_is_not_live(tmp_path: Path, engine: subprocess.Popen[bytes]) -> None:
    _note(tmp_path, engine.pid)
    _kill_group(engine)

    assert live_engine(tmp_path, REF, RUN) is None


def test_a_reused_pid_is_not_the_engine(tmp_path: Path, engine: subprocess.Popen[bytes]) -> None:
    """Same pid, another start time: a different process took the number."""
    note = _note(tmp_path, engine.pid)
    doc = json.loads(note.read_text())
    note.write_text(json.dumps({**doc, "start_time": doc["start_time"] - 1}))

    assert live_engine(tmp_path, REF, RUN) is None


def test_a_provider_that_outlived_its_engine_keeps_the_run_live(tmp_path: Path) -> None:
    """The engine (group leader) is gone but a plugin of its group still runs: still live."""
    script = (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}])\n"
        "print(child.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, stdout=subprocess.PIPE)
    try:
        assert leader.stdout is not None
        plugin = int(leader.stdout.readline())
        _note(tmp_path, leader.pid)
        note = run_path(tmp_path, REF, RUN) / liveness.NOTE_NAME
        doc = json.loads(note.read_text())
        leader.wait()  # the leader exited (and is reaped); its group lives on in the plugin
        note.write_text(json.dumps(doc))

        found = live_engine(tmp_path, REF, RUN)

        assert found is not None and found.pid == leader.pid
        os.kill(plugin, signal.SIGKILL)
        import time

        deadline = time.monotonic() + 10
        while liveness.start_time(plugin) is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert live_engine(tmp_path, REF, RUN) is None
    finally:
        try:
            os.killpg(leader.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("change", [{"host": "elsewhere"}, {"boot_id": "another-boot"}],
                         ids=["another_host", "another_boot"])
def test_a_note_from_another_host_or_boot_is_not_live(
    tmp_path: Path, engine: subprocess.Popen[bytes], change: dict[str, str]
) -> None:
    note = _note(tmp_path, engine.pid)
    note.write_text(json.dumps({**json.loads(note.read_text()), **change}))

    assert live_engine(tmp_path, REF, RUN) is None


@pytest.mark.parametrize("content", [None, "", "{", "[]", '{"pid": "x"}', '{"pid": 1, "host": "h"}'])
def test_no_note_or_an_unreadable_one_is_not_live(tmp_path: Path, content: str | None) -> None:
    folder = run_path(tmp_path, REF, RUN)
    folder.mkdir(parents=True)
    if content is not None:
        (folder / liveness.NOTE_NAME).write_text(content)

    assert live_engine(tmp_path, REF, RUN) is None


# --- hyops status ------------------------------------------------------------------------------


def _running_record(root: Path) -> None:
    folder = root / "state" / "modules" / REF
    folder.mkdir(parents=True)
    (folder / "latest.json").write_text(json.dumps({
        "schema_version": 1, "module_ref": REF, "status": "running", "run_id": RUN,
        "updated_at": "2026-01-01T00:00:00Z", "active_command": "apply",
    }))


def _status(root: Path, *args: str) -> tuple[int, str]:
    module = root.parent / "mod"
    module.mkdir(exist_ok=True)
    (module / "main.tf").write_text("")
    result = CliRunner().invoke(cli, ["--runtime-root", str(root), "status", str(module), "--ref", REF, *args])
    return result.exit_code, result.stdout


def test_status_says_the_engine_of_a_dead_hyops_still_runs_instead_of_stale(
    tmp_path: Path, engine: subprocess.Popen[bytes]
) -> None:
    root = tmp_path / "runtime"
    _running_record(root)
    stored = (root / "state" / "modules" / REF / "latest.json").read_text()
    _note(root, engine.pid)

    code, out = _status(root, "--json")
    assert code == 3
    doc = json.loads(out)
    assert doc["engine_alive"] == {"pid": engine.pid, "host": os.uname().nodename, "run_id": RUN}
    assert (root / "state" / "modules" / REF / "latest.json").read_text() == stored  # output only
    code, out = _status(root)
    assert code == 3
    assert f"engine still running (pid {engine.pid}, run {RUN})" in out
    assert "stale" not in out

    _kill_group(engine)

    code, out = _status(root, "--json")
    assert code == 3 and "engine_alive" not in json.loads(out)
    assert "running (stale)" in _status(root)[1]
