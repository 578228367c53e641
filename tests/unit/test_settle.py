"""settle.py: the record transitions of the apply/destroy contract (docs/contract.md: Statuses steps 4, 6).

Pure functions: the previous record plus a run's evidence in, the record to write out.
"""

from __future__ import annotations

import copy
import random

import pytest

from hybridops_tf.engine.progress import ResourceProgress
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, Owner, RecordEngine, ResourceEntry, SuspectOrphan
from hybridops_tf.record.objects import (
    UNNAMED_ORPHAN,
    StateObject,
    interrupted_run_orphans,
    new_suspect_orphans,
    resources_after_run,
)
from hybridops_tf.record.transitions import (
    RunStart,
    after_import,
    apply_succeeded,
    begin,
    destroy_verified,
    failed,
    imported,
    retained,
)

REF = "demo/network"
OWNER = Owner(pid=99, host="ci-1", user="runner", run_id="apply-2")


def start(
    command: str = "apply", run_id: str = "apply-2", workspace: str | None = None
) -> RunStart:
    return RunStart(
        command=command,
        module_ref=REF,
        module_dir="/work/modules/sim/network",
        run_id=run_id,
        owner=Owner(pid=99, host="ci-1", user="runner", run_id=run_id),
        resolved_inputs_file=f"/rt/runs/demo__network/{run_id}/resolved.inputs.yml",
        rerun_inputs_file="/rt/config/modules/demo__network/rerun.inputs.yml",
        inputs_digest="sha256:new",
        engine=RecordEngine("/usr/bin/tofu", "1.8.0"),
        workspace=workspace,
    )


def orphan(address: str, run_id: str = "apply-1") -> SuspectOrphan:
    return SuspectOrphan(address=address, action="create", run_id=run_id, at="2025-01-01T00:00:00Z")


def failed_record() -> OperationRecord:
    """What a partial apply left: error, known outputs, one suspect orphan."""
    return OperationRecord(
        module_ref=REF,
        status=Status.ERROR,
        run_id="apply-1",
        failed_command="apply",
        last_error="sim_vm.a: create failed",
        outputs={"network_id": "net-1"},
        previous_outputs={"network_id": "net-0"},
        resources={"sim_network.n": ResourceEntry("complete", "create", "net-1")},
        suspect_orphans=[orphan("sim_vm.a")],
        inputs_digest="sha256:old",
        extra={"future_field": "kept"},
    )


def progress(address: str, status: Progress, action: str, **kw: object) -> ResourceProgress:
    return ResourceProgress(address=address, status=status, action=action, **kw)


# --- begin ---------------------------------------------------------------------------------


def test_begin_without_a_record_makes_a_fresh_running_record() -> None:
    rec = begin(None, start())

    assert rec.status is Status.RUNNING
    assert rec.module_ref == REF
    assert rec.run_id == "apply-2"
    assert rec.active_command == "apply"
    assert rec.owner == Owner(99, "ci-1", "runner", "apply-2")
    assert rec.started_at and rec.started_at.endswith("Z")
    assert rec.outputs is None
    assert rec.suspect_orphans == []
    assert rec.failed_command is None and rec.last_error is None


def test_begin_carries_what_is_already_known_and_clears_the_old_failure() -> None:
    previous = failed_record()

    rec = begin(previous, start(workspace="blue"))

    assert rec.status is Status.RUNNING
    assert rec.outputs == {"network_id": "net-1"}
    assert rec.previous_outputs == {"network_id": "net-0"}
    assert rec.suspect_orphans == [orphan("sim_vm.a")]
    assert rec.extra == {"future_field": "kept"}
    assert rec.failed_command is None
    assert rec.last_error is None
    assert rec.active_command == "apply"
    assert rec.owner is not None and rec.owner.run_id == "apply-2"
    assert rec.run_id == "apply-2"
    assert rec.module_dir == "/work/modules/sim/network"
    assert rec.resolved_inputs_file == "/rt/runs/demo__network/apply-2/resolved.inputs.yml"
    assert rec.rerun_inputs_file == "/rt/config/modules/demo__network/rerun.inputs.yml"
    assert rec.inputs_digest == "sha256:new"
    assert rec.engine == RecordEngine("/usr/bin/tofu", "1.8.0")
    assert rec.workspace == "blue"


