"""The record never claims less than the state holds (issue 10, cases 1-3), on the real engine.

Each test reproduces a sequence in which an earlier version of hyops recorded less than what
lived in the simulated cloud: knowledge replaced by the last run's activity, a replace's lost
create hidden behind the old object at the same address, and orphans dropped when the
post-run state read failed.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER, VM_PAIR_TF, EngineResult, unwritable, without_identity
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

# A network replaced whenever its name changes, its replacement made before the old one goes.
CBD_NETWORK_TF = SIM_HEADER + """variable "name" {
  type    = string
  default = "net-a"
}
resource "sim_network" "net" {
  name = var.name
  lifecycle {
    create_before_destroy = true
  }
}
output "network_id" {
  value = sim_network.net.id
}
"""


def _module(tmp_path: Path, name: str, text: str) -> Path:
    module = tmp_path / "modules" / name
    module.mkdir(parents=True)
    (module / "main.tf").write_text(text)
    return module


def _ids(record: dict) -> dict[str, str | None]:
    return {addr: entry.get("id") for addr, entry in (record.get("resources") or {}).items()}


def test_a_no_op_apply_keeps_every_object_the_state_holds_with_its_id(hyops: Hyops, pair: Path) -> None:
    """Sequence: apply (network created), apply again (no change). The second record used to
    hold `resources: {}` because only the last run's activity was kept."""
    assert hyops("apply", "modules/pair").returncode == 0
    first = _ids(hyops.record("pair"))
    assert first["sim_network.net"], first

    again = hyops("apply", "modules/pair")

    assert again.returncode == 0, again.stderr
    record = hyops.record("pair")
    assert _ids(record) == first
    assert record["resources"]["sim_network.net"]["status"] == "complete"


def test_a_destroy_over_a_lost_state_is_state_missing_not_destroyed(hyops: Hyops, pair: Path) -> None:
    """Sequence: apply, no-op apply, the state file is lost, destroy. The destroy saw an empty
    state and recorded `destroyed` while the network lived on (its id was in an earlier record).
    The destroy refuses first (state_missing, issue 54); passed anyway, it records `error`."""
    assert hyops("apply", "modules/pair").returncode == 0
    assert hyops("apply", "modules/pair").returncode == 0
    net_id = hyops.record("pair")["resources"]["sim_network.net"]["id"]
    (pair / "terraform.tfstate").unlink()

    refused = hyops("destroy", "modules/pair")
    assert refused.returncode == 4 and net_id in refused.stderr, refused.stderr
    result = hyops("destroy", "modules/pair", "--allow-uncertain")

    assert result.returncode == 1, result.stderr
    record = hyops.record("pair")
    assert record["status"] == "error"
    assert record["failed_command"] == "destroy"
    assert "state_missing" in record["last_error"]
    assert f"--import sim_network.net={net_id}" in record["last_error"]
    assert record["resources"]["sim_network.net"]["id"] == net_id
    assert [o["id"] for o in hyops.sim_objects()] == [net_id]  # it really is still live


def test_the_first_run_on_a_module_applied_by_raw_engine_records_what_the_state_holds(
    hyops: Hyops, pair: Path, init_and_apply: Callable[..., EngineResult]
) -> None:
    """Sequence: the module was applied by raw terraform, then hyops applies it (no change).
    The record listed no resource at all, so a lost state later looked like nothing to destroy."""
    raw = init_and_apply(pair)
    assert raw.returncode == 0, raw.explain()
    [live] = hyops.sim_objects()

    result = hyops("apply", "modules/pair")

    assert result.returncode == 0, result.stderr
    assert _ids(hyops.record("pair")) == {"sim_network.net": live["id"]}


def test_a_replace_whose_create_response_was_lost_is_a_suspect_orphan_though_the_address_is_in_state(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    """Sequence: apply net-a; then a create_before_destroy replace to net-b whose create response
    is lost. The address still held the old object, so no suspect was recorded and the next
    apply made a second net-b."""
    _module(tmp_path, "cbd", CBD_NETWORK_TF)
    assert hyops("apply", "modules/cbd").returncode == 0
    old_id = hyops.record("cbd")["resources"]["sim_network.net"]["id"]
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])

    failed = hyops("apply", "modules/cbd", "--var", "name=net-b")

    assert failed.returncode == 1, failed.stderr
    record = hyops.record("cbd")
    assert [o["address"] for o in record["suspect_orphans"]] == ["sim_network.net"]
    assert record["resources"]["sim_network.net"]["id"] == old_id  # the old object still lives
    assert sorted(o["name"] for o in hyops.sim_objects()) == ["net-a", "net-b"]
    blind = hyops("apply", "modules/cbd", "--var", "name=net-b")
    assert blind.returncode == 4, blind.stderr
    assert sorted(o["name"] for o in hyops.sim_objects()) == ["net-a", "net-b"]  # no second net-b


