"""`hyops stack apply --continue-on-error` (docs/contract.md: Stacks) on the real engine and the sim cloud:
a failed member's downstream stays `pending`, blocked by it, and never runs, while an
independent branch still runs to `ok`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, members, statuses

pytestmark = pytest.mark.integration

# Two branches, a network then a vm on it; branch a is first in every order, so with
# --parallelism 1 its failure comes before branch b has started.
TWO_BRANCHES = """\
    stack: demo
    modules:
      - {name: net_a, path: network, inputs: {name: net-a}}
      - name: vm_a
        path: vm
        depends_on: [net_a]
        inputs: {name: vm-a}
        inputs_from: {network_id: net_a.network_id}
      - {name: net_b, path: network_b, inputs: {name: net-b}}
      - name: vm_b
        path: vm_b
        depends_on: [net_b]
        inputs: {name: vm-b}
        inputs_from: {network_id: net_b.network_id}
"""


def test_continue_on_error_blocks_the_failed_members_downstream_and_completes_the_other_branch(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    stack_env.module("network_b", source="network")
    stack_env.module("vm_b", source="vm")
    stack_env.write(TWO_BRANCHES)
    faults_file([{"type": "sim_network", "name": "net-a", "op": "create", "mode": "fail_before_create"}])

    result = stack_env.stack("apply", "stack/stack.yml", "--parallelism", "1", "--continue-on-error")

    assert result.returncode == 1, result.stdout + result.stderr
    status = stack_env.stack("status", "stack/stack.yml", "--json")
    assert status.returncode == 3, status.stderr  # net_a's create started and left no state: a suspect orphan
    report = json.loads(status.stdout)
    assert report.pop("state") == "finished"
    assert "suspect orphan" in members(report)["net_a"].pop("uncertain")[0]
    assert report == stack_env.report()
    assert statuses(report) == {"net_a": "error", "vm_a": "pending", "net_b": "ok", "vm_b": "ok"}
    entries = members(report)
    assert entries["vm_a"] == {"name": "vm_a", "module_ref": "demo/vm_a", "status": "pending", "blocked_by": "net_a"}
    assert "fail_before_create" in entries["net_a"]["error"]
    assert stack_env.hyops.record("demo/vm_a") is None
    assert stack_env.run_dirs("demo/vm_a") == []
    assert stack_env.hyops.record("demo/net_a")["status"] == "error"
    for name in ("net_b", "vm_b"):
        rec = stack_env.hyops.record(f"demo/{name}")
        assert rec["status"] == "ok" and entries[name]["run_id"] == rec["run_id"]
    assert stack_env.hyops.record("demo/vm_b")["outputs"]["vm_id"].startswith("vm-")
    live = sorted((o["type"], o["name"]) for o in stack_env.hyops.sim_objects())
    assert live == [("sim_network", "net-b"), ("sim_vm", "vm-b")]
    assert [c["name"] for c in stack_env.sim_creates("sim_vm")] == ["vm-b"]
