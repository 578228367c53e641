"""Inputs are values of the engine's type system, end to end (issue 43, defects 1-4).

Each test runs on the bundled Terraform 1.0.3 and on the modern engine, and compares what the
engine received through hyops with what it receives raw from the same sources: the module's
outputs echo its variables, so `terraform output -json` of a raw run is the reference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.sim.install import sim_engine_env
from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

VALUES_TF = SIM_HEADER + """
variable "subnets" {
  type = list(string)
}
variable "tags" {
  type    = map(number)
  default = {}
}
variable "spec" {
  type = object({
    size  = string
    disks = list(number)
    extra = map(string)
  })
  default = { size = "s", disks = [], extra = {} }
}
variable "note" {
  type    = string
  default = "default note"
}
variable "loose" {
  default = "untyped"
}
resource "sim_network" "net" {
  name = "values-${length(var.subnets)}"
}
output "subnets" { value = var.subnets }
output "tags" { value = var.tags }
output "spec" { value = var.spec }
output "note" { value = var.note }
output "loose" { value = var.loose }
"""

# IAM policy variables are written so: the engine reads `${aws:username}` and `%{x}`
ESCAPES_TFVARS = r'''note = "$${aws:username} %%{x} \"quoted\" \u00e9 back\\slash"
subnets = ["$${a}", "tab\tb"]
spec = {
  size  = <<-EOT
    heredoc $${kept}
      indented \n raw
    EOT
  disks = [1, 2.5, -3]
  extra = { "key with space" = "v", "$${k}" = "%%{w}" }
}
'''



@pytest.fixture
def values_module(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "values"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(VALUES_TF)
    return module


def raw_outputs(hyops: Hyops, module: Path, args: list[str]) -> dict[str, Any]:
    """The outputs a raw `terraform apply ARGS` gives in a fresh copy of `module`."""
    copy = module.parent / f"{module.name}-raw"
    shutil.copytree(module, copy, ignore=shutil.ignore_patterns(".terraform*", "terraform.tfstate*"))
    env = hyops.env()
    env.update(sim_engine_env(hyops.runtime_root, env))
    for argv in (["init", "-input=false", "-no-color"], ["apply", "-auto-approve", "-input=false", "-no-color", *args]):
        done = subprocess.run([hyops.engine, *argv], cwd=copy, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    out = subprocess.run([hyops.engine, "output", "-json"], cwd=copy, env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    return {name: doc["value"] for name, doc in json.loads(out.stdout).items()}


def hyops_outputs(hyops: Hyops) -> dict[str, Any]:
    record = hyops.record("values")
    assert record is not None
    return dict(record["outputs"])


def test_list_map_and_object_inputs_leave_plan_destroy_and_reconcile_working(any_hyops: Hyops,
                                                                              values_module: Path) -> None:
    """Defect 1: after an apply given list, map and object values, every later command read the
    recorded inputs and died on `unhashable type: 'list'`."""
    hyops = any_hyops
    given = ["--var", 'subnets=["a", "b"]', "--var", "tags={a = 1, b = 2}",
             "--var", 'spec={size = "m", disks = [10, 20], extra = {zone = "z1"}}']
    applied = hyops("apply", "modules/values", "--auto-approve", *given)
    assert applied.returncode == 0, applied.stderr
    assert hyops_outputs(hyops) == raw_outputs(hyops, values_module, ["-var", 'subnets=["a", "b"]',
                                                                      "-var", "tags={a = 1, b = 2}",
                                                                      "-var", given[5]])

    planned = hyops("plan", "modules/values", "--detailed-exitcode", *given)
    assert planned.returncode == 0, planned.stderr  # the inputs given again are the applied ones: no change
    reconciled = hyops("reconcile", "modules/values")
    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    destroyed = hyops("destroy", "modules/values", "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr
    record = hyops.record("values")
    assert record is not None and record["status"] == "destroyed"


def test_tfvars_escapes_and_heredocs_reach_the_engine_as_it_reads_them(any_hyops: Hyops,
                                                                        values_module: Path) -> None:
    """Defect 2: `$${` and `%%{` in a .tfvars string reached the engine still escaped (the var
    file's strings were decoded as JSON, then escaped again), and rerun.inputs.yml kept it so."""
    hyops = any_hyops
    (values_module.parent / "escapes.tfvars").write_text(ESCAPES_TFVARS)
    applied = hyops("apply", "modules/values", "--auto-approve", "--var-file", "modules/escapes.tfvars")
    assert applied.returncode == 0, applied.stderr
    expected = raw_outputs(hyops, values_module, [f"-var-file={values_module.parent / 'escapes.tfvars'}"])
    assert expected["note"] == '${aws:username} %{x} "quoted" é back\\slash'  # the reference is the engine's
    assert hyops_outputs(hyops) == expected

    rerun = hyops.runtime_root / "config" / "modules" / "values" / "rerun.inputs.yml"
    again = hyops("plan", "modules/values", "--detailed-exitcode", "--inputs", str(rerun))
    assert again.returncode == 0, again.stdout + again.stderr  # the recorded values are the applied ones


@pytest.mark.parametrize("text", ["~", "null", "NO", "[a]"])
def test_var_text_for_a_string_or_untyped_variable_is_the_text_as_written(any_hyops: Hyops, values_module: Path,
                                                                         text: str) -> None:
    """Defect 3: `--var note=~` (or `=null`) became null; the engine takes the text."""
    hyops = any_hyops
    applied = hyops("apply", "modules/values", "--auto-approve", "--var", "subnets=[]",
                    "--var", f"note={text}", "--var", f"loose={text}")
    assert applied.returncode == 0, applied.stderr
    outputs = hyops_outputs(hyops)
    assert (outputs["note"], outputs["loose"]) == (text, text)
    assert outputs == raw_outputs(hyops, values_module, ["-var", "subnets=[]", "-var", f"note={text}",
                                                         "-var", f"loose={text}"])


def test_an_apply_whose_init_fails_is_refused_with_the_attempt_kept(any_hyops: Hyops, values_module: Path) -> None:
    """Defect 4: an apply whose engine `init` failed exited 1 with no record change and no
    `last_attempt`, while its result.json said `refused`. Now: exit 2, the record as it was plus
    `last_attempt`, result.json `refused` (docs/contract.md: Exit codes)."""
    hyops = any_hyops
    assert hyops("apply", "modules/values", "--auto-approve", "--var", "subnets=[]").returncode == 0
    before = hyops.record("values")
    assert before is not None
    with (values_module / "child.tf").open("w") as tf:
        tf.write('module "gone" {\n  source = "./no-such-folder"\n}\n')  # init cannot install it

    failed = hyops("apply", "modules/values", "--auto-approve", "--var", "subnets=[]")

    assert failed.returncode == 2, failed.stdout + failed.stderr
    after = hyops.record("values")
    assert after is not None
    attempt = after.pop("last_attempt")
    assert attempt["command"] == "apply" and attempt["exit_code"] == 2
    assert after == before  # nothing else of the record moved
    result = json.loads((hyops.runtime_root / "runs" / "values" / attempt["run_id"] / "result.json").read_text())
    assert result["outcome"] == "refused"
    assert result["exit_code"] == 2
