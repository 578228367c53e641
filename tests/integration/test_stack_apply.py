"""`hyops stack apply` on the real engine and the sim cloud (docs/contract.md: Stacks): pending is never
failed, resume skips what is ok, outputs flow only from ok upstreams, members really run
in parallel, and the run report is the honest picture."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.gates import Gate
from tests.integration.helpers import VM_PAIR_TF
from tests.integration.stacks import StackEnv, members, statuses
from tests.stackfiles import NETWORK_VM

pytestmark = pytest.mark.integration

VM_FAILS = [{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}]


def test_a_failure_leaves_every_descendant_pending_without_a_record(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file(VM_FAILS)

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 1, result.stderr
    report = stack_env.report()
    assert statuses(report) == {"network": "ok", "vm": "error", "config": "pending", "health": "pending"}
    pending = members(report)
    for name in ("config", "health"):
        assert pending[name]["blocked_by"] == "vm"
        assert "error" not in pending[name] and "run_id" not in pending[name]  # never failed, never ran
        assert stack_env.hyops.record(f"demo/{name}") is None
        assert stack_env.run_dirs(f"demo/{name}") == []
    assert stack_env.sim_creates("sim_config") == [] and stack_env.sim_creates("sim_health_check") == []
    assert "fail_after_create" in members(report)["vm"]["error"]
    assert "blocked by vm (error)" in result.stdout


@pytest.mark.both_stores  # the run report is a document in the store
def test_the_run_report_and_stack_status_are_the_same_document(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file(VM_FAILS)
    stack_env.stack("apply", "stack/stack.yml")

    report = stack_env.report()
    status = stack_env.stack("status", "stack/stack.yml", "--json")

    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == {**report, "state": "finished"}
    assert report["schema_version"] == 1
    assert report["stack"] == "demo" and report["command"] == "apply"
    assert report["run_id"].startswith("stack-apply-")
    assert report["started_at"] <= report["finished_at"]
    for name in ("network", "vm"):
        entry = members(report)[name]
        assert entry["module_ref"] == f"demo/{name}"
        assert entry["run_id"] == stack_env.hyops.record(f"demo/{name}")["run_id"]
        assert (stack_env.run_dir(f"demo/{name}", entry["run_id"]) / "result.json").is_file()
    table = stack_env.stack("status", "stack/stack.yml")
    assert "pending" in table.stdout and "blocked by vm (error)" in table.stdout


def test_status_before_any_run_shows_records_or_none(stack_env: StackEnv) -> None:
    standalone = stack_env.hyops("apply", "stack/network", "--ref", "demo/network")
    assert standalone.returncode == 0, standalone.stderr

    status = stack_env.stack("status", "stack/stack.yml", "--json")

    doc = json.loads(status.stdout)
    assert doc["run_id"] is None
    assert statuses(doc) == {"network": "ok", "vm": "none", "config": "none", "health": "none"}


@pytest.mark.both_stores  # --resume reads the records back from the store
def test_resume_skips_ok_members_and_keeps_their_run_id(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    faults_file(VM_FAILS)
    stack_env.stack("apply", "stack/stack.yml")
    network_run = stack_env.hyops.record("demo/network")["run_id"]
    faults_file([])  # the fault is fixed

    result = stack_env.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stderr
    report = stack_env.report()
    assert statuses(report) == {"network": "skipped", "vm": "ok", "config": "ok", "health": "ok"}
    assert members(report)["network"]["run_id"] == network_run
    assert stack_env.hyops.record("demo/network")["run_id"] == network_run
    assert len(stack_env.run_dirs("demo/network")) == 1
    assert len(stack_env.sim_creates("sim_network")) == 1


def test_resume_reruns_a_member_whose_inputs_changed(applied: StackEnv) -> None:
    vm_run = applied.hyops.record("demo/vm")["run_id"]
    network_run = applied.hyops.record("demo/network")["run_id"]
    applied.write(applied.directory.joinpath("stack.yml").read_text().replace("size: small", "size: large"))

    result = applied.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stderr
    report = applied.report()
    network = dict(members(report)["network"])
    assert "not compared: its live objects" in network.pop("compared")  # what the skip did not vouch for
    assert network == {"name": "network", "module_ref": "demo/network", "status": "skipped", "run_id": network_run}
    assert members(report)["vm"]["status"] == "ok"
    assert applied.hyops.record("demo/vm")["run_id"] not in (vm_run, None)
    assert [o["attributes"]["size"] for o in applied.hyops.sim_objects() if o["type"] == "sim_vm"] == ["large"]


def test_outputs_from_an_error_upstream_never_reach_a_downstream(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    stack_env.module("pair", text=VM_PAIR_TF)  # its vm always exists, so a vm fault fails it
    stack_env.write("""\
        stack: demo
        modules:
          - {name: pair, path: pair}
          - name: watch
            path: health
            depends_on: [pair]
            inputs_from: {target_id: pair.network_id}
    """)
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_before_create"}])

    result = stack_env.stack("apply", "stack/stack.yml", "--continue-on-error")

    assert result.returncode == 1, result.stderr
    pair = stack_env.hyops.record("demo/pair")
    assert pair["status"] == "error"
    assert pair["outputs"]["network_id"].startswith("net-")  # known, yet it must not flow
    assert statuses(stack_env.report()) == {"pair": "error", "watch": "pending"}
    assert stack_env.hyops.record("demo/watch") is None
    assert stack_env.sim_creates("sim_health_check") == []


def test_continue_on_error_lets_an_independent_branch_complete(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    stack_env.write(NETWORK_VM + """\
  - name: watch
    path: health
    depends_on: [network]
    inputs_from: {target_id: network.network_id}
