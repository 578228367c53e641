"""Another writer: a teammate's raw `terraform`, a script's `state rm`/`import`, write the state
of a module hyops manages (issue 44, docs/recovery.md: Another writer).

Each test runs `hyops` on the real engine and the sim provider, then the engine itself in the
module as a person would, then follows reconcile's advice to the letter (the steps, then the
alternative the test's story chooses) until reconcile says consistent; at the end no sim
object is live that neither the state nor the record holds.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, findings, reconcile, run_ok, write_module
from tests.integration.hyops_cli import Hyops
from tests.integration.stacks import StackEnv, statuses

pytestmark = pytest.mark.integration

SIZED_VM = SIM_HEADER + """
variable "size" {
  type    = string
  default = "small"
}
resource "sim_network" "net" {
  name = "writer-net"
}
resource "sim_vm" "web" {
  name       = "writer-vm"
  size       = var.size
  network_id = sim_network.net.id
}
"""




def _engine(h: Hyops, module: Path, *args: str) -> None:
    """The engine itself in the module, as a teammate runs it (hyops's CLI config for the sim)."""
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run([h.engine, *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def _record(h: Hyops, ref: str = "m") -> dict[str, Any]:
    rec = h.record(ref)
    assert rec is not None
    return rec


def _follow(h: Hyops, command: str) -> subprocess.CompletedProcess[str]:
    """Run one command reconcile advised, as pasted (it starts with `hyops`)."""
    words = shlex.split(command)
    assert words[0] == "hyops", command
    return h(*words[1:])


def _sim_ids(h: Hyops, kind: str) -> set[str]:
    return {o["id"] for o in h.sim_objects() if o["type"] == kind}


def _state_ids(module: Path) -> set[str]:
    doc = json.loads((module / "terraform.tfstate").read_text())
    return {i["attributes"]["id"] for r in doc["resources"] for i in r["instances"]}


def _size(h: Hyops, object_id: str) -> str:
    [obj] = [o for o in h.sim_objects() if o["id"] == object_id]
    return str(obj.get("attributes", obj).get("size"))


def test_a_raw_apply_that_changes_an_object_is_reported_and_never_reverted_before_a_plan(hyops: Hyops) -> None:
    """A teammate's `terraform apply -var size=large`: status and reconcile said ok/consistent,
    exit 0, and the next hyops apply silently put the vm back."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    seen = _record(hyops)["state_seen"]
    vm = _record(hyops)["resources"]["sim_vm.web"]["id"]
    assert seen["run_id"] == _record(hyops)["run_id"] and seen["objects"]["sim_vm.web"]["id"] == vm
    run_ok(hyops, "status", str(module))

    _engine(hyops, module, "apply", "-auto-approve", "-input=false", "-var", "size=large")

    status = run_ok(hyops, "status", str(module), "--json", expect=3)
    written = json.loads(status.stdout)["state_written_outside"]
    assert written["changed"] == [{"address": "sim_vm.web", "id": vm}] and written["since_run"] == seen["run_id"]
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3, report
    found = findings(report)["state_written_outside"]
    assert found["addresses"] == ["sim_vm.web"]
    assert [shlex.split(step)[1] for step in found["next_actions"]] == ["plan"], found
    assert not any(" apply " in step for step in found["next_actions"]), found

    # the teammate's change is meant: it goes into the configuration, then the advice is followed
    (module / "main.tf").write_text(SIZED_VM.replace('default = "small"', 'default = "large"'))
    for step in found["next_actions"]:
        assert _follow(hyops, step).returncode == 0
    [keep] = [alt["command"] for alt in found["alternatives"] if "--write" in alt["command"]]
    assert _follow(hyops, keep).returncode == 0

    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert (code, report["consistent"]) == (0, True), report
    run_ok(hyops, "status", str(module))
    assert _size(hyops, vm) == "large"
    assert _sim_ids(hyops, "sim_vm") | _sim_ids(hyops, "sim_network") <= _state_ids(module)


def test_a_state_of_another_lineage_in_place_of_the_modules_is_reported(hyops: Hyops) -> None:
    """Another environment's committed state file replaced the module's: a new lineage."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    doc = json.loads((module / "terraform.tfstate").read_text())
    doc["lineage"] = "0000-another-environment"
    (module / "terraform.tfstate").write_text(json.dumps(doc))

    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3, report
    assert "state_written_outside" in findings(report), report
    status = run_ok(hyops, "status", str(module), "--json", expect=3)
    assert json.loads(status.stdout)["state_written_outside"]["other_lineage"] is True


def test_a_state_rm_then_a_raw_apply_keeps_the_lost_object_in_the_record_until_a_person_forgets_it(
        hyops: Hyops) -> None:
    """`state rm sim_vm.web` then a raw apply made a second vm at the address: reconcile forgot
    the first, advised apply, and ended consistent with the first vm live and unheld."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    lost = _record(hyops)["resources"]["sim_vm.web"]["id"]
    _engine(hyops, module, "state", "rm", "sim_vm.web")
    _engine(hyops, module, "apply", "-auto-approve", "-input=false")
    second = next(iter(_sim_ids(hyops, "sim_vm") - {lost}))

    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3, report
    found = findings(report)
    missing = found["state_missing"]
    assert missing["addresses"] == ["sim_vm.web"] and lost in missing["detail"] and second in missing["detail"]
    every = missing["next_actions"] + [a["command"] for a in missing["alternatives"]]
    assert not any(shlex.split(c)[1:2] == ["apply"] for c in every if c.startswith("hyops")), every
    assert any(lost in c for c in every) and any("state rm" in c for c in every), every
    written = found["state_written_outside"]
    assert lost in written["detail"] and second in written["detail"]

    # no --write is offered before the lost object is settled (issue 54); run anyway, the gate keeps the
    # lost entry, and nothing advises an apply over it
    assert not any("--write" in a["command"] for a in written["alternatives"]), written
    assert hyops("reconcile", str(module), "--write").returncode in (0, 3)
    assert _record(hyops)["resources"]["sim_vm.web"]["id"] == lost
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3 and "state_missing" in findings(report), report
    for f in report["modules"][0]["findings"]:
        assert not any(shlex.split(c)[1:2] == ["apply"] for c in f["next_actions"]), f

    # the story: the team keeps the state's vm; the advice says delete the lost one, then forget it
    [keep_state] = [a for a in findings(report)["state_missing"]["alternatives"] if "--forget-missing" in a["command"]]
    assert f"hyops sim rm {lost}" in keep_state["when"]
    run_ok(hyops, "sim", "rm", lost)
    assert _follow(hyops, keep_state["command"]).returncode in (0, 3)
    code, report = _follow_remaining(hyops, module)
    assert (code, report["consistent"]) == (0, True), report
    assert _sim_ids(hyops, "sim_vm") == {second}
    assert _sim_ids(hyops, "sim_vm") | _sim_ids(hyops, "sim_network") <= _state_ids(module)


def _follow_remaining(h: Hyops, module: Path, rounds: int = 3) -> tuple[int, dict[str, Any]]:
    """Follow each remaining finding's next actions to the letter, up to `rounds` times, until
    reconcile says consistent; its last exit code and report."""
    for _ in range(rounds):
        code, report = reconcile(h, str(module), expect=(0, 3))
        if code == 0:
            return code, report
        for f in report["modules"][0]["findings"]:
            for step in f["next_actions"]:
                assert _follow(h, step).returncode in (0, 3), step
    return reconcile(h, str(module), expect=(0, 3))


def _follow_engine(h: Hyops, command: str) -> None:
    """Run one engine command reconcile advised, as pasted (`ENGINE -chdir=DIR ...`)."""
    words = shlex.split(command)
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run(words, cwd=h.workdir, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_state_mv_the_configuration_does_not_declare_is_never_settled_by_write(hyops: Hyops) -> None:
    """`state mv sim_vm.web sim_vm.web2`, no configuration change: reconcile called it harmless,
    `--write` settled it, exit 0, and the next apply replaced the live vm."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    vm = _record(hyops)["resources"]["sim_vm.web"]["id"]
    _engine(hyops, module, "state", "mv", "sim_vm.web", "sim_vm.web2")

    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3, report
    moved = findings(report)["moved_in_state"]
    assert moved["addresses"] == ["sim_vm.web"] and not moved["next_actions"], moved
    commands = [a["command"] for a in moved["alternatives"]]
    assert not any("--write" in c for c in commands), commands
    assert "sim_vm.web2" in findings(report)["state_written_outside"]["detail"]

    # --write does not follow the move: the record keeps the address the configuration declares
    run_ok(hyops, "reconcile", str(module), "--write", expect=3)
    assert _record(hyops)["resources"]["sim_vm.web"]["id"] == vm
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3 and "moved_in_state" in findings(report), report

    # the advice, to the letter: move it back, then what reconcile says next
    [back] = [c for c in [a["command"] for a in findings(report)["moved_in_state"]["alternatives"]] if "state mv" in c]
    _follow_engine(hyops, back)
    for _ in range(3):
        code, report = reconcile(hyops, str(module), expect=(0, 3))
        if code == 0:
            break
        for f in report["modules"][0]["findings"]:
            for step in f["next_actions"]:
                assert _follow(hyops, step).returncode in (0, 3), step
            keep = [a["command"] for a in f["alternatives"] if "--write" in a["command"]]
            if keep:
                assert _follow(hyops, keep[0]).returncode in (0, 3)
    assert (code, report["consistent"]) == (0, True), report
    run_ok(hyops, "apply", str(module))
    assert _sim_ids(hyops, "sim_vm") == {vm}, "the vm was never replaced"


SPARE_NET = """
resource "sim_network" "spare" {
  name = "spare-net"
}
"""


@pytest.mark.parametrize("settle", ["write", "apply"])
def test_an_object_another_writer_imported_is_listed_in_the_record_as_not_made_by_hyops(
        hyops: Hyops, settle: str) -> None:
    """A raw `terraform import` into a new block: the record never listed the object, and
    reconcile said consistent."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    other = write_module(hyops, SIM_HEADER + SPARE_NET, "other")
    run_ok(hyops, "apply", str(other))
    spare = _record(hyops, "other")["resources"]["sim_network.spare"]["id"]
    _engine(hyops, other, "state", "rm", "sim_network.spare")  # a script hands the network over
    (module / "main.tf").write_text(SIZED_VM + SPARE_NET.replace('"spare" {', '"extra" {'))
    _engine(hyops, module, "import", "-input=false", "sim_network.extra", spare)

    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3, report
    written = findings(report)["state_written_outside"]
    assert written["addresses"] == ["sim_network.extra"] and spare in written["detail"]
    for step in written["next_actions"]:
        assert _follow(hyops, step).returncode == 0
    [chosen] = [a["command"] for a in written["alternatives"] if ("--write" in a["command"]) == (settle == "write")]
    assert _follow(hyops, chosen).returncode == 0

    entry = _record(hyops)["resources"]["sim_network.extra"]
    assert (entry["id"], entry.get("outside")) == (spare, True), entry
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert (code, report["consistent"]) == (0, True), report
    run_ok(hyops, "status", str(module))
    assert _record(hyops)["resources"]["sim_network.extra"].get("outside") is True  # kept, reported once


def test_resume_never_skips_a_member_whose_state_another_writer_changed(applied: StackEnv) -> None:
    """A raw apply in a member after the stack went green: `--resume` skipped it as "ok,
    nothing changed" and the stack went green over a state hyops did not write."""
    before = applied.hyops.record("demo/network")["run_id"]
    _engine(applied.hyops, applied.directory / "network", "apply", "-auto-approve", "-input=false",
            "-var", "cidr=10.9.0.0/16")

    result = applied.stack("apply", "stack/stack.yml", "--resume")

    assert result.returncode == 0, result.stdout + result.stderr
    assert statuses(applied.report())["network"] == "ok"
    assert applied.hyops.record("demo/network")["run_id"] != before
    assert "[network] apply (its state was written outside hyops" in result.stderr
    skipped = [line for line in result.stderr.splitlines() if "skip (ok, nothing changed" in line]
    assert skipped and all("state serial" in line for line in skipped), result.stderr


def test_a_teammates_object_reconcile_saw_before_a_rollback_is_adopted_back_never_made_twice(hyops: Hyops) -> None:
    """A teammate's `apply -replace` made a second vm (hyops's deleted); reconcile saw it in
    the state, read-only; the teammate then pushed the state copy from before the replace. The
    state is as hyops left it again, its vm gone, and only reconcile's earlier look knows the
    teammate's vm lives: a plain apply refuses (it would make a second writer-vm), and the
    printed advice, followed to the letter, adopts the teammate's vm back."""
    module = write_module(hyops, SIZED_VM)
    run_ok(hyops, "apply", str(module))
    mine = _record(hyops)["resources"]["sim_vm.web"]["id"]
    older = (module / "terraform.tfstate").read_text()
    _engine(hyops, module, "apply", "-auto-approve", "-input=false", "-replace=sim_vm.web")
    [theirs] = _sim_ids(hyops, "sim_vm")
    assert theirs != mine
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    assert code == 3 and "state_written_outside" in findings(report), report

    rollback = module / "older.tfstate"
    rollback.write_text(older)
    _engine(hyops, module, "state", "push", "-force", rollback.name)
    rollback.unlink()

    refused = hyops("apply", str(module))
    assert refused.returncode == 4 and theirs in refused.stderr, refused.stdout + refused.stderr
    code, report = reconcile(hyops, str(module), expect=(0, 3))
    missing = findings(report)["state_missing"]
    assert code == 3 and theirs in missing["detail"], report
    for step in missing["next_actions"]:
        if step.startswith("hyops"):
            assert _follow(hyops, step).returncode in (0, 3), step
        else:
            _follow_engine(hyops, step)
    code, report = _follow_remaining(hyops, module)
    assert (code, report["consistent"]) == (0, True), json.dumps(report["modules"][0]["findings"], indent=1)
    assert _sim_ids(hyops, "sim_vm") == {theirs}
    assert _record(hyops)["resources"]["sim_vm.web"]["id"] == theirs
