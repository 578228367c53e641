"""Numbers reach the engine through hyops digit for digit (issue 55, item 1).

The engine's numbers are arbitrary precision: `3.14159265358979323846264338327950288` stays
that in its state, `1e400` is a number. Each test applies a module whose outputs echo its
variables, once raw and once through `hyops apply`, from every source hyops reads, and compares
the state files' number text (read losslessly, never as floats). The parse and dump paths on
their own: tests/unit/test_numbers.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridops_tf.base import numbers
from tests.generated_values import numbers as generated_numbers
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

NAMES = ("from_tfvars", "from_json", "from_var", "from_env", "from_yaml")
ECHO_TF = "".join(f'variable "{n}" {{\n  type    = {"number" if n in ("from_var", "from_env") else "any"}\n'
                  f'  default = null\n}}\noutput "{n}" {{ value = var.{n} }}\n' for n in NAMES)
LONG = ["3.14159265358979323846264338327950288", "123456789012345678901234567890.125", "1e400", "1E+5", "-0.0",
        "1e-400", "12345678901234567890123", "9007199254740993", "-2.5e-3"]
E = "2.718281828459045235360287471352662497757"


def _state_outputs(module: Path) -> str:
    """The state's outputs as JSON text, numbers exactly as the engine wrote them."""
    doc = numbers.loads((module / "terraform.tfstate").read_text(encoding="utf-8"))
    return numbers.dumps({k: v["value"] for k, v in doc["outputs"].items()}, sort_keys=True)


def _raw_apply(hyops: Hyops, module: Path, *args: str, env: dict[str, str] | None = None) -> None:
    for argv in (["init", "-input=false", "-no-color"], ["apply", "-auto-approve", "-input=false", "-no-color", *args]):
        done = subprocess.run([hyops.engine, *argv], cwd=module, env=hyops.env(**(env or {})), capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def _modules(hyops: Hyops) -> tuple[Path, Path, Path]:
    work = Path(tempfile.mkdtemp(dir=hyops.workdir))
    raw, through = work / "raw", work / "modules" / "echo"
    for module in (raw, through):
        module.mkdir(parents=True)
        (module / "main.tf").write_text(ECHO_TF)
    return work, raw, through


def test_long_numbers_from_every_source_reach_the_state_as_the_raw_engine_keeps_them(any_hyops: Hyops) -> None:
    hyops = any_hyops
    work, raw, through = _modules(hyops)
    listed = "[" + ", ".join(LONG) + "]"
    (work / "t.tfvars").write_text(f"from_tfvars = {listed}\n")
    (work / "t.tfvars.json").write_text(f'{{"from_json": {listed}}}')
    (work / "yaml.tfvars").write_text(f"from_yaml = {listed}\n")  # the raw engine's equivalent of in.yml
    (work / "in.yml").write_text("from_yaml:\n" + "".join(f"  - {t}\n" for t in LONG))
    env = {"TF_VAR_from_env": "1e400"}
    _raw_apply(hyops, raw, f"-var-file={work / 't.tfvars'}", f"-var-file={work / 't.tfvars.json'}",
               f"-var-file={work / 'yaml.tfvars'}", f"-var=from_var={E}", env=env)
    ref = f"num/{uuid.uuid4().hex[:8]}"

    applied = hyops("apply", str(through), "--ref", ref, "--auto-approve", "--var-file", str(work / "t.tfvars"),
                    "--var-file", str(work / "t.tfvars.json"), "--inputs", str(work / "in.yml"),
                    "--var", f"from_var={E}", env=env)

    assert applied.returncode == 0, applied.stderr
    expected = _state_outputs(raw)
    assert E in expected and LONG[0] in expected  # the raw engine keeps every digit
    assert _state_outputs(through) == expected
    record = numbers.loads(hyops.record_path(ref).read_text(encoding="utf-8"))
    assert numbers.dumps(record["outputs"], sort_keys=True) == expected  # and the record says so
    rerun = hyops.runtime_root / "config" / "modules" / ref.replace("/", "__") / "rerun.inputs.yml"
    again = hyops("plan", str(through), "--ref", ref, "--detailed-exitcode", "--inputs", str(rerun),
                  "--var-file", str(work / "t.tfvars"), "--var-file", str(work / "t.tfvars.json"))
    assert again.returncode == 0, again.stdout + again.stderr  # rerun.inputs.yml holds the same numbers


def test_stack_inputs_and_wired_outputs_keep_every_digit(hyops: Hyops) -> None:
    work, raw, upstream = _modules(hyops)
    downstream = work / "modules" / "down"
    downstream.mkdir()
    (downstream / "main.tf").write_text(ECHO_TF)
    stack = work / "stack.yml"
    stack.write_text("stack: num\nmodules:\n"
                     "  - {name: up, path: modules/echo, inputs: "
                     f"{{from_yaml: [{', '.join(LONG)}], from_var: {E}}}}}\n"
                     "  - name: down\n    path: modules/down\n    depends_on: [up]\n"
                     "    inputs_from: {from_yaml: up.from_yaml, from_var: up.from_var}\n")
    (work / "t.tfvars").write_text(f"from_yaml = [{', '.join(LONG)}]\nfrom_var = {E}\n")
    _raw_apply(hyops, raw, f"-var-file={work / 't.tfvars'}")

    applied = hyops("stack", "apply", str(stack), "--auto-approve")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _state_outputs(upstream) == _state_outputs(raw)
    assert _state_outputs(downstream) == _state_outputs(raw)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(generated_numbers, min_size=1, max_size=5), as_json=st.booleans())
def test_generated_numbers_reach_the_state_as_they_reach_it_raw(hyops: Hyops, values: list[Any],
                                                                as_json: bool) -> None:
    work, raw, through = _modules(hyops)
    listed = "[" + ", ".join(v.text if isinstance(v, numbers.Number) else str(v) for v in values) + "]"
    var_file = work / ("gen.tfvars.json" if as_json else "gen.tfvars")
    var_file.write_text(f'{{"from_tfvars": {listed}}}' if as_json else f"from_tfvars = {listed}\n")
    _raw_apply(hyops, raw, f"-var-file={var_file}")

    applied = hyops("apply", str(through), "--ref", f"gen/{uuid.uuid4().hex[:8]}", "--auto-approve",
                    "--var-file", str(var_file))

    assert applied.returncode == 0, applied.stderr
    assert _state_outputs(through) == _state_outputs(raw)
    assert json.loads(_state_outputs(raw))  # valid JSON, whatever the digits
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.both_stores  # the record's outputs as each store keeps them (PostgreSQL's jsonb is numeric too)
def test_recorded_outputs_keep_every_digit_on_either_store(hyops: Hyops) -> None:
    _, _, through = _modules(hyops)
    listed = "[" + ", ".join(LONG) + "]"

    applied = hyops("apply", str(through), "--ref", "num/out", "--auto-approve", "--var", f"from_var={E}",
                    "--var", f"from_tfvars={listed}")
    shown = hyops("outputs", str(through), "--ref", "num/out", "--json")

    assert applied.returncode == 0 and shown.returncode == 0, applied.stderr + shown.stderr
    recorded = numbers.loads(shown.stdout)
    assert numbers.dumps(recorded, sort_keys=True) == _state_outputs(through)
    assert hyops("outputs", str(through), "from_var", "--ref", "num/out", "--raw").stdout.strip() == E
