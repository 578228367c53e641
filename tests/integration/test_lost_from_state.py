"""An object the engine drops from state when its update fails (issue 47, item 4).

Terraform before 1.14.2 removes an object from state when its update fails on an early path
(hashicorp/terraform#37981); 1.14.2 keeps the prior object. The early path taken here: the
configuration cannot be evaluated at apply although it was at plan. The resource's `cidr` is
read with `file()`; the apply's re-plan of the update (the engine's PlanResourceChange just
before it calls the provider) hangs on a sim fault (`op: plan`), the test removes the file,
then releases it: the engine's evaluation of the configuration for the apply call fails and,
on those engines, the object leaves the state though nothing deleted it.

On the engine of the leg (`make test`: 1.0.3; `make test-engines`: each): where the engine
drops the object, reconcile says lost_from_state with the one import that puts it back, the
test follows the advice to the letter, and the cloud holds the one object it held before; where
the engine keeps it (>= 1.14.2), the state and the record keep it and there is no such finding.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, findings, run_ok
from tests.integration.hyops_cli import HYOPS, Hyops, wait_for
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

FIXED = (1, 14, 2)  # hashicorp/terraform#37981
NETWORK = SIM_HEADER + """
resource "sim_network" "net" {
  name = "lost-net"
  cidr = trimspace(file("${path.module}/cidr.txt"))
}
"""



def _state_list(h: Hyops, module: Path) -> list[str]:
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run([h.engine, "state", "list"], cwd=module, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.split()


def _report(h: Hyops, module: Path) -> tuple[int, dict[str, Any]]:
    out = h("reconcile", str(module), "--ref", "lost", "--json")
    assert out.returncode in (0, 3), out.stderr
    return out.returncode, json.loads(out.stdout)


def _paste(h: Hyops, command: str) -> None:
    """Run a printed `hyops ...` command exactly as printed, from the test's directory."""
    words = shlex.split(command)
    assert words[0] == "hyops", command
    done = subprocess.run([HYOPS, *words[1:]], cwd=h.workdir, env=h.env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def _update_fails_on_the_early_path(h: Hyops, module: Path, faults_file: Callable[..., Path], tmp_path: Path) -> None:
    """The update's configuration evaluates at plan, and not at apply."""
    (module / "cidr.txt").write_text("10.1.0.0/16\n")
    release, started = tmp_path / "release", tmp_path / "started"
    faults_file([{"type": "sim_network", "op": "plan", "mode": "hang", "seconds": 0, "times": 1},  # the plan
                 {"type": "sim_network", "op": "plan", "mode": "hang", "hang_until": str(release),
                  "hang_started": str(started), "times": 1}])  # the apply's re-plan
    proc = h.start("apply", str(module), "--ref", "lost")
    wait_for(started.exists, what="the apply's re-plan of the update")
    (module / "cidr.txt").unlink()
    release.write_text("")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    faults_file([])
    (module / "cidr.txt").write_text("10.1.0.0/16\n")


def test_an_object_the_engine_drops_when_its_update_fails_is_put_back_by_the_advice_with_no_duplicate(
    hyops: Hyops, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    module = hyops.workdir / "modules" / "lost"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NETWORK)
    (module / "cidr.txt").write_text("10.0.0.0/16\n")
    run_ok(hyops, "apply", str(module), "--ref", "lost")
    [net] = [o["id"] for o in hyops.sim_objects()]

    _update_fails_on_the_early_path(hyops, module, faults_file, tmp_path)

    assert [o["id"] for o in hyops.sim_objects()] == [net]  # it lives, whatever the state says
    assert hyops.record("lost")["resources"]["sim_network.net"]["id"] == net  # the record keeps it
    drops = (engine_release(hyops.engine) or ()) < FIXED
    assert _state_list(hyops, module) == ([] if drops else ["sim_network.net"])
    code, report = _report(hyops, module)
    assert code == 3
    if not drops:
        assert "lost_from_state" not in findings(report) and "state_missing" not in findings(report)
        return
    lost = findings(report)["lost_from_state"]
    assert "state_missing" not in findings(report)
    assert net in lost["detail"]
    assert lost["next_actions"] == [f"hyops reconcile modules/lost --ref lost --import sim_network.net={net}"]
    run_ok(hyops, "reconcile", str(module), "--ref", "lost", "--write", expect=3)  # settles nothing
    assert hyops.record("lost")["resources"]["sim_network.net"]["id"] == net

    _paste(hyops, lost["next_actions"][0])
    run_ok(hyops, "apply", str(module), "--ref", "lost")

    assert [o["id"] for o in hyops.sim_objects()] == [net]  # put back, never made twice
    assert hyops.record("lost")["status"] == "ok"
    assert _report(hyops, module)[0] == 0
