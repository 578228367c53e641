"""compare(evidence) -> findings, rule by rule where the existing fixtures left a rule to chance
(scripts/mutation.py: the survivors of reconcile/compare.py). Each test is the fixture where one
rule alone decides; commands are held exactly (they must be safe to paste), details by what they
name (the addresses, ids and counts a person acts on), never by their wording."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from hybridops_tf.inputs.declarations import ImportBlock
from hybridops_tf.reconcile import lost
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Code, Finding, ModuleEvidence, OrphanEvidence
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.applied import UNKNOWN_CONFIG
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import RecordEngine
from hybridops_tf.record.stamp import StateStamp, Written
from hybridops_tf.runtime.liveness import LiveEngine
from tests.unit.reconcile_builders import REF, drift, evidence, plan_with, progress, quiet, record, state

CMD = Commands("hyops", "tofu")
DIR = "modules/sim/network"
R = f"{DIR} --ref {REF}"
C = ResourceStatus.COMPLETE
SIM = Where(REF, DIR, uses_sim=True)
compare_module = sys.modules["hybridops_tf.reconcile.compare"]  # the package exports a function of that name


def only(findings: list[Finding], code: Code) -> Finding:
    matching = [f for f in findings if f.code is code]
    assert len(matching) == 1, [f.code.value for f in findings]
    return matching[0]


def choices(finding: Finding) -> tuple[str, ...]:
    return tuple(a.command for a in finding.alternatives)


def whens(finding: Finding) -> tuple[str, ...]:
    return tuple(a.when for a in finding.alternatives)


# -- state_missing: two objects for one address, and the state's object gone ---------------------------------

def _two_for_one(**kw: Any) -> ModuleEvidence:
    rec = record(Status.OK, resources={"sim_vm.a": (C, "create", "vm-old"), "sim_vm.b": (C, "create", "vm-b")})
    return evidence(record=rec, state=state("sim_vm.a", ids={"sim_vm.a": "vm-new"}), **kw)


def test_two_objects_for_one_address_offer_keeping_either_and_import_only_the_free_address() -> None:
    finding = only(compare(_two_for_one(where=SIM, refresh=quiet()), CMD), Code.STATE_MISSING)

    assert finding.addresses == ("sim_vm.a", "sim_vm.b")
    assert finding.next_actions == (f"hyops reconcile {R} --import sim_vm.b=vm-b",)
    assert choices(finding) == (f"hyops reconcile {R} --forget-missing vm-old", f"tofu -chdir={DIR} state rm sim_vm.a")
    keep_state, keep_record = whens(finding)
    # each choice names the exact commands its way needs beside the one it runs
    assert "(hyops sim ls)" in keep_state and "(hyops sim rm vm-old)" in keep_state
    assert f"then hyops reconcile {R} --import sim_vm.a=vm-old," in keep_record
    assert "(hyops sim rm vm-new)" in keep_record
    for words in ("vm-new", "vm-old", "sim_vm.a"):
        assert words in finding.detail


def test_two_lost_objects_at_one_address_get_one_import_into_that_address_never_into_a_record_key() -> None:
    """The record keeps a second object lost at an address at `ADDR (missing ID)`: that key is
    no address, so `--import 'ADDR (missing ID)=ID'` would fail as printed; one import at a
    time goes into the address itself (the next reconcile names the other)."""
    rec = record(Status.OK, resources={"sim_vm.a": (C, "create", "vm-1"),
                                       "sim_vm.a (missing vm-0)": (C, "create", "vm-0")})
    finding = only(compare(evidence(record=rec, state=state(), refresh=quiet()), CMD), Code.STATE_MISSING)

    assert finding.next_actions == (f"hyops reconcile {R} --import sim_vm.a=vm-1",)


def test_two_objects_for_one_address_name_no_sim_command_outside_the_sim() -> None:
    finding = only(compare(_two_for_one(refresh=quiet()), CMD), Code.STATE_MISSING)

    assert not any("hyops sim" in when for when in whens(finding))


def test_a_state_object_the_refresh_shows_gone_is_let_go_and_the_record_object_imported_in_order() -> None:
    """The state lets go of its gone object by a refresh-only apply, whose refresh is the proof
    the record needs (a raw `state rm` would leave the record no proof, should it hold that id)."""
    ev = _two_for_one(refresh=drift(("sim_vm.a", "delete")), errored_state=True)

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.next_actions == (f"tofu -chdir={DIR} state push errored.tfstate",
                                    f"hyops reconcile {R} --import sim_vm.b=vm-b",
                                    f"hyops apply {R} -- -refresh-only",
                                    f"hyops reconcile {R} --import sim_vm.a=vm-old")
    assert finding.alternatives == ()
    assert "vm-new" in finding.detail and "vm-old" in finding.detail


def test_a_state_object_that_merely_changed_is_not_taken_for_gone() -> None:
    finding = only(compare(_two_for_one(refresh=drift(("sim_vm.a", "update"))), CMD), Code.STATE_MISSING)

    assert finding.next_actions == (f"hyops reconcile {R} --import sim_vm.b=vm-b",)
    assert len(finding.alternatives) == 2


def test_every_address_the_state_lost_is_imported_with_the_errored_push_first() -> None:
    rec = record(Status.OK, resources={f"sim_vm.v{i}": (C, "create", f"vm-{i}") for i in range(7)})
    ev = evidence(record=rec, state=state(), refresh=quiet(), errored_state=True)

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.addresses == tuple(f"sim_vm.v{i}" for i in range(7))
    assert finding.next_actions == (f"tofu -chdir={DIR} state push errored.tfstate",
                                    *(f"hyops reconcile {R} --import sim_vm.v{i}=vm-{i}" for i in range(7)))
    assert "sim_vm.v4 (vm-4)" in finding.detail and "sim_vm.v5" not in finding.detail
    assert "and 2 more" in finding.detail


def test_a_state_missing_object_of_a_type_the_engine_cannot_import_names_the_sim_check_in_the_sim() -> None:
    rec = record(Status.OK, resources={"sim_vm.x": (C, "create", "vm-9")})
    rec.extra["not_importable"] = ["sim_vm"]
    finding = only(compare(evidence(where=SIM, record=rec, state=state(), refresh=quiet()), CMD),
                   Code.STATE_MISSING)

    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops reconcile {R} --forget-missing vm-9",)
    assert "(hyops sim ls)" in finding.alternatives[0].when and "sim_vm" in finding.alternatives[0].when


def _with_identity(ev: ModuleEvidence, *addresses: str, version: str = "1.12.2") -> ModuleEvidence:
    assert ev.record is not None and ev.record.resources is not None
    ev.record.engine = RecordEngine("terraform", version)
    for address in addresses:
        ev.record.resources[address].identity = {"id": ev.record.resources[address].id}
    return ev


def test_an_identity_import_is_offered_only_for_an_address_the_state_leaves_free() -> None:
    finding = only(compare(_with_identity(_two_for_one(refresh=quiet()), "sim_vm.a", "sim_vm.b"), CMD),
                   Code.STATE_MISSING)

    [by_identity] = [a for a in finding.alternatives if "identity" in a.when]
    assert by_identity.command == f"hyops apply {R}"
    assert "to       = sim_vm.b" in by_identity.when and "sim_vm.a" not in by_identity.when
    assert choices(finding) == (f"hyops reconcile {R} --forget-missing vm-old", f"tofu -chdir={DIR} state rm sim_vm.a",
                                f"hyops apply {R}")


def test_an_identity_import_block_stands_on_lines_of_its_own() -> None:
    rec = record(Status.OK, resources={"sim_vm.a": (C, "create", "vm-a"), "sim_vm.b": (C, "create", "vm-b")})
    ev = _with_identity(evidence(record=rec, state=state(), refresh=quiet()), "sim_vm.a", "sim_vm.b")

    [by_identity] = [a for a in only(compare(ev, CMD), Code.STATE_MISSING).alternatives if "identity" in a.when]
    lines = by_identity.when.split("\n")[1:-1]  # between the sentence that asks and the one that says then apply
    assert [n for n, line in enumerate(lines) if line == "import {"] == [0, len(lines) // 2]
    assert [n for n, line in enumerate(lines) if line == "}"] == [len(lines) // 2 - 1, len(lines) - 1]


# -- tainted ----------------------------------------------------------------------------------------------------

def test_a_taint_made_outside_hyops_offers_untaint_of_each_object_beside_the_replacing_apply() -> None:
    rec = record(Status.OK, resources={"sim_vm.a": (C, "create", "vm-a"), "sim_vm.b": (C, "create", "vm-b"),
                                       "sim_vm.c": ("pending", "create", None)})
    addresses = ("sim_vm.a", "sim_vm.b", "sim_vm.c")
    ev = evidence(record=rec, state=state(*addresses, tainted=addresses, ids={a: f"vm-{a[-1]}" for a in addresses}),
                  refresh=quiet(), plan=quiet())

    finding = only(compare(ev, CMD), Code.TAINTED)

    assert finding.addresses == ("sim_vm.a", "sim_vm.b", "sim_vm.c")
    assert finding.next_actions == ()
    # only the complete objects hyops saw untainted were tainted by another writer: sim_vm.c is hyops's own
    assert choices(finding) == (f"tofu -chdir={DIR} untaint sim_vm.a", f"tofu -chdir={DIR} untaint sim_vm.b",
                                f"hyops apply {R}")
    assert "sim_vm.a" in whens(finding)[0] and "sim_vm.b" in whens(finding)[1]
    assert "sim_vm.a, sim_vm.b" in finding.detail and "sim_vm.c" not in finding.detail


def test_a_taint_hyops_recorded_is_its_own_failed_create_and_offers_no_untaint() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": (C, "create", "vm-a")})
    rec.resources["sim_vm.a"].tainted = True  # type: ignore[index]
    ev = evidence(record=rec, state=state("sim_vm.a", tainted=["sim_vm.a"], ids={"sim_vm.a": "vm-a"}),
                  refresh=quiet(), plan=plan_with(("sim_vm.a", "replace")))

    finding = only(compare(ev, CMD), Code.TAINTED)

    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


# -- moved_in_state --------------------------------------------------------------------------------------------

def _moved(*moves: tuple[str, str], plan: Any = None) -> ModuleEvidence:
    rec = record(Status.OK, resources={old: (C, "create", f"vm-{i}") for i, (old, _) in enumerate(moves)})
    rec.engine = RecordEngine("terraform", "1.0.3")
    return evidence(record=rec, state=state(*(new for _, new in moves), ids={new: f"vm-{i}" for i, (_, new) in
                                                                            enumerate(moves)}),
                    refresh=quiet(), plan=plan if plan is not None else quiet())


def test_moves_the_configuration_undoes_offer_moving_the_first_back_in_the_engines_spelling() -> None:
    moves = (('sim_vm.b["k"]', 'sim_vm.y["k"]'), ("sim_vm.a", "sim_vm.x"))
    undo = plan_with(('sim_vm.y["k"]', "delete"), ('sim_vm.b["k"]', "create"), ("sim_vm.x", "delete"),
                     ("sim_vm.a", "create"))

    finding = only(compare(_moved(*moves, plan=undo), CMD), Code.MOVED_IN_STATE)

    assert finding.addresses == ("sim_vm.a", 'sim_vm.b["k"]')  # sorted
    assert finding.next_actions == ()
    assert choices(finding) == (f"tofu -chdir={DIR} state mv sim_vm.x sim_vm.a", f"hyops reconcile {R}")
    assert "sim_vm.x" in whens(finding)[0] and "sim_vm.a" in whens(finding)[0]
    assert "sim_vm.a (vm-1) is at sim_vm.x" in finding.detail
    assert 'sim_vm.b["k"] (vm-0) is at sim_vm.y["k"]' in finding.detail


def test_a_move_back_names_the_keyed_address_quoted_for_the_shell() -> None:
    undo = plan_with(('sim_vm.y["k"]', "delete"), ('sim_vm.b["k"]', "create"))

    finding = only(compare(_moved(('sim_vm.b["k"]', 'sim_vm.y["k"]'), plan=undo), CMD), Code.MOVED_IN_STATE)

    assert choices(finding)[0] == f"""tofu -chdir={DIR} state mv 'sim_vm.y["k"]' 'sim_vm.b["k"]'"""


def test_moves_the_configuration_agrees_with_are_followed_by_write() -> None:
    moves = tuple((f"sim_vm.o{i}", f"sim_vm.n{i}") for i in range(7))

    finding = only(compare(_moved(*moves), CMD), Code.MOVED_IN_STATE)

    assert finding.addresses == tuple(f"sim_vm.o{i}" for i in range(7))
    assert finding.next_actions == (f"hyops reconcile {R} --write",)
    assert "sim_vm.o4 is at sim_vm.n4" in finding.detail and "sim_vm.o5" not in finding.detail
    assert "and 2 more" in finding.detail


# -- no_record ---------------------------------------------------------------------------------------------------

def test_no_record_in_a_directory_another_ref_claims_advises_reconciling_as_that_ref() -> None:
    ev = evidence(where=Where(REF, DIR, workspace="blue", inputs_args=("--inputs", "r.yml"), stack_file="s.yml"),
                  claimed_by=("other/net", "third/net"), state=state("sim_vm.a"), refresh=quiet())

    finding = only(compare(ev, CMD), Code.NO_RECORD)

    assert finding.next_actions == (f"hyops reconcile {DIR} --ref other/net --workspace blue",)
    assert finding.alternatives == ()
    assert "other/net" in finding.detail and REF in finding.detail and DIR in finding.detail


def test_no_record_and_no_readable_state_advises_the_apply_alone() -> None:
    finding = only(compare(evidence(), CMD), Code.NO_RECORD)

    assert finding.next_actions == (f"hyops apply {R}",)
    assert (finding.addresses, finding.alternatives) == ((), ())


def test_no_record_over_a_live_state_names_every_address_it_holds() -> None:
    live = [f"sim_vm.v{i}" for i in range(6)]
    finding = only(compare(evidence(state=state(*live), refresh=quiet()), CMD), Code.NO_RECORD)

    assert finding.addresses == tuple(live)
    assert "6 resource(s)" in finding.detail and "and 1 more" in finding.detail


# -- engine_running and shared_state -----------------------------------------------------------------------------

def test_a_live_engine_is_named_by_pid_host_run_and_start_and_the_kill_is_exact() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9", active_command="destroy"), lock_free=True,
                  live_engine=LiveEngine(77, "ci-3", "apply-8", "2026-01-01T00:00:01Z"), state=state())

    [finding] = compare(ev, CMD)

    assert finding.code is Code.ENGINE_RUNNING
    assert (finding.next_actions, finding.addresses) == ((), ())
    assert choices(finding) == (f"hyops reconcile {R}", "kill 77")
    assert "ci-3" in whens(finding)[1]
    for words in ("destroy", "apply-8", "77", "ci-3", "2026-01-01T00:00:01Z"):
        assert words in finding.detail


def test_a_live_engine_without_its_own_run_id_is_named_by_the_records_run() -> None:
    live = LiveEngine(77, "ci-3", "", "")
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, live_engine=live, state=state())

    [finding] = compare(ev, CMD)

    assert "apply-9" in finding.detail and "apply-8" not in finding.detail


def test_a_shared_state_judges_nothing_and_offers_forgetting_this_refs_record() -> None:
    ev = evidence(where=Where(REF, DIR, workspace="blue"), record=record(Status.ERROR), shared_with=("a/b", "c/d"),
                  state=state("sim_vm.a"), refresh=drift(("sim_vm.a", "delete")), errored_state=True)

    [finding] = compare(ev, CMD)

    assert finding.code is Code.SHARED_STATE
    assert finding.next_actions == ()
    assert choices(finding) == (f"hyops reconcile {R} --workspace blue --forget-record",)
    assert "a/b, c/d" in finding.detail and "blue" in finding.detail and DIR in finding.detail
    assert "a/b, c/d" in whens(finding)[0] and REF in whens(finding)[0]


def test_a_shared_state_in_the_default_workspace_names_no_workspace() -> None:
    ev = evidence(where=Where(REF, DIR, workspace="default"), record=record(Status.OK), shared_with=("a/b",),
                  state=state())

    [finding] = compare(ev, CMD)

    assert "default" not in finding.detail


# -- compare's gates ----------------------------------------------------------------------------------------------

def test_a_forgotten_or_busy_module_is_judged_not_at_all() -> None:
    broken = dict(record=record(Status.ERROR), state=state("sim_vm.a"), errored_state=True, refresh=quiet())

    assert compare(evidence(forgotten=True, **broken), CMD) == []
    assert compare(evidence(lock_free=False, record=record(Status.RUNNING), state=state()), CMD) == []
    assert compare(evidence(**broken), CMD) != []


def test_a_stale_run_with_a_live_engine_is_engine_running_alone() -> None:
    ev = evidence(record=record(Status.RUNNING), lock_free=True, live_engine=LiveEngine(1, "h", "r", "s"),
                  state=state(), errored_state=True, shared_with=("a/b",))

    assert [f.code for f in compare(ev, CMD)] == [Code.ENGINE_RUNNING]


def test_an_unreadable_state_is_its_own_finding_advising_the_refresh_then_reconcile() -> None:
    ev = evidence(record=record(Status.OK), state_unreadable="identity schema 1 is newer", refresh=quiet())

    finding = only(compare(ev, CMD), Code.STATE_UNREADABLE)

    assert finding.next_actions == (f"hyops apply {R} -- -refresh-only", f"hyops reconcile {R}")
    assert "identity schema 1 is newer" in finding.detail


def test_an_errored_statefile_over_a_readable_state_is_found_with_or_without_a_record() -> None:
    finding = only(compare(evidence(errored_state=True, state=state(), refresh=quiet()), CMD),
                   Code.ERRORED_STATEFILE)

    assert finding.next_actions == (f"tofu -chdir={DIR} state push errored.tfstate", f"hyops reconcile {R}")


def test_a_retained_record_whose_outputs_differ_is_outputs_mismatch_and_moved_in_state_too() -> None:
    rec = record(Status.RETAINED, resources={"sim_vm.a": (C, "create", "vm-1")}, outputs={"o": 1})
    ev = evidence(record=rec, state=state("sim_vm.b", ids={"sim_vm.b": "vm-1"}, outputs={"o": 2}), refresh=quiet(),
                  plan=quiet())

    found = compare(ev, CMD)

    assert only(found, Code.OUTPUTS_MISMATCH).next_actions == (f"hyops apply {R}",)
    assert only(found, Code.MOVED_IN_STATE).next_actions == (f"hyops reconcile {R} --write",)


# -- advice while an object is state_missing --------------------------------------------------------------------

def test_while_state_missing_stands_no_other_finding_offers_an_apply_a_destroy_or_a_healthy_write() -> None:
    rec = record(Status.OK, resources={"sim_vm.gone": (C, "create", "vm-g"), "sim_vm.a": (C, "create", "vm-a")})
    ev = evidence(record=rec, state=state("sim_vm.a", tainted=["sim_vm.a"], ids={"sim_vm.a": "vm-a"}),
                  refresh=drift(("sim_vm.a", "update")), plan=plan_with(("sim_vm.gone", "create")))

    found = compare(ev, CMD)

    assert [f.code for f in found] == [Code.STATE_MISSING, Code.TAINTED, Code.DRIFT]
    tainted, drifted = only(found, Code.TAINTED), only(found, Code.DRIFT)
    assert choices(tainted) == (f"tofu -chdir={DIR} untaint sim_vm.a",)
    assert choices(drifted) == () and drifted.next_actions == ()
    assert drifted.detail.startswith(only(compare(evidence(record=record(Status.OK), state=state("sim_vm.a"),
                                                           refresh=drift(("sim_vm.a", "update"))), CMD),
                                          Code.DRIFT).detail)
    assert "state_missing" in drifted.detail and "state_missing" in tainted.detail


def test_while_state_missing_stands_a_stack_apply_is_withheld_too() -> None:
    rec = record(Status.OK, resources={"sim_vm.gone": (C, "create", "vm-g")})
    ev = evidence(where=Where(REF, DIR, stack_file="s.yml"), record=rec, state=state(), refresh=quiet(),
                  applied_changes=("the stack's inputs changed",))

    found = compare(ev, CMD)

    config = only(found, Code.CONFIG_CHANGED)
    assert config.next_actions == () and "state_missing" in config.detail


def test_while_state_missing_stands_a_stale_runs_write_is_kept() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run=progress(sim_vm__a=("complete", "create", "vm-1")))

    found = compare(ev, CMD)

    assert only(found, Code.STALE_RUNNING).next_actions == (f"hyops reconcile {R} --write",)
    assert only(found, Code.STATE_MISSING).next_actions == (f"hyops reconcile {R} --import sim_vm.a=vm-1",)


def test_an_error_records_write_is_kept_while_state_missing_stands() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.gone": (C, "create", "vm-g")}, orphans=["sim_vm.o"])
    ev = evidence(record=rec, state=state(), refresh=quiet(), plan=quiet())

    found = compare(ev, CMD)

    partial = only(found, Code.PARTIAL_APPLY)
    assert partial.next_actions == ()  # state_missing first: no apply or destroy offered
    assert only(found, Code.SUSPECT_ORPHAN).next_actions == ()


# -- stale_running and orphans --------------------------------------------------------------------------------------

def test_a_stale_runs_progress_is_counted_by_what_its_events_show() -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True,
                  state=state("sim_vm.a", "sim_vm.b", ids={"sim_vm.a": "vm-a", "sim_vm.b": "vm-b"}),
                  last_run=progress(sim_vm__a=("complete", "create", "vm-a"), sim_vm__b=("complete", "create", "vm-b"),
                                    sim_vm__c=("started", "create"), sim_vm__d=("pending", "create")))

    finding = only(compare(ev, CMD), Code.STALE_RUNNING)

    assert re.search(r"(?<![-\d])2 complete", finding.detail) and re.search(r"(?<![-\d])1 started", finding.detail)
    assert re.search(r"(?<![-\d])1 planned", finding.detail)


def test_a_stale_record_without_an_owner_is_judged_without_one() -> None:
    rec = record(Status.RUNNING, run_id="apply-9")
    rec.owner = None
    finding = only(compare(evidence(record=rec, lock_free=True, state=state()), CMD), Code.STALE_RUNNING)

    assert "pid" not in finding.detail and finding.next_actions == (f"hyops reconcile {R} --write",)


@pytest.mark.parametrize(("seen", "absent"), [(OrphanEvidence.STARTED, "no start"),
                                               (OrphanEvidence.PLANNED, "(its events are gone)"),
                                               (None, "no start")])
def test_an_orphan_of_the_interrupted_run_names_that_run_and_its_evidence(seen: Any, absent: str) -> None:
    ev = evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True, state=state(),
                  last_run=progress(sim_vm__o=("started", "create")),
                  orphan_evidence={"sim_vm.o": seen} if seen is not None else None)

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert orphan.evidence is (seen or OrphanEvidence.UNKNOWN)
    assert "apply-9" in orphan.detail and absent not in orphan.detail


def test_an_orphans_planned_attributes_are_shown_sorted_and_at_most_eight() -> None:
    attributes = {f"a{i}": {"z": i, "b": "x" * 80} if i == 0 else i for i in range(10)}
    rec = record(Status.ERROR, orphans=["sim_vm.o"])
    ev = evidence(record=rec, state=state(), refresh=quiet(), planned_attributes={"sim_vm.o": attributes})

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert orphan.planned_attributes == attributes
    assert 'a0={"b": "' in orphan.detail and "..." in orphan.detail
    assert "a7=7" in orphan.detail and "a8" not in orphan.detail


def test_an_orphan_without_planned_attributes_keeps_none() -> None:
    orphan = only(compare(evidence(record=record(Status.ERROR, orphans=["sim_vm.o"]), state=state(),
                                   refresh=quiet()), CMD), Code.SUSPECT_ORPHAN)

    assert orphan.planned_attributes is None and "planned with" not in orphan.detail
    assert orphan.evidence is OrphanEvidence.UNKNOWN


# -- partial_apply ---------------------------------------------------------------------------------------------------

def test_a_failed_stack_member_is_offered_its_stack_then_itself_then_the_destroy() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": (C, "create", "vm-a"), "sim_vm.b": ("pending", "create", None)})
    ev = evidence(where=Where(REF, DIR, stack_file="stack.yml", stack_args=("--var", "a=1")), record=rec,
                  state=state("sim_vm.a", ids={"sim_vm.a": "vm-a"}), refresh=quiet(),
                  plan=plan_with(*[(f"sim_vm.p{i}", "create") for i in range(7)]))

    finding = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert finding.next_actions == ()
    assert choices(finding) == ("hyops stack apply stack.yml --resume", f"hyops apply {R} --var a=1",
                                f"hyops destroy {R}")
    assert "7 change(s)" in finding.detail and "create sim_vm.p4" in finding.detail
    assert "sim_vm.p5" not in finding.detail


def test_a_failed_destroy_of_a_stack_member_is_offered_the_destroy_first_and_no_stack_apply() -> None:
    ev = evidence(where=Where(REF, DIR, stack_file="stack.yml", stack_args=()),
                  record=record(Status.ERROR, failed_command="destroy"), state=state("sim_vm.a"), refresh=quiet(),
                  plan=plan_with(("sim_vm.a", "delete")))

    finding = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert choices(finding) == (f"hyops destroy {R}", f"hyops apply {R}")


def test_a_long_error_is_cut_at_300_characters_and_marked() -> None:
    rec = record(Status.ERROR, last_error=("X" * 298) + " ;" + "y" * 50)
    finding = only(compare(evidence(record=rec, state=state("sim_vm.a"), refresh=quiet(),
                                    plan=plan_with(("sim_vm.a", "update"))), CMD), Code.PARTIAL_APPLY)

    assert finding.detail.endswith(": " + "X" * 298 + " [...]. The plan still has 1 change(s): update sim_vm.a")


def test_an_error_without_a_command_or_text_is_still_offered_the_apply_first() -> None:
    rec = record(Status.ERROR)
    rec.failed_command, rec.last_error = None, None
    finding = only(compare(evidence(record=rec, state=state("sim_vm.a"), refresh=quiet(),
                                    plan=plan_with(("sim_vm.a", "update"))), CMD), Code.PARTIAL_APPLY)

    assert choices(finding) == (f"hyops apply {R}", f"hyops destroy {R}")


def test_a_failed_runs_summary_counts_its_resources_by_status() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": (C, "create", "vm-a"), "sim_vm.b": (C, "create", "vm-b"),
                                          "sim_vm.c": ("pending", "create", None)}, last_error="quota.")
    finding = only(compare(evidence(record=rec, state=state("sim_vm.a", "sim_vm.b", ids={"sim_vm.a": "vm-a",
                                                                                         "sim_vm.b": "vm-b"}),
                                    refresh=quiet(), plan=plan_with(("sim_vm.c", "create"))), CMD),
                   Code.PARTIAL_APPLY)

    assert "(2 complete, 1 pending): quota." in finding.detail


# -- written outside -----------------------------------------------------------------------------------------------

def test_a_state_written_outside_names_each_object_by_address_and_id_and_advises_a_plan_first() -> None:
    w = Written("apply-3", StateStamp("L1", 3), StateStamp("L2", 7), added=(("sim_vm.new", "vm-n"),),
                removed=(("sim_vm.gone", None),), changed=(("sim_vm.c", "vm-c"),),
                moved=(("sim_vm.o", "sim_vm.m", "vm-m"),))

    finding = compare_module._written_outside(evidence(record=record(Status.OK)), w, CMD)

    assert finding.code is Code.STATE_WRITTEN_OUTSIDE
    assert finding.addresses == ("sim_vm.new", "sim_vm.gone", "sim_vm.c", "sim_vm.m")
    assert finding.next_actions == (f"hyops plan {R}",)
    assert choices(finding) == (f"hyops reconcile {R} --write", f"hyops apply {R}")
    for words in ("apply-3", "serial 3", "serial 7", "L1", "L2", "added sim_vm.new (vm-n)", "removed sim_vm.gone",
                  "changed sim_vm.c (vm-c)", "moved sim_vm.o to sim_vm.m (vm-m)"):
        assert words in finding.detail, words
    assert "None" not in finding.detail and all(a.when for a in finding.alternatives)
    assert "`--write`" in finding.detail  # the option a sentence names is spelled as the CLI takes it


def test_a_state_written_outside_in_one_lineage_says_only_the_serials() -> None:
    w = Written("apply-3", StateStamp("L1", 3), StateStamp("L1", 4))

    finding = compare_module._written_outside(evidence(record=record(Status.OK)), w, CMD)

    assert "serial 3" in finding.detail and "serial 4" in finding.detail and "L1" not in finding.detail
    assert finding.addresses == ()
    assert "): added" not in finding.detail  # no list of objects where none changed


def test_a_lineage_nobody_named_is_called_none() -> None:
    w = Written("apply-3", StateStamp("", 3), StateStamp(None, 4))  # type: ignore[arg-type]

    finding = compare_module._written_outside(evidence(record=record(Status.OK)), w, CMD)

    assert finding.detail.count("lineage none") == 2


# -- member changes ---------------------------------------------------------------------------------------------

def test_an_ok_member_whose_plan_has_changes_lists_them_and_counts_the_rest() -> None:
    ev = evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK, run_id="apply-4"),
                  state=state(), refresh=quiet(), applied_changes=(),
                  plan=plan_with(*[(f"sim_vm.p{i}", "update") for i in range(6)]))

    finding = only(compare(ev, CMD), Code.PLAN_CHANGES)

    assert finding.next_actions == ("hyops stack apply s.yml",)
    assert finding.addresses == tuple(f"sim_vm.p{i}" for i in range(6))
    assert "apply-4" in finding.detail and "6 change(s)" in finding.detail and "update sim_vm.p4" in finding.detail
    assert "and 1 more" in finding.detail and "sim_vm.p5" not in finding.detail
    assert "`stack apply --resume`" in finding.detail  # a command a sentence names is spelled as the CLI takes it


def test_an_ok_member_whose_record_does_not_say_what_it_applied_is_resumed() -> None:
    ev = evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK), state=state(),
                  refresh=quiet(), applied_changes=(UNKNOWN_CONFIG,), plan=plan_with(("sim_vm.p", "update")))

    finding = only(compare(ev, CMD), Code.PLAN_CHANGES)

    assert finding.next_actions == ("hyops stack apply s.yml --resume",)
    assert finding.addresses == ("sim_vm.p",)


def test_an_ok_member_whose_inputs_changed_names_each_change() -> None:
    ev = evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK, run_id="apply-4"), state=state(),
                  refresh=quiet(), applied_changes=("input a changed", "input b changed"), plan=quiet())

    finding = only(compare(ev, CMD), Code.CONFIG_CHANGED)

    assert finding.next_actions == ("hyops stack apply s.yml --resume",)
    assert "input a changed; input b changed" in finding.detail and "apply-4" in finding.detail


# -- the rest ------------------------------------------------------------------------------------------------------

def test_drift_lists_five_objects_and_counts_the_rest() -> None:
    changes = [(f"sim_vm.v{i}", "update") for i in range(7)]
    finding = only(compare(evidence(record=record(Status.OK), state=state(), refresh=drift(*changes)), CMD),
                   Code.DRIFT)

    assert finding.addresses == tuple(a for a, _ in changes)
    assert "sim_vm.v4 changed outside the engine (update)" in finding.detail and "sim_vm.v5" not in finding.detail
    assert "and 2 more" in finding.detail


def test_an_object_lost_from_state_after_an_errored_push_is_imported_after_the_push() -> None:
    from tests.unit.test_lost_from_state import NET, _dropped

    finding = only(compare(_dropped(errored_state=True), CMD), Code.LOST_FROM_STATE)

    assert finding.next_actions == (f"tofu -chdir={DIR} state push errored.tfstate",
                                    f"hyops reconcile {R} --import {NET}=net-1a2b3c4d")


def test_the_outputs_diff_never_shows_a_sensitive_value_and_cuts_long_ones() -> None:
    diff = compare_module._outputs_diff
    assert diff({"a": 1}, {"a": 1}) == ""
    assert diff({"s": {"sensitive": True}}, {"s": "x"}) == "s differs in sensitivity"
    assert diff({"s": "x"}, {"s": {"sensitive": True}}) == "s differs in sensitivity"
    assert diff({"a": "x" * 70}, {"a": {"k": 1, "b": 2}}) == f'a: record "{"x" * 56}..., state {{"b": 2, "k": 1}}'
    assert diff({"a": 1, "b": 2}, {"b": 3, "c": 4}) == (
        "a is recorded but not in state; b: record 2, state 3; c is in state but not recorded")


def test_a_value_that_is_not_json_is_shown_by_its_text() -> None:
    assert compare_module._short({1, 2}) == '"{1, 2}"'


def test_an_address_and_id_of_a_sim_type_name_the_sim_command_only_in_the_sim() -> None:
    sim, other = evidence(where=SIM), evidence()

    assert lost._sim_rm(sim, "sim_vm.a", "vm-1", CMD) == " (hyops sim rm vm-1)"
    assert lost._sim_rm(sim, "aws_instance.a", "i-1", CMD) == ""
    assert lost._sim_rm(other, "sim_vm.a", "vm-1", CMD) == ""
    assert lost._sim_check(sim, "sim_network.n", CMD) == " (hyops sim ls)"
    assert lost._sim_check(sim, "aws_instance.a", CMD) == ""
    assert lost._sim_check(other, "sim_vm.a", CMD) == ""
    assert {t for t in lost.SIM_TYPES if lost._sim_check(sim, f"{t}.x", CMD)} == {
        "sim_network", "sim_vm", "sim_config", "sim_health_check", "sim_vm_restart"}


def test_only_an_apply_or_destroy_of_the_module_or_stack_counts_as_a_mutation() -> None:
    mutates = compare_module._mutates
    cmd = Commands("hyops --runtime-root /rt", "tofu")
    for command in ("hyops --runtime-root /rt apply x", "hyops --runtime-root /rt destroy x",
                    "hyops --runtime-root /rt stack apply s.yml", "hyops --runtime-root /rt stack destroy s.yml"):
        assert mutates(command, cmd), command
    for command in ("hyops --runtime-root /rt reconcile x --write", "hyops --runtime-root /rt stack status s.yml",
                    "hyops --runtime-root /rt", "hyops --runtime-root /rtapply x", "hyops apply x",
                    "tofu -chdir=x apply", "hyops --runtime-root /rt plan x"):
        assert not mutates(command, cmd), command


def test_the_recorded_engine_decides_an_addresss_spelling_in_a_raw_command() -> None:
    printed = 'sim_vm.web["${a}"]'
    with_engine = record(Status.OK)
    with_engine.engine = RecordEngine("terraform", "1.0.3")
    without = record(Status.OK)

    assert lost.typed(evidence(record=with_engine), printed) == 'sim_vm.web["$${a}"]'
    assert lost.typed(evidence(record=without), printed) == printed
    assert lost.typed(evidence(), printed) == printed


# -- every finding: a property over one fixture per code -------------------------------------------------------------

def _corpus() -> dict[str, ModuleEvidence]:
    from tests.unit.test_lost_from_state import _dropped

    moves = (("sim_vm.a", "sim_vm.x"),)
    return {
        "corrupt": evidence(record_problem="latest.json is truncated", state=state()),
        "corrupt without a path": evidence(record_problem="unreadable", record_path="", state=state()),
        "shared": evidence(record=record(Status.OK), shared_with=("a/b",), state=state()),
        "engine": evidence(record=record(Status.RUNNING), lock_free=True, live_engine=LiveEngine(7, "h", "r", "s"),
                           state=state()),
        "stale with orphans": evidence(record=record(Status.RUNNING, run_id="apply-9"), lock_free=True,
                                       state=state("sim_vm.a"), errored_state=True,
                                       last_run=progress(sim_vm__a=("complete", "create", "id-sim_vm.a"),
                                                         sim_vm__b=("started", "create"))),
        "unreadable": evidence(record=record(Status.OK), state_unreadable="schema", refresh=quiet()),
        "two for one": _two_for_one(where=SIM, refresh=quiet()),
        "vanished": _two_for_one(refresh=drift(("sim_vm.a", "delete"))),
        "lost": _dropped(),
        "tainted outside": evidence(record=record(Status.OK, resources={"sim_vm.a": (C, "create", "vm-a")}),
                                    state=state("sim_vm.a", tainted=["sim_vm.a"], ids={"sim_vm.a": "vm-a"}),
                                    refresh=quiet(), plan=quiet()),
        "orphan in state": evidence(where=SIM, record=record(Status.ERROR, orphans=["sim_vm.a"]),
                                    state=state("sim_vm.a"), refresh=quiet(),
                                    planned_attributes={"sim_vm.a": {"name": "web"}}),
        "orphan": evidence(record=record(Status.ERROR, orphans=["sim_vm.o"]), state=state(), refresh=quiet()),
        "drift": evidence(record=record(Status.OK), state=state("sim_vm.a"), refresh=drift(("sim_vm.a", "delete"))),
        "after destroy": evidence(record=record(Status.DESTROYED), state=state("sim_vm.a"), refresh=quiet()),
        "moved": _moved(*moves),
        "moves undone": _moved(*moves, plan=plan_with(("sim_vm.x", "delete"), ("sim_vm.a", "create"))),
        "outputs": evidence(record=record(Status.OK, outputs={"o": 1}), state=state(outputs={"o": 2}),
                            refresh=quiet()),
        "member": evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK), state=state(),
                           refresh=quiet(), applied_changes=(), plan=plan_with(("sim_vm.p", "update"))),
        "config": evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK), state=state(),
                           refresh=quiet(), applied_changes=("input a changed",), plan=quiet()),
        "partial": evidence(record=record(Status.ERROR), state=state("sim_vm.a"), refresh=quiet(),
                            plan=plan_with(("sim_vm.a", "update"))),
        "no record": evidence(state=state("sim_vm.a"), refresh=quiet()),
        "no record, claimed": evidence(claimed_by=("other/net",), state=state()),
        "stale import": evidence(record=record(Status.ERROR, resources={"sim_vm.b": ("destroyed", "delete", "vm-g")}),
                                 state=state(), stale_imports=(ImportBlock("sim_vm.b", "vm-g", "main.tf"),)),
        "by identity": _with_identity(_two_for_one(refresh=quiet()), "sim_vm.b"),
        "two for one, no refresh": _two_for_one(),
        "missing without an id": evidence(record=record(Status.OK, resources={"sim_vm.a": (C, "create", None),
                                                                              "sim_vm.b": (C, "create", "vm-b")}),
                                          state=state(), refresh=quiet()),
        "partial, missing": evidence(record=record(Status.ERROR, resources={"sim_vm.g": (C, "create", "vm-g")}),
                                     state=state(), refresh=quiet(), plan=plan_with(("sim_vm.g", "create"))),
        "partial, destroy": evidence(record=record(Status.ERROR, failed_command="destroy"), state=state("sim_vm.a"),
                                     refresh=quiet(), plan=plan_with(("sim_vm.a", "delete"))),
        "partial, stack": evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.ERROR),
                                   state=state("sim_vm.a"), refresh=quiet(), plan=plan_with(("sim_vm.a", "update"))),
        "tainted, own": evidence(record=record(Status.ERROR), state=state("sim_vm.a", tainted=["sim_vm.a"]),
                                 refresh=quiet(), plan=quiet()),
        "tainted, no record": evidence(state=state("sim_vm.a", tainted=["sim_vm.a"]), refresh=quiet()),
        "unnamed orphan": evidence(record=record(Status.RUNNING), lock_free=True, state=state(), last_run={},
                                   replanned_creates=None, refresh=quiet()),
        "no record, no state": evidence(),
        "no record, empty state": evidence(state=state(), refresh=quiet()),
        "member, unknown config": evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK),
                                           state=state(), refresh=quiet(), applied_changes=(UNKNOWN_CONFIG,),
                                           plan=plan_with(("sim_vm.p", "update"))),
    }


CORPUS = _corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_finding_names_its_module_and_what_it_is_about_and_its_commands_paste(name: str) -> None:
    import shlex

    found = compare(CORPUS[name], CMD)

    assert found, name
    lost = {f.code for f in found} & {Code.STATE_MISSING, Code.LOST_FROM_STATE}
    for f in found:
        assert f.module_ref == REF
        assert isinstance(f.detail, str) and f.detail.strip()
        commands = [*f.next_actions, *choices(f)]
        for command in commands:
            assert isinstance(command, str) and command.strip() and "None" not in shlex.split(command), command
        assert all(isinstance(a.when, str) and a.when.strip() for a in f.alternatives)
        # something to do, unless an object no state holds comes first (state_missing, lost_from_state)
        assert f.next_actions or f.alternatives or lost, f.code
        for address in f.addresses[:5]:
            assert address in f.detail, (f.code, address)
        for text in (f.detail, *whens(f)):
            assert "None" not in text, text  # never a Python None in the words a person reads
            # an option or a finding code a sentence names is spelled as the CLI and the report spell it
            assert all(word == word.lower() for word in re.findall(r"--[A-Za-z-]+|\b[A-Za-z]+_[A-Za-z_]+\b", text))
        assert "and 0 more" not in f.detail


def test_an_orphan_at_an_address_the_state_holds_again_still_names_what_it_was_planned_with() -> None:
    orphan = only(compare(CORPUS["orphan in state"], CMD), Code.SUSPECT_ORPHAN)

    assert 'name="web"' in orphan.detail
    assert orphan.next_actions == ("hyops sim ls",)
    assert choices(orphan) == ("hyops sim rm '<id>'", f"hyops reconcile {R} --forget-orphan sim_vm.a")


def test_while_state_missing_stands_an_ok_records_write_is_withheld_too() -> None:
    rec = record(Status.OK, resources={"sim_vm.gone": (C, "create", "vm-g"), "sim_vm.a": (C, "create", "vm-1")})
    ev = evidence(record=rec, state=state("sim_vm.x", ids={"sim_vm.x": "vm-1"}), refresh=quiet(),
                  plan=plan_with(("sim_vm.gone", "create")))

    found = compare(ev, CMD)

    moved = only(found, Code.MOVED_IN_STATE)
    assert moved.next_actions == () and "state_missing" in moved.detail
    assert only(found, Code.STATE_MISSING).next_actions == (f"hyops reconcile {R} --import sim_vm.gone=vm-g",)


@pytest.mark.parametrize(("length", "cut"), [(300, False), (301, True)])
def test_an_error_is_cut_only_past_300_characters(length: int, cut: bool) -> None:
    rec = record(Status.ERROR, last_error="e" * length)
    finding = only(compare(evidence(record=rec, state=state("sim_vm.a"), refresh=quiet(),
                                    plan=plan_with(("sim_vm.a", "update"))), CMD), Code.PARTIAL_APPLY)

    assert ("e" * 301 in finding.detail, "e" * 300 in finding.detail, "[...]" in finding.detail) == (
        False, True, cut)


def test_an_errors_closing_full_stop_is_not_doubled() -> None:
    rec = record(Status.ERROR, last_error="quota XX.")
    finding = only(compare(evidence(record=rec, state=state("sim_vm.a"), refresh=quiet(),
                                    plan=plan_with(("sim_vm.a", "update"))), CMD), Code.PARTIAL_APPLY)

    assert "quota XX. The plan" in finding.detail and "quota XX.." not in finding.detail


@pytest.mark.parametrize(("value", "shown"), [("x" * 58, '"' + "x" * 58 + '"'),
                                              ("x" * 59, '"' + "x" * 56 + "...")])
def test_a_value_is_shown_whole_up_to_60_characters(value: str, shown: str) -> None:
    assert compare_module._short(value) == shown


def test_a_failed_destroy_over_an_empty_state_names_the_write_verdict_beside_its_orphans() -> None:
    ev = evidence(record=record(Status.ERROR, failed_command="destroy", orphans=["sim_vm.o"]), state=state(),
                  refresh=quiet(), plan=plan_with(("sim_vm.a", "create")))

    partial = only(compare(ev, CMD), Code.PARTIAL_APPLY)

    assert partial.next_actions == (f"hyops reconcile {R} --write",)
    assert "`--write` records destroyed;" in partial.detail


def test_a_failed_run_whose_orphan_a_lookup_found_says_write_adopts_it() -> None:
    from hybridops_tf.reconcile.lookup.judge import judge
    from hybridops_tf.reconcile.verdict import Candidate, OrphanLookup

    found = judge("sim_vm.o", "sim_vm", "lookup.py", match=("name",), complete=True, planned={"name": "web"},
                  candidates=(Candidate("vm-7", {"name": "web"}),), held=())
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.o"]), state=state(), refresh=quiet(),
                  plan=plan_with(("sim_vm.o", "create")), lookups={"sim_vm.o": OrphanLookup("sim_vm.o", (found,))})

    found_codes = compare(ev, CMD)

    partial = only(found_codes, Code.PARTIAL_APPLY)
    assert partial.next_actions == (f"hyops reconcile {R} --write",)
    assert "`--write` adopts" in partial.detail and "orphan_found" in partial.detail
    orphan = only(found_codes, Code.ORPHAN_FOUND)
    assert orphan.detail.startswith("sim_vm.o: ")


def test_a_corrupt_record_without_a_known_path_is_inspected_as_latest_json() -> None:
    finding = only(compare(CORPUS["corrupt without a path"], CMD), Code.CORRUPT_RECORD)

    assert finding.next_actions == ("cat latest.json", "mv latest.json latest.json.corrupt", f"hyops reconcile {R}")
    assert finding.detail == "unreadable"


def test_a_stale_runs_completed_create_the_record_has_no_entry_for_is_imported_by_id_alone() -> None:
    rec = record(Status.RUNNING, run_id="apply-9")
    rec.engine = RecordEngine("terraform", "1.12.2")
    ev = evidence(record=rec, lock_free=True, state=state(),
                  last_run=progress(sim_vm__a=("complete", "create", "vm-1")))

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.next_actions == (f"hyops reconcile {R} --import sim_vm.a=vm-1",)
    assert finding.alternatives == ()


# -- the detail agrees in number with what it names --------------------------------------------------------------

def _tainted_detail(*addresses: str) -> str:
    rec = record(Status.OK, resources={a: (C, "create", f"id-{a}") for a in addresses})
    outside = evidence(record=rec, state=state(*addresses, tainted=addresses), refresh=quiet(), plan=quiet())
    own = evidence(record=record(Status.ERROR), state=state(*addresses, tainted=addresses), refresh=quiet(),
                   plan=quiet())
    return " | ".join(only(compare(ev, CMD), Code.TAINTED).detail for ev in (outside, own))


def _lost_detail(count: int) -> str:
    from tests.unit.test_lost_from_state import _LEFT

    failed = {f"sim_network.n{i}": ("error", "update", f"net-{i}") for i in range(count)}
    rec = record(Status.ERROR, resources={**failed, "sim_vm.this": (C, "create", "vm-1")})
    rec.state_seen = _LEFT
    ev = evidence(record=rec, state=state("sim_vm.this", ids={"sim_vm.this": "vm-1"}), refresh=quiet(),
                  plan=plan_with(*[(a, "create") for a in failed]))
    return only(compare(ev, CMD), Code.LOST_FROM_STATE).detail


def test_one_tainted_object_is_and_two_are() -> None:
    one, two = _tainted_detail("sim_vm.a"), _tainted_detail("sim_vm.a", "sim_vm.b")

    assert one.count("sim_vm.a is tainted") == 2 and "are" not in one.split(" tainted")[0]
    assert two.count("sim_vm.a, sim_vm.b are tainted") == 2


def test_one_object_lost_from_state_is_it_and_two_are_them() -> None:
    one, two = _lost_detail(1), _lost_detail(2)

    assert " dropped it from" in one and "put it back" in one and "them" not in one
    assert " dropped them from" in two and "put them back" in two


def test_a_stale_run_names_its_command_and_when_it_started() -> None:
    rec = record(Status.RUNNING, run_id="apply-9", active_command="destroy")
    finding = only(compare(evidence(record=rec, lock_free=True, state=state()), CMD), Code.STALE_RUNNING)

    assert "(destroy, run apply-9, started 2026-01-01T00:00:00Z by pid 4242 on ci-7)" in finding.detail


def test_an_ok_member_with_an_object_no_state_holds_gets_no_plan_changes_finding() -> None:
    rec = record(Status.OK, resources={"sim_vm.gone": (C, "create", "vm-g")})
    ev = evidence(where=Where(REF, DIR, stack_file="s.yml"), record=rec, state=state(), refresh=quiet(),
                  applied_changes=(), plan=plan_with(("sim_vm.gone", "create")))

    assert [f.code for f in compare(ev, CMD)] == [Code.STATE_MISSING]


def test_a_move_back_says_another_is_named_next_only_when_there_is_another() -> None:
    one = (("sim_vm.a", "sim_vm.x"),)
    two = (*one, ("sim_vm.b", "sim_vm.y"))
    undo = plan_with(("sim_vm.x", "delete"), ("sim_vm.a", "create"), ("sim_vm.y", "delete"), ("sim_vm.b", "create"))

    alone = only(compare(_moved(*one, plan=undo), CMD), Code.MOVED_IN_STATE)
    first_of_two = only(compare(_moved(*two, plan=undo), CMD), Code.MOVED_IN_STATE)

    assert "next one" not in whens(alone)[0] and "next one" in whens(first_of_two)[0]
    assert choices(first_of_two)[0] == f"tofu -chdir={DIR} state mv sim_vm.x sim_vm.a"
    assert "`moved { from = OLD, to = NEW }`" in whens(alone)[1]


@pytest.mark.parametrize("count", [5, 7])
def test_a_detail_lists_five_and_counts_only_what_is_left_past_five(count: int) -> None:
    addresses = [f"sim_vm.v{i}" for i in range(count)]
    more = f"and {count - 5} more"
    rec = record(Status.OK, resources={a: (C, "create", f"vm-{i}") for i, a in enumerate(addresses)})
    moves = tuple((f"sim_vm.o{i}", f"sim_vm.n{i}") for i in range(count))
    undo = plan_with(*[(new, "delete") for _, new in moves], *[(old, "create") for old, _ in moves])
    details = {
        "drift": only(compare(evidence(record=record(Status.OK), state=state(),
                                       refresh=drift(*[(a, "update") for a in addresses])), CMD), Code.DRIFT),
        "missing": only(compare(evidence(record=rec, state=state(), refresh=quiet()), CMD), Code.STATE_MISSING),
        "moved": only(compare(_moved(*moves), CMD), Code.MOVED_IN_STATE),
        "undone": only(compare(_moved(*moves, plan=undo), CMD), Code.MOVED_IN_STATE),
        "no record": only(compare(evidence(state=state(*addresses), refresh=quiet()), CMD), Code.NO_RECORD),
        "member": only(compare(evidence(where=Where(REF, DIR, stack_file="s.yml"), record=record(Status.OK),
                                        state=state(), refresh=quiet(), applied_changes=(),
                                        plan=plan_with(*[(a, "update") for a in addresses])), CMD),
                       Code.PLAN_CHANGES),
    }

    for name, finding in details.items():
        assert (" more" in finding.detail, more in finding.detail) == ((count > 5,) * 2), name


def test_two_objects_for_each_of_two_addresses_and_a_gone_one_are_all_advised() -> None:
    rec = record(Status.OK, resources={f"sim_vm.{k}": (C, "create", f"old-{k}") for k in "abc"})
    held = state(*(f"sim_vm.{k}" for k in "abc"), ids={f"sim_vm.{k}": f"new-{k}" for k in "abc"})
    ev = evidence(record=rec, state=held, refresh=drift(("sim_vm.a", "delete")))

    finding = only(compare(ev, CMD), Code.STATE_MISSING)

    assert finding.next_actions == (f"hyops apply {R} -- -refresh-only",
                                    f"hyops reconcile {R} --import sim_vm.a=old-a")
    assert choices(finding) == (f"hyops reconcile {R} --forget-missing old-b", f"tofu -chdir={DIR} state rm sim_vm.b",
                                f"hyops reconcile {R} --forget-missing old-c", f"tofu -chdir={DIR} state rm sim_vm.c")


def test_an_error_records_moved_object_is_not_judged_moved() -> None:
    ev = evidence(record=record(Status.ERROR, resources={"sim_vm.a": (C, "create", "vm-1")}),
                  state=state("sim_vm.x", ids={"sim_vm.x": "vm-1"}), refresh=quiet(), plan=quiet())

    assert [f.code for f in compare(ev, CMD)] == [Code.PARTIAL_APPLY]


def test_a_destroyed_records_entries_are_never_state_missing() -> None:
    ev = evidence(record=record(Status.DESTROYED, resources={"sim_vm.a": (C, "create", "vm-1")}), state=state(),
                  refresh=quiet())

    assert compare(ev, CMD) == []


def test_a_failed_runs_detail_keeps_its_error_whatever_the_evidence_adds() -> None:
    for name in ("partial, missing", "partial, destroy", "partial"):
        assert "boom" in only(compare(CORPUS[name], CMD), Code.PARTIAL_APPLY).detail, name
    empty = evidence(record=record(Status.ERROR, failed_command="destroy"), state=state(), refresh=quiet(),
                     plan=plan_with(("sim_vm.a", "create")))
    full = evidence(record=record(Status.ERROR), state=state("sim_vm.a"), refresh=quiet(), plan=quiet())
    for ev in (empty, full):
        assert "boom" in only(compare(ev, CMD), Code.PARTIAL_APPLY).detail


def test_moves_undone_name_the_moved_block_twice_as_the_configuration_spells_it() -> None:
    undo = plan_with(("sim_vm.x", "delete"), ("sim_vm.a", "create"))

    finding = only(compare(_moved(("sim_vm.a", "sim_vm.x"), plan=undo), CMD), Code.MOVED_IN_STATE)

    assert finding.detail.count("`moved`") == 2
