"""The record follows objects, not addresses, through the refactors real repositories make.

Each case runs `hyops` on the real engine and the sim provider. `moved` blocks need an engine
>= 1.1, `import` blocks 1.5, `removed` blocks 1.7: those cases run on the modern engine
found on PATH (`modern_engine`, skipped with a message where there is none); the rest run on
the bundled Terraform 1.0.3 as every integration test does.

An object's identity is its id in its provider. What each test proves, after the refactor:
the record lists the object once, at the address the state holds it under, with its id; no
`ok` record lists anything `pending`; reconcile is consistent and never advises importing an
id the state already holds or the user released; and a destroy then ends `destroyed`.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, run_ok, write_module
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import NULL_HEADER

NETWORK_AND_VM = SIM_HEADER + """
resource "sim_network" "net" {
  name = "refactor-net"
}
resource "sim_vm" "a" {
  name       = "refactor-vm"
  network_id = sim_network.net.id
}
"""


@pytest.fixture
def modern(modern_hyops: Hyops) -> Hyops:
    """`hyops` on the modern engine (>= 1.7), with this test's roots (tests/integration/modern.py)."""
    return modern_hyops




def _engine(h: Hyops, module: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """The engine itself in the module, as a person runs `terraform state mv` by hand (with
    hyops's CLI config for the sim provider, unless `env` names another)."""
    mine = {"TF_CLI_CONFIG_FILE": str(h.runtime_root / "sim" / "terraform.rc"), "HYOPS_SIM_PYTHON": sys.executable}
    env = h.env(**{**mine, **(env or {})})
    out = subprocess.run([h.engine, *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def _record(h: Hyops, ref: str = "m") -> dict[str, Any]:
    rec = h.record(ref)
    assert rec is not None
    return rec


def _resources(h: Hyops, ref: str = "m") -> dict[str, dict[str, Any]]:
    return _record(h, ref).get("resources") or {}


def _reconcile(h: Hyops, module: Path, *extra: str) -> dict[str, Any]:
    out = h("reconcile", str(module), "--json", *extra)
    assert out.returncode in (0, 3), out.stderr
    return json.loads(out.stdout)


def _advice(report: dict[str, Any]) -> list[str]:
    return [step for mod in report["modules"] for f in mod["findings"] for step in f["next_actions"]]


def _assert_honest_ok(h: Hyops, ref: str = "m") -> None:
    rec = _record(h, ref)
    assert rec["status"] == "ok", rec
    pending = {a: e for a, e in (rec.get("resources") or {}).items() if e["status"] == "pending"}
    assert not pending, f"an ok record lists pending entries: {pending}"


def _sim_ids(h: Hyops, kind: str) -> list[str]:
    return sorted(o["id"] for o in h.sim_objects() if o["type"] == kind)


def _destroy_verified(h: Hyops, module: Path) -> None:
    run_ok(h, "destroy", str(module), "--auto-approve")
    assert _record(h)["status"] == "destroyed", _record(h)


# --- moved blocks and `state mv` ---------------------------------------------------------------


def test_a_moved_block_moves_the_entry_with_its_id_and_reconcile_stays_consistent(modern: Hyops) -> None:
    module = write_module(modern, NETWORK_AND_VM)
    run_ok(modern, "apply", str(module))
    vm = _resources(modern)["sim_vm.a"]["id"]

    (module / "main.tf").write_text(NETWORK_AND_VM.replace('"sim_vm" "a"', '"sim_vm" "app"')
                                    + "moved {\n  from = sim_vm.a\n  to   = sim_vm.app\n}\n")
    run_ok(modern, "apply", str(module))

    resources = _resources(modern)
    assert "sim_vm.a" not in resources
    assert resources["sim_vm.app"]["id"] == vm and resources["sim_vm.app"]["status"] == "complete"
    _assert_honest_ok(modern)
    report = _reconcile(modern, module)
    assert report["consistent"], report
    _destroy_verified(modern, module)
    assert _sim_ids(modern, "sim_vm") == []


def test_a_state_mv_by_hand_is_a_finding_never_state_missing_until_write_follows_the_object(hyops: Hyops) -> None:
    """A read-only reconcile said consistent while the record still named the old address, and
    nothing said that `--write` follows the object."""
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))
    vm = _resources(hyops)["sim_vm.a"]["id"]
    (module / "main.tf").write_text(NETWORK_AND_VM.replace('"sim_vm" "a"', '"sim_vm" "web"'))
    _engine(hyops, module, "state", "mv", "sim_vm.a", "sim_vm.web")

    report = _reconcile(hyops, module)
    assert not report["consistent"], report
    written, found = report["modules"][0]["findings"]  # the `state mv` is another writer's (test_another_writer.py)
    assert written["code"] == "state_written_outside"
    assert (found["code"], found["addresses"]) == ("moved_in_state", ["sim_vm.a"])
    assert found["next_actions"] == [f"hyops reconcile {module.relative_to(hyops.workdir)} --ref m --write"]
    assert not any("--import" in step for step in _advice(report)), _advice(report)

    run_ok(hyops, "reconcile", str(module), "--write")
    resources = _resources(hyops)
    assert "sim_vm.a" not in resources and resources["sim_vm.web"]["id"] == vm
    _assert_honest_ok(hyops)
    assert _reconcile(hyops, module)["consistent"]
    run_ok(hyops, "apply", str(module))
    assert _resources(hyops)["sim_vm.web"]["id"] == vm
    _destroy_verified(hyops, module)


# --- objects released on purpose -----------------------------------------------------------------


def test_a_removed_block_releases_the_object_and_nothing_advises_importing_it_back(modern: Hyops) -> None:
    module = write_module(modern, NETWORK_AND_VM)
    run_ok(modern, "apply", str(module))
    vm = _resources(modern)["sim_vm.a"]["id"]

    (module / "main.tf").write_text(NETWORK_AND_VM.split('resource "sim_vm"')[0]
                                    + "removed {\n  from = sim_vm.a\n  lifecycle {\n    destroy = false\n  }\n}\n")
    plan = run_ok(modern, "plan", str(module))
    assert "sim_vm.a will no longer be managed; the object is not destroyed" in plan.stdout.splitlines()[0]
    run_ok(modern, "apply", str(module))

    rec = _record(modern)
    assert "sim_vm.a" not in (rec.get("resources") or {})
    assert [(o["address"], o["id"]) for o in rec["released"]] == [("sim_vm.a", vm)]
    _assert_honest_ok(modern)
    report = _reconcile(modern, module)
    assert report["consistent"] and not _advice(report), report
    assert report["modules"][0]["released"] == [{"address": "sim_vm.a", "id": vm}]
    _destroy_verified(modern, module)
    assert _sim_ids(modern, "sim_vm") == [vm], "a released object is not the destroy's to delete"


def test_a_state_rm_with_its_block_removed_is_released_by_reconcile_write(hyops: Hyops) -> None:
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))
    vm = _resources(hyops)["sim_vm.a"]["id"]
    (module / "main.tf").write_text(NETWORK_AND_VM.split('resource "sim_vm"')[0])
    _engine(hyops, module, "state", "rm", "sim_vm.a")

    report = _reconcile(hyops, module)  # the `state rm` is another writer's: reported, plan first
    assert [f["code"] for f in report["modules"][0]["findings"]] == ["state_written_outside"], report
    assert [step.split()[1] for step in _advice(report)] == ["plan"], report
    run_ok(hyops, "reconcile", str(module), "--write")
    assert _reconcile(hyops, module)["consistent"]

    rec = _record(hyops)
    assert rec["status"] == "ok" and "sim_vm.a" not in rec["resources"]
    assert [(o["address"], o["id"]) for o in rec["released"]] == [("sim_vm.a", vm)]
    _destroy_verified(hyops, module)


