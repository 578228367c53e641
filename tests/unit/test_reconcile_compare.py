"""compare(evidence) -> findings: one behaviour per code, and the exact next actions (docs/contract.md: Reconcile)."""

from __future__ import annotations

import json
import sys

import pytest

from hybridops_tf.engine.events import iter_events
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import (
    Code,
    ModuleReport,
    PlanEvidence,
    Report,
)
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.lifecycle import Status
from tests.unit.reconcile_builders import (
    REF,
    drift,
    evidence,
    plan_with,
    progress,
    quiet,
    record,
    state,
)

CMD = Commands("hyops", "tofu")
DIR = "modules/sim/network"
R = f"{DIR} --ref {REF}"


def choices(finding) -> tuple[str, ...]:
    """The commands of a finding's alternatives (run one of them), in the order offered."""
    return tuple(a.command for a in finding.alternatives)


def codes(findings: list) -> list[str]:
    return [f.code.value for f in findings]


def only(findings: list, code: Code):
    matching = [f for f in findings if f.code is code]
    assert len(matching) == 1, codes(findings)
    return matching[0]


def test_an_ok_record_that_matches_state_and_quiet_plans_has_no_findings() -> None:
    ev = evidence(record=record(Status.OK, resources={"sim_network.this": ("complete", "create", "n-1")},
                                outputs={"network_id": "n-1"}),
                  state=state("sim_network.this", outputs={"network_id": "n-1"}, ids={"sim_network.this": "n-1"}),
                  refresh=quiet())

    assert compare(ev, CMD) == []


def test_a_corrupt_record_says_how_to_inspect_and_move_it_aside() -> None:
    ev = evidence(record_problem="record /rt/x/latest.json is unreadable (truncated)",
                  record_path="/rt/x/latest.json", state=state())

    finding = only(compare(ev, CMD), Code.CORRUPT_RECORD)

    assert "truncated" in finding.detail
    assert finding.next_actions == ("cat /rt/x/latest.json", "mv /rt/x/latest.json /rt/x/latest.json.corrupt",
                                    f"hyops reconcile {R}")


def test_no_record_over_a_live_state_names_the_untracked_resources() -> None:
    finding = only(compare(evidence(state=state("sim_network.this"), refresh=quiet()), CMD), Code.NO_RECORD)

    assert "sim_network.this" in finding.detail and "untracked" in finding.detail
    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


def test_no_record_over_an_empty_state_offers_write_to_record_absent() -> None:
    finding = only(compare(evidence(state=state(), refresh=quiet()), CMD), Code.NO_RECORD)

    assert finding.next_actions[0] == f"hyops reconcile {R} --write"


def test_a_running_record_nobody_holds_the_lock_of_is_stale_running() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run=progress(sim_network__this=("complete", "create", "n-1")))

    finding = only(compare(ev, CMD), Code.STALE_RUNNING)

    assert "apply-9" in finding.detail and "pid 4242 on ci-7" in finding.detail
    assert finding.next_actions == (f"hyops reconcile {R} --write",)


def test_a_stale_run_from_another_machine_says_its_engine_may_still_run_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state())

    module = sys.modules["hybridops_tf.reconcile.compare"]  # the package exports a function of that name
    monkeypatch.setattr(module, "host_name", lambda: "ci-7")
    here = only(compare(ev, CMD), Code.STALE_RUNNING)
    monkeypatch.setattr(module, "host_name", lambda: "runner-b")
    elsewhere = only(compare(ev, CMD), Code.STALE_RUNNING)

    assert "another machine" not in here.detail
    assert "another machine (ci-7)" in elsewhere.detail and "before --write" in elsewhere.detail


def test_a_running_record_whose_lock_is_held_is_not_judged() -> None:
    ev = evidence(record=record(Status.RUNNING), lock_free=False, state=state())

    assert compare(ev, CMD) == []


