"""The lookups file (reconcile/lookup/spec.py): which one, and exit 2 naming the file and the
key for anything not valid, before anything runs; `hyops reconcile --lookups` and
HYOPS_LOOKUPS through the CLI; and a hung lookup killed at its timeout by the one spawn
point (engine/process.py)."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.main import cli
from hybridops_tf.engine import process
from hybridops_tf.reconcile.lookup import spec
from hybridops_tf.reconcile.lookup.spec import DEFAULT_NAME, load, load_chosen


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / DEFAULT_NAME
    path.write_text(text)
    return path


def test_a_valid_file_gives_one_spec_per_type_with_its_defaults(tmp_path: Path) -> None:
    (tmp_path / "lookup.py").write_text("")
    path = write(tmp_path, "lookups:\n"
                           "  sim_vm: {command: [python3, lookup.py], match: [name], complete: true, timeout: 5}\n"
                           "  sim_network: {command: [hyops, sim, lookup]}\n")

    lookups = load(path)

    vm, net = lookups.for_type("sim_vm"), lookups.for_type("sim_network")
    assert vm is not None and net is not None and lookups.for_type("sim_config") is None
    assert (vm.command, vm.match, vm.complete, vm.timeout) == (("python3", "lookup.py"), ("name",), True, 5.0)
    assert (net.match, net.complete, net.timeout) == ((), False, 30.0)
    assert vm.folder == tmp_path.absolute()
    assert net.argv() == [sys.executable, "-m", "hybridops_tf.cli.main", "sim", "lookup"]


def test_source_query_asks_the_engine_with_the_same_match_complete_and_timeout_rules(tmp_path: Path) -> None:
    path = write(tmp_path, "lookups:\n  sim_vm: {source: query, match: [name], complete: true, timeout: 9}\n")

    vm = load(path).for_type("sim_vm")

    assert vm is not None and vm.query and vm.command == ()
    assert (vm.match, vm.complete, vm.timeout) == (("name",), True, 9.0)
    assert "terraform query" in vm.describe() and str(path.absolute()) in vm.describe()


def test_a_relative_command_path_is_the_files_neighbour(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "lookup"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o700)
    path = write(tmp_path, "lookups:\n  sim_vm: {command: [./bin/lookup, --all]}\n")

    vm = load(path).for_type("sim_vm")

    assert vm is not None and vm.argv() == [str(tmp_path.absolute() / "./bin/lookup"), "--all"]


@pytest.mark.parametrize("text,key,why", [
    ("lookups:\n  sim_vm: {command: [python3], wait: 3}\n", "lookups.sim_vm.wait", "unknown key"),
    ("lookup:\n  sim_vm: {command: [python3]}\n", "lookup", "unknown key"),
    ("lookups:\n  sim_vm: {match: [name]}\n", "lookups.sim_vm.command", "missing"),
    ("lookups:\n  sim_vm: {command: python3 lookup.py}\n", "lookups.sim_vm.command", "must be a list"),
    ("lookups:\n  sim_vm: {command: []}\n", "lookups.sim_vm.command", "non-empty list"),
    ("lookups:\n  sim_vm: {command: [no-such-lookup-cmd-x]}\n", "lookups.sim_vm.command", "not found on PATH"),
    ("lookups:\n  sim_vm: {command: [./missing.py]}\n", "lookups.sim_vm.command", "not found"),
    ("lookups:\n  sim_vm: {command: [python3], timeout: 0}\n", "lookups.sim_vm.timeout", "above 0"),
    ("lookups:\n  sim_vm: {command: [python3], timeout: -1}\n", "lookups.sim_vm.timeout", "above 0"),
    ("lookups:\n  sim_vm: {command: [python3], timeout: soon}\n", "lookups.sim_vm.timeout", "number of seconds"),
    ("lookups:\n  sim_vm: {command: [python3], timeout: true}\n", "lookups.sim_vm.timeout", "number of seconds"),
    ("lookups:\n  sim_vm: {command: [python3], timeout: .inf}\n", "lookups.sim_vm.timeout", "number of seconds"),
    ("lookups:\n  sim_vm: {command: [python3], match: name}\n", "lookups.sim_vm.match", "list of attribute"),
    ("lookups:\n  sim_vm: {command: [python3], match: [1]}\n", "lookups.sim_vm.match", "list of attribute"),
    ("lookups:\n  sim_vm: {command: [python3], complete: yes please}\n", "lookups.sim_vm.complete", "true or false"),
    ("lookups:\n  sim_vm: python3\n", "lookups.sim_vm", "expected a mapping"),
    ("lookups:\n  sim_vm: {source: query, command: [python3]}\n", "lookups.sim_vm", "not both"),
    ("lookups:\n  sim_vm: {source: api}\n", "lookups.sim_vm.source", "must be query"),
    ("lookups:\n  sim_vm: {source: query, timeout: 0}\n", "lookups.sim_vm.timeout", "above 0"),
    ("lookups:\n  sim_vm: {source: query, match: name}\n", "lookups.sim_vm.match", "list of attribute"),
    ("lookups:\n  'sim vm': {command: [python3]}\n", "lookups.sim vm", "not a resource type"),
    ("lookups: [sim_vm]\n", "lookups", "expected a mapping"),
    ("- sim_vm\n", "(top)", "expected a mapping"),
])
def test_what_is_not_valid_is_a_usage_error_naming_the_file_and_the_key(
        tmp_path: Path, text: str, key: str, why: str) -> None:
    path = write(tmp_path, text)

    with pytest.raises(UsageError) as info:
        load(path)

    message = info.value.message
    assert message.startswith(f"lookups file {path.absolute()}: {key}: ")
    assert why in message and "nothing was run" in message and "\n" not in message


def test_a_command_file_that_is_not_executable_is_named(tmp_path: Path) -> None:
    (tmp_path / "lookup.sh").write_text("#!/bin/sh\n")
    (tmp_path / "lookup.sh").chmod(stat.S_IRUSR | stat.S_IWUSR)

    with pytest.raises(UsageError, match="is not executable"):
        load(write(tmp_path, "lookups:\n  sim_vm: {command: [./lookup.sh]}\n"))


def test_yaml_that_does_not_parse_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "lookups:\n  sim_vm: {command: [python3\n")

    with pytest.raises(UsageError, match=rf"lookups file {path.absolute()}: not valid YAML at line \d"):
        load(path)


def test_which_file_the_named_one_else_the_project_tops_else_none(tmp_path: Path) -> None:
    top = tmp_path / "project"
    top.mkdir()
    assert not load_chosen(None, top)  # no file: no lookups, today's advice
    write(top, "lookups:\n  sim_vm: {command: [python3]}\n")
    assert load_chosen(None, top).path == top / DEFAULT_NAME
    other = write(tmp_path, "lookups: {}\n")
    assert load_chosen(other, top).path == other
    with pytest.raises(UsageError, match="is not a file"):
        load_chosen(tmp_path / "missing.yml", top)


def test_reconcile_refuses_a_bad_lookups_file_with_exit_2_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = write(tmp_path, "lookups:\n  sim_vm: {command: [python3], timeout: 0}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYOPS_ENGINE", str(tmp_path / "no-engine-is-ever-started"))
    runtime = tmp_path / ".hyops"

    by_option = CliRunner().invoke(cli, ["--runtime-root", str(runtime), "reconcile", "--all",
                                         "--lookups", str(bad)])
    by_env = CliRunner().invoke(cli, ["--runtime-root", str(runtime), "reconcile", "--all"],
                                env={spec.LOOKUPS_ENV: str(bad)})

    for result in (by_option, by_env):
        assert result.exit_code == 2, result.output
        assert f"lookups file {bad.absolute()}: lookups.sim_vm.timeout:" in result.output
    assert not runtime.exists()  # nothing ran: not even the runtime root was made


def test_a_hung_command_is_killed_with_its_group_at_the_timeout(tmp_path: Path) -> None:
    gate, child_pid = tmp_path / "never-opened", tmp_path / "child.pid"
    hang = ("import os, pathlib, subprocess, sys, time\n"
            f"child = subprocess.Popen([sys.executable, '-c', 'import time\\ntime.sleep(120)'],\n"
            "                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            f"pathlib.Path({str(child_pid)!r}).write_text(str(child.pid))\n"
            "print('partial', flush=True)\n"
            f"for _ in range(600):  # a safety net only: the gate is never opened\n"
            f"    if os.path.exists({str(gate)!r}):\n        break\n    time.sleep(0.05)\n")

    try:
        captured = process.run_capture([sys.executable, "-c", hang], timeout=1.0, cwd=tmp_path)
    finally:
        grandchild = int(child_pid.read_text()) if child_pid.exists() else None
    assert grandchild is not None

    try:
        assert captured.timed_out and captured.returncode == -9 and captured.stdout == "partial\n"
    except AssertionError:
        os.kill(grandchild, 9)  # a broken timeout: the test still leaves nothing running
        raise
    for _ in range(100):  # the grandchild was killed with the group (a zombie until init reaps it)
        if _dead(grandchild):
            break
        time.sleep(0.05)
    else:
        os.kill(grandchild, 9)
        pytest.fail(f"the lookup's own child {grandchild} outlived the timeout")


def _dead(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat_line.rpartition(")")[2].split()[0] in ("Z", "X")


def test_a_command_that_answers_in_time_is_not_timed_out_and_runs_where_asked(tmp_path: Path) -> None:
    captured = process.run_capture([sys.executable, "-c", "import os, sys; print(os.getcwd(), sys.stdin.read())"],
                                   stdin_data=b"asked", timeout=60, cwd=tmp_path)

    assert not captured.timed_out and captured.stdout == f"{tmp_path} asked\n"
