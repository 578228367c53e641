"""`hyops stack destroy` on the real engine and the sim cloud (docs/contract.md: Statuses, Stacks): reverse order,
verified ownership both ways, destroy eligibility, and retain_on_destroy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, members, statuses

pytestmark = pytest.mark.integration


def test_a_failed_owner_destroy_leaves_the_owned_member_unresolved(
    applied: StackEnv, faults_file: Callable[..., Path]
) -> None:
    config_record = applied.hyops.record("demo/config")
    faults_file([{"type": "sim_vm", "op": "delete", "mode": "fail_delete"}])

    result = applied.stack("destroy", "stack/stack.yml")

    assert result.returncode == 1, result.stderr
    report = applied.report()
    assert statuses(report) == {"network": "pending", "vm": "error", "config": "pending",
                                "health": "destroyed"}
    assert members(report)["config"]["blocked_by"] == "vm"
    assert members(report)["network"]["blocked_by"] == "vm"
    assert applied.hyops.record("demo/config") == config_record
    assert len(applied.run_dirs("demo/config")) == 1  # only its apply: nothing ran for it
    live = {o["type"] for o in applied.hyops.sim_objects()}
    assert live == {"sim_network", "sim_vm", "sim_config"}


@pytest.mark.both_stores  # the owner's record and the run report read back from the store
def test_the_owned_member_is_destroyed_only_after_its_owner_is_verified(applied: StackEnv) -> None:
    result = applied.stack("destroy", "stack/stack.yml")

    assert result.returncode == 0, result.stderr
    report = members(applied.report())
    assert {n: m["status"] for n, m in report.items()} == dict.fromkeys(
        ("network", "vm", "config", "health"), "destroyed")
    config_run = applied.run_dir("demo/config", report["config"]["run_id"])
    assert json.loads((config_run / "meta.json").read_text())["command"] == "refresh"
    vm_deleted = next(c["time"] for c in applied.hyops.sim_calls()
                      if c["op"] == "delete" and c["type"] == "sim_vm")
    first_config_event = applied.events("demo/config", report["config"]["run_id"])[0]["@timestamp"]
    assert vm_deleted < first_config_event  # the refresh came after the owner's verified destroy
    assert not [c for c in applied.hyops.sim_calls() if c["op"] == "delete" and c["type"] == "sim_config"]
    assert applied.hyops.record("demo/config")["status"] == "destroyed"
    assert applied.hyops.sim_objects() == []


def test_destroy_skips_destroyed_and_absent_members(stack_env: StackEnv) -> None:
    assert stack_env.hyops("apply", "stack/network", "--ref", "demo/network").returncode == 0
    assert stack_env.hyops("destroy", "stack/network", "--ref", "demo/network").returncode == 0
    destroyed_run = stack_env.hyops.record("demo/network")["run_id"]
    stack_env.write("""\
        stack: demo
        modules:
          - {name: network, path: network}
          - {name: watch, path: health, inputs: {target_id: net-never}}
    """)
    calls_before = len(stack_env.hyops.sim_calls())

    result = stack_env.stack("destroy", "stack/stack.yml")

    assert result.returncode == 0, result.stderr
    report = members(stack_env.report())
    assert report["network"] == {"name": "network", "module_ref": "demo/network",
                                 "status": "destroyed", "run_id": destroyed_run}
    assert report["watch"]["status"] == "absent"  # never applied: its empty state is the evidence
    assert stack_env.hyops.record("demo/watch") is None  # no record is invented
    assert len(stack_env.hyops.sim_calls()) == calls_before


def test_retain_on_destroy_keeps_the_member_until_include_retained(stack_env: StackEnv) -> None:
    stack_env.write("""\
        stack: demo
        modules:
          - {name: network, path: network, retain_on_destroy: true}
          - name: vm
            path: vm
            depends_on: [network]
            inputs_from: {network_id: network.network_id}
    """)
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 0

    kept = stack_env.stack("destroy", "stack/stack.yml")
    kept_report = statuses(stack_env.report())
    kept_record = stack_env.hyops.record("demo/network")
    live_after_kept = [o["type"] for o in stack_env.hyops.sim_objects()]
    gone = stack_env.stack("destroy", "stack/stack.yml", "--include-retained")

    assert kept.returncode == 0, kept.stderr
    assert kept_report == {"network": "retained", "vm": "destroyed"}
    assert kept_record["status"] == "retained"
    assert kept_record["outputs"]["network_id"].startswith("net-")
    assert live_after_kept == ["sim_network"]
    assert gone.returncode == 0, gone.stderr
    assert statuses(stack_env.report()) == {"network": "destroyed", "vm": "destroyed"}
    assert stack_env.hyops.sim_objects() == []
