"""Generated values reach the engine through hyops exactly as they reach it raw (issue 43, item 3).

Hypothesis draws values of every type (tests/generated_values.py) into a `.tfvars` or a
`.tfvars.json` file; the raw engine and `hyops apply` each apply a fresh copy of a module whose
outputs echo its variables, given that file; the outputs must be equal, on the bundled engine
and on the modern one. The record's side of the round trip is tests/unit/test_inputs_roundtrip.py.
"""

from __future__ import annotations

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
from tests.generated_values import inputs, tfvars_text
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

ECHO_TF = "".join(f'variable "v{i}" {{\n  type    = any\n  default = null\n}}\noutput "v{i}" {{ value = var.v{i} }}\n'
                  for i in range(6))



def _outputs(engine: str, module: Path, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run([engine, "output", "-json"], cwd=module, env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    return {name: doc["value"] for name, doc in numbers.loads(out.stdout).items()}  # numbers as their text


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=inputs, as_json=st.booleans())
def test_generated_values_reach_the_engine_through_hyops_as_they_reach_it_raw(
        any_hyops: Hyops, values: dict[str, Any], as_json: bool) -> None:
    hyops = any_hyops
    work = Path(tempfile.mkdtemp(dir=hyops.workdir))
    name = "gen.tfvars.json" if as_json else "gen.tfvars"
    var_file = work / name
    var_file.write_text(numbers.dumps(values) if as_json else tfvars_text(values), encoding="utf-8")
    raw, through = work / "raw", work / "modules" / "echo"
    for module in (raw, through):
        module.mkdir(parents=True)
        (module / "main.tf").write_text(ECHO_TF)
    env = hyops.env()
    for argv in (["init", "-input=false", "-no-color"],
                 ["apply", "-auto-approve", "-input=false", "-no-color", f"-var-file={var_file}"]):
        done = subprocess.run([hyops.engine, *argv], cwd=raw, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    ref = f"gen/{uuid.uuid4().hex[:12]}"
    applied = hyops("apply", str(through), "--ref", ref, "--auto-approve", "--var-file", str(var_file))
    assert applied.returncode == 0, applied.stderr

    expected = _outputs(hyops.engine, raw, env)
    got = _outputs(hyops.engine, through, env)
    assert numbers.dumps(got, sort_keys=True) == numbers.dumps(expected, sort_keys=True)  # digit for digit
    record = numbers.loads(hyops.record_path(ref).read_text())
    assert numbers.dumps(record["outputs"], sort_keys=True) == numbers.dumps(expected, sort_keys=True)
    shutil.rmtree(work, ignore_errors=True)