def test_begin_adds_orphans_inherited_from_an_interrupted_run_once() -> None:
    previous = failed_record()  # holds sim_vm.a from apply-1
    inherited = [
        orphan("sim_vm.a", "apply-1"),
        orphan("sim_vm.b", "apply-1"),
        orphan("sim_vm.b", "apply-1"),
    ]

    rec = begin(previous, start(), inherited)

    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [
        ("sim_vm.a", "apply-1"),
        ("sim_vm.b", "apply-1"),
    ]
    assert previous.suspect_orphans == [orphan("sim_vm.a")]


def test_begin_does_not_mutate_the_previous_record() -> None:
    previous = failed_record()
    snapshot = copy.deepcopy(previous)

    rec = begin(previous, start())
    rec.outputs["network_id"] = "changed"  # type: ignore[index]
    rec.suspect_orphans.append(orphan("sim_vm.z"))

    assert previous == snapshot


def test_begin_after_a_verified_destroy_keeps_previous_outputs() -> None:
    destroyed = OperationRecord(
        module_ref=REF,
        status=Status.DESTROYED,
        run_id="destroy-1",
        previous_outputs={"network_id": "net-1"},
    )

    rec = begin(destroyed, start())

    assert rec.status is Status.RUNNING
    assert rec.previous_outputs == {"network_id": "net-1"}
    assert rec.outputs is None


def test_the_running_record_serialises_with_active_command_and_owner() -> None:
    doc = begin(failed_record(), start()).to_dict()

    assert doc["status"] == "running"
    assert doc["active_command"] == "apply"
    assert doc["owner"]["run_id"] == "apply-2"
    assert "failed_command" not in doc
    assert "last_error" not in doc


# --- apply_succeeded -----------------------------------------------------------------------


def test_apply_succeeded_is_ok_without_running_or_failure_fields() -> None:
    running = begin(failed_record(), start())
    resources = {
        "sim_network.n": ResourceEntry("complete", "create", "net-1"),
        "sim_vm.a": ResourceEntry("complete", "create", "vm-1"),
    }

    rec = apply_succeeded(running, {"network_id": "net-1", "vm_id": "vm-1"}, resources)

    assert rec.status is Status.OK
    assert rec.active_command is None
    assert rec.failed_command is None
    assert rec.last_error is None
    assert rec.owner is None
    assert rec.outputs == {"network_id": "net-1", "vm_id": "vm-1"}
    assert rec.resources == resources
    doc = rec.to_dict()
    assert not {"active_command", "failed_command", "last_error", "owner"} & set(doc)


def test_apply_succeeded_never_hides_suspect_orphans() -> None:
    rec = apply_succeeded(begin(failed_record(), start()), {}, {})

    assert rec.suspect_orphans == [orphan("sim_vm.a")]


def test_apply_succeeded_does_not_mutate_the_running_record() -> None:
    running = begin(failed_record(), start())
    snapshot = copy.deepcopy(running)

    apply_succeeded(running, {"x": 1}, {})

    assert running == snapshot


# --- failed --------------------------------------------------------------------------------


def fail(
    running: OperationRecord,
    recovered: dict | None = None,
    resources: dict | None = None,
    orphans: list | None = None,
) -> OperationRecord:
    return failed(
        running,
        command="apply",
        error="sim_vm.b: boom",
        recovered_outputs=recovered,
        resources=resources,
        orphans=orphans or [],
    )


def test_failed_is_error_with_command_and_reason_and_no_owner() -> None:
    rec = fail(begin(failed_record(), start()))

    assert rec.status is Status.ERROR
    assert rec.failed_command == "apply"
    assert rec.last_error == "sim_vm.b: boom"
    assert rec.active_command is None
    assert rec.owner is None
    assert rec.run_id == "apply-2"


