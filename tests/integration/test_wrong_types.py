"""A wrong-typed input is refused by hyops itself, before any engine runs, with exit 2 and the
place the user gave it, in every command on every engine (issue 55, item 5): Terraform >= 1.12
does not evaluate the variables for a `destroy` of a module with an empty state, so the engine
alone let the value through there (inputs/type_check.py). Every source is placed: a var file's
line, `TF_VAR_NAME`, the module's own tfvars file, the last run's rerun.inputs.yml. What the
engine converts is never refused, nor what hyops cannot judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

TYPED_TF = """variable "size" {
  type = number
}
variable "zones" {
  type    = list(string)
  default = []
}
variable "flags" {
  type    = map(bool)
  default = {}
}
output "size" {
  value = var.size
}
output "zones" {
  value = var.zones
}
output "flags" {
  value = var.flags
}
"""


@pytest.fixture
def typed(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "typed"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(TYPED_TF)
    return module


def test_a_wrong_typed_tf_var_is_refused_naming_it_by_a_destroy_with_nothing_in_state(
        hyops: Hyops, typed: Path) -> None:
    out = hyops("destroy", "modules/typed", env={"TF_VAR_size": "large"})

    assert out.returncode == 2, out.stdout + out.stderr
    assert "TF_VAR_size" in out.stderr and "a number is required" in out.stderr, out.stderr
    assert hyops.record("typed") is None


def test_a_wrong_typed_value_in_the_modules_own_tfvars_is_refused_at_its_line(hyops: Hyops, typed: Path) -> None:
    (typed / "terraform.tfvars").write_text('# the module\'s own\nsize = 3\nflags = {\n  a = "yes"\n}\n')

    out = hyops("destroy", "modules/typed")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "terraform.tfvars line 3" in out.stderr and '"flags"' in out.stderr, out.stderr
    assert hyops.record("typed") is None


def test_a_wrong_element_deep_in_a_var_file_is_refused_at_its_line_in_every_command(
        hyops: Hyops, typed: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.tfvars").write_text('size = 1\n\nzones = ["a", ["b"]]\n')

    outs = [hyops(command, "modules/typed", "--var-file", "mine.tfvars") for command in ("plan", "apply", "destroy")]

    assert [out.returncode for out in outs] == [2, 2, 2], [out.stderr for out in outs]
    assert all("mine.tfvars line 3" in out.stderr for out in outs), [out.stderr for out in outs]
    assert len({out.stderr for out in outs}) == 1  # one error, one message
    assert hyops.record("typed") is None


def test_a_destroy_refused_for_a_wrong_type_leaves_the_applied_record_as_it_was(hyops: Hyops, typed: Path) -> None:
    assert hyops("apply", "modules/typed", "--var", "size=2").returncode == 0
    before = hyops.record("typed")

    out = hyops("destroy", "modules/typed", "--var", "size=2", "--var", "zones={a = 1}")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "--var zones" in out.stderr, out.stderr
    assert hyops.record("typed") == before


def test_the_last_runs_value_that_no_longer_fits_is_placed_in_rerun_inputs(hyops: Hyops, typed: Path) -> None:
    """The module's type changed since its last apply: the recorded value that fills the
    required variable no longer converts, and the message names the file that holds it."""
    assert hyops("apply", "modules/typed", "--var", "size=2").returncode == 0
    (typed / "main.tf").write_text(TYPED_TF.replace('"size" {\n  type = number', '"size" {\n  type = bool'))

    out = hyops("destroy", "modules/typed")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "rerun.inputs.yml line" in out.stderr and "bool required" in out.stderr, out.stderr


def test_values_the_engine_converts_and_text_hyops_cannot_read_are_never_refused(
        hyops: Hyops, typed: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.tfvars").write_text('size = "5"\nflags = {a = "true", b = false}\n')

    out = hyops("apply", "modules/typed", "--var-file", "mine.tfvars",
                env={"TF_VAR_zones": '[for z in ["b", "a"] : z]'})  # a `for` the engine evaluates

    assert out.returncode == 0, out.stdout + out.stderr
    outputs = hyops.record("typed")["outputs"]
    assert outputs == {"size": 5, "zones": ["b", "a"], "flags": {"a": True, "b": False}}, outputs
