"""Ctrl-C in a terminal during a slow create: the sim provider stops as a Go provider does.

A terminal's Ctrl-C goes to the whole foreground process group. hyops passes it on to the
engine's group (the engine and its provider plugins). A Go provider (go-plugin) ignores
SIGINT; the engine sends it StopProvider, waits for the call in flight, saves state and shuts
the plugin down. Before, the sim provider died of the SIGINT and stopped its gRPC server on
StopProvider: the engine read "Plugin did not respond" for a create that may have happened.

The create here hangs on a gate with `on_stop: finish` (a call the stop cannot cut short);
the gate opens only once the provider logged the engine's StopProvider, so the create
provably finishes after the stop, with no sleep to win a race.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.hyops_cli import HYOPS, Hyops, wait_for
from tests.reliability.procs import alive

pytestmark = pytest.mark.integration

VM = "sim_vm.vm[0]"


def _stops_to(hyops: Hyops, provider_pid: int) -> list[dict[str, Any]]:
    return [c for c in hyops.sim_calls() if c["op"] == "stop" and c["pid"] == provider_pid]


def _state_ids(module: Path) -> dict[str, str]:
    """address -> id of every object in the module's local state file."""
    state = json.loads((module / "terraform.tfstate").read_text())
    found = {}
    for res in state["resources"]:
        for inst in res["instances"]:
            key = f"[{inst['index_key']!r}]".replace("'", '"') if "index_key" in inst else ""
            found[f"{res['type']}.{res['name']}{key}"] = inst["attributes"]["id"]
    return found


def test_ctrl_c_during_a_slow_create_lets_it_finish_into_state_and_record(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    assert hyops("apply", "modules/pair").returncode == 0  # the network exists, init done
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create", on_stop="finish")])
    proc = subprocess.Popen([HYOPS, "apply", "modules/pair", "--var", "with_vm=true"], cwd=hyops.workdir,
                            env=hyops.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # hyops leads its group, as a shell's foreground job
    try:
        provider = gate.wait_started(proc)["pid"]
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        wait_for(lambda: _stops_to(hyops, provider), what="the engine's StopProvider to reach the provider")
        assert alive(provider), "the provider died of the interrupt instead of finishing its call"
        gate.release()
        out, err = proc.communicate(timeout=120)
    finally:
        gate.release()
        kill_engines(pair)

    assert proc.returncode == 130, out + err
    assert "Plugin did not respond" not in out + err
    (vm,) = [o for o in hyops.sim_objects() if o["type"] == "sim_vm"]
    assert _state_ids(pair)[VM] == vm["id"], "the finished create is missing from the state"
    rec = hyops.record("pair")
    assert rec["status"] == "error" and "interrupted" in rec["last_error"], rec
    assert rec["resources"][VM]["id"] == vm["id"], rec["resources"]
    assert rec["resources"][VM]["status"] == "complete", rec["resources"]
    assert rec.get("suspect_orphans", []) == [], rec
    assert len(_stops_to(hyops, provider)) == 1
