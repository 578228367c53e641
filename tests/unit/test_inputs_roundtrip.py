"""The record's round trip of generated inputs is the identity (issue 43, item 3): the values
hyops passes the engine in its var file, read back as HCL, and the values rerun.inputs.yml keeps,
read back as an `--inputs` file, are the values given. The engine's side is
tests/integration/test_inputs_generated.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.hcl_values import parse_values
from hybridops_tf.inputs.values import load_inputs_file, resolve_inputs
from tests.generated_values import inputs, tfvars_text

SPECS = {f"v{i}": VariableSpec(f"v{i}", required=False, type_expr="any") for i in range(6)}


@settings(max_examples=200, deadline=None)
@given(values=inputs)
def test_the_engines_var_file_reads_back_as_the_values_given(values: dict[str, Any]) -> None:
    resolved = resolve_inputs(SPECS, var_options=values)

    assert parse_values(resolved.var_file() or "", "var file") == values


@settings(max_examples=200, deadline=None)
@given(values=inputs)
def test_a_tfvars_file_written_by_hand_reads_as_the_values_it_holds(values: dict[str, Any]) -> None:
    assert parse_values(tfvars_text(values), "gen.tfvars") == values


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=inputs)
def test_rerun_inputs_read_back_as_the_values_given(tmp_path: Path, values: dict[str, Any]) -> None:
    resolved = resolve_inputs(SPECS, var_options=values)
    path = tmp_path / "rerun.inputs.yml"
    path.write_text(resolved.rerun_yaml("rerun.inputs.yml of gen"), encoding="utf-8")

    assert load_inputs_file(path) == values