""")
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}])  # every time

    stopped = stack_env.stack("apply", "stack/stack.yml", "--parallelism", "1")
    stopped_report = stack_env.report()
    going_on = stack_env.stack("apply", "stack/stack.yml", "--parallelism", "1", "--continue-on-error")

    assert stopped.returncode == 1 and going_on.returncode == 1
    assert members(stopped_report)["watch"] == {"name": "watch", "module_ref": "demo/watch",
                                                "status": "pending", "blocked_by": "vm"}
    assert statuses(stack_env.report()) == {"network": "ok", "vm": "error", "watch": "ok"}
    assert len(stack_env.sim_creates("sim_health_check")) == 1


def _create_window(env: StackEnv, ref: str, run_id: str) -> tuple[str, str]:
    """(apply_start, apply_complete) timestamps of the member's one create, from events.jsonl."""
    events = env.events(ref, run_id)
    start = next(e["@timestamp"] for e in events if e.get("type") == "apply_start")
    end = next(e["@timestamp"] for e in events if e.get("type") == "apply_complete")
    return start, end


@pytest.mark.both_stores  # two members' locks held at once
def test_independent_members_run_at_the_same_time(
    stack_env: StackEnv, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    stack_env.module("network_b", source="network")
    stack_env.write("""\
        stack: demo
        modules:
          - {name: net-a, path: network, inputs: {name: net-a}}
          - {name: net-b, path: network_b, inputs: {name: net-b}}
    """)
    # each create stays open until both are: run one after the other, the second never starts
    gates = {name: Gate.at(tmp_path, name) for name in ("net-a", "net-b")}
    faults_file([gate.rule(type="sim_network", op="create", name=name) for name, gate in gates.items()])

    proc = stack_env.hyops.start("stack", "apply", "stack/stack.yml", "--parallelism", "2")
    try:
        for gate in gates.values():
            gate.wait_started(proc)
    finally:
        for gate in gates.values():
            gate.release()
    _, stderr = proc.communicate(timeout=300)

    assert proc.returncode == 0, stderr
    runs = members(stack_env.report())
    a_start, a_end = _create_window(stack_env, "demo/net-a", runs["net-a"]["run_id"])
    b_start, b_end = _create_window(stack_env, "demo/net-b", runs["net-b"]["run_id"])
    assert a_start < b_end and b_start < a_end, "the two creates did not overlap"


def test_a_sensitive_output_wired_downstream_never_reaches_the_runtime_root(stack_env: StackEnv) -> None:
    secret = "s3cr3t-wired-0b7f"
    stack_env.module("source", text="""
        variable "token" {
          type      = string
          sensitive = true
        }
        output "token" {
          value     = var.token
          sensitive = true
        }
    """)
    stack_env.module("sink", text="""
        variable "token" {
          type      = string
          sensitive = true
        }
        output "token_length" {
          value = nonsensitive(length(var.token))
        }
    """)
    stack_env.write(f"""\
        stack: demo
        modules:
          - {{name: source, path: source, inputs: {{token: {secret}}}}}
          - name: sink
            path: sink
            depends_on: [source]
            inputs_from: {{token: source.token}}
    """)

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 0, result.stderr
    assert stack_env.hyops.record("demo/sink")["outputs"] == {"token_length": len(secret)}
    leaks = [p for p in stack_env.hyops.runtime_root.rglob("*")
             if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaks == []
    assert secret not in result.stdout + result.stderr
    sink_run = members(stack_env.report())["sink"]["run_id"]
    resolved = (stack_env.run_dir("demo/sink", sink_run) / "resolved.inputs.yml").read_text()
    import yaml

    assert yaml.safe_load(resolved)["token"] == {"value": "<redacted>", "source": "inputs_from source.token"}


def test_sigint_stops_scheduling_and_reports_the_stopped_member_interrupted_and_the_rest_pending(
    stack_env: StackEnv, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    gate = Gate.at(tmp_path)  # shut until the end: only the SIGINT can end the vm create
    faults_file([gate.rule(type="sim_vm", op="create")])
    proc = stack_env.hyops.start("stack", "apply", "stack/stack.yml", "--junit", "junit.xml")
    try:
        gate.wait_started(proc)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)

        assert proc.returncode == 130
        report = stack_env.report()
        assert statuses(report) == {"network": "ok", "vm": "interrupted", "config": "pending", "health": "pending"}
        assert "interrupted by SIGINT" in members(report)["vm"]["error"]
        assert stack_env.hyops.record("demo/vm")["status"] == "error"  # its record: what the evidence shows
        assert stack_env.hyops.record("demo/config") is None
        assert 'type="interrupted"' in (stack_env.hyops.workdir / "junit.xml").read_text()
        shown = stack_env.stack("status", "stack/stack.yml")
        # 3: the vm's create was under way when it stopped; it may have made the vm (a suspect orphan)
        assert shown.returncode == 3 and "interrupted" in shown.stdout
    finally:
        gate.release()
