"""The record's transitions read whole (record/transitions.py): what scripts/mutation.py found
surviving tests/unit/test_settle.py and its neighbours.

Each test is one transition's rule, checked on every field it sets: an import that adopts an
object (and one whose object the state does not hold), a run that did not converge, an empty
state that cannot mean `ok`, the state_missing error and its command, the attempt a refused
run leaves, and what an import keeps of the failure it follows."""

from __future__ import annotations

import copy

import pytest

from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, Owner, RecordEngine, ResourceEntry, SuspectOrphan
from hybridops_tf.record.objects import StateObject
from hybridops_tf.record.transitions import (
    RunStart,
    after_import,
    apply_succeeded,
    attempt_refused,
    begin,
    confirmed_empty,
    failed,
    imported,
    not_converged,
    retained,
    state_missing_error,
)

REF = "demo/network"
DIR = "/work/modules/sim/network"
WS = "staging"


def _start(command: Command = Command.IMPORT) -> RunStart:
    return RunStart(command=command, module_ref=REF, module_dir=DIR, run_id="import-3",
                    owner=Owner(pid=99, host="ci-1", user="runner", run_id="import-3"),
                    resolved_inputs_file="/rt/r.yml", rerun_inputs_file="/rt/rerun.yml", inputs_digest="sha256:x",
                    engine=RecordEngine("/usr/bin/tofu", "1.8.0"), workspace=WS)


def _failed_apply() -> OperationRecord:
    return OperationRecord(module_ref=REF, status=Status.ERROR, run_id="apply-1", failed_command=Command.APPLY,
                           last_error="sim_vm.a: create failed", module_dir=DIR, workspace=WS,
                           resources={"sim_network.n": ResourceEntry("complete", "create", "net-1"),
                                      "sim_vm.a": ResourceEntry("error", "create", "vm-1",
                                                                identity={"id": "vm-1"}, identity_schema_version=0)},
                           suspect_orphans=[SuspectOrphan("sim_vm.a", "create", "apply-1", "2026-01-01T00:00:00Z")])


def test_a_first_run_carries_the_resources_its_interrupted_predecessor_proved() -> None:
    known = {"sim_vm.a": ResourceEntry("complete", "create", "vm-1")}
    rec = begin(None, _start(Command.APPLY), known_resources=known)
    assert (rec.module_ref, rec.status, rec.run_id, rec.resources) == (REF, Status.RUNNING, "import-3", known)


def test_an_adopted_object_becomes_a_complete_import_entry_beside_the_records_others() -> None:
    running = begin(_failed_apply(), _start())

    rec = imported(running, "sim_vm.a", {"sim_vm.a": StateObject(None, tainted=True), "sim_network.n": StateObject()})

    assert rec.resources == {
        "sim_network.n": ResourceEntry("complete", "create", "net-1"),
        # the state gave no id: the entry's own is kept; a tainted object says so
        "sim_vm.a": ResourceEntry(ResourceStatus.COMPLETE, "import", "vm-1", tainted=True)}
    assert rec.suspect_orphans == [] and rec.status is Status.ERROR
    assert rec.failed_command == Command.APPLY  # the import itself did not fail: the run it follows did
    assert rec.last_error == (f"sim_vm.a was imported into state; run `{reconcile_command(REF, DIR, WS)}` "
                              "to settle the module")


def test_an_adopted_object_the_state_names_takes_the_states_id_untainted() -> None:
    rec = imported(begin(_failed_apply(), _start()), "sim_vm.a", {"sim_vm.a": StateObject("vm-2")},
                   resources={"sim_vm.a": ResourceEntry("error", "create", "vm-1")})
    assert rec.resources == {"sim_vm.a": ResourceEntry(ResourceStatus.COMPLETE, "import", "vm-2")}


def test_an_adopted_object_the_entry_knew_keeps_the_identity_the_entry_held() -> None:
    rec = imported(begin(_failed_apply(), _start()), "sim_vm.a", {"sim_vm.a": StateObject("vm-1")})
    assert rec.resources is not None
    entry = rec.resources["sim_vm.a"]
    assert (entry.identity, entry.identity_schema_version) == ({"id": "vm-1"}, 0)


def test_an_adopted_object_neither_the_state_nor_the_record_knows_the_id_of_has_none() -> None:
    rec = imported(begin(None, _start()), "sim_vm.new", {"sim_vm.new": StateObject()})
    assert rec.resources == {"sim_vm.new": ResourceEntry(ResourceStatus.COMPLETE, "import")}


@pytest.mark.parametrize("transition", ["failed", "imported", "not_converged", "retained", "apply_succeeded",
                                        "confirmed_empty", "attempt_refused"])
def test_a_transitions_record_shares_no_mutable_part_with_the_record_it_came_from(transition: str) -> None:
    before = _failed_apply()
    before.extra = {"future_field": ["kept"]}
    before.previous_outputs = {"ip": "10.0.0.0"}
    source = copy.deepcopy(before)
    out = {
        "failed": lambda: failed(before, command=Command.APPLY, error="x", recovered_outputs=None, resources=None,
                                 orphans=[]),
        "imported": lambda: imported(before, "sim_vm.a", {"sim_vm.a": StateObject("vm-1")}),
        "not_converged": lambda: not_converged(before, command=Command.APPLY, why="x"),
        "retained": lambda: retained(before, "stack-destroy-1"),
        "apply_succeeded": lambda: apply_succeeded(before, {}, {}),
        "confirmed_empty": lambda: confirmed_empty(before, {}, Status.ABSENT),
        "attempt_refused": lambda: attempt_refused(before, run_id="r", command=Command.APPLY, error="x", exit_code=1),
    }[transition]()
    assert out is not None
    out.extra["future_field"].append("changed")
    if out.previous_outputs is not None:
        out.previous_outputs["ip"] = "changed"
    assert before == source


