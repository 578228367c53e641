"""`hyops reconcile` advice that must agree with the evidence (issue 10, cases 1, 4, 5, 6, 11).

Each test provokes its sequence on the real engine and the sim cloud, through the `hyops`
console script, and reads only the documented JSON (or unwrapped human lines). Kills are
gated on what the test observes (an `apply_start` line in the run's events.jsonl), and a
hang is a `hang_until` gate the test never opens (it kills the engine's process group).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.sim.install import sim_engine_env
from tests.integration.helpers import SIM_HEADER, VM_PAIR_TF, findings, reconcile
from tests.integration.hyops_cli import Hyops, engine_processes, wait_for

pytestmark = pytest.mark.integration




def orphans_by_address(doc: dict[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    module = next(m for m in doc["modules"] if m["module_ref"] == ref)
    return {f["addresses"][0]: f for f in module["findings"] if f["code"] == "suspect_orphan"}


def every_command(doc: dict[str, Any]) -> list[str]:
    out = []
    for module in doc["modules"]:
        for f in module["findings"]:
            out += f["next_actions"]
            out += [alt["command"] for alt in f.get("alternatives", [])]
    return out


def hang_forever(faults_file: Callable[..., Path], tmp_path: Path, **rule: Any) -> None:
    """A `hang` the test never releases (the gate file is never created)."""
    faults_file([{"mode": "hang", "hang_until": str(tmp_path / "never-released"), **rule}])


def _groups_alive(groups: set[int]) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) in groups:
            return True
    return False


def kill_run(proc: subprocess.Popen[str], module_dir: Path) -> None:
    """SIGKILL hyops, then the engine's own process group (engine and provider plugins)."""
    groups = set()
    for pid in engine_processes(module_dir):
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    groups.discard(os.getpgrp())
    proc.kill()
    proc.wait(timeout=30)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_for(lambda: engine_processes(module_dir) == [] and not _groups_alive(groups),
             what="the engine and its plugins to be gone")


def events_of_running_run(hyops: Hyops, ref: str) -> list[dict[str, Any]]:
    rec = hyops.record(ref) or {}
    if rec.get("status") != "running":
        return []
    path = hyops.runtime_root / "runs" / ref / rec["run_id"] / "events.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def apply_started(hyops: Hyops, ref: str, addr: str, action: str = "create") -> bool:
    return any(e.get("type") == "apply_start" and e.get("hook", {}).get("resource", {}).get("addr") == addr
               and e.get("hook", {}).get("action") == action for e in events_of_running_run(hyops, ref))


