"""An object the engine dropped from state when its update failed (issue 47, item 4).

Terraform before 1.14.2 removes an object from state when its update fails on an early path
(hashicorp/terraform#37981: a result that does not conform to the schema, a write-only
attribute answered with a value, an unknown left in the configuration at apply). The sim
provider speaks a plugin protocol without write-only attributes, and the engine's gRPC client
turns any answer that does not decode into "no answer" (the prior object is kept), so no sim
fault takes that path today: these tests fail the update for real, then take the object out of
the state as that engine does (`state rm`, and the record's stamp of the state as the failed run
left it, which then lacks the object too), and follow reconcile's advice to the letter. What
each shows: the record keeps the entry with its id, reconcile says
lost_from_state with the one import that puts it back, `--write` never drops it, and after the
import and an apply the cloud holds the one object it held before: no duplicate.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.record.stamp import cheap_stamp
from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import HYOPS, Hyops

pytestmark = pytest.mark.integration

NETWORK = SIM_HEADER + """
variable "cidr" {
  type    = string
  default = "10.0.0.0/16"
}
resource "sim_network" "net" {
  name = "lost-net"
  cidr = var.cidr
}
"""


def _run(h: Hyops, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    out = h(*args)
    assert out.returncode == expect, f"hyops {' '.join(args)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


def _engine_drops(h: Hyops, module: Path, ref: str, address: str) -> None:
    """What Terraform < 1.14.2 does to the state on the update's early error path, inside the
    failed run: the object leaves the state, and the state as that run left it (the record's
    `state_seen`, which hyops stamps after the engine exits) lacks it."""
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run([h.engine, "state", "rm", address], cwd=module, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rec = h.record(ref)
    assert rec is not None and rec["state_seen"]["run_id"] == rec["run_id"]
    left = cheap_stamp(module, None)
    assert left is not None
    rec["state_seen"] = dataclasses.replace(left, run_id=rec["run_id"]).to_json()
    h.write_record(ref, rec)


def _report(h: Hyops, module: Path) -> tuple[int, dict[str, Any]]:
    out = h("reconcile", str(module), "--ref", "lost", "--json")
    assert out.returncode in (0, 3), out.stderr
    return out.returncode, json.loads(out.stdout)


def _findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [module] = report["modules"]
    return {f["code"]: f for f in module["findings"]}


def _paste(h: Hyops, command: str) -> subprocess.CompletedProcess[str]:
    """Run a printed `hyops ...` command exactly as printed, from the test's directory."""
    words = shlex.split(command)
    assert words[0] == "hyops", command
    done = subprocess.run([HYOPS, *words[1:]], cwd=h.workdir, env=h.env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def test_an_object_the_engine_dropped_after_its_failed_update_is_put_back_by_the_advice_with_no_duplicate(
    hyops: Hyops, faults_file: Callable[..., Path]
) -> None:
    module = hyops.workdir / "modules" / "lost"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NETWORK)
    _run(hyops, "apply", str(module), "--ref", "lost")
    [net] = [o["id"] for o in hyops.sim_objects()]
    faults_file([{"type": "sim_network", "op": "update", "mode": "fail", "times": 1}])
    _run(hyops, "apply", str(module), "--ref", "lost", "--var", "cidr=10.1.0.0/16", expect=1)
    _engine_drops(hyops, module, "lost", "sim_network.net")

    code, report = _report(hyops, module)

    assert code == 3
    lost = _findings(report)["lost_from_state"]
    assert "state_missing" not in _findings(report)
    assert net in lost["detail"]
    assert lost["next_actions"] == [f"hyops reconcile modules/lost --ref lost --import sim_network.net={net}"]
    _run(hyops, "reconcile", str(module), "--ref", "lost", "--write", expect=3)  # settles nothing
    assert hyops.record("lost")["resources"]["sim_network.net"]["id"] == net

    _paste(hyops, lost["next_actions"][0])
    _run(hyops, "apply", str(module), "--ref", "lost", "--var", "cidr=10.1.0.0/16")

    assert [o["id"] for o in hyops.sim_objects()] == [net]  # put back, never made twice
    assert hyops.record("lost")["status"] == "ok"
    assert _report(hyops, module)[0] == 0