def test_an_import_keeps_the_failed_command_and_error_of_the_run_it_follows() -> None:
    before = failed_record()
    running = begin(before, start("import", "import-3"))
    adopted = imported(running, "sim_vm.a", {"sim_vm.a": StateObject("vm-1"), "sim_network.n": StateObject("net-1")})
    refused = failed(running, command="import", error="import of sim_vm.a failed: no such object",
                     recovered_outputs=None, resources=None, orphans=[])

    kept, kept_refused = after_import(adopted, before), after_import(refused, before)

    assert kept.status is Status.ERROR and kept.failed_command == "apply"
    assert kept.last_error.startswith("sim_vm.a: create failed; then sim_vm.a was imported into state; run "
                                      "`hyops reconcile ")  # the module's own command (record/advice.py)
    assert kept.last_error.endswith("` to settle the module")
    assert kept.suspect_orphans == []
    assert kept_refused.failed_command == "apply"
    assert kept_refused.last_error == "sim_vm.a: create failed; then import of sim_vm.a failed: no such object"
    assert after_import(adopted, None) == adopted


def test_failed_without_recovered_outputs_keeps_the_known_ones() -> None:
    rec = fail(begin(failed_record(), start()), recovered=None)

    assert rec.outputs == {"network_id": "net-1"}


def test_failed_merges_recovered_outputs_over_known_ones() -> None:
    rec = fail(begin(failed_record(), start()), recovered={"network_id": "net-2", "vm_id": "vm-9"})

    assert rec.outputs == {"network_id": "net-2", "vm_id": "vm-9"}


def test_failed_with_no_outputs_anywhere_does_not_invent_any() -> None:
    rec = fail(begin(None, start()), recovered={})

    assert not rec.outputs


def random_outputs(rng: random.Random) -> dict | None:
    if rng.random() < 0.15:
        return None
    pool = [f"out_{i}" for i in range(8)]
    values = [rng.randint(0, 9), f"v{rng.randint(0, 9)}", {"sensitive": True}, None]
    return {k: rng.choice(values) for k in rng.sample(pool, rng.randint(0, len(pool)))}


def test_failed_outputs_are_never_fewer_than_before() -> None:
    """Property over random old/recovered output maps: every old key survives the failure."""
    for seed in range(500):
        rng = random.Random(seed)
        old, new = random_outputs(rng), random_outputs(rng)
        running = begin(
            OperationRecord(module_ref=REF, status=Status.OK, run_id="apply-1", outputs=old),
            start(),
        )

        rec = fail(running, recovered=new)

        result = rec.outputs or {}
        assert set(old or {}) <= set(result), f"seed {seed}: lost known outputs"
        assert all(result[k] == v for k, v in (new or {}).items()), f"seed {seed}"
        assert set(result) == set(old or {}) | set(new or {}), f"seed {seed}"


def test_failed_replaces_resources_only_when_the_run_reported_some() -> None:
    running = begin(failed_record(), start())
    kept = fail(running, resources=None)
    replaced = fail(running, resources={"sim_vm.b": ResourceEntry("error", "create")})

    assert kept.resources == {"sim_network.n": ResourceEntry("complete", "create", "net-1")}
    assert replaced.resources == {"sim_vm.b": ResourceEntry("error", "create")}


def test_failed_keeps_existing_orphans_and_adds_new_ones_once() -> None:
    running = begin(failed_record(), start())  # already holds sim_vm.a from apply-1
    new = [orphan("sim_vm.b", "apply-2"), orphan("sim_vm.a", "apply-1")]

    rec = fail(running, orphans=new)

    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [
        ("sim_vm.a", "apply-1"),
        ("sim_vm.b", "apply-2"),
    ]


def test_failed_collapses_a_duplicate_within_one_run() -> None:
    rec = fail(
        begin(None, start()), orphans=[orphan("sim_vm.b", "apply-2"), orphan("sim_vm.b", "apply-2")]
    )

    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [("sim_vm.b", "apply-2")]


def test_the_same_address_lost_again_in_a_new_run_is_a_second_suspect() -> None:
    """Two lost creates may have made two remote objects: both stay visible."""
    rec = fail(begin(failed_record(), start()), orphans=[orphan("sim_vm.a", "apply-2")])

    assert [(o.address, o.run_id) for o in rec.suspect_orphans] == [
        ("sim_vm.a", "apply-1"),
        ("sim_vm.a", "apply-2"),
    ]


