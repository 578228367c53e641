"""`hyops reconcile` on the real engine and the sim cloud: each finding provoked for real.

The faults are the sim provider's (docs/contract.md: The simulated cloud); what cannot be provoked through the engine
(a hand-edited record) is edited the way a person would. Each test drives the `hyops`
console script as a CI job would and reads only documented files.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.helpers import findings, reconcile
from tests.integration.hyops_cli import Hyops, engine_processes

pytestmark = pytest.mark.integration


def engine_as_typed(engine_path: str) -> str:
    """What reconcile prints for the engine: its name when PATH finds this binary, else its path."""
    name = Path(engine_path).name
    found = shutil.which(name)
    return name if found and Path(found).resolve() == Path(engine_path).resolve() else engine_path


def test_lost_create_response_is_a_suspect_orphan_until_import_adopts_it_and_write_settles_ok(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3 and doc["consistent"] is False
    found = findings(doc, "network")
    assert set(found) == {"suspect_orphan", "partial_apply"}
    assert found["suspect_orphan"]["next_actions"] == ["hyops sim ls"]
    assert [a["command"] for a in found["suspect_orphan"]["alternatives"]] == [  # run one of them
        "hyops reconcile modules/network --ref network --import 'sim_network.this=<id>'",
        "hyops reconcile modules/network --ref network --forget-orphan sim_network.this",
    ]
    [live] = hyops.sim_objects()

    imported = hyops("reconcile", "modules/network", "--import", f"sim_network.this={live['id']}")
    # its finding is gone: exit 0, though partial_apply remains (still error: --write settles it)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    rec = hyops.record("network")
    assert rec["status"] == "error" and "suspect_orphans" not in rec
    assert rec["resources"]["sim_network.this"]["action"] == "import"

    settled = hyops("reconcile", "modules/network", "--write")
    assert settled.returncode == 0, settled.stdout + settled.stderr
    rec = hyops.record("network")
    assert rec["status"] == "ok" and rec["outputs"]["network_id"] == live["id"]
    assert reconcile(hyops, "modules/network")[0] == 0
    assert len(hyops.sim_objects()) == 1  # adopted, never duplicated


def test_an_import_keeps_the_failure_of_the_run_it_follows(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    """`--import` adopts one object beside a failure it does not fix: the record used to say
    only that the object was imported, and the apply's own error was lost."""
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1
    failure = hyops.record("network")["last_error"]
    [live] = hyops.sim_objects()

    imported = hyops("reconcile", "modules/network", "--import", f"sim_network.this={live['id']}")

    assert imported.returncode == 0, imported.stdout + imported.stderr
    rec = hyops.record("network")
    assert rec["status"] == "error" and rec["failed_command"] == "apply"
    assert rec["last_error"].startswith(failure), rec["last_error"]
    assert "sim_network.this was imported" in rec["last_error"]


def _kill_inside_the_vm_create(hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path) -> str:
    """The pair applied (network only), then an apply adding the vm killed (hyops, then its
    engine) while the provider holds the vm create's answer: the vm exists, nothing says so.
    Returns the network's id."""
    assert hyops("apply", "modules/pair").returncode == 0
    network_id = hyops.record("pair")["outputs"]["network_id"]
    gate = Gate.at(tmp_path)  # never released: the kill always lands inside the vm create
    faults_file([gate.rule(type="sim_vm", op="create", at="after")])
    proc = hyops.start("apply", "modules/pair", "--var", "with_vm=true")
    provider = gate.wait_started(proc)["pid"]
    # The whole tree at once, as a runner's kill: the engine is frozen first, so the relay's
    # SIGTERM (sent when hyops dies) cannot start a state write that the SIGKILL then cuts
    # (that case, an emptied state file, is a test of its own below).
    for pid in engine_processes(pair):
        os.kill(pid, signal.SIGSTOP)
    proc.kill()
    proc.wait(timeout=30)
    kill_engines(pair, provider)
    faults_file([])
    return network_id


