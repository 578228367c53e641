"""`stack apply --resume` skips a member only when nothing it would apply changed (issue 38,
item 1): its configuration (the root's and local child modules' files, the lock file, the
var files the engine reads), its inputs, its engine and workspace, against what its `ok`
record was applied from. Real engine, sim cloud: a skipped member's new configuration would
otherwise never reach the cloud while the run exits 0."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, statuses

pytestmark = pytest.mark.integration

VM_FAILS = [{"type": "sim_vm", "op": op, "mode": "fail", "times": 1} for op in ("create", "update")]


def health_names(env: StackEnv) -> list[str]:
    return [o["name"] for o in env.hyops.sim_objects() if o["type"] == "sim_health_check"]


def resume(env: StackEnv) -> dict[str, str]:
    result = env.stack("apply", "stack/stack.yml", "--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    return statuses(env.report())


def test_a_member_whose_configuration_changed_while_it_waited_is_applied_on_resume(
    applied: StackEnv, faults_file: Callable[..., Path]
) -> None:
    # one commit changes vm (its size) and health (its configuration); vm fails, health waits
    health_tf = applied.directory / "health" / "main.tf"
    health_tf.write_text(health_tf.read_text().replace('"demo-health"', '"demo-health-v2"'))
    applied.write(applied.directory.joinpath("stack.yml").read_text().replace("size: small", "size: large"))
    faults_file(VM_FAILS)
    failed = applied.stack("apply", "stack/stack.yml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert statuses(applied.report())["health"] == "pending"
    faults_file([])  # the cause is fixed

    result = applied.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses(applied.report())["health"] == "ok"
    assert health_names(applied) == ["demo-health-v2"]


def test_resume_applies_a_member_whose_root_configuration_changed(applied: StackEnv) -> None:
    before = applied.hyops.record("demo/health")["run_id"]
    health_tf = applied.directory / "health" / "main.tf"
    health_tf.write_text(health_tf.read_text().replace('"demo-health"', '"demo-health-v2"'))

    result = applied.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses(applied.report()) == {"network": "skipped", "vm": "skipped", "config": "skipped",
                                          "health": "ok"}
    assert applied.hyops.record("demo/health")["run_id"] != before
    assert health_names(applied) == ["demo-health-v2"]
    assert "[health] apply (its configuration changed)" in result.stderr


def test_resume_applies_a_member_whose_tfvars_changed(applied: StackEnv) -> None:
    (applied.directory / "health" / "terraform.tfvars").write_text('name = "from-tfvars"\n')

    assert resume(applied)["health"] == "ok"
    assert health_names(applied) == ["from-tfvars"]


CHILD_ROOT = """\
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
provider "sim" {}
module "net" {
  source = "./net"
}
output "network_id" {
  value = module.net.id
}
"""

CHILD = """\
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
resource "sim_network" "this" {
  name = "child-v1"
  cidr = "10.9.0.0/16"
}
output "id" {
  value = sim_network.this.id
}
"""


def test_resume_applies_a_member_whose_local_child_module_changed(stack_env: StackEnv) -> None:
    root = stack_env.module("wrapped", text=CHILD_ROOT)
    (root / "net").mkdir()
    (root / "net" / "main.tf").write_text(CHILD)
    stack_env.write("stack: demo\nmodules:\n  - {name: wrapped, path: wrapped}\n")
    first = stack_env.stack("apply", "stack/stack.yml")
    assert first.returncode == 0, first.stdout + first.stderr
    (root / "net" / "main.tf").write_text(CHILD.replace("child-v1", "child-v2"))

    assert resume(stack_env) == {"wrapped": "ok"}
    assert [o["name"] for o in stack_env.hyops.sim_objects()] == ["child-v2"]


def test_resume_skips_a_member_when_only_what_the_engine_ignores_changed(applied: StackEnv) -> None:
    health = applied.directory / "health"
    (health / "main.tf~").write_text("resource broken {")  # an editor backup
    (health / ".main.tf.swp").write_text("\x00swap")  # an editor's swap file
    (health / "notes.md").write_text("# notes\n")
    (health / "terraform.tfstate.backup").write_text((health / "terraform.tfstate").read_text())
    (health / ".terraform" / "touched").write_text("x")

    assert resume(applied) == {"network": "skipped", "vm": "skipped", "config": "skipped", "health": "skipped"}


def test_resume_applies_a_member_whose_lock_file_changed(applied: StackEnv) -> None:
    lock = applied.directory / "health" / ".terraform.lock.hcl"
    before = applied.hyops.record("demo/health")["run_id"]
    lock.write_text(lock.read_text() + "\n# re-locked\n")

    assert resume(applied)["health"] == "ok"
    assert applied.hyops.record("demo/health")["run_id"] != before


def test_resume_applies_a_member_recorded_by_another_engine(applied: StackEnv) -> None:
    rec = applied.hyops.record("demo/health")
    rec["engine"]["version"] = "0.15.0"
    applied.hyops.write_record("demo/health", rec)

    result = applied.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses(applied.report())["health"] == "ok"
    assert "the engine changed" in result.stderr
    assert applied.hyops.record("demo/health")["engine"]["version"] != "0.15.0"


def test_resume_never_skips_a_record_that_does_not_say_what_configuration_it_applied(applied: StackEnv) -> None:
    rec = applied.hyops.record("demo/network")
    del rec["config_digest"]  # written by a hyops that did not record it
    applied.hyops.write_record("demo/network", rec)

    assert resume(applied) == {"network": "ok", "vm": "skipped", "config": "skipped", "health": "skipped"}
    assert applied.hyops.record("demo/network")["config_digest"].startswith("hmac-sha256:config-v1:")


def test_a_caller_tf_var_counts_as_what_the_member_applies(applied: StackEnv) -> None:
    result = applied.hyops("stack", "apply", "stack/stack.yml", "--resume",
                           env={"TF_VAR_name": "from-env"})

    assert result.returncode == 0, result.stdout + result.stderr
    # every member declares `name`, so every one takes it: none may be skipped
    assert set(statuses(applied.report()).values()) == {"ok"}
    assert health_names(applied) == ["from-env"]


def test_a_standalone_apply_records_the_configuration_it_applied(stack_env: StackEnv) -> None:
    done = stack_env.hyops("apply", "stack/network", "--ref", "demo/network")
    assert done.returncode == 0, done.stderr
    digest = stack_env.hyops.record("demo/network")["config_digest"]
    stack_env.write(textwrap.dedent("""\
        stack: demo
        modules:
          - {name: network, path: network}
        """))

    assert resume(stack_env) == {"network": "skipped"}
    assert stack_env.hyops.record("demo/network")["config_digest"] == digest