def test_failed_does_not_mutate_the_running_record() -> None:
    running = begin(failed_record(), start())
    snapshot = copy.deepcopy(running)

    fail(running, recovered={"x": 1}, orphans=[orphan("sim_vm.q", "apply-2")])

    assert running == snapshot


# --- resources and orphans from the event stream -------------------------------------------


def test_a_runs_progress_maps_stream_status_to_record_status() -> None:
    prog = {
        "a.planned": progress("a.planned", Progress.PENDING, "", planned_action="create"),
        "a.started": progress("a.started", Progress.STARTED, "create"),
        "a.complete": progress(
            "a.complete", Progress.COMPLETE, "create", id_key="id", id_value="x-1"
        ),
        "a.destroyed": progress("a.destroyed", Progress.DESTROYED, "delete"),
        "a.error": progress("a.error", Progress.ERROR, "update"),
    }

    entries = resources_after_run(None, prog, None)

    assert {a: e.to_dict() for a, e in entries.items()} == {
        "a.planned": {"status": ResourceStatus.PENDING.value, "action": "create"},
        "a.started": {"status": "error", "action": "create"},  # in flight when it stopped
        "a.complete": {"status": "complete", "action": "create", "id": "x-1"},
        "a.destroyed": {"status": "destroyed", "action": "delete"},
        "a.error": {"status": "error", "action": "update"},
    }


def test_every_stream_status_has_a_record_status() -> None:
    for status in Progress:
        entries = resources_after_run(None, {"x.y": progress("x.y", status, "create")}, None)
        assert ResourceStatus(entries["x.y"].status)


@pytest.mark.parametrize(
    ("action", "status", "in_state", "suspect"),
    [
        ("create", Progress.STARTED, False, True),
        ("create", Progress.ERROR, False, True),
        ("replace", Progress.STARTED, False, True),
        ("replace", Progress.ERROR, False, True),
        ("create", Progress.STARTED, True, False),  # the state knows it: not an orphan
        ("create", Progress.ERROR, True, False),
        ("create", Progress.PENDING, False, False),  # never started
        ("create", Progress.COMPLETE, False, False),
        ("update", Progress.ERROR, False, False),
        ("delete", Progress.STARTED, False, False),
        ("delete", Progress.ERROR, False, False),
        ("read", Progress.ERROR, False, False),
    ],
)
def test_new_suspect_orphans_only_for_started_creates_absent_from_state(
    action: str, status: Progress, in_state: bool, suspect: bool
) -> None:
    prog = {"sim_vm.a": progress("sim_vm.a", status, action)}

    found = new_suspect_orphans(prog, ["sim_vm.a"] if in_state else ["sim_network.n"], "apply-2")

    assert [o.address for o in found] == (["sim_vm.a"] if suspect else [])
    for o in found:
        assert o.run_id == "apply-2"
        assert o.action == "create"
        assert o.at.endswith("Z")


def test_new_suspect_orphans_over_a_mixed_run() -> None:
    prog = {
        "sim_network.n": progress("sim_network.n", Progress.COMPLETE, "create"),
        "sim_vm.a": progress("sim_vm.a", Progress.ERROR, "create"),
        "sim_vm.b": progress("sim_vm.b", Progress.STARTED, "create"),
        "sim_vm.c": progress("sim_vm.c", Progress.PENDING, "create"),
        "sim_config.d": progress("sim_config.d", Progress.ERROR, "create"),
    }

    found = new_suspect_orphans(prog, {"sim_network.n", "sim_config.d"}, "apply-2")

    assert sorted(o.address for o in found) == ["sim_vm.a", "sim_vm.b"]


# --- destroy_verified ----------------------------------------------------------------------


def test_destroy_verified_moves_outputs_to_previous_outputs() -> None:
    running = begin(failed_record(), start(command="destroy", run_id="destroy-2"))
    resources = {"sim_network.n": ResourceEntry("destroyed", "delete", "net-1")}

    rec = destroy_verified(running, resources)

    assert rec.status is Status.DESTROYED
    assert rec.outputs is None
    assert rec.previous_outputs == {"network_id": "net-1"}
    assert rec.resources == resources
    assert rec.active_command is None and rec.owner is None
    assert rec.failed_command is None and rec.last_error is None
    assert rec.rerun_inputs_file == "/rt/config/modules/demo__network/rerun.inputs.yml"
    assert "outputs" not in rec.to_dict()