def test_the_record_an_import_keeps_the_failure_of_shares_no_mutable_part_with_the_imports() -> None:
    settled = imported(begin(_failed_apply(), _start()), "sim_vm.b", {})  # failed: not in state
    settled.extra = {"future_field": ["kept"]}
    source = copy.deepcopy(settled)
    out = after_import(settled, _failed_apply())
    out.extra["future_field"].append("changed")
    assert settled == source


def test_an_import_whose_object_the_state_does_not_hold_fails_as_an_import_keeping_what_it_knows() -> None:
    running = begin(_failed_apply(), _start())
    given = {"sim_network.n": ResourceEntry("complete", "create", "net-1")}

    rec = imported(running, "sim_vm.a", {"sim_network.n": StateObject("net-1")}, resources=given)

    assert (rec.status, rec.failed_command, rec.resources) == (Status.ERROR, Command.IMPORT, given)
    assert rec.last_error == "import reported success but sim_vm.a is not in state"
    assert [o.address for o in rec.suspect_orphans] == ["sim_vm.a"]


def test_a_run_that_did_not_converge_is_an_error_naming_its_command_and_why() -> None:
    ok = apply_succeeded(begin(None, _start(Command.APPLY)), {"ip": "10.0.0.1"}, {})

    out = not_converged(ok, command=Command.APPLY, why="-target applies part of the configuration")

    assert (out.status, out.failed_command, out.last_error, out.outputs) == (
        Status.ERROR, Command.APPLY, "not converged: -target applies part of the configuration", {"ip": "10.0.0.1"})
    assert ok.status is Status.OK


def test_a_success_clears_the_failure_the_record_held() -> None:
    rec = apply_succeeded(_failed_apply(), {}, {})
    assert (rec.status, rec.failed_command, rec.last_error) == (Status.OK, None, None)


def test_an_empty_state_never_means_ok() -> None:
    with pytest.raises(ValueError, match="^an empty state cannot mean ok$"):
        confirmed_empty(_failed_apply(), {}, Status.OK)


def test_an_empty_state_over_an_object_no_delete_removed_is_state_missing_with_the_resources_given() -> None:
    given = {"sim_vm.a": ResourceEntry("complete", "create", "vm-9")}
    rec = confirmed_empty(_failed_apply(), given, Status.DESTROYED, command=Command.DESTROY)
    assert (rec.status, rec.failed_command, rec.resources) == (Status.ERROR, Command.DESTROY, given)


def _missing(n: int) -> list[tuple[str, str]]:
    return [(f"sim_vm.v{i}", f"vm {i}") for i in range(n)]


def test_state_missing_names_five_objects_and_adopts_every_one_in_the_modules_workspace() -> None:
    rec = _failed_apply()
    imports = [w for i in range(5) for w in ("--import", f"'sim_vm.v{i}=vm {i}'")]
    listed = ", ".join(f"sim_vm.v{i} (id vm {i})" for i in range(5))
    assert state_missing_error(rec, _missing(5)) == (
        f"state_missing: the state is empty but the record knows {listed}, which no completed delete removed: it "
        f"may still be live. Look it up in the provider, then adopt it with "
        f"`{reconcile_command(REF, DIR, WS, *imports)}` and destroy again")


def test_state_missing_past_five_objects_counts_the_rest_and_still_adopts_them_all() -> None:
    text = state_missing_error(_failed_apply(), _missing(6))
    assert "sim_vm.v4 (id vm 4) and 1 more, which" in text and "(id vm 5)" not in text
    assert "--import 'sim_vm.v5=vm 5'" in text


def test_a_refused_attempt_is_kept_with_when_it_happened() -> None:
    rec = attempt_refused(_failed_apply(), run_id="apply-4", command=Command.APPLY, error="locked", exit_code=1)
    assert rec is not None and rec.last_attempt is not None
    assert (rec.last_attempt.run_id, rec.last_attempt.exit_code, rec.last_attempt.error) == ("apply-4", 1, "locked")
    assert rec.last_attempt.at and rec.last_attempt.at.endswith("Z")


def test_an_import_after_a_failure_without_an_error_text_leaves_the_imports_own_outcome() -> None:
    before = _failed_apply()
    before.last_error = None
    settled = imported(begin(_failed_apply(), _start()), "sim_vm.a", {"sim_vm.a": StateObject("vm-1")})
    assert after_import(settled, before) == settled


def test_an_import_that_says_nothing_keeps_the_failure_it_follows_as_it_was() -> None:
    settled = OperationRecord(module_ref=REF, status=Status.ERROR, run_id="import-3", failed_command=Command.IMPORT)
    out = after_import(settled, _failed_apply())
    assert (out.failed_command, out.last_error) == (Command.APPLY, "sim_vm.a: create failed")