def test_creates_the_interrupted_run_started_that_left_no_state_are_suspect_orphans() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state("sim_network.this"),
                  last_run=progress(sim_network__this=("complete", "create", "n-1"),
                                    sim_vm__this=("started", "create")))

    found = compare(ev, CMD)

    orphan = only(found, Code.SUSPECT_ORPHAN)
    assert orphan.addresses == ("sim_vm.this",) and "apply-9" in orphan.detail
    assert orphan.next_actions == ()
    assert choices(orphan) == (f"hyops reconcile {R} --import 'sim_vm.this=<id>'",
                               f"hyops reconcile {R} --write --forget-orphan sim_vm.this")
    assert codes(found) == ["stale_running", "suspect_orphan"]


def test_a_listed_suspect_orphan_offers_lookup_import_and_forget() -> None:
    ev = evidence(where=Where(REF, DIR, uses_sim=True), record=record(Status.ERROR, orphans=["sim_vm.vm[0]"]),
                  state=state(), refresh=quiet())

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert orphan.next_actions == ("hyops sim ls",)
    assert choices(orphan) == (f"hyops reconcile {R} --import 'sim_vm.vm[0]=<id>'",
                               f"hyops reconcile {R} --forget-orphan 'sim_vm.vm[0]'")
    assert all(a.when for a in orphan.alternatives)


def test_an_orphan_whose_address_is_in_state_again_is_not_offered_an_import() -> None:
    ev = evidence(record=record(Status.OK, orphans=["sim_network.this"]), state=state("sim_network.this"),
                  refresh=quiet())

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert "second one" in orphan.detail
    assert not any("--import" in a for a in orphan.next_actions + choices(orphan))


def test_tainted_objects_in_state_are_reported_with_apply_first() -> None:
    ev = evidence(record=record(Status.ERROR), state=state("sim_network.this", "sim_vm.this", tainted=["sim_vm.this"]),
                  refresh=quiet(), plan=plan_with(("sim_vm.this", "replace")))

    finding = only(compare(ev, CMD), Code.TAINTED)

    assert finding.addresses == ("sim_vm.this",)
    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


def test_drift_names_what_vanished_and_what_changed() -> None:
    ev = evidence(record=record(Status.OK), state=state("sim_network.this", "sim_vm.this"),
                  refresh=drift(("sim_network.this", "delete"), ("sim_vm.this", "update")))

    finding = only(compare(ev, CMD), Code.DRIFT)

    assert "sim_network.this vanished" in finding.detail
    assert "sim_vm.this changed outside the engine (update)" in finding.detail
    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


def test_a_failed_apply_is_partial_apply_with_apply_before_destroy() -> None:
    ev = evidence(record=record(Status.ERROR, resources={"sim_network.this": ("complete", "create", "n"),
                                                         "sim_vm.this": ("pending", "create", None)},
                                last_error="sim: quota"),
                  state=state("sim_network.this", ids={"sim_network.this": "n"}), refresh=quiet(),
                  plan=plan_with(("sim_vm.this", "create")))

    finding = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert "the last apply failed (1 complete, 1 pending): sim: quota" in finding.detail
    assert "1 change(s): create sim_vm.this" in finding.detail
    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


def test_a_failed_destroy_puts_destroy_before_apply() -> None:
    ev = evidence(record=record(Status.ERROR, failed_command="destroy"), state=state("sim_network.this"),
                  refresh=quiet(), plan=plan_with(("sim_network.this", "update")))

    assert choices(only(compare(ev, CMD), Code.PARTIAL_APPLY)) == (f"hyops destroy {R}", f"hyops apply {R}")


def test_an_error_record_whose_state_holds_the_full_configuration_suggests_write() -> None:
    ev = evidence(record=record(Status.ERROR), state=state("sim_network.this"), refresh=quiet(), plan=quiet())

    finding = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert "`--write` records ok" in finding.detail
    assert finding.next_actions == (f"hyops reconcile {R} --write",)


def test_an_error_record_over_a_confirmed_empty_state_suggests_write_destroyed_after_a_destroy() -> None:
    ev = evidence(record=record(Status.ERROR, failed_command="destroy"), state=state(), refresh=quiet(),
                  plan=plan_with(("sim_network.this", "create")))

    finding = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert "`--write` records destroyed" in finding.detail
    assert finding.next_actions == (f"hyops reconcile {R} --write",)


