"""hyops killed after its engine exited 0 and before it settled: reconcile must retire every
object whose delete the run's stream shows done, deposed ones included.

The scene, on a modern engine: a create_before_destroy replace whose create fails leaves the
old object deposed (`sim_vm.a (deposed KEY)` in the record) and the new one tainted. The
advised apply deletes both at once; Terraform 1.11 reports one delete completion for the two.
hyops is then killed while its engine has exited 0 but before the settle. The kill is exact:
the engine is a wrapper that runs the real engine, closes its output (so hyops reads the
whole stream) and then waits on a file the test never writes, so hyops cannot settle.

Was: reconcile counted one delete per address, never the deposed one, and kept claiming the
deposed object live; the advised `--import` of a deposed key could never succeed.
"""

from __future__ import annotations

import json
import os
import signal
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops, wait_for

pytestmark = pytest.mark.integration

MODULE = """
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}

provider "sim" {}

resource "sim_network" "net" {
  name = "net-1"
  cidr = "10.0.0.0/16"
}

resource "sim_vm" "a" {
  name       = "vm-a"
  network_id = sim_network.net.id
  lifecycle {
    create_before_destroy = true
  }
}
"""

# Runs the real engine; an `apply` while ARM exists then closes its output, says so in
# HELD, and waits for RELEASE (never written by the test: hyops is killed meanwhile).
WRAPPER = """#!/bin/sh
"{engine}" "$@"
rc=$?
for arg in "$@"; do
  if [ "$arg" = apply ] && [ -e "{arm}" ]; then
    exec 1>&- 2>&-
    echo "$rc" > "{held}"
    while [ ! -e "{release}" ]; do sleep 0.05; done
  fi
done
exit $rc
"""


def _wrapper(tmp_path: Path, engine: str) -> tuple[Path, Path, Path, Path]:
    arm, held, release = tmp_path / "hold.arm", tmp_path / "hold.held", tmp_path / "hold.release"
    path = tmp_path / "engine-wrapper"
    path.write_text(WRAPPER.format(engine=engine, arm=arm, held=held, release=release))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, arm, held, release


def test_a_deposed_delete_done_before_hyops_was_killed_is_not_claimed_live(
        modern_engine: str, tmp_path: Path, runtime_root: Path, sim_root: Path,
        faults_file: Callable[..., Path]) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(MODULE)
    wrapper, arm, held, release = _wrapper(tmp_path, modern_engine)
    hyops = Hyops(tmp_path, runtime_root, str(wrapper), sim_root, {})
    target = (str(module), "--ref", "mod")

    first = hyops("apply", *target)
    assert first.returncode == 0, first.stderr
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])
    failed = hyops("apply", *target, "--", "-replace=sim_vm.a")
    assert failed.returncode == 1, failed.stderr
    deposed = [key for key in hyops.record("mod")["resources"] if "deposed" in key]
    assert deposed, hyops.record("mod")  # the scene: the old object is deposed in the record

    arm.touch()
    proc = hyops.start("apply", *target)
    try:
        wait_for(held.exists, timeout=240, what="the engine to exit inside the wrapper")
        assert held.read_text().strip() == "0"  # the engine succeeded: both deletes are done
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
    arm.unlink()
    assert hyops.record("mod")["status"] == "running"  # killed before the settle, as meant

    report = hyops("reconcile", *target, "--json")
    doc = json.loads(report.stdout)
    findings = doc["modules"][0]["findings"]
    claimed = [address for finding in findings for address in finding.get("addresses", [])]
    advised = [action for finding in findings for action in finding["next_actions"]]
    assert not [a for a in claimed if "deposed" in a], report.stdout
    assert not [a for a in advised if "deposed" in a], report.stdout

    settled = hyops("reconcile", *target, "--write")
    assert settled.returncode in (0, 3), settled.stderr
    after = hyops.record("mod")
    assert not [k for k in after["resources"] if "deposed" in k and after["resources"][k].get("id")], after
    destroyed = hyops("destroy", *target)
    assert destroyed.returncode == 0, destroyed.stderr + destroyed.stdout
    assert hyops.sim_objects() == []
