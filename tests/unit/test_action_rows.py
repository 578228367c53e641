"""The record's action rows and the settle rule of actions read whole (record/actions.py,
record/action_settle.py): what scripts/mutation.py found surviving tests/unit/test_actions.py.

Each test names one rule: the reason a run with actions is not `ok`, the command a settled
`error` names, how a stored row reads back, and what a malformed one says."""

from __future__ import annotations

import json

import pytest

from hybridops_tf.engine.events import parse_event
from hybridops_tf.record.action_fold import ActionFold
from hybridops_tf.record.action_settle import with_actions
from hybridops_tf.record.actions import UNREPORTED, ActionOutcome, ActionRow, failed, rows_from
from hybridops_tf.record.lifecycle import Command, Status
from tests.unit.reconcile_builders import record


def _errored(n: int) -> list[ActionRow]:
    return [ActionRow(f"action.sim_reboot.r{i}", "invoke", ActionOutcome.ERROR, f"e{i}") for i in range(n)]


def test_a_run_whose_every_action_completed_has_no_reason_to_fail() -> None:
    assert failed([ActionRow("action.sim_reboot.r", "invoke", ActionOutcome.COMPLETED)]) is None
    assert failed([]) is None


def test_the_reason_counts_every_unfinished_action_and_names_the_first_three() -> None:
    assert failed(_errored(4)) == ("4 action(s) did not finish: action.sim_reboot.r0 (invoke): e0; "
                                   "action.sim_reboot.r1 (invoke): e1; action.sim_reboot.r2 (invoke): e2")


def test_an_unfinished_action_without_an_error_says_the_engine_did_not_report_it() -> None:
    row = ActionRow("action.sim_reboot.r", "sim_vm.web after_create", ActionOutcome.ERROR)
    assert failed([row]) == f"1 action(s) did not finish: action.sim_reboot.r (sim_vm.web after_create): {UNREPORTED}"


def test_a_run_settled_error_by_its_action_names_the_command_that_ran() -> None:
    ok = record(Status.OK, resources={"sim_vm.web": ("complete", "update", "vm-1")}, outputs={"ip": "10.0.0.1"})
    start = {"type": "action_start", "@level": "info", "@message": "action_start",
             "hook": {"action": {"addr": "action.sim_reboot.r0", "action_type": "sim_reboot", "action_name": "r0"},
                      "invoke": {}}}
    fold = ActionFold().feed_all([parse_event(json.dumps(start))])  # started, never reported finished

    settled, succeeded = with_actions(ok, fold, Command.DESTROY, "hyops reconcile m")

    assert (settled.status, settled.failed_command, succeeded) == (Status.ERROR, Command.DESTROY, False)
    assert settled.outputs == {"ip": "10.0.0.1"} and settled.resources == ok.resources
    assert settled.last_error == f"1 action(s) did not finish: action.sim_reboot.r0 (invoke): {UNREPORTED}; " \
        "run `hyops reconcile m`"


def test_a_stored_row_whose_error_is_not_text_reads_as_no_error() -> None:
    assert rows_from([{"address": "action.a.b", "trigger": "invoke", "outcome": "error", "error": 7}]) == [
        ActionRow("action.a.b", "invoke", ActionOutcome.ERROR, None)]


def test_stored_actions_that_are_not_a_list_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="^field actions is not a list$"):
        rows_from({"address": "action.a.b"})


def test_a_stored_row_missing_a_key_is_refused_as_malformed_actions() -> None:
    with pytest.raises(ValueError, match="^malformed actions: KeyError"):
        rows_from([{"address": "action.a.b"}])
