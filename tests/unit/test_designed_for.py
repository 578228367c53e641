"""Designed for, on written fixtures (issue 47, item 6; docs/engines-and-roots.md: Designed for).

What no engine here can do yet, written from the engines' documents and sources
(tests/fixtures/written/README.md), so hyops reads it right the day it ships:
- `lifecycle { destroy = false }` (Terraform 1.16, OpenTofu 1.12): a destroy that leaves an
  object alive on purpose (plan action `forget`) lists it as released, is `retained`, never
  `destroyed` over a live object, never a failure; a replace that forgets the old object
  (`["create","forget"]` in Terraform, `["forget","create"]` in OpenTofu) is shown as one;
- OpenTofu's `-exclude`, `-target-file`, `-exclude-file` make a run partial, as `-target` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.cli.plan_render import render_markdown, render_resource_change
from hybridops_tf.engine.events import iter_events
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.operation.reads import partial_run_flags
from hybridops_tf.record import transitions
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry
from hybridops_tf.record.objects import Objects, objects_after_run

WRITTEN = Path(__file__).resolve().parents[1] / "fixtures" / "written"


def _destroy_false_objects() -> Objects:
    lines = (WRITTEN / "terraform-1.16-destroy-false.jsonl").read_text().splitlines()
    tracker = ResourceTracker().feed_all(list(iter_events(lines)))
    known = {"sim_network.kept": ResourceEntry(ResourceStatus.COMPLETE, "create", "net-1"),
             "sim_vm.web": ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1")}
    return objects_after_run(known, tracker.resources, {}, run_id="destroy-1")


def test_a_destroy_that_forgets_an_object_on_purpose_lists_it_as_released() -> None:
    objects = _destroy_false_objects()

    assert [(r.address, r.id) for r in objects.released] == [("sim_network.kept", "net-1")]
    assert objects.resources["sim_vm.web"].status is ResourceStatus.DESTROYED
    assert "sim_network.kept" not in objects.resources


def test_such_a_destroy_is_retained_never_destroyed_over_a_live_object_and_no_failure() -> None:
    objects = _destroy_false_objects()
    running = OperationRecord(module_ref="m", status=Status.RUNNING, run_id="destroy-1", active_command="destroy")

    settled = transitions.destroy_left_alive(running, objects.resources)

    assert settled.status is Status.RETAINED
    assert settled.failed_command is None and settled.last_error is None


def test_a_destroy_that_forgot_nothing_still_settles_destroyed() -> None:
    running = OperationRecord(module_ref="m", status=Status.RUNNING, run_id="destroy-1", active_command="destroy")
    gone = {"sim_vm.web": ResourceEntry(ResourceStatus.DESTROYED, "delete", "vm-1")}

    assert transitions.destroy_verified(running, gone).status is Status.DESTROYED


@pytest.mark.parametrize("actions", [["create", "forget"], ["forget", "create"]])
def test_a_replace_that_forgets_the_old_object_says_so_in_the_plan(actions: list[str]) -> None:
    """Terraform 1.16 writes create then forget, OpenTofu 1.12 forget then create: before, the
    review showed nothing for either (read as a no-op)."""
    rc = {"address": "sim_vm.web", "change": {"actions": actions, "before": {"name": "a"}, "after": {"name": "b"}}}

    [line] = render_resource_change(rc)
    table = "\n".join(render_markdown({"resource_changes": [rc]}, "plan", "1 to replace"))

    assert line.split()[1] == "sim_vm.web" and "not destroyed" in line
    assert "the old object is no longer managed" in table


@pytest.mark.parametrize("flag", ["-exclude=sim_vm.web", "--exclude=sim_vm.web", "-target-file=targets.txt",
                                  "-exclude-file=excluded.txt", "-target=sim_vm.web"])
def test_opentofu_exclusion_and_target_files_make_a_run_partial_as_target_does(flag: str) -> None:
    assert partial_run_flags(["-parallelism=2", flag]) == ["-" + flag.lstrip("-").partition("=")[0]]


def test_the_written_destroy_false_stream_names_its_forget_count() -> None:
    lines = (WRITTEN / "terraform-1.16-destroy-false.jsonl").read_text().splitlines()
    summaries = [json.loads(line)["changes"] for line in lines if '"change_summary"' in line]

    assert [s["forget"] for s in summaries] == [1, 1]