def test_a_released_object_deleted_later_is_never_said_to_live_and_forget_released_drops_it(hyops: Hyops) -> None:
    """A released object is alive when released; hyops no longer sees it. Deleted later in the
    cloud, it was still reported "lives on" forever, with no way to drop it from the record."""
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))
    vm = _resources(hyops)["sim_vm.a"]["id"]
    (module / "main.tf").write_text(NETWORK_AND_VM.split('resource "sim_vm"')[0])
    _engine(hyops, module, "state", "rm", "sim_vm.a")
    run_ok(hyops, "reconcile", str(module), "--write")
    run_ok(hyops, "sim", "rm", vm)  # deleted by hand, in the cloud

    shown = run_ok(hyops, "reconcile", str(module))
    [line] = [ln for ln in shown.stdout.splitlines() if "released:" in ln]
    assert "lives on" not in line and "--forget-released sim_vm.a" in line, line

    forgot = run_ok(hyops, "reconcile", str(module), "--forget-released", "sim_vm.a")
    rec = _record(hyops)
    assert "released" not in rec and rec["status"] == "ok", rec
    assert "released:" not in run_ok(hyops, "reconcile", str(module)).stdout
    audit = hyops.runtime_root / "runs" / "m" / rec["run_id"]
    meta, result = (json.loads((audit / name).read_text()) for name in ("meta.json", "result.json"))
    assert (meta["action"], result["forgotten"]) == ("forget-released", [
        {"address": "sim_vm.a", "id": vm, "run_id": result["forgotten"][0]["run_id"],
         "at": result["forgotten"][0]["at"]}]), forgot.stdout
    missing = hyops("reconcile", str(module), "--forget-released", "sim_vm.a")
    assert missing.returncode == 2 and "is not released" in missing.stderr, missing.stderr


