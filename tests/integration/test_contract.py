"""The apply/destroy contract for one module (docs/contract.md: Statuses), on the real engine and sim cloud."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.helpers import unwritable
from tests.integration.hyops_cli import Hyops, engine_processes

pytestmark = pytest.mark.integration


def test_running_is_recorded_before_the_provider_creates(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    assert hyops("destroy", "modules/network").returncode == 0
    assert hyops.record("network")["status"] == "destroyed"

    watched_env = {"HYOPS_SIM_WATCH_FILE": str(hyops.record_path("network"))}
    result = hyops("apply", "modules/network", env=watched_env)

    assert result.returncode == 0, result.stderr
    creates = [c for c in hyops.sim_calls() if c["op"] == "create" and "watched" in c]
    assert creates, "the sim provider was never asked to create"
    seen = json.loads(creates[-1]["watched"])
    assert seen["status"] == "running"
    assert seen["active_command"] == "apply"
    assert seen["run_id"] == hyops.record("network")["run_id"]
    assert seen["previous_outputs"]["network_id"]  # the destroyed marker's knowledge is carried


def test_unwritable_record_refuses_with_exit_4_and_never_calls_the_provider(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    assert hyops("destroy", "modules/network").returncode == 0
    before = hyops.record_path("network").read_bytes()
    calls_before = len(hyops.sim_calls())

    with unwritable(hyops.record_path("network").parent):
        result = hyops("apply", "modules/network")

    assert result.returncode == 4, result.stderr
    assert "engine was not started" in result.stderr
    assert hyops.record_path("network").read_bytes() == before
    assert len(hyops.sim_calls()) == calls_before
    assert hyops.sim_objects() == []


@pytest.mark.both_stores  # the record written before the engine and replaced by the settle
def test_success_replaces_running_with_ok(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")
    result = hyops("apply", "modules/network")

    assert result.returncode == 0, result.stderr
    rec = hyops.record("network")
    assert rec["status"] == "ok"
    for gone in ("active_command", "failed_command", "last_error", "owner"):
        assert gone not in rec
    assert rec["outputs"]["network_id"].startswith("net-")
    assert rec["resources"]["sim_network.this"]["status"] == "complete"
    run_dir = hyops.runtime_root / "runs" / "network" / rec["run_id"]
    for name in ("meta.json", "resolved.inputs.yml", "events.jsonl", "engine.stderr.log", "result.json"):
        assert (run_dir / name).exists(), name
    assert (hyops.runtime_root / "config" / "modules" / "network" / "rerun.inputs.yml").exists()


def test_partial_failure_keeps_known_outputs_and_the_failed_module_destroys_clean(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path]
) -> None:
    # a destroyed marker first
    assert hyops("apply", "modules/pair").returncode == 0
    network_before = hyops.record("pair")["outputs"]["network_id"]
    assert hyops("destroy", "modules/pair").returncode == 0
    assert hyops.record("pair")["status"] == "destroyed"

    # a new apply whose vm create half-succeeds: the network is made, the vm is tainted
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}])
    first = hyops("apply", "modules/pair", "--var", "with_vm=true")
    assert first.returncode == 1, first.stdout + first.stderr
    rec = hyops.record("pair")
    assert rec["status"] == "error" and rec["failed_command"] == "apply"
    assert "fail_after_create" in rec["last_error"]
    assert rec["resources"]["sim_vm.vm[0]"]["status"] == "error"
    assert rec["resources"]["sim_vm.vm[0]"].get("tainted") is True
    recovered = rec["outputs"]["network_id"]
    assert recovered.startswith("net-") and recovered != network_before
    assert rec["previous_outputs"]["network_id"] == network_before

    # it fails again before anything is created: the outputs known so far are not lost
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_before_create"}])
    second = hyops("apply", "modules/pair", "--var", "with_vm=true")
    assert second.returncode == 1
    assert hyops.record("pair")["outputs"]["network_id"] == recovered

    # (the engine replaced the tainted vm: it deleted it, then the new create failed)
    assert {o["type"] for o in hyops.sim_objects()} == {"sim_network"}

    # the failed module stays eligible for a verified destroy that removes what it made
    faults_file([])
    gone = hyops("destroy", "modules/pair", "--var", "with_vm=true")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    rec = hyops.record("pair")
    assert rec["status"] == "destroyed"
    assert rec["previous_outputs"]["network_id"] == recovered
    assert hyops.sim_objects() == []


def test_lost_create_response_is_recorded_as_suspect_orphan_and_blocks_a_blind_apply(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}])
    result = hyops("apply", "modules/network")
    assert result.returncode == 1
    rec = hyops.record("network")
    assert [o["address"] for o in rec["suspect_orphans"]] == ["sim_network.this"]
    assert len(hyops.sim_objects()) == 1  # live, and unknown to the state

    again = hyops("apply", "modules/network")
    assert again.returncode == 4
    assert "reconcile" in again.stderr
    assert len(hyops.sim_objects()) == 1  # no duplicate was made

    forced = hyops("apply", "modules/network", "--allow-uncertain")
    assert forced.returncode == 0
    assert hyops.record("network")["suspect_orphans"], "orphans are never dropped silently"


def test_destroy_failure_is_error_with_failed_command_destroy(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    outputs = hyops.record("network")["outputs"]
    faults_file([{"type": "sim_network", "op": "delete", "mode": "fail_delete", "times": 1}])

    result = hyops("destroy", "modules/network")

    assert result.returncode == 1
    rec = hyops.record("network")
    assert rec["status"] == "error" and rec["failed_command"] == "destroy"
    assert rec["outputs"] == outputs
    assert len(hyops.sim_objects()) == 1


def _stored_record_bytes(hyops: Hyops, ref: str) -> bytes:
    """The record exactly as stored: the file's bytes, or the store's text of it."""
    if hyops.store is not None:
        return hyops.store.stored_record_text(ref).encode()
    return hyops.record_path(ref).read_bytes()


# The holder's `running` record is also an uncertain outcome to the second apply; with
# --allow-uncertain that guard steps aside and the lock alone must refuse.
@pytest.mark.both_stores  # the module lock and the holder it names
@pytest.mark.parametrize("second_args", [(), ("--allow-uncertain",)], ids=["plain", "allow_uncertain"])
def test_busy_lock_refuses_with_exit_4_naming_the_holder_and_changes_nothing(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path,
    second_args: tuple[str, ...],
) -> None:
    module_copy("network")
    gate = Gate.at(tmp_path)  # the holder's create stays open until the second apply is done
    faults_file([gate.rule(type="sim_network", op="create")])  # before the object is made
    holder = hyops.start("apply", "modules/network")
    try:
        gate.wait_started(holder)
        record_before = _stored_record_bytes(hyops, "network")
        calls_before = hyops.sim_calls()
        second = hyops("apply", "modules/network", *second_args)
        record_after = _stored_record_bytes(hyops, "network")
        calls_after = hyops.sim_calls()
        objects_meanwhile = hyops.sim_objects()
        assert holder.poll() is None, "the holder ended inside the window"
    finally:
        gate.release()
        holder.wait(timeout=120)
    assert record_after == record_before, "the refused apply wrote the record"
    assert calls_after == calls_before  # the holder's one parked create, nothing from the second
    assert objects_meanwhile == []
    assert second.returncode == 4, second.stdout + second.stderr
    assert f"pid {holder.pid}" in second.stderr
    assert json.loads(record_before)["run_id"] in second.stderr
    assert holder.returncode == 0
    assert len(hyops.sim_objects()) == 1  # the holder's network, and only it


@pytest.mark.both_stores  # the settle written after a signal
def test_sigint_during_apply_stops_the_engine_and_settles_error_with_exit_130(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    module = module_copy("network")
    gate = Gate.at(tmp_path)  # never released while the run lives: only the signal can end it
    faults_file([gate.rule(type="sim_network", op="create")])
    proc = hyops.start("apply", "modules/network")
    try:
        gate.wait_started(proc)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)

        assert proc.returncode == 130, proc.stderr.read() if proc.stderr else ""
        rec = hyops.record("network")
        assert rec["status"] == "error"
        assert "interrupted" in rec["last_error"]
        assert engine_processes(module) == []
        # the engine really stopped the hanging create (it could not wait it out: the gate
        # is still shut)
        assert hyops.sim_objects() == []
        assert rec["resources"]["sim_network.this"]["status"] == "error"
    finally:
        gate.release()  # a provider that outlived its engine would otherwise park for 600 s


@pytest.mark.both_stores  # stale: the killed runner's lock is free
def test_sigkill_leaves_a_stale_running_record_that_blocks_apply_but_not_destroy(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """SIGKILL of hyops, then of its engine, while the provider holds a create's answer:
    the object exists, the state never learned of it."""
    module = module_copy("network")
    gate = Gate.at(tmp_path)  # never released: the kill lands inside the create, always
    faults_file([gate.rule(type="sim_network", op="create", at="after")])
    proc = hyops.start("apply", "modules/network")
    provider = gate.wait_started(proc)["pid"]
    proc.kill()
    proc.wait(timeout=30)
    kill_engines(module, provider)

    status = hyops("status", "modules/network")
    assert status.returncode == 3
    assert "running (stale)" in status.stdout
    refused = hyops("apply", "modules/network")
    assert refused.returncode == 4 and "stale" in refused.stderr
    faults_file([])
    cleaned = hyops("destroy", "modules/network")
    assert cleaned.returncode == 0, cleaned.stderr
    rec = hyops.record("network")
    assert rec["status"] == "destroyed"
    # the killed run's create may have made an object the state never learned of: it stays
    # listed, whatever the verified destroy found in state
    assert [o["address"] for o in rec["suspect_orphans"]] == ["sim_network.this"]
    live = [o["id"] for o in hyops.sim_objects()]
    state_ids = [r.get("id") for r in rec["resources"].values()]
    assert len(live) == 1 and live[0] not in state_ids  # the orphan, which no state knows


def test_corrupt_record_is_exit_2_and_left_byte_identical(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")
    path = hyops.record_path("network")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"schema_version": 1, "status": "ok", trunc')

    result = hyops("apply", "modules/network")

    assert result.returncode == 2
    assert str(path) in result.stderr and "Traceback" not in result.stderr
    assert path.read_bytes() == b'{"schema_version": 1, "status": "ok", trunc'
    assert hyops.sim_calls() == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["apply", "modules/missing"], "does not exist"),
        (["apply", "modules/empty"], "no .tf files"),
        (["apply", "modules/vm", "--ref", "Bad/../ref"], "invalid module ref"),
        (["apply", "modules/vm", "--var", "network_id=n", "--var", "nope=1"], "unknown input"),
        (["apply", "modules/vm"], "missing required input"),
        (["apply", "modules/vm", "--inputs", "bad.yml"], "bad.yml"),
        (["apply", "modules/vm", "--var", "novalue"], "--var"),
        (["destroy", "/", "--var", "x=1"], ""),
    ],
)
def test_bad_input_is_exit_2_before_anything_runs(
    hyops: Hyops, module_copy: Callable[[str], Path], args: list[str], fragment: str
) -> None:
    module_copy("vm")
    (hyops.workdir / "modules" / "empty").mkdir()
    (hyops.workdir / "bad.yml").write_text("- a list\n- not a mapping\n")

    result = hyops(*args)

    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert not (hyops.runtime_root / "state").exists()
    assert hyops.sim_calls() == []


@pytest.mark.both_stores  # nor the store
def test_sensitive_value_never_reaches_the_runtime_root_or_output(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    for name in ("network", "vm", "config"):
        module_copy(name)
    secret = "s3cr3t-Tok3n-4242"
    assert hyops("apply", "modules/network").returncode == 0
    net = hyops.record("network")["outputs"]["network_id"]
    assert hyops("apply", "modules/vm", "--var", f"network_id={net}").returncode == 0
    vm = hyops.record("vm")["outputs"]["vm_id"]

    runs = [
        hyops("apply", "modules/config", "--var", f"vm_id={vm}", "--var", f"api_token={secret}"),
        hyops("plan", "modules/config", "--var", f"vm_id={vm}", "--var", f"api_token={secret}"),
        hyops("outputs", "modules/config", "--json"),
        hyops("status", "--all", "--json"),
        hyops("destroy", "modules/config", "--var", f"vm_id={vm}", "--var", f"api_token={secret}"),
    ]

    assert [r.returncode for r in runs] == [0, 0, 0, 0, 0], [r.stderr for r in runs]
    for r in runs:
        assert secret not in r.stdout and secret not in r.stderr
    leaks = [p for p in hyops.runtime_root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaks == []
    if hyops.store is not None:
        assert secret not in hyops.store.dump()
    meta = next((hyops.runtime_root / "runs" / "config").glob("apply-*/meta.json"))
    assert "api_token=<redacted>" in meta.read_text()
    assert hyops.record("vm")["outputs"]  # sanity: the run really happened


def _forge_interrupted_apply(hyops: Hyops, ref: str, *, engine_started: bool) -> str:
    """A stale `running` apply whose events hold no plan: hyops died (or froze and was killed)
    before reading a single planned change; engine.stderr.log says whether the engine started."""
    rec = hyops.record(ref)
    assert rec is not None
    run_id = "apply-20261129T000000Z-0badf00d"
    rec.update(status="running", active_command="apply", run_id=run_id,
               owner={"pid": 999999, "host": "gone", "user": "ci", "run_id": run_id})
    hyops.write_record(ref, rec)
    run = hyops.runtime_root / "runs" / ref.replace("/", "__") / run_id
    run.mkdir(parents=True)
    (run / "events.jsonl").write_text('{"@level":"info","type":"version","terraform":"1.0.3","ui":"0.1.0"}\n')
    if engine_started:
        (run / "engine.stderr.log").write_text("")
    return run_id


def test_a_destroy_after_an_apply_killed_before_its_plan_was_read_names_what_it_may_have_created(
    hyops: Hyops, pair: Path
) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    run_id = _forge_interrupted_apply(hyops, "pair", engine_started=True)

    # the killed run was asked for the vm as well; a fresh plan with those inputs names it
    cleaned = hyops("destroy", "modules/pair", "--var", "with_vm=true")

    assert cleaned.returncode == 0, cleaned.stderr
    rec = hyops.record("pair")
    assert rec is not None and rec["status"] == "destroyed"
    assert [(o["address"], o["run_id"]) for o in rec["suspect_orphans"]] == [("sim_vm.vm[0]", run_id)]
    assert hyops("status", "modules/pair").returncode == 3


def test_an_apply_killed_before_its_engine_started_leaves_no_suspect(hyops: Hyops, pair: Path) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    _forge_interrupted_apply(hyops, "pair", engine_started=False)

    cleaned = hyops("destroy", "modules/pair", "--var", "with_vm=true")

    assert cleaned.returncode == 0, cleaned.stderr
    rec = hyops.record("pair")
    assert rec is not None and rec["status"] == "destroyed" and rec.get("suspect_orphans", []) == []


def test_reconcile_of_an_apply_killed_before_its_plan_was_read_lists_and_keeps_the_planned_creates(
    hyops: Hyops, pair: Path
) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    run_id = _forge_interrupted_apply(hyops, "pair", engine_started=True)

    seen = hyops("reconcile", "modules/pair", "--var", "with_vm=true", "--json")
    settled = hyops("reconcile", "modules/pair", "--var", "with_vm=true", "--write")

    assert seen.returncode == 3, seen.stderr
    findings = json.loads(seen.stdout)["modules"][0]["findings"]
    orphans = [f for f in findings if f["code"] == "suspect_orphan"]
    assert len(orphans) == 1 and "sim_vm.vm[0]" in orphans[0]["detail"], findings
    assert settled.returncode == 3, settled.stderr  # settled to error; the orphan is still a finding
    rec = hyops.record("pair")
    assert rec is not None and rec["status"] == "error"
    assert [(o["address"], o["run_id"]) for o in rec["suspect_orphans"]] == [("sim_vm.vm[0]", run_id)]