def test_destroy_verified_without_outputs_keeps_the_older_previous_outputs() -> None:
    running = begin(
        OperationRecord(
            module_ref=REF,
            status=Status.DESTROYED,
            run_id="destroy-1",
            previous_outputs={"network_id": "net-0"},
        ),
        start(command="destroy", run_id="destroy-2"),
    )

    rec = destroy_verified(running, {})

    assert rec.previous_outputs == {"network_id": "net-0"}
    assert rec.outputs is None


def test_destroy_verified_does_not_mutate_the_running_record() -> None:
    running = begin(failed_record(), start(command="destroy"))
    snapshot = copy.deepcopy(running)

    destroy_verified(running, {})

    assert running == snapshot


# --- interrupted runs whose plan hyops never read -------------------------------------------


def test_an_interrupted_run_lists_its_planned_creates_absent_from_state() -> None:
    prog = {"sim_vm.a": progress("sim_vm.a", Progress.PENDING, "create"),
            "sim_network.n": progress("sim_network.n", Progress.COMPLETE, "create")}

    found = interrupted_run_orphans(prog, {"sim_network.n"}, "apply-2")

    assert [o.address for o in found] == ["sim_vm.a"]


def test_creates_a_fresh_plan_shows_become_suspects_when_the_run_plan_was_never_read() -> None:
    found = interrupted_run_orphans({}, {"sim_network.n"}, "apply-2",
                                    replanned=["sim_network.n", "sim_vm.a", "sim_vm.b", "sim_vm.a"])

    assert [(o.address, o.run_id, o.action) for o in found] == [
        ("sim_vm.a", "apply-2", "create"), ("sim_vm.b", "apply-2", "create")]


def test_a_replanned_create_the_run_events_already_name_is_listed_once() -> None:
    prog = {"sim_vm.a": progress("sim_vm.a", Progress.STARTED, "create")}

    found = interrupted_run_orphans(prog, set(), "apply-2", replanned=["sim_vm.a"])

    assert [o.address for o in found] == ["sim_vm.a"]


def test_an_unreadable_fresh_plan_leaves_one_unnamed_suspect() -> None:
    found = interrupted_run_orphans({}, set(), "apply-2", replanned=None)

    assert [o.address for o in found] == [UNNAMED_ORPHAN]


def test_no_replan_needed_adds_nothing_beyond_the_run_events() -> None:
    assert interrupted_run_orphans({}, set(), "apply-2", replanned=()) == []


# --- retained ------------------------------------------------------------------------------


def test_retained_keeps_what_is_known_and_the_failure_and_names_the_stack_run() -> None:
    before = failed_record()
    before.active_command, before.owner = "destroy", OWNER
    snapshot = copy.deepcopy(before)

    rec = retained(before, "stack-destroy-3")

    assert rec.status is Status.RETAINED
    assert rec.run_id == "stack-destroy-3"
    assert (rec.active_command, rec.owner) == (None, None)
    assert (rec.failed_command, rec.last_error) == (snapshot.failed_command, snapshot.last_error)
    assert rec.failed_command is not None
    assert rec.outputs == snapshot.outputs and rec.previous_outputs == snapshot.previous_outputs
    assert rec.resources == snapshot.resources and rec.suspect_orphans == snapshot.suspect_orphans
    assert rec.inputs_digest == snapshot.inputs_digest and rec.extra == snapshot.extra
    assert before == snapshot  # pure: the record read is not changed


def test_a_data_source_the_record_read_is_never_state_missing() -> None:
    """A data source has an id in the events but never an object in state: after a verified
    destroy it must not make the module `state_missing`."""
    from hybridops_tf.record.model import ResourceEntry
    from hybridops_tf.record.objects import missing_from_state

    known = {
        "data.sim_lookup.zone": ResourceEntry(status="complete", action="read", id="zone-1"),
        "module.m.data.sim_lookup.z": ResourceEntry(status="complete", action="read", id="zone-2"),
        "sim_network.n": ResourceEntry(status="complete", action="create", id="net-1"),
    }

    assert missing_from_state(known, {}) == [("sim_network.n", "net-1")]
