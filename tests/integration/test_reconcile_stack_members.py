"""`reconcile --stack` judges every member, `ok` ones included, and advises at the stack's
level from the stack file as it is now (issue 38, item 2). Real engine, sim cloud: an `ok`
member whose configuration changed is not "consistent", and advice followed to the letter
after the user fixed the stack file does not fail again with the input they removed."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.operation import config_digest
from tests.integration.stacks import StackEnv, statuses

pytestmark = pytest.mark.integration


def reconcile(env: StackEnv, *args: str) -> tuple[int, dict[str, Any]]:
    done = env.hyops("reconcile", "--stack", "stack/stack.yml", "--json", *args)
    return done.returncode, json.loads(done.stdout)


def findings(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {m["module_ref"]: m["findings"] for m in doc["modules"]}


def codes(doc: dict[str, Any]) -> dict[str, list[str]]:
    return {ref: [f["code"] for f in found] for ref, found in findings(doc).items()}


def run_as_given(env: StackEnv, command: str) -> Any:
    argv = shlex.split(command)
    assert argv[0] == "hyops", command
    return env.hyops(*argv[1:])


def rename_health_check(env: StackEnv) -> Path:
    """A commit changes the health member's configuration (its check's default name)."""
    health = env.directory / "health"
    (health / "main.tf").write_text((health / "main.tf").read_text().replace('"demo-health"', '"demo-health-v2"'))
    return health


def health_finding(env: StackEnv, code: str) -> dict[str, Any]:
    """reconcile --stack: exit 3, and the one finding, `code`, is the health member's."""
    exit_code, doc = reconcile(env)
    assert exit_code == 3, doc
    assert codes(doc) == {"demo/network": [], "demo/vm": [], "demo/config": [], "demo/health": [code]}
    return findings(doc)["demo/health"][0]


def test_an_ok_member_whose_configuration_changed_is_a_finding_resume_settles(applied: StackEnv) -> None:
    rename_health_check(applied)

    finding = health_finding(applied, "config_changed")

    assert "its configuration changed" in finding["detail"]
    assert finding["next_actions"] == ["hyops stack apply stack/stack.yml --resume"]

    assert run_as_given(applied, finding["next_actions"][0]).returncode == 0
    assert reconcile(applied)[0] == 0
    assert [o["name"] for o in applied.hyops.sim_objects() if o["type"] == "sim_health_check"] == [
        "demo-health-v2"]


def test_an_ok_member_whose_inputs_in_the_stack_file_changed_is_a_finding(applied: StackEnv) -> None:
    # its configuration, engine and workspace as applied: only the stack file's input differs
    stack_file = applied.directory / "stack.yml"
    stack_file.write_text(stack_file.read_text().replace("inputs: {size: small}", "inputs: {size: large}"))

    exit_code, doc = reconcile(applied)

    assert exit_code == 3, doc
    assert codes(doc) == {"demo/network": [], "demo/vm": ["config_changed"], "demo/config": [], "demo/health": []}
    [finding] = findings(doc)["demo/vm"]
    assert "its inputs changed" in finding["detail"] and "its configuration changed" not in finding["detail"]
    assert finding["next_actions"] == ["hyops stack apply stack/stack.yml --resume"]


def test_a_record_that_does_not_say_what_it_applied_is_judged_by_its_plan(applied: StackEnv) -> None:
    for name in ("network", "health"):  # as a hyops before config_digest wrote them
        rec = applied.hyops.record(f"demo/{name}")
        del rec["config_digest"]
        applied.hyops.write_record(f"demo/{name}", rec)
    rename_health_check(applied)

    finding = health_finding(applied, "plan_changes")

    assert "sim_health_check.this" in finding["addresses"]
    assert finding["next_actions"] == ["hyops stack apply stack/stack.yml --resume"]


def test_plan_changes_the_record_cannot_see_are_advised_without_resume(applied: StackEnv) -> None:
    # something the digest cannot see (an unpinned remote module, a data source) changed:
    # here the configuration, with the record forged to claim it was applied from it
    health = rename_health_check(applied)
    rec = applied.hyops.record("demo/health")
    key = (applied.hyops.runtime_root / "config" / "digest.key").read_bytes()
    rec["config_digest"] = config_digest.config_digest(health, {}, key)
    applied.hyops.write_record("demo/health", rec)

    finding = health_finding(applied, "plan_changes")

    assert finding["next_actions"] == ["hyops stack apply stack/stack.yml"]  # --resume would skip it
    assert run_as_given(applied, finding["next_actions"][0]).returncode == 0
    assert reconcile(applied)[0] == 0


BAD_VM = [{"type": "sim_vm", "name": "bad-vm", "op": "create", "mode": "fail_after_create"}]


@pytest.fixture
def vm_failed_then_fixed(stack_env: StackEnv, faults_file: Callable[..., Path]) -> dict[str, Any]:
    """A stack apply fails at vm on an input the user then removes from stack.yml; the
    partial_apply finding `reconcile --stack` gives vm after the fix."""
    faults_file(BAD_VM)
    original = stack_env.directory.joinpath("stack.yml").read_text()
    stack_env.write(original.replace("inputs: {size: small}", "inputs: {size: small, name: bad-vm}"))
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 1
    assert statuses(stack_env.report())["vm"] == "error"
    stack_env.write(original)  # the user removes the failing input
    code, doc = reconcile(stack_env)
    assert code == 3, doc
    [partial] = [f for f in findings(doc)["demo/vm"] if f["code"] == "partial_apply"]
    return partial


def test_a_failed_member_is_advised_from_the_stack_file_as_it_is_now(
    stack_env: StackEnv, vm_failed_then_fixed: dict[str, Any]
) -> None:
    [stack_cmd, module_cmd, destroy_cmd] = [a["command"] for a in vm_failed_then_fixed["alternatives"]]

    assert stack_cmd == "hyops stack apply stack/stack.yml --resume"
    assert module_cmd.startswith("hyops apply stack/vm --ref demo/vm ")
    assert "bad-vm" not in module_cmd and "rerun.inputs.yml" not in module_cmd
    assert destroy_cmd.startswith("hyops destroy stack/vm --ref demo/vm")

    alone = run_as_given(stack_env, module_cmd)  # the module command, pasted as given, works too
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert [o["name"] for o in stack_env.hyops.sim_objects() if o["type"] == "sim_vm"] == ["demo-vm"]
    assert run_as_given(stack_env, stack_cmd).returncode == 0
    assert reconcile(stack_env)[0] == 0


def test_the_stack_command_for_a_failed_member_applies_it_and_what_waits_on_it(
    stack_env: StackEnv, vm_failed_then_fixed: dict[str, Any]
) -> None:
    done = run_as_given(stack_env, vm_failed_then_fixed["alternatives"][0]["command"])

    assert done.returncode == 0, done.stdout + done.stderr
    assert statuses(stack_env.report()) == {"network": "skipped", "vm": "ok", "config": "ok", "health": "ok"}
