"""`reconcile --stack` on a member, pure: an `ok` member the stack would change is a finding,
and a failed member's advice is its stack first, then the module command built from the
stack file as it is now (issue 38, item 2)."""

from __future__ import annotations

import dataclasses

from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import (
    Code,
    ModuleEvidence,
)
from hybridops_tf.record.advice import Where
from hybridops_tf.record.applied import UNKNOWN_CONFIG
from hybridops_tf.record.lifecycle import Status
from tests.unit.reconcile_builders import REF, plan_with, quiet, record, state

MEMBER = Where(REF, "stack/network", stack_file="stack/stack.yml", inputs_args=("--inputs", "rerun.inputs.yml"),
               stack_args=("--var", "cidr=10.0.0.0/16"))
LIVE = {"sim_network.this": ("complete", "create", "id-sim_network.this")}


def member(status: Status = Status.OK, **more: object) -> ModuleEvidence:
    base = ModuleEvidence(where=MEMBER, record=record(status, resources=LIVE), state=state("sim_network.this"),
                          refresh=quiet())
    return dataclasses.replace(base, **more)


def test_an_ok_member_applied_from_what_the_stack_gives_now_with_a_quiet_plan_is_consistent() -> None:
    assert compare(member(applied_changes=(), plan=quiet())) == []


def test_an_ok_member_whose_configuration_changed_is_advised_the_stack_resume() -> None:
    [finding] = compare(member(applied_changes=("its configuration changed", "its inputs changed")))

    assert finding.code is Code.CONFIG_CHANGED
    assert "its configuration changed; its inputs changed" in finding.detail
    assert finding.next_actions == ("hyops stack apply stack/stack.yml --resume",)


def test_a_record_that_does_not_say_what_it_applied_is_judged_by_the_plan_alone() -> None:
    assert compare(member(applied_changes=(UNKNOWN_CONFIG,), plan=quiet())) == []

    [finding] = compare(member(applied_changes=(UNKNOWN_CONFIG,), plan=plan_with(("sim_network.this", "update"))))

    assert finding.code is Code.PLAN_CHANGES
    assert finding.next_actions == ("hyops stack apply stack/stack.yml --resume",)  # resume reruns it
    assert finding.addresses == ("sim_network.this",)


def test_plan_changes_resume_would_skip_are_advised_as_a_whole_stack_apply() -> None:
    [finding] = compare(member(applied_changes=(), plan=plan_with(("sim_network.this", "update"))))

    assert finding.code is Code.PLAN_CHANGES
    assert finding.next_actions == ("hyops stack apply stack/stack.yml",)
    assert "would skip it" in finding.detail


def test_a_module_that_is_not_judged_as_a_member_gets_no_member_finding() -> None:
    assert compare(member(applied_changes=None, plan=plan_with(("sim_network.this", "update")))) == []


def test_a_failed_member_is_advised_its_stack_then_the_module_from_the_stack_file_now() -> None:
    found = compare(member(Status.ERROR, plan=plan_with(("sim_network.this", "update"))))

    [partial] = [f for f in found if f.code is Code.PARTIAL_APPLY]
    assert [a.command for a in partial.alternatives] == [
        "hyops stack apply stack/stack.yml --resume",
        "hyops apply stack/network --ref demo/network --var cidr=10.0.0.0/16",
        "hyops destroy stack/network --ref demo/network --inputs rerun.inputs.yml"]


def test_a_member_that_never_ran_is_applied_through_its_stack() -> None:
    where = dataclasses.replace(MEMBER, stack_args=None, inputs_args=())
    found = compare(ModuleEvidence(where=where, record=None, state=state(), refresh=quiet()))

    assert found[0].code is Code.NO_RECORD
    assert "hyops stack apply stack/stack.yml --resume" in found[0].next_actions
