"""A complete event stream decides what an interrupted run may have created.

When hyops is killed, the event relay stops the engine gracefully and drains it to the end of
its output into events.jsonl, then writes events.complete. Those events are then all the
engine did: a create it planned and never started is not a suspect orphan, whatever killed
hyops. Before, every planned create of a killed run was listed ("no start of it was seen:
hyops stopped reading"), and the module needed a person to clear it.

Reproduced on the real engine: network, vm and a health check on the vm; the vm create is
parked on a gate, hyops's process group is SIGKILLed (a CI runner's cancel), the gate is
released; the health check was planned and never started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.gates import Gate, kill_engines
from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import HYOPS, Hyops, engine_processes, wait_for

CHAIN_TF = SIM_HEADER + """
variable "more" {
  type    = bool
  default = false
}
resource "sim_network" "net" {
  name = "chain-net"
}
resource "sim_vm" "vm" {
  count      = var.more ? 1 : 0
  name       = "chain-vm"
  network_id = sim_network.net.id
}
resource "sim_health_check" "hc" {
  count     = var.more ? 1 : 0
  name      = "chain-hc"
  target_id = sim_vm.vm[0].id
}
"""
VM, CHECK = "sim_vm.vm[0]", "sim_health_check.hc[0]"


def _events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _started(run_dir: Path, address: str) -> bool:
    return any(e.get("type") == "apply_start" and ((e.get("hook") or {}).get("resource") or {}).get("addr") == address
               for e in _events(run_dir))


def _orphans(report: dict[str, Any]) -> set[str]:
    return {a for m in report["modules"] for f in m["findings"] if f["code"] == "suspect_orphan"
            for a in f.get("addresses", [])}


def test_a_create_planned_and_never_started_is_no_suspect_when_the_stream_is_complete(
    hyops: Hyops, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    module = tmp_path / "modules" / "chain"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(CHAIN_TF)
    assert hyops("apply", "modules/chain").returncode == 0
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create")])
    try:
        with (tmp_path / "hyops.out").open("wb") as out:
            proc = subprocess.Popen([HYOPS, "apply", "modules/chain", "--var", "more=true"], cwd=hyops.workdir,
                                    env=hyops.env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        gate.wait_started(proc, output=tmp_path / "hyops.out")
        # the run the record names (`running` before its engine started): run ids order runs
        # only to the second, so the greatest name need not be the last run
        run_dir = hyops.runtime_root / "runs" / "chain" / hyops.record("chain")["run_id"]
        wait_for(lambda: _started(run_dir, VM), what="hyops to log the vm's apply_start")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        gate.release()
        wait_for((run_dir / "events.complete").exists, timeout=120, what="the relay to reach the engine's end")
        wait_for(lambda: not engine_processes(module), timeout=120, what="the engine to stop")
        assert not _started(run_dir, CHECK), "the health check started: the test lost its point"

        report = json.loads(hyops("reconcile", "modules/chain", "--json").stdout)
        assert CHECK not in _orphans(report), report
        assert _orphans(report) <= {VM}

        settled = hyops("reconcile", "modules/chain", "--write")
        assert settled.returncode in (0, 3), settled.stdout + settled.stderr
        record = hyops.record("chain")
        assert record is not None and record["status"] in ("error", "ok")
        assert CHECK not in {o["address"] for o in record.get("suspect_orphans") or []}
    finally:
        gate.release()
        kill_engines(module)