def test_a_create_before_destroy_replace_records_the_new_object_created_even_when_the_old_delete_fails(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    """Sequence: apply net-a; a create_before_destroy replace to net-b whose delete of net-a
    fails; then an apply that deletes the deposed net-a. The healthy net-b used to be recorded
    `error` with `action: delete` beside the deposed entry, and `action: delete` after the cleanup."""
    _module(tmp_path, "cbd", CBD_NETWORK_TF)
    assert hyops("apply", "modules/cbd").returncode == 0
    old_id = hyops.record("cbd")["resources"]["sim_network.net"]["id"]
    faults_file([{"type": "sim_network", "op": "delete", "mode": "fail_delete", "times": 1}])

    failed = hyops("apply", "modules/cbd", "--var", "name=net-b")

    assert failed.returncode == 1, failed.stderr
    new_id = next(o["id"] for o in hyops.sim_objects() if o["name"] == "net-b")
    resources = hyops.record("cbd")["resources"]
    assert without_identity(resources["sim_network.net"]) == {"status": "complete", "action": "create", "id": new_id}
    [(key, deposed)] = [(k, e) for k, e in resources.items() if k != "sim_network.net"]
    assert (deposed["status"], deposed["action"], deposed["id"]) == ("error", "delete", old_id)

    cleaned = hyops("apply", "modules/cbd", "--var", "name=net-b")

    assert cleaned.returncode == 0, cleaned.stderr
    resources = hyops.record("cbd")["resources"]
    assert without_identity(resources["sim_network.net"]) == {"status": "complete", "action": "create", "id": new_id}
    assert resources[key]["status"] == "destroyed"
    assert [o["name"] for o in hyops.sim_objects()] == ["net-b"]


def test_a_replace_whose_new_object_landed_tainted_in_state_is_not_a_suspect(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    """The other side of the per-object rule: the replacement's create failed after making the
    object, and the engine saved it (tainted) at the address: the state knows it, no suspect."""
    _module(tmp_path, "cbd", CBD_NETWORK_TF)
    assert hyops("apply", "modules/cbd").returncode == 0
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_after_create", "times": 1}])

    failed = hyops("apply", "modules/cbd", "--var", "name=net-b")

    assert failed.returncode == 1, failed.stderr
    record = hyops.record("cbd")
    assert record.get("suspect_orphans", []) == []
    new = next(o for o in hyops.sim_objects() if o["name"] == "net-b")
    assert record["resources"]["sim_network.net"]["id"] == new["id"]


def _engine_that_cannot_show(tmp_path: Path, engine: str) -> str:
    """The real engine, except that `show` fails: the post-run state read is lost evidence."""
    wrapper = tmp_path / "engine-without-show"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do [ "$arg" = show ] && { echo "show is broken" >&2; exit 1; }; done\n'
        f'exec {engine} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def test_when_the_state_cannot_be_read_after_a_failure_every_unfinished_create_is_suspect(
    hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]
) -> None:
    """Sequence: the vm's create response is lost, then the post-run `show -json` fails. The
    orphans computed from the events were dropped, the guard did not fire, and the next apply
    made a second vm."""
    _module(tmp_path, "vmpair", VM_PAIR_TF)
    faults_file([{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}])
    broken = {"HYOPS_ENGINE": _engine_that_cannot_show(tmp_path, hyops.engine)}

    failed = hyops("apply", "modules/vmpair", env=broken)

    assert failed.returncode == 1, failed.stderr
    record = hyops.record("vmpair")
    assert record["status"] == "error"
    assert [o["address"] for o in record["suspect_orphans"]] == ["sim_vm.vm"]
    blind = hyops("apply", "modules/vmpair")
    assert blind.returncode == 4, blind.stderr
    assert [o["type"] for o in hyops.sim_objects()].count("sim_vm") == 1


def test_an_apply_refused_for_an_unwritable_record_leaves_rerun_inputs_as_they_were(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """Sequence: apply with name=a, then an apply with name=b refused (exit 4) because the
    running record cannot be written. rerun.inputs.yml already said name=b, so the next
    destroy or reconcile suggestion would have used inputs that never ran."""
    module_copy("network")
    assert hyops("apply", "modules/network", "--var", "name=net-a").returncode == 0
    rerun = Path(hyops.record("network")["rerun_inputs_file"])
    before = rerun.read_bytes()

    with unwritable(hyops.record_path("network").parent):
        refused = hyops("apply", "modules/network", "--var", "name=net-b")

    assert refused.returncode == 4, refused.stderr
    assert rerun.read_bytes() == before
    assert [p.name for p in rerun.parent.iterdir()] == [rerun.name]  # no temp file left behind