@pytest.mark.both_stores  # stale: the killed runner's lock is free; --write settles through the store
def test_sigkill_during_a_hang_is_stale_running_that_write_settles_as_error_keeping_the_orphan(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """SIGKILL of hyops, then of its engine, while the provider holds the vm create's answer
    (the vm exists, no state or event says so): stale running, orphan kept, then adopted."""
    _kill_inside_the_vm_create(hyops, pair, faults_file, tmp_path)

    code, doc = reconcile(hyops, "modules/pair")

    assert code == 3
    found = findings(doc, "pair")
    assert {"stale_running", "suspect_orphan"} <= set(found)
    assert found["stale_running"]["next_actions"] == ["hyops reconcile modules/pair --ref pair --write"]
    assert found["suspect_orphan"]["addresses"] == ["sim_vm.vm[0]"]
    assert hyops.record("pair")["status"] == "running"  # read-only: nothing settled yet

    written = hyops("reconcile", "modules/pair", "--write")

    assert written.returncode == 3, written.stdout + written.stderr  # the orphan is still there
    rec = hyops.record("pair")
    assert rec["status"] == "error" and rec["failed_command"] == "apply"
    assert [o["address"] for o in rec["suspect_orphans"]] == ["sim_vm.vm[0]"]
    assert "owner" not in rec and "active_command" not in rec
    run_dir = hyops.runtime_root / "runs" / "pair" / rec["run_id"]
    assert json.loads((run_dir / "meta.json").read_text())["action"] == "write"
    assert json.loads((run_dir / "result.json").read_text())["outcome"] == "error"

    vm = next(o for o in hyops.sim_objects() if o["type"] == "sim_vm")
    adopted = hyops("reconcile", "modules/pair", "--import", f"sim_vm.vm[0]={vm['id']}", "--write")

    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    rec = hyops.record("pair")
    assert rec["status"] == "ok" and rec["outputs"]["vm_ids"] == [vm["id"]]
    assert "suspect_orphans" not in rec


def test_a_kill_that_also_cut_the_state_write_settles_error_and_keeps_what_the_record_knew(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Found by `make test` on a loaded machine: the kill landed while the engine rewrote
    terraform.tfstate, leaving it empty. `--write` then forgot the network an earlier run
    made (the stale run's events alone became the record's resources) and, the state being
    empty, settled `absent` over a live network and a live vm."""
    network_id = _kill_inside_the_vm_create(hyops, pair, faults_file, tmp_path)
    (pair / "terraform.tfstate").write_text("")  # the engine's state write was cut short

    written = hyops("reconcile", "modules/pair", "--write")

    assert written.returncode == 3, written.stdout + written.stderr
    rec = hyops.record("pair")
    assert rec["status"] == "error"
    assert rec["resources"]["sim_network.net"]["id"] == network_id  # still known: state_missing
    assert [o["address"] for o in rec["suspect_orphans"]] == ["sim_vm.vm[0]"]
    code, doc = reconcile(hyops, "modules/pair")
    assert code == 3
    assert f"--import sim_network.net={network_id}" in " ".join(findings(doc, "pair")["state_missing"]["next_actions"])


def test_a_create_that_failed_after_making_the_object_is_reported_tainted(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path]
) -> None:
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}])
    assert hyops("apply", "modules/pair", "--var", "with_vm=true").returncode == 1

    code, doc = reconcile(hyops, "modules/pair")

    assert code == 3
    found = findings(doc, "pair")
    assert found["tainted"]["addresses"] == ["sim_vm.vm[0]"]
    assert found["tainted"]["alternatives"][0]["command"] == (
        "hyops apply modules/pair --ref pair --inputs runtime/config/modules/pair/rerun.inputs.yml")
    assert "replace sim_vm.vm[0]" in found["partial_apply"]["detail"]
    written = hyops("reconcile", "modules/pair", "--write")
    assert written.returncode == 3 and hyops.record("pair")["status"] == "error"  # never ok while tainted


def test_an_object_deleted_behind_the_engines_back_is_drift(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    [live] = hyops.sim_objects()
    (hyops.sim_root / "objects" / f"{live['id']}.json").unlink()
    before = hyops.record("network")

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    drift = findings(doc, "network")["drift"]
    assert drift["addresses"] == ["sim_network.this"] and "vanished" in drift["detail"]
    assert [a["command"] for a in drift["alternatives"]] == ["hyops apply modules/network --ref network",
                                                             "hyops destroy modules/network --ref network"]
    assert hyops.record("network") == before


def test_a_record_saying_destroyed_over_live_state_is_state_after_destroy_and_write_demotes_it(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    rec = hyops.record("network")
    rec["status"] = "destroyed"
    hyops.write_record("network", rec)

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    assert findings(doc, "network")["state_after_destroy"]["next_actions"] == [
        "hyops destroy modules/network --ref network"]
    assert hyops("reconcile", "modules/network", "--write").returncode == 3
    assert hyops.record("network")["status"] == "error"
    assert hyops("destroy", "modules/network").returncode == 0
    assert reconcile(hyops, "modules/network")[0] == 0


def test_recorded_outputs_edited_by_hand_are_outputs_mismatch_until_the_next_apply(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    rec = hyops.record("network")
    real = rec["outputs"]["network_id"]
    rec["outputs"]["network_id"] = "net-00000000"
    hyops.write_record("network", rec)

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    mismatch = findings(doc, "network")["outputs_mismatch"]
    assert f'network_id: record "net-00000000", state "{real}"' in mismatch["detail"]
    assert mismatch["next_actions"] == ["hyops apply modules/network --ref network"]
    assert hyops("apply", "modules/network").returncode == 0
    assert reconcile(hyops, "modules/network")[0] == 0


def test_errored_statefile_from_the_engine_is_reported_first_and_once_pushed_write_settles_destroyed(
    hyops: Hyops, module_copy: Callable[[str], Path], engine_path: str, run_engine: Callable[..., Any]
) -> None:
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    (module / "terraform.tfstate.backup").mkdir()  # the engine can no longer save state
    assert hyops("destroy", "modules/network").returncode == 1
    assert (module / "errored.tfstate").is_file()
    assert "errored.tfstate" in hyops.record("network")["last_error"]  # docs/contract.md: Statuses: named in last_error
    (module / "terraform.tfstate.backup").rmdir()

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    module_doc = doc["modules"][0]
    assert module_doc["findings"][0]["code"] == "errored_statefile"
    assert module_doc["findings"][0]["next_actions"] == [
        f"{engine_as_typed(engine_path)} -chdir=modules/network state push errored.tfstate",
        "hyops reconcile modules/network --ref network",
    ]
    # the engine refuses a plain push here (same serial), as the finding's detail warns
    pushed = run_engine(["state", "push", "-force", "errored.tfstate"], module)
    assert pushed.returncode == 0, pushed.explain()

    code, doc = reconcile(hyops, "modules/network")
    # the push is a write hyops did not make: reported beside the partial apply, settled by --write
    assert code == 3 and set(findings(doc, "network")) == {"partial_apply", "state_written_outside"}
    assert "records destroyed" in findings(doc, "network")["partial_apply"]["detail"]
    assert hyops("reconcile", "modules/network", "--write").returncode == 0
    assert hyops.record("network")["status"] == "destroyed"


@pytest.mark.both_stores  # --write and --forget-orphan, audited in the store
def test_write_records_absent_when_nothing_was_made_and_forget_orphan_is_audited(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_before_create", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1

    written = hyops("reconcile", "modules/network", "--write")

    assert written.returncode == 3  # absent now, but the errored create stays a suspect
    rec = hyops.record("network")
    assert rec["status"] == "absent" and [o["address"] for o in rec["suspect_orphans"]] == ["sim_network.this"]
    assert hyops.sim_objects() == []

    forgot = hyops("reconcile", "modules/network", "--forget-orphan", "sim_network.this")

    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    rec = hyops.record("network")
    assert rec["status"] == "absent" and "suspect_orphans" not in rec
    run_dir = hyops.runtime_root / "runs" / "network" / rec["run_id"]
    meta = json.loads((run_dir / "meta.json").read_text())
    result = json.loads((run_dir / "result.json").read_text())
    assert meta["action"] == "forget-orphan" and meta["address"] == "sim_network.this" and meta["user"]
    assert [o["address"] for o in result["forgotten"]] == ["sim_network.this"] and result["by"]["host"]
    unknown = hyops("reconcile", "modules/network", "--forget-orphan", "sim_network.this")
    assert unknown.returncode == 2 and "not a suspect orphan" in unknown.stderr


def _snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file (bytes) and directory under roots; calls.jsonl is compared apart."""
    seen: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.name == "calls.jsonl":
                continue
            seen[str(path)] = path.read_bytes() if path.is_file() and not path.is_symlink() else b"<dir>"
    return seen


@pytest.mark.both_stores  # reading records and documents from the store writes nothing either
def test_a_read_only_reconcile_leaves_every_file_byte_identical(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path]
) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}])
    assert hyops("apply", "modules/pair", "--var", "with_vm=true").returncode == 1
    faults_file([])
    before = _snapshot(hyops.runtime_root, pair, hyops.sim_root)
    calls_before = (hyops.sim_root / "calls.jsonl").read_bytes()

    runs = [hyops("reconcile", "modules/pair"), hyops("reconcile", "modules/pair", "--json"),
            hyops("reconcile", "--all")]

    assert [r.returncode for r in runs] == [3, 3, 3], [r.stderr for r in runs]
    assert _snapshot(hyops.runtime_root, pair, hyops.sim_root) == before
    calls = (hyops.sim_root / "calls.jsonl").read_bytes()
    assert calls.startswith(calls_before)  # the cloud's call log only grew, and only by reads
    assert {json.loads(line)["op"] for line in calls[len(calls_before):].splitlines()} == {"read"}