def test_a_state_rm_whose_block_is_still_declared_is_state_missing_with_an_import_that_works(hyops: Hyops) -> None:
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))
    vm = _resources(hyops)["sim_vm.a"]["id"]
    _engine(hyops, module, "state", "rm", "sim_vm.a")

    report = _reconcile(hyops, module)
    assert not report["consistent"]
    imports = [step for step in _advice(report) if "--import" in step]
    assert imports == [f"hyops reconcile modules/m --ref m --import sim_vm.a={vm}"], _advice(report)
    run_ok(hyops, "reconcile", str(module), "--ref", "m", "--import", f"sim_vm.a={vm}")
    run_ok(hyops, "reconcile", str(module), "--write")
    _assert_honest_ok(hyops)
    _destroy_verified(hyops, module)
    assert _sim_ids(hyops, "sim_vm") == []


# --- imports, conditions, retired ids ----------------------------------------------------------------


def test_an_import_block_records_the_adopted_object_complete(modern: Hyops) -> None:
    module = write_module(modern, NETWORK_AND_VM)
    run_ok(modern, "apply", str(module))
    vm = _resources(modern)["sim_vm.a"]["id"]
    (module / "main.tf").write_text(NETWORK_AND_VM.split('resource "sim_vm"')[0]
                                    + "removed {\n  from = sim_vm.a\n  lifecycle {\n    destroy = false\n  }\n}\n")
    run_ok(modern, "apply", str(module))

    (module / "main.tf").write_text(NETWORK_AND_VM.replace('"sim_vm" "a"', '"sim_vm" "back"')
                                    + f'import {{\n  to = sim_vm.back\n  id = "{vm}"\n}}\n')
    plan = run_ok(modern, "plan", str(module))
    assert f"  <= sim_vm.back will be imported (id {vm})" in plan.stdout.splitlines()
    assert "1 to import" in plan.stdout
    run_ok(modern, "apply", str(module))
    run_ok(modern, "apply", str(module))

    back = _resources(modern)["sim_vm.back"]
    assert {k: v for k, v in back.items() if not k.startswith("identity")} == {
        "status": "complete", "action": "import", "id": vm}
    assert back.get("identity", {"id": vm}) == {"id": vm}  # the sim's identity, on engines >= 1.12
    assert not _record(modern).get("released"), "an object managed again is no longer released"
    _assert_honest_ok(modern)
    assert _reconcile(modern, module)["consistent"]
    _destroy_verified(modern, module)
    assert _sim_ids(modern, "sim_vm") == []


POSTCONDITION = SIM_HEADER + """
resource "sim_network" "net" {
  name = "cond-net"
}
resource "sim_vm" "judged" {
  name       = "cond-vm"
  network_id = sim_network.net.id
  lifecycle {
    postcondition {
      condition     = self.id == "never"
      error_message = "the vm is not the one we wanted"
    }
  }
}
resource "sim_health_check" "after" {
  name      = "cond-check"
  target_id = sim_vm.judged.id
}
"""


def test_a_failed_postcondition_records_the_made_object_error_with_its_id(modern: Hyops) -> None:
    module = write_module(modern, POSTCONDITION)

    run_ok(modern, "apply", str(module), expect=1)

    rec = _record(modern)
    judged = rec["resources"]["sim_vm.judged"]
    assert rec["status"] == "error"
    assert judged["status"] == "error" and judged["id"] == _sim_ids(modern, "sim_vm")[0]
    assert rec["resources"]["sim_health_check.after"]["status"] == "pending"
    assert not rec.get("suspect_orphans")
    (module / "main.tf").write_text(POSTCONDITION.replace('self.id == "never"', "self.id != \"\""))
    run_ok(modern, "apply", str(module))
    _assert_honest_ok(modern)
    assert _resources(modern)["sim_vm.judged"]["status"] == "complete", "the condition holds now"
    _destroy_verified(modern, module)


def test_a_destroyed_id_never_comes_back_when_a_later_create_fails(hyops: Hyops, faults_file: Any) -> None:
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))
    old = _resources(hyops)["sim_vm.a"]["id"]
    _destroy_verified(hyops, module)

    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_before_create", "times": 1}])
    run_ok(hyops, "apply", str(module), expect=1)

    entry = _resources(hyops)["sim_vm.a"]
    assert entry["status"] == "error" and entry.get("id") != old, entry
    assert not any(old in step for step in _advice(_reconcile(hyops, module)))


