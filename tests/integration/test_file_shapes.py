"""The world's file shapes (issue 55, item 4), on the real engine: instance keys holding `${`,
`%{`, quotes, backslashes and unicode spelled as the engine of the module spells them; a root
of `.tf.json` files only; a variable a `.tf.json` file declares; `path.cwd`."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from hybridops_tf.sim.install import sim_engine_env
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

# keys the engines spell differently from JSON (and from each other): a template opener, a
# directive opener, a quote, a backslash, a newline, a control character (Go quotes it `\\x01`, HCL
# `\\u0001`) and letters beyond ASCII
KEYS = ["$${dollar}", "%%{pct}", 'q\\"uote', "back\\\\slash", "nl\\nline", "ctl\\u0001x", "ünï€"]
FOR_EACH = f"""
locals {{
  keys = toset([{", ".join(f'"{k}"' for k in KEYS)}])
}}

resource "null_resource" "k" {{
  for_each = local.keys
  triggers = {{ k = each.key }}
}}
"""


@pytest.fixture(params=["bundled", "modern"])
def null_hyops(request: pytest.FixtureRequest, null_env: dict[str, str]) -> Hyops:
    """`hyops` on the bundled engine (Terraform 1.0.3: keys spelled as Go quotes them) or the
    modern one (>= 1.11: as HCL quotes them, `$${`), finding hashicorp/null in the test mirror."""
    runner: Hyops = request.getfixturevalue("hyops" if request.param == "bundled" else "modern_hyops")
    return replace(runner, extra_env={**runner.extra_env, **null_env})


def _engine_addresses(hyops: Hyops, module: Path) -> set[str]:
    """The addresses as the engine itself prints them (`state list`)."""
    out = subprocess.run([hyops.engine, f"-chdir={module}", "state", "list"], env=hyops.env(),
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.splitlines())


def test_for_each_keys_with_template_openers_are_one_entry_each_and_destroy_ends_destroyed(
    null_hyops: Hyops, null_module: Callable[[str, str], Path]
) -> None:
    module = null_module("keys", FOR_EACH)

    applied = null_hyops("apply", "modules/keys")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    rec = null_hyops.record("keys")
    assert rec is not None and rec["status"] == "ok", rec
    live = {a for a, e in rec["resources"].items() if e["status"] != "destroyed"}
    assert live == _engine_addresses(null_hyops, module), rec["resources"]

    destroyed = null_hyops("destroy", "modules/keys")

    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    rec = null_hyops.record("keys")
    assert rec is not None and rec["status"] == "destroyed", rec
    assert {e["status"] for e in rec["resources"].values()} <= {"destroyed"}, rec["resources"]
    assert json.loads((module / "terraform.tfstate").read_text())["resources"] == []


def _json_root(tmp_path: Path, name: str, doc: dict) -> Path:
    module = tmp_path / "modules" / name
    module.mkdir(parents=True)
    (module / "main.tf.json").write_text(json.dumps(doc, indent=1))
    return module


def test_a_root_of_tf_json_files_only_applies_and_its_variable_is_given_by_var(hyops: Hyops, tmp_path: Path) -> None:
    _json_root(tmp_path, "jsononly", {
        "variable": {"name": {"type": "string"}, "suffix": {"type": "string", "default": "!"}},
        "output": {"greeting": {"value": "hello ${var.name}${var.suffix}"}},
    })

    result = hyops("apply", "modules/jsononly", "--var", "name=json")

    assert result.returncode == 0, result.stdout + result.stderr
    rec = hyops.record("jsononly")
    assert rec is not None and rec["status"] == "ok", rec
    assert rec["outputs"] == {"greeting": "hello json!"}


def test_a_variable_declared_in_a_tf_json_file_beside_tf_files_is_known_to_var(hyops: Hyops, tmp_path: Path) -> None:
    module = tmp_path / "modules" / "mixed"
    module.mkdir(parents=True)
    (module / "main.tf").write_text('output "o" {\n  value = var.region\n}\n')
    (module / "variables.tf.json").write_text(json.dumps({"variable": [{"region": {"type": "string"}}]}))

    refused = hyops("apply", "modules/mixed")  # required, and declared only in the JSON file
    applied = hyops("apply", "modules/mixed", "--var", "region=eu-west")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert applied.returncode == 0, applied.stdout + applied.stderr
    rec = hyops.record("mixed")
    assert rec is not None and rec["status"] == "ok" and rec["outputs"] == {"o": "eu-west"}, rec


SIM_KEYS = """
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}

resource "sim_network" "n" {
  for_each = toset(["$${edge}", "ctl\\u0001"])
  name     = "net-${length(each.key)}"
}
"""


@pytest.fixture(params=["bundled", "modern"])
def any_hyops(request: pytest.FixtureRequest) -> Hyops:
    """`hyops` on the bundled engine (keys printed as Go quotes them) or the modern one."""
    runner: Hyops = request.getfixturevalue("hyops" if request.param == "bundled" else "modern_hyops")
    return runner


def test_the_advised_import_of_an_object_whose_key_holds_a_template_opener_puts_it_back(
    any_hyops: Hyops, tmp_path: Path
) -> None:
    module = tmp_path / "modules" / "keys"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(SIM_KEYS)
    assert any_hyops("apply", "modules/keys").returncode == 0
    env = any_hyops.env()
    env.update(sim_engine_env(any_hyops.runtime_root, env))
    removed = subprocess.run([any_hyops.engine, "state", "rm", 'sim_network.n["$${edge}"]'], cwd=module, env=env,
                             capture_output=True, text=True, timeout=300, check=False)
    assert removed.returncode == 0, removed.stderr  # a teammate's `state rm`, in the spelling every engine parses

    refused = any_hyops("destroy", "modules/keys", "--auto-approve")

    assert refused.returncode == 4, refused.stdout + refused.stderr  # state_missing: it would act without it
    report = any_hyops("reconcile", "modules/keys", "--json")
    actions = [a for m in json.loads(report.stdout)["modules"] for f in m["findings"] for a in f["next_actions"]]
    (command,) = [a for a in actions if " --import " in a]
    words = shlex.split(command)
    adopted = any_hyops(*words[1:])
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    listed = subprocess.run([any_hyops.engine, "state", "list"], cwd=module, env=env, capture_output=True,
                            text=True, timeout=300, check=True)
    assert len(listed.stdout.splitlines()) == 2 and "edge" in listed.stdout, listed.stdout  # back in the state
    assert any_hyops("destroy", "modules/keys", "--auto-approve").returncode == 0
    assert any_hyops.sim_objects() == []