def test_stack_reconciles_every_member_and_write_records_the_never_applied_one_absent(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    module_copy("vm")
    (hyops.workdir / "stack.yml").write_text(
        "stack: demo\nmodules:\n  - name: network\n    path: modules/network\n"
        "  - name: vm\n    path: modules/vm\n    depends_on: [network]\n"
        "    inputs_from: {network_id: network.network_id}\n")
    assert hyops("apply", "modules/network", "--ref", "demo/network").returncode == 0

    code, doc = reconcile(hyops, "--stack", "stack.yml")

    assert code == 3
    assert [m["module_ref"] for m in doc["modules"]] == ["demo/network", "demo/vm"]
    assert findings(doc, "demo/network") == {}
    assert findings(doc, "demo/vm")["no_record"]["next_actions"][0] == (
        "hyops reconcile modules/vm --ref demo/vm --write")
    assert hyops("reconcile", "--stack", "stack.yml", "--write").returncode == 0
    assert hyops.record("demo/vm")["status"] == "absent"
    assert hyops.record("demo/network")["status"] == "ok"
    code, doc = reconcile(hyops, "--all")
    assert code == 0 and [m["module_ref"] for m in doc["modules"]] == ["demo/network", "demo/vm"]


def test_an_engine_that_cannot_plan_is_exit_1_could_not_check(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module = module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    with (module / "main.tf").open("a") as fh:
        fh.write('\nresource "sim_network" "broken" {\n  name = var.undeclared\n}\n')

    code, doc = reconcile(hyops, "modules/network")

    assert code == 1 and doc["consistent"] is False
    [module_doc] = doc["modules"]
    assert module_doc["checked"] is False
    assert any("plan failed" in why for why in module_doc["could_not_check"])


@pytest.mark.both_stores  # the module lock another runner holds
def test_a_module_whose_apply_is_running_is_not_judged_and_exits_1(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    module_copy("network")
    gate = Gate.at(tmp_path)  # the apply stays in its create until both reconciles are done
    faults_file([gate.rule(type="sim_network", op="create")])
    holder = hyops.start("apply", "modules/network")
    try:
        gate.wait_started(holder)

        code, doc = reconcile(hyops, "modules/network")

        assert code == 1
        assert doc["modules"][0]["findings"] == []
        assert "in progress" in doc["modules"][0]["could_not_check"][0]
        assert hyops("reconcile", "modules/network", "--write").returncode == 4  # lock busy
        assert holder.poll() is None, "the apply ended inside the window"
    finally:
        gate.release()
        holder.wait(timeout=120)
    assert holder.returncode == 0
    assert reconcile(hyops, "modules/network")[0] == 0


def test_human_output_is_a_table_per_module_then_the_next_actions(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1

    result = hyops("reconcile", "modules/network")

    assert result.returncode == 3
    lines = result.stdout.splitlines()
    assert lines[0].startswith("network (") and lines[0].endswith("record error")
    assert any(line.strip().startswith("suspect_orphan") for line in lines)
    start = lines.index("next actions, in order:")
    assert lines[start + 1] == "  1. hyops sim ls"