def test_a_destroyed_record_over_a_non_empty_state_is_state_after_destroy() -> None:
    ev = evidence(record=record(Status.DESTROYED), state=state("sim_network.this"), refresh=quiet())

    finding = only(compare(ev, CMD), Code.STATE_AFTER_DESTROY)

    assert "says destroyed" in finding.detail and finding.addresses == ("sim_network.this",)
    assert finding.next_actions == (f"hyops destroy {R}",)


def test_recorded_outputs_that_differ_from_state_are_outputs_mismatch_without_showing_secrets() -> None:
    rec = record(Status.OK, outputs={"network_id": "n-old", "token": {"sensitive": True}, "gone": 1})
    ev = evidence(record=rec, state=state("sim_network.this", outputs={"network_id": "n-new", "token": "s3cr3t"},
                                          sensitive=["token"]), refresh=quiet())

    finding = only(compare(ev, CMD), Code.OUTPUTS_MISMATCH)

    assert 'network_id: record "n-old", state "n-new"' in finding.detail
    assert "gone is recorded but not in state" in finding.detail
    assert "s3cr3t" not in finding.detail and "token" not in finding.detail
    assert finding.next_actions == (f"hyops apply {R}",)


def test_an_object_the_state_holds_at_another_address_is_moved_in_state_until_write_follows_it() -> None:
    rec = record(Status.OK, resources={"sim_vm.a": ("complete", "create", "vm-1")})
    ev = evidence(record=rec, state=state("sim_vm.web", ids={"sim_vm.web": "vm-1"}), refresh=quiet(),
                  plan=quiet())

    finding = only(compare(ev, CMD), Code.MOVED_IN_STATE)

    assert "sim_vm.a is at sim_vm.web" in finding.detail
    assert finding.addresses == ("sim_vm.a",)
    assert finding.next_actions == (f"hyops reconcile {R} --write",)


def test_objects_the_record_knows_but_the_state_lost_are_state_missing_with_exact_imports() -> None:
    rec = record(Status.OK, resources={"sim_network.this": ("complete", "create", "net-1a2b3c4d"),
                                       "sim_vm.this": ("complete", "create", None)})
    ev = evidence(record=rec, state=state(), refresh=quiet())

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.addresses == ("sim_network.this", "sim_vm.this")
    assert finding.next_actions == (f"hyops reconcile {R} --import sim_network.this=net-1a2b3c4d",)
    # no apply (it refuses while the object is state_missing), and no forget beside the import:
    # the import settles the id either way (adopted, or found gone in the provider and forgotten)
    assert choices(finding) == ()


def test_a_state_missing_object_of_a_type_the_engine_cannot_import_is_advised_a_forget_not_an_import() -> None:
    rec = record(Status.OK, resources={"null_resource.x": ("complete", "create", "123")})
    rec.extra["not_importable"] = ["null_resource"]
    ev = evidence(record=rec, state=state(), refresh=quiet())

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops reconcile {R} --forget-missing 123",)


def test_creates_the_interrupted_run_completed_but_the_state_lacks_are_state_missing() -> None:
    ev = evidence(record=record(Status.RUNNING), lock_free=True, state=state(),
                  last_run=progress(sim_network__this=("complete", "create", "net-77")))

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert f"hyops reconcile {R} --import sim_network.this=net-77" in finding.next_actions


def test_errored_statefile_comes_first_and_pushes_with_the_engine_in_use() -> None:
    ev = evidence(record=record(Status.ERROR), errored_state=True, state=state("sim_network.this"),
                  refresh=quiet(), plan=quiet())

    found = compare(ev, Commands("hyops", "terraform"))

    assert found[0].code is Code.ERRORED_STATEFILE
    assert found[0].next_actions == (f"terraform -chdir={DIR} state push errored.tfstate", f"hyops reconcile {R}")
    assert "records ok" not in only(found, Code.PARTIAL_APPLY).detail  # not before the push


