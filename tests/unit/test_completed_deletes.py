"""What reconcile counts as deleted by an interrupted run: every object whose delete the
stream shows done, a deposed one among them, and nothing the stream leaves in doubt."""

from __future__ import annotations

import json
from typing import Any

from hybridops_tf.engine.events import iter_events
from hybridops_tf.engine.progress import ResourceTracker, run_succeeded
from hybridops_tf.reconcile.gather import completed_deletes
from hybridops_tf.reconcile.rules import delete_done

ADDR = "sim_vm.a"


def _hook(kind: str, ident: str | None = None) -> str:
    hook: dict[str, Any] = {"resource": {"addr": ADDR, "resource_type": "sim_vm"}, "action": "delete"}
    if ident is not None:
        hook.update(id_key="id", id_value=ident)
    return json.dumps({"@level": "info", "@message": "", "type": kind, "hook": hook})


def _summary(operation: str) -> str:
    return json.dumps({"@level": "info", "@message": "", "type": "change_summary",
                       "changes": {"add": 0, "change": 0, "remove": 2, "operation": operation}})


# Terraform 1.11 deletes a deposed object and the tainted current one at one address and
# reports one completion for the two.
TWO_DELETES_ONE_COMPLETION = [_summary("plan"), _hook("apply_start", "vm-old"), _hook("apply_start", "vm-new"),
                              _hook("apply_complete")]


def _deleted(lines: list[str]) -> dict[str, tuple[str | None, ...]]:
    events = list(iter_events(lines))
    tracker = ResourceTracker().feed_all(events)
    if run_succeeded(events):
        tracker.engine_succeeded()
    return completed_deletes(tracker, events)


def test_a_run_whose_engine_finished_counts_every_delete_it_began_deposed_ones_too() -> None:
    deleted = _deleted([*TWO_DELETES_ONE_COMPLETION, _summary("apply")])

    assert deleted == {ADDR: ("vm-old", "vm-new")}
    assert delete_done(f"{ADDR} (deposed 0a1b2c3d)", "vm-old", deleted)
    assert delete_done(ADDR, "vm-new", deleted)


def test_a_run_cut_short_retires_none_of_two_deletes_one_completion_cannot_tell_apart() -> None:
    deleted = _deleted(TWO_DELETES_ONE_COMPLETION)

    assert deleted == {}
    assert not delete_done(f"{ADDR} (deposed 0a1b2c3d)", "vm-old", deleted)


def test_only_the_closing_summary_of_an_apply_or_destroy_says_the_engine_finished() -> None:
    assert run_succeeded(iter_events([_summary("apply")]))
    assert run_succeeded(iter_events([_summary("destroy")]))
    assert not run_succeeded(iter_events([_summary("plan")]))


def test_a_delete_no_event_named_retires_the_current_object_at_its_address_only() -> None:
    deleted = _deleted([_hook("apply_start"), _hook("apply_complete")])

    assert deleted == {ADDR: (None,)}
    assert delete_done(ADDR, "vm-x", deleted)
    assert not delete_done(f"{ADDR} (deposed 0a1b2c3d)", "vm-x", deleted)
