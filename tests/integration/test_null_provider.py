"""hyops with a real provider nobody here wrote: HashiCorp's null provider 2.1.2 (a Go
binary, from the test mirror; see tests/integration/modern.py), on the bundled engine and on a
modern one (skipped where none is on PATH)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

ADDRESS = "null_resource.x"


def _local_exec(command: str) -> str:
    return f"""
resource "null_resource" "x" {{
  provisioner "local-exec" {{
    command = {json.dumps(command)}
  }}
}}
"""


@pytest.fixture(params=["bundled", "modern"])
def null_hyops(request: pytest.FixtureRequest, null_env: dict[str, str]) -> Hyops:
    """`hyops` on the bundled engine or the modern one, its engine finding hashicorp/null in
    the test mirror."""
    runner: Hyops = request.getfixturevalue("hyops" if request.param == "bundled" else "modern_hyops")
    return replace(runner, extra_env={**runner.extra_env, **null_env})


def _state_id(module: Path) -> str:
    state = json.loads((module / "terraform.tfstate").read_text())
    (resource,) = state["resources"]
    (instance,) = resource["instances"]
    return instance["attributes"]["id"]


def test_a_local_exec_null_resource_applies_ok_with_its_id_in_the_record(
    null_hyops: Hyops, null_module: Callable[[str, str], Path]
) -> None:
    module = null_module("hello", _local_exec("true"))

    result = null_hyops("apply", "modules/hello")

    assert result.returncode == 0, result.stdout + result.stderr
    rec = null_hyops.record("hello")
    assert rec is not None and rec["status"] == "ok", rec
    entry = rec["resources"][ADDRESS]
    assert entry["status"] == "complete" and entry["id"] == _state_id(module), rec["resources"]
    lock = (module / ".terraform.lock.hcl").read_text()
    assert '"registry.terraform.io/hashicorp/null"' in lock and '"2.1.2"' in lock


def test_a_failing_local_exec_ends_error_with_the_resource_recorded_error(
    null_hyops: Hyops, null_module: Callable[[str, str], Path]
) -> None:
    module = null_module("fails", _local_exec("exit 3"))

    result = null_hyops("apply", "modules/fails")

    assert result.returncode == 1, result.stdout + result.stderr
    rec = null_hyops.record("fails")
    assert rec is not None and rec["status"] == "error", rec
    assert "exit status 3" in rec["last_error"], rec["last_error"]
    # the object was made before its provisioner failed: the engine keeps it, tainted
    assert rec["resources"][ADDRESS] == {"status": "error", "action": "create", "id": _state_id(module),
                                         "tainted": True}, rec["resources"]


def test_an_init_that_needs_upgrade_names_hyops_init_and_pasted_it_lets_the_apply_run(
    null_hyops: Hyops, null_module: Callable[[str, str], Path]
) -> None:
    """The committed lock file pins a version the configuration no longer allows (a teammate
    bumped the constraint): the engine's init asks for `-upgrade`; hyops names its own
    command for it, in the module's workspace, and that command pasted as printed lets the
    apply run (issue 45, item 5)."""
    module = null_module("bumped", _local_exec("true"))
    (module / ".terraform.lock.hcl").write_text(
        'provider "registry.terraform.io/hashicorp/null" {\n  version     = "2.1.1"\n  constraints = "2.1.1"\n'
        '  hashes = [\n    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",\n  ]\n}\n')

    refused = null_hyops("apply", "modules/bumped", "--workspace", "qa")

    assert refused.returncode == 2, refused.stderr  # init changes no state: a refusal
    command = re.search(r"next: `(hyops init [^`]*)`", refused.stderr)
    assert command is not None, refused.stderr
    assert shlex.split(command[1])[-2:] == ["--", "-upgrade"] and "--workspace qa" in command[1]
    upgraded = null_hyops(*shlex.split(command[1])[1:])
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    applied = null_hyops("apply", "modules/bumped", "--workspace", "qa")
    assert applied.returncode == 0, applied.stderr
    assert '"2.1.2"' in (module / ".terraform.lock.hcl").read_text()