def test_a_workspace_is_named_in_the_state_push_and_every_hyops_command_with_the_global_options() -> None:
    ev = evidence(where=Where(REF, DIR, workspace="blue"), errored_state=True, record=record(Status.OK),
                  state=state("sim_network.this"), refresh=quiet())

    finding = only(compare(ev, Commands("hyops --runtime-root /rt", "/opt/tf/terraform")), Code.ERRORED_STATEFILE)

    assert finding.next_actions == (f"TF_WORKSPACE=blue /opt/tf/terraform -chdir={DIR} state push errored.tfstate",
                                    f"hyops --runtime-root /rt reconcile {R} --workspace blue")


def test_a_module_directory_with_spaces_is_quoted_in_next_actions() -> None:
    ev = evidence(where=Where(REF, "my modules/net"), record=record(Status.DESTROYED), state=state("a.b"))

    assert only(compare(ev, CMD), Code.STATE_AFTER_DESTROY).next_actions == (
        f"hyops destroy 'my modules/net' --ref {REF}",)


def test_findings_come_in_the_order_a_person_should_act_on_them() -> None:
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.this"]), errored_state=True,
                  state=state("sim_network.this", tainted=["sim_network.this"]),
                  refresh=drift(("sim_network.this", "update")), plan=quiet())

    assert codes(compare(ev, CMD)) == ["errored_statefile", "suspect_orphan", "tainted", "drift", "partial_apply"]


def test_the_report_document_has_the_designed_shape_and_exit_codes() -> None:
    finding = only(compare(evidence(state=state(), refresh=quiet()), CMD), Code.NO_RECORD)
    findings_report = Report((ModuleReport(REF, "none", "/w", (finding,)),))
    clean = Report((ModuleReport(REF, "ok", "/w"),))
    unchecked = Report((ModuleReport(REF, "ok", "/w", (finding,), ("plan failed",)),))

    doc = json.loads(json.dumps(findings_report.to_dict()))

    assert doc["consistent"] is False
    assert doc["modules"][0]["module_ref"] == REF and doc["modules"][0]["status"] == "none"
    assert set(doc["modules"][0]["findings"][0]) >= {"code", "module_ref", "detail", "next_actions"}
    assert (findings_report.exit_code, clean.exit_code, unchecked.exit_code) == (3, 0, 1)
    assert clean.to_dict()["consistent"] is True


def test_plan_evidence_reads_drift_changes_and_output_only_differences_from_the_stream() -> None:
    lines = [
        '{"type":"resource_drift","change":{"resource":{"addr":"a.x"},"action":"delete"}}',
        '{"type":"planned_change","change":{"resource":{"addr":"a.y"},"action":"create"}}',
        '{"type":"planned_change","change":{"resource":{"addr":"a.z"},"action":"noop"}}',
        '{"type":"change_summary","changes":{"add":1,"change":0,"remove":0}}',
    ]
    ev = PlanEvidence.from_events(iter_events(lines), 2)
    assert [c.address for c in ev.drift] == ["a.x"] and [c.address for c in ev.changes] == ["a.y"]
    assert not ev.outputs_changed

    only_outputs = PlanEvidence.from_events(iter_events(['{"type":"change_summary","changes":{"add":0}}']), 2)
    assert only_outputs.outputs_changed and not only_outputs.changes
    assert not PlanEvidence.from_events(iter_events([]), 0).outputs_changed
    tofu = PlanEvidence.from_events(iter_events(['{"type":"outputs","outputs":{"o":{"action":"create"}}}']), 0)
    assert tofu.outputs_changed


def test_an_unnamed_orphan_asks_to_look_in_the_provider_and_offers_no_import() -> None:
    ev = evidence(where=Where(REF, DIR, uses_sim=True), record=record(Status.RUNNING, run_id="apply-9"),
                  lock_free=True, state=state(), last_run={}, replanned_creates=None, refresh=quiet())

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert orphan.addresses == ("*",)
    assert "cannot be named" in orphan.detail and "look in the provider" in orphan.detail
    assert orphan.next_actions == ("hyops sim ls", f"hyops reconcile {R} --write --forget-orphan '*'")


def test_replanned_creates_of_a_stale_run_are_suspect_orphans() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run={}, replanned_creates=("sim_vm.this",), refresh=quiet())

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert orphan.addresses == ("sim_vm.this",)
