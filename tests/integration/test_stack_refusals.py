"""Stacks refused before anything runs (docs/contract.md: Stacks, Exit codes): every invalid stack file is exit 2,
a busy member lock or an uncertain member is exit 4, and in each case no record is
written and the sim cloud is never called."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from tests.integration.stacks import StackEnv
from tests.stackfiles import DEMO, NETWORK_VM_CONFIG

pytestmark = pytest.mark.integration

INVALID = {
    "unknown_member": (DEMO.replace("depends_on: [network]", "depends_on: [netwerk]"),
                       "member 'vm': depends_on names unknown member 'netwerk'"),
    "cycle": (DEMO.replace("    path: network\n", "    path: network\n    depends_on: [health]\n"),
              "depends_on forms a cycle"),
    "missing_path": (DEMO.replace("path: health", "path: nowhere"), "member 'health': path 'nowhere'"),
    "undeclared_output": (DEMO.replace("network.network_id", "network.id"),
                          "upstream 'network' declares no output 'id'"),
    "wire_not_in_depends_on": (DEMO.replace("{target_id: vm.vm_id}", "{target_id: network.network_id}"),
                               "'network' must also be in depends_on"),
    "duplicate_name": (DEMO.replace("name: health", "name: vm"), "duplicate name"),
    "shared_directory": (DEMO.replace("path: health", "path: vm").replace(
        "inputs_from: {target_id: vm.vm_id}", "inputs_from: {network_id: vm.vm_id}"),
        "same module directory as 'vm' without a distinct `workspace:`"),
    "invalid_ref": (DEMO.replace("    path: network\n", "    path: network\n    ref: /abs\n"),
                    "invalid module ref '/abs'"),
    "escaping_path": (DEMO.replace("path: network", "path: ../network"), "must not use '..'"),
    "absolute_path": (DEMO.replace("path: network", "path: /tmp"), "not absolute"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_an_invalid_stack_is_exit_2_and_nothing_runs(stack_env: StackEnv, case: str) -> None:
    text, expected = INVALID[case]
    stack_env.write(text)

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr
    assert_nothing_ran(stack_env)


def test_every_stack_command_refuses_an_invalid_stack(stack_env: StackEnv) -> None:
    stack_env.write(INVALID["cycle"][0])

    results = {cmd: stack_env.stack(cmd, "stack/stack.yml") for cmd in ("destroy", "status", "graph")}

    assert {cmd: r.returncode for cmd, r in results.items()} == {"destroy": 2, "status": 2, "graph": 2}
    assert_nothing_ran(stack_env)


def assert_nothing_ran(env: StackEnv) -> None:
    root = env.hyops.runtime_root
    assert not (root / "state").exists() and not (root / "runs").exists()
    assert not (root / "stacks").exists()
    assert env.hyops.sim_calls() == []


def test_a_member_whose_default_ref_clashes_with_a_standalone_record_is_exit_2_naming_the_ref_to_give(
        stack_env: StackEnv) -> None:
    """The network applied alone (ref stack/network), then the stack (its member's default ref
    demo/network): the member was `error` and the stack exit 1 although nothing ran; the fix is
    `ref:` in the stack file."""
    stack_env.write()
    alone = stack_env.hyops("apply", "stack/network")
    assert alone.returncode == 0, alone.stderr
    calls = len(stack_env.hyops.sim_calls())

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 2, result.stdout + result.stderr
    assert "member network" in result.stderr and "ref: stack/network" in result.stderr, result.stderr
    root = stack_env.hyops.runtime_root
    assert sorted(p.name for p in (root / "state" / "modules").iterdir()) == ["stack__network"]
    assert not (root / "stacks").exists()
    assert len(stack_env.hyops.sim_calls()) == calls


def test_a_symlink_out_of_the_stack_directory_is_exit_2(stack_env: StackEnv, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "main.tf").write_text("")
    (stack_env.directory / "escape").symlink_to(outside)
    stack_env.write(DEMO.replace("path: network", "path: escape"))

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 2
    assert "leads outside the stack file's directory through a symlink" in result.stderr
    assert stack_env.hyops.sim_calls() == []


def test_a_missing_stack_file_is_exit_2(stack_env: StackEnv) -> None:
    result = stack_env.stack("apply")  # default ./stack.yml, which the workdir does not have

    assert result.returncode == 2
    assert "cannot read stack file stack.yml" in result.stderr


def test_a_busy_member_lock_refuses_the_stack_before_anything_runs(stack_env: StackEnv) -> None:
    lock_dir = stack_env.hyops.runtime_root / "state" / "modules" / "demo__health"
    lock_dir.mkdir(parents=True)
    with FileLock(str(lock_dir / ".lock")):
        result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 4, result.stderr
    assert "member health" in result.stderr and "nothing was run" in result.stderr
    assert stack_env.hyops.record("demo/network") is None
    assert stack_env.hyops.sim_calls() == []


def test_an_uncertain_member_refuses_the_apply_before_anything_runs(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    assert stack_env.hyops("apply", "stack/network", "--ref", "demo/network").returncode == 1
    assert stack_env.hyops.record("demo/network")["suspect_orphans"]
    calls = len(stack_env.hyops.sim_calls())

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 4, result.stderr
    assert "hyops reconcile" in result.stderr
    assert stack_env.hyops.record("demo/vm") is None
    assert len(stack_env.hyops.sim_calls()) == calls


LEAF_UNCERTAIN = {
    "stale_running": {"status": "running", "active_command": "apply", "run_id": "apply-20260101T000000Z-0badf00d",
                      "owner": {"pid": 999999, "host": "gone", "user": "ci",
                                "run_id": "apply-20260101T000000Z-0badf00d"}},
    "suspect_orphans": {"status": "error", "failed_command": "apply", "run_id": "apply-20260101T000000Z-0badf00d",
                        "last_error": "sim: injected fault lose_response",
                        "suspect_orphans": [{"address": "sim_config.this", "action": "create",
                                             "run_id": "apply-20260101T000000Z-0badf00d",
                                             "at": "2026-01-01T00:00:00Z"}]},
}


@pytest.mark.parametrize("case", sorted(LEAF_UNCERTAIN))
def test_an_uncertain_leaf_member_refuses_the_whole_stack_before_its_upstreams_run(
    stack_env: StackEnv, case: str
) -> None:
    """The uncertain member is the last of three (network -> vm -> config): only the stack's
    preflight, not the per-module guard, can stop network and vm from running first."""
    stack_env.write(NETWORK_VM_CONFIG)
    record = stack_env.hyops.record_path("demo/config")
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"schema_version": 1, "module_ref": "demo/config",
                                  "updated_at": "2026-01-01T00:00:00Z", **LEAF_UNCERTAIN[case]}))
    forged = record.read_bytes()

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 4, result.stdout + result.stderr
    assert "nothing was run" in result.stderr
    assert "member config" in result.stderr
    for name in ("network", "vm"):
        assert stack_env.hyops.record(f"demo/{name}") is None
        assert stack_env.run_dirs(f"demo/{name}") == []
    assert record.read_bytes() == forged
    assert stack_env.run_dirs("demo/config") == []
    assert stack_env.hyops.sim_calls() == []
    assert stack_env.hyops.sim_objects() == []
