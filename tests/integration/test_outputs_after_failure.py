"""Outputs after a failed run (docs/contract.md, the record's `outputs`): "previously known
outputs merged with whatever the partial state now holds, never fewer". The failing run
here leaves a state whose outputs LACK a key the record knew (the new configuration no
longer declares it), so only the merge with the known outputs can keep it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

# Before: a network, its id and its name as outputs.
BEFORE_TF = SIM_HEADER + """
resource "sim_network" "net" {
  name = "keep-net"
}
output "network_id" {
  value = sim_network.net.id
}
output "network_name" {
  value = sim_network.net.name
}
"""

# After: `network_name` is no longer declared, and a vm (whose create will fail) is added.
AFTER_TF = SIM_HEADER + """
resource "sim_network" "net" {
  name = "keep-net"
}
resource "sim_vm" "vm" {
  name       = "keep-vm"
  network_id = sim_network.net.id
}
output "network_id" {
  value = sim_network.net.id
}
output "vm_id" {
  value = sim_vm.vm.id
}
"""


def _state_outputs(module: Path) -> dict[str, object]:
    """The outputs of the module's local state file, as the failed run left it."""
    state = json.loads((module / "terraform.tfstate").read_text())
    return {name: out.get("value") for name, out in (state.get("outputs") or {}).items()}


def test_a_failed_apply_keeps_a_known_output_the_partial_state_no_longer_holds(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    module = tmp_path / "modules" / "keep"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(BEFORE_TF)
    assert hyops("apply", "modules/keep").returncode == 0
    known = hyops.record("keep")["outputs"]
    assert known["network_name"] == "keep-net" and known["network_id"].startswith("net-")

    (module / "main.tf").write_text(AFTER_TF)
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_before_create"}])
    failed = hyops("apply", "modules/keep")

    assert failed.returncode == 1, failed.stdout + failed.stderr
    recovered = _state_outputs(module)
    assert "network_name" not in recovered, "the premise: the partial state lacks the known key"
    assert recovered.get("network_id") == known["network_id"]
    rec = hyops.record("keep")
    assert rec["status"] == "error" and rec["failed_command"] == "apply"
    assert rec["outputs"].get("network_name") == "keep-net", rec["outputs"]
    assert rec["outputs"]["network_id"] == known["network_id"]
    assert set(known) <= set(rec["outputs"])  # never fewer
