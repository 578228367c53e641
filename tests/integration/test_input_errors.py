"""An input the engine refuses is one error with one exit code and the user's own words for
where it came from (issue 55, item 5).

hyops hands its explicit inputs to the engine as a var file on a pipe, so the engine placed
a wrong-typed value at `/dev/fd/0 line 7`, a file the user never wrote; and `hyops plan`
exited 1 where `hyops apply` exited 2 for the very same input.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

NUMBER_TF = """variable "label" {
  type    = string
  default = "x"
}
variable "size" {
  type = number
}
output "size" {
  value = var.size
}
"""


@pytest.fixture
def sized(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "sized"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NUMBER_TF)
    (tmp_path / "mine.tfvars").write_text('# my inputs\nlabel = "y"\n\nsize = "large"\n')
    return module


@pytest.mark.parametrize("command", ["plan", "apply", "destroy"])
def test_a_wrong_typed_input_names_the_users_file_and_line_and_exits_2_in_every_command(
        hyops: Hyops, sized: Path, command: str) -> None:
    out = hyops(command, "modules/sized", "--var", "label=z", "--var-file", "mine.tfvars")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "mine.tfvars line 4" in out.stderr, out.stderr
    assert "/dev/fd/0" not in out.stderr, out.stderr
    assert hyops.record("sized") is None


def test_a_wrong_typed_var_names_the_option_and_plan_and_apply_exit_alike(hyops: Hyops, sized: Path) -> None:
    plan = hyops("plan", "modules/sized", "--var", "size=large")
    apply = hyops("apply", "modules/sized", "--var", "size=large")
    assert plan.returncode == apply.returncode == 2, plan.stderr + apply.stderr
    assert "--var size" in plan.stderr and "--var size" in apply.stderr, plan.stderr + apply.stderr
    assert "/dev/fd/0" not in plan.stderr + apply.stderr


NOT_NULLABLE_TF = """variable "size" {
  type     = number
  nullable = false
}
variable "spare" {
  type     = number
  nullable = false
  default  = 3
}
output "sizes" {
  value = [var.size, var.spare]
}
"""


@pytest.mark.parametrize("command", ["plan", "apply", "destroy"])
def test_a_null_for_a_variable_that_is_not_nullable_is_refused_in_every_command(
        modern_hyops: Hyops, tmp_path: Path, command: str) -> None:
    """`nullable = false` and no default: the engine refuses a null in plan and apply, while a
    destroy of an empty state on Terraform >= 1.12 never looks; hyops refuses it in each, at the
    user's line, exit 2. A null for one with a default takes the default, as the engine does."""
    module = tmp_path / "modules" / "strict"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NOT_NULLABLE_TF)
    (tmp_path / "mine.tfvars").write_text("spare = null\nsize = null\n")

    out = modern_hyops(command, "modules/strict", "--var-file", "mine.tfvars")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "mine.tfvars line 2" in out.stderr and "may not be set to null" in out.stderr, out.stderr
    assert "spare" not in out.stderr.replace("mine.tfvars", ""), out.stderr
    assert modern_hyops.record("strict") is None


def test_a_null_for_a_variable_that_is_not_nullable_takes_its_default(modern_hyops: Hyops, tmp_path: Path) -> None:
    module = tmp_path / "modules" / "strict"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NOT_NULLABLE_TF)
    (tmp_path / "mine.tfvars").write_text("spare = null\nsize = 1\n")

    out = modern_hyops("apply", "modules/strict", "--var-file", "mine.tfvars")

    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(modern_hyops("outputs", "modules/strict", "sizes").stdout) == [1, 3]


SECRET_TF = SIM_HEADER + """variable "token" {
  type      = string
  sensitive = true
}
resource "sim_network" "this" {
  name = "tok-net"
}
"""


def test_a_missing_secret_is_advised_as_tf_var_never_on_a_command_line(hyops: Hyops, tmp_path: Path) -> None:
    """reconcile's could_not_check advised `--var token=...` for a sensitive variable: shell
    history, CI logs and the process list keep what a command line holds."""
    module = tmp_path / "modules" / "tok"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(SECRET_TF)
    assert hyops("apply", "modules/tok", env={"TF_VAR_token": "s3cret"}).returncode == 0

    checked = hyops("reconcile", "modules/tok", "--json")
    applied = hyops("apply", "modules/tok")

    (module_doc,) = json.loads(checked.stdout)["modules"]
    (why,) = [w for w in module_doc["could_not_check"] if "token" in w]
    assert "TF_VAR_token=" in why and "--var token" not in why, why
    assert applied.returncode == 2, applied.stderr
    assert "TF_VAR_token=" in applied.stderr and "--var token" not in applied.stderr, applied.stderr