VALIDATED = SIM_HEADER + """
variable "name" {
  type = string
  validation {
    condition     = length(var.name) < 12
    error_message = "The name is too long."
  }
}
resource "sim_network" "net" {
  name = var.name
}
"""


def test_an_apply_the_engine_refuses_leaves_record_and_rerun_inputs_as_they_were(hyops: Hyops) -> None:
    module = write_module(hyops, VALIDATED)
    run_ok(hyops, "apply", str(module), "--var", "name=short")
    rerun = Path(_record(hyops)["rerun_inputs_file"])
    before_record, before_rerun = _record(hyops), rerun.read_bytes()

    run_ok(hyops, "apply", str(module), "--var", "name=far-too-long-a-name", expect=2)

    after = _record(hyops)
    assert rerun.read_bytes() == before_rerun
    assert after["inputs_digest"] == before_record["inputs_digest"]
    assert {k: v for k, v in after.items() if k not in ("last_attempt", "updated_at")} == \
        {k: v for k, v in before_record.items() if k != "updated_at"}
    assert _reconcile(hyops, module)["consistent"]
    _destroy_verified(hyops, module)



# --- the same refactors with a provider nobody here wrote: HashiCorp's null provider 2.1.2 ------

NULLS = """
resource "null_resource" "a" {
  triggers = { name = "first" }
}
resource "null_resource" "b" {
  triggers = { name = "second" }
}
"""


@pytest.fixture
def null_modern(modern_hyops: Hyops, null_env: dict[str, str]) -> Hyops:
    """`hyops` on the modern engine, finding hashicorp/null in the test mirror."""
    return dataclasses.replace(modern_hyops, extra_env={**modern_hyops.extra_env, **null_env})


def test_null_resources_follow_moved_and_removed_blocks_and_a_state_mv(
        null_modern: Hyops, null_module: Any) -> None:
    module = null_module("m", NULLS)
    run_ok(null_modern, "apply", str(module))
    ids = {a: e["id"] for a, e in _resources(null_modern).items()}

    text = NULLS.replace('"null_resource" "a"', '"null_resource" "renamed"')
    (module / "main.tf").write_text(
        NULL_HEADER + text + "moved {\n  from = null_resource.a\n  to = null_resource.renamed\n}\n")
    run_ok(null_modern, "apply", str(module))
    assert _resources(null_modern)["null_resource.renamed"]["id"] == ids["null_resource.a"]
    assert "null_resource.a" not in _resources(null_modern)
    _assert_honest_ok(null_modern)

    text = text.replace('"null_resource" "b"', '"null_resource" "moved_by_hand"')
    (module / "main.tf").write_text(NULL_HEADER + text)
    _engine(dataclasses.replace(null_modern, extra_env={}), module, "state", "mv", "null_resource.b",
            "null_resource.moved_by_hand", env=null_modern.extra_env)
    report = _reconcile(null_modern, module)  # the record names null_resource.b until --write or a run
    assert [f["code"] for m in report["modules"] for f in m["findings"]] == ["state_written_outside",
                                                                            "moved_in_state"], report
    assert not any("--import" in step for step in _advice(report)), report

    (module / "main.tf").write_text(NULL_HEADER + text.split('resource "null_resource" "moved_by_hand"')[0]
                                    + "removed {\n  from = null_resource.moved_by_hand\n"
                                    + "  lifecycle {\n    destroy = false\n  }\n}\n")
    run_ok(null_modern, "apply", str(module))
    rec = _record(null_modern)
    released = [(o["address"], o["id"]) for o in rec["released"]]
    assert released == [("null_resource.moved_by_hand", ids["null_resource.b"])]
    assert set(rec["resources"]) == {"null_resource.renamed"}
    _assert_honest_ok(null_modern)
    assert _reconcile(null_modern, module)["consistent"]
    _destroy_verified(null_modern, module)


def test_a_null_resource_whose_postcondition_fails_is_error_with_its_id(
        null_modern: Hyops, null_module: Any) -> None:
    module = null_module("m", """
resource "null_resource" "judged" {
  lifecycle {
    postcondition {
      condition     = self.id == "never"
      error_message = "The id is not the one we wanted."
    }
  }
}
resource "null_resource" "after" {
  triggers = { of = null_resource.judged.id }
}
""")
    run_ok(null_modern, "apply", str(module), expect=1)

    rec = _record(null_modern)
    state = json.loads((module / "terraform.tfstate").read_text())
    made = [i["attributes"]["id"] for r in state["resources"] for i in r["instances"] if r["name"] == "judged"]
    assert rec["resources"]["null_resource.judged"] == {"status": "error", "action": "create", "id": made[0]}
    assert rec["resources"]["null_resource.after"]["status"] == "pending"