def test_a_replace_killed_after_its_delete_completed_never_suggests_importing_the_deleted_id(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Case 5: apply name=a; apply name=b (a replace: delete completes, the create hangs);
    SIGKILL hyops and its engine. The deleted id must not be offered to --import, before or
    after --write; the started create is a suspect orphan that says "started"."""
    module = module_copy("network")
    assert hyops("apply", "modules/network", "--var", "name=net-a").returncode == 0
    [old] = hyops.sim_objects()
    hang_forever(faults_file, tmp_path, type="sim_network", op="create")
    proc = hyops.start("apply", "modules/network", "--var", "name=net-b")
    wait_for(lambda: apply_started(hyops, "network", "sim_network.this"), what="the replacement's apply_start")
    kill_run(proc, module)
    faults_file([])
    assert hyops.sim_objects() == []  # the delete did complete
    events = events_of_running_run(hyops, "network")
    assert any(e.get("type") == "apply_complete" and e["hook"]["action"] == "delete" for e in events)

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    assert not any(old["id"] in command for command in every_command(doc)), every_command(doc)
    assert "state_missing" not in findings(doc, "network")
    orphan = orphans_by_address(doc, "network")["sim_network.this"]
    assert orphan["evidence"] == "started"
    assert orphan["planned_attributes"]["name"] == "net-b"

    hyops("reconcile", "modules/network", "--write")
    code, doc = reconcile(hyops, "modules/network")

    rec = hyops.record("network")
    assert rec["status"] in ("error", "absent")  # absent: the state is empty; the orphan stays listed
    assert [o["address"] for o in rec["suspect_orphans"]] == ["sim_network.this"]
    assert old["id"] not in json.dumps(rec.get("resources"))
    assert not any(old["id"] in command for command in every_command(doc)), every_command(doc)
    assert "state_missing" not in findings(doc, "network")
    assert orphans_by_address(doc, "network")["sim_network.this"]["evidence"] == "started"


@pytest.fixture
def pair_tf() -> str:
    return VM_PAIR_TF


@pytest.mark.parametrize("stream", ["complete", "cut_short"])
def test_an_orphan_only_planned_says_planned_and_shows_what_identifies_it_in_the_provider(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path, stream: str
) -> None:
    """Cases 5 and 11: SIGKILL while the network create hangs; the vm was only planned (it
    waits for the network). The network's orphan says "started"; each orphan shows the
    planned name, in JSON and in the human text. The vm is a suspect ("planned, may have
    started") only when the run's events may be cut short (no events.complete: the relay
    did not see the engine's end); a complete stream proves it never started."""
    hang_forever(faults_file, tmp_path, type="sim_network", op="create")
    proc = hyops.start("apply", "modules/pair")
    wait_for(lambda: apply_started(hyops, "pair", "sim_network.net"), what="the network's apply_start")
    run_dir = hyops.runtime_root / "runs" / "pair" / hyops.record("pair")["run_id"]
    kill_run(proc, pair)
    faults_file([])
    wait_for((run_dir / "events.complete").exists, what="the relay to reach the engine's end")
    if stream == "cut_short":
        (run_dir / "events.complete").unlink()

    for write in (False, True):
        if write:
            hyops("reconcile", "modules/pair", "--write")
            assert hyops.record("pair")["status"] in ("error", "absent")  # the state is empty
        code, doc = reconcile(hyops, "modules/pair")

        assert code == 3
        orphans = orphans_by_address(doc, "pair")
        assert orphans["sim_network.net"]["evidence"] == "started"
        assert orphans["sim_network.net"]["planned_attributes"]["name"] == "pair-net"
        if stream == "complete":
            assert "sim_vm.vm" not in orphans
            continue
        assert orphans["sim_vm.vm"]["evidence"] == "planned"
        assert "planned, may have started" in orphans["sim_vm.vm"]["detail"]
        assert "started" not in orphans["sim_vm.vm"]["detail"].replace("may have started", "")
        assert orphans["sim_vm.vm"]["planned_attributes"]["name"] == "pair-vm"
        assert "network_id" not in orphans["sim_vm.vm"]["planned_attributes"]  # unknown until made

    human = " ".join(hyops("reconcile", "modules/pair").stdout.replace("\n", " ").split())
    assert 'name="pair-net"' in human
    assert ('name="pair-vm"' in human) is (stream == "cut_short")


def test_drift_offers_apply_and_destroy_as_alternatives_never_as_consecutive_steps(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """Case 6: an object deleted behind the engine's back is drift; followed literally, the
    old "next actions, in order: 1. apply 2. destroy" destroyed what apply had just fixed."""
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    [live] = hyops.sim_objects()
    (hyops.sim_root / "objects" / f"{live['id']}.json").unlink()

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    drift = findings(doc, "network")["drift"]
    assert drift["next_actions"] == []
    assert [a["command"] for a in drift["alternatives"]] == [
        "hyops apply modules/network --ref network", "hyops destroy modules/network --ref network"]
    assert all(a["when"] for a in drift["alternatives"])
    lines = hyops("reconcile", "modules/network").stdout.splitlines()
    steps = [ln.strip() for ln in lines if ln.strip()[:1].isdigit()]
    assert not any("hyops destroy" in s for s in steps), lines
    assert any(ln.strip().startswith("a. hyops apply") for ln in lines), lines
    assert any(ln.strip().startswith("b. hyops destroy") for ln in lines), lines


REQUIRED_NAME_TF = SIM_HEADER + """variable "name" {
  type = string
}
resource "sim_network" "net" {
  name = var.name
}
"""


def test_a_suggested_apply_names_the_var_its_rerun_file_cannot_supply(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    """Case 6: the run's required input came from --var and rerun.inputs.yml cannot rebuild
    it (the runtime root's config/ was not kept); the pasted apply failed with exit 2. Now
    it names `--var name=<value>`; filled in, it runs."""
    module = tmp_path / "modules" / "req"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(REQUIRED_NAME_TF)
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_after_create", "times": 1}])
    assert hyops("apply", "modules/req", "--var", "name=n1").returncode == 1
    faults_file([])
    (hyops.runtime_root / "config" / "modules" / "req" / "rerun.inputs.yml").unlink()

    _, doc = reconcile(hyops, "modules/req")

    applies = [c for c in every_command(doc) if c.startswith("hyops apply")]
    assert applies and all("--var 'name=<value>'" in c for c in applies), applies
    argv = [arg.replace("<value>", "n1") for arg in shlex.split(applies[0])]
    pasted = hyops(*argv[1:])
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr


def test_forget_orphan_exits_0_once_its_finding_is_gone_though_partial_apply_remains(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    """Case 6: a lost create response; the operator checked and forgets the orphan. The
    orphan finding is gone; the unrelated partial_apply is still printed, and exit is 0."""
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1

    forgot = hyops("reconcile", "modules/network", "--forget-orphan", "sim_network.this", "--json")

    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    doc = json.loads(forgot.stdout)
    assert set(findings(doc, "network")) == {"partial_apply"}
    assert doc["consistent"] is False


def test_an_id_the_record_knows_and_the_state_lost_is_state_missing_and_write_never_settles_absent(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    """Case 1: apply; an update fails (the record knows the object's id, its entry is
    `error`); terraform.tfstate is lost. reconcile said "--write records absent" and --write
    did, over a live object. Now: state_missing with the recorded id, and no write."""
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    [live] = hyops.sim_objects()
    faults_file([{"type": "sim_network", "op": "update", "mode": "fail"}])
    assert hyops("apply", "modules/network", "--var", "cidr=10.9.0.0/16").returncode == 1
    faults_file([])
    (module / "terraform.tfstate").unlink()

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    missing = findings(doc, "network")["state_missing"]
    assert missing["addresses"] == ["sim_network.this"]
    assert f"hyops reconcile modules/network --ref network --import sim_network.this={live['id']}" in \
        missing["next_actions"]

    hyops("reconcile", "modules/network", "--write")

    assert hyops.record("network")["status"] == "error"
    code, doc = reconcile(hyops, "modules/network")
    assert code == 3 and "state_missing" in findings(doc, "network")


def test_an_ok_module_whose_state_file_was_deleted_is_state_missing_with_its_id(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """Case 1: apply, delete terraform.tfstate: never consistent, never settled empty."""
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    [live] = hyops.sim_objects()
    (module / "terraform.tfstate").unlink()

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    missing = findings(doc, "network")["state_missing"]
    assert f"hyops reconcile modules/network --ref network --import sim_network.this={live['id']}" in \
        missing["next_actions"]
    hyops("reconcile", "modules/network", "--write")
    assert hyops.record("network")["status"] == "error"


def test_write_never_settles_a_stale_record_while_a_live_engine_holds_the_state_lock(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path, runtime_root: Path
) -> None:
    """Case 4: SIGKILL an apply mid-create (stale running); another engine process holds the
    state lock (its create hangs). --write settled running -> error on plans that failed on
    that lock; now it writes nothing, says why, and exits 1."""
    hang_forever(faults_file, tmp_path, type="sim_vm", op="create")
    proc = hyops.start("apply", "modules/pair")
    wait_for(lambda: apply_started(hyops, "pair", "sim_vm.vm"), what="the vm's apply_start")
    kill_run(proc, pair)
    before = hyops.record_path("pair").read_bytes()
    env = dict(os.environ)
    env.update(sim_engine_env(runtime_root, env))
    holder = subprocess.Popen([hyops.engine, "apply", "-auto-approve", "-input=false", "-json"], cwd=pair,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    try:
        wait_for(lambda: len([c for c in hyops.sim_calls() if c["op"] == "create" and c["type"] == "sim_vm"]) >= 2,
                 what="the lock holder's vm create")

        written = hyops("reconcile", "modules/pair", "--write", "--json")

        assert hyops.record_path("pair").read_bytes() == before  # still running, untouched
        assert written.returncode == 1, written.stdout + written.stderr
        doc = json.loads(written.stdout)
        module = doc["modules"][0]
        assert module["checked"] is False
        assert any("not settled" in a["detail"] for a in module["actions"]), module["actions"]
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)


def test_a_dead_hyops_whose_engine_still_runs_is_engine_running_and_never_settled(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path, runtime_root: Path
) -> None:
    """Case 4: hyops was SIGKILLed while its engine went on (its create hangs). reconcile
    called that a plain stale_running and --write settled it; now: engine_running naming
    the pid and run, nothing written, and stale_running once the engine is gone. The live
    engine is a real engine process, named in the run's engine.json as hyops names its own."""
    from hybridops_tf.runtime import liveness

    hang_forever(faults_file, tmp_path, type="sim_vm", op="create")
    proc = hyops.start("apply", "modules/pair")
    wait_for(lambda: apply_started(hyops, "pair", "sim_vm.vm"), what="the vm's apply_start")
    kill_run(proc, pair)
    run_id = hyops.record("pair")["run_id"]
    env = dict(os.environ)
    env.update(sim_engine_env(runtime_root, env))
    engine = subprocess.Popen([hyops.engine, "apply", "-auto-approve", "-input=false", "-json"], cwd=pair,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        liveness.write_note(runtime_root / "runs" / "pair" / run_id, engine.pid, run_id)
        before = hyops.record_path("pair").read_bytes()

        code, doc = reconcile(hyops, "modules/pair")
        written = hyops("reconcile", "modules/pair", "--write", "--json")

        assert code == 3
        [finding] = doc["modules"][0]["findings"]
        assert finding["code"] == "engine_running"
        assert f"pid {engine.pid}" in finding["detail"] and run_id in finding["detail"]
        assert f"kill {engine.pid}" in [a["command"] for a in finding["alternatives"]]
        assert written.returncode == 3, written.stdout + written.stderr
        assert hyops.record_path("pair").read_bytes() == before
    finally:
        os.killpg(engine.pid, signal.SIGKILL)
        engine.wait(timeout=30)
    wait_for(lambda: not _groups_alive({engine.pid}), what="the engine's group to be gone")

    code, doc = reconcile(hyops, "modules/pair")

    assert code == 3 and "stale_running" in findings(doc, "pair")
