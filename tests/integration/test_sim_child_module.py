"""Issue 10 case 9: a root module that uses the sim provider only through a child module.

hyops gives the engine the sim mirror only for a module that uses the sim provider; the
detection read only the root module's own `*.tf`, so a root holding nothing but a
`module "x" { source = "./sub" }` call got no mirror and `init` failed (the engine asked a
registry for hybridops.dev/hybridops/sim).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

SUB_TF = """\
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
variable "name" {
  type = string
}
resource "sim_network" "net" {
  name = var.name
}
output "network_id" {
  value = sim_network.net.id
}
"""

ROOT_TF = """\
module "x" {
  source = "./sub"
  name   = "through-a-child"
}
output "network_id" {
  value = module.x.network_id
}
"""


def test_a_root_that_uses_sim_only_through_a_local_child_module_applies(
    hyops: Hyops, tmp_path: Path
) -> None:
    """Sequence: a root module whose only content is `module "x" { source = "./sub" }`
    (sub uses sim_network), then `hyops apply`: it used to fail `init` (exit 1); now it
    exits 0, the record is ok and the network exists in the sim cloud."""
    root = tmp_path / "modules" / "wrapped"
    (root / "sub").mkdir(parents=True)
    (root / "main.tf").write_text(ROOT_TF)
    (root / "sub" / "main.tf").write_text(SUB_TF)

    result = hyops("apply", "modules/wrapped", "--ref", "wrapped")

    assert result.returncode == 0, result.stderr
    rec = hyops.record("wrapped")
    assert rec is not None and rec["status"] == "ok", json.dumps(rec)
    assert rec["outputs"]["network_id"].startswith("net-")
    assert [o["name"] for o in hyops.sim_objects()
            if o["type"] == "sim_network"] == ["through-a-child"]
