"""Inputs for every engine command that takes them (issue 47, item 5).

From Terraform 1.15 a module `source` may use a variable (declared `const`), so `init`, `show`
and `state pull` evaluate the root module's variables: without the run's inputs they fail
("No value for required variable"). hyops passes the recorded inputs as its var file (a pipe,
never argv or disk) to each of them on such an engine: the module inits, applies, reconciles
from its recorded inputs (after its `.terraform` is gone, so reconcile inits it again) and
destroys. The root names the sim provider too, as roots that configure their providers do
(hyops finds the modules it reads without the engine: a source from a variable is not one).
Needs an engine >= 1.15: skipped, naming what was found, on an older modern engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER, run_ok
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

ROOT = SIM_HEADER + """
variable "where" {
  type  = string
  const = true
}
module "net" {
  source = "./${var.where}"
}
output "network_id" {
  value = module.net.network_id
}
"""
CHILD = SIM_HEADER + """
resource "sim_network" "this" {
  name = "source-by-variable"
}
output "network_id" {
  value = sim_network.this.id
}
"""


def _applied_bysource(h: Hyops) -> Path:
    """The module whose source is `"./${var.where}"`, applied with `where=child` (skipped, naming
    what was found, on an engine before 1.15)."""
    release = engine_release(h.engine) or ()
    if release < (1, 15):
        pytest.skip(f"a module source from a variable needs Terraform >= 1.15; found {h.engine} "
                    f"({'.'.join(map(str, release)) or '?'})")
    module = h.workdir / "modules" / "bysource"
    (module / "child").mkdir(parents=True)
    (module / "main.tf").write_text(ROOT)
    (module / "child" / "main.tf").write_text(CHILD)
    run_ok(h, "apply", str(module), "--var", "where=child")
    return module


def test_a_module_whose_source_uses_a_variable_inits_applies_and_reconciles_from_its_recorded_inputs(
    modern_hyops: Hyops,
) -> None:
    module = _applied_bysource(modern_hyops)
    [net] = [o["id"] for o in modern_hyops.sim_objects()]
    assert modern_hyops.record("bysource")["outputs"] == {"network_id": net}
    shutil.rmtree(module / ".terraform")  # reconcile must init again, with the recorded inputs

    report = json.loads(run_ok(modern_hyops, "reconcile", str(module), "--json").stdout)

    assert report["consistent"], report
    run_ok(modern_hyops, "destroy", str(module), "--auto-approve")
    assert modern_hyops.record("bysource")["status"] == "destroyed"
    assert modern_hyops.sim_objects() == []


def test_hyops_init_of_a_module_whose_source_uses_a_variable_takes_the_recorded_inputs(modern_hyops: Hyops) -> None:
    module = _applied_bysource(modern_hyops)
    shutil.rmtree(module / ".terraform")  # the advice `hyops init DIR -- -upgrade` must work without --var

    run_ok(modern_hyops, "init", str(module), "--", "-upgrade")

    assert (module / ".terraform" / "modules" / "modules.json").is_file()
    report = json.loads(run_ok(modern_hyops, "reconcile", str(module), "--json").stdout)
    assert report["consistent"], report
