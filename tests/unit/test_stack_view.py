"""stack/view.py, pure: the last run report read with every member's record now (issue 38,
item 3). A run whose runner died is `interrupted`, never the green picture its report last
held; a member whose record is a stale `running`, or lists suspect orphans, is uncertain."""

from __future__ import annotations

from typing import Any

import pytest

from hybridops_tf.stack.view import FINISHED, INTERRUPTED, NEVER_RUN, RUNNING, RecordNow, is_uncertain, judge

RUN = "stack-apply-20260101T000000Z-00000000"


def doc(*members: dict[str, Any], finished: bool = False) -> dict[str, Any]:
    return {"schema_version": 1, "stack": "demo", "stack_file": "/s/stack.yml", "run_id": RUN, "command": "apply",
            "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z" if finished else None,
            "members": list(members), "runner": {"pid": 4242, "host": "ci-7"}}


def m(name: str, status: str, run_id: str | None = None, **more: Any) -> dict[str, Any]:
    return {"name": name, "module_ref": f"demo/{name}", "status": status,
            **({"run_id": run_id} if run_id else {}), **more}


OK = RecordNow("ok", "apply-0")


def statuses(out: dict[str, Any]) -> dict[str, str]:
    return {x["name"]: x["status"] for x in out["members"]}


def test_a_finished_run_is_shown_as_reported() -> None:
    out = judge(doc(m("network", "ok", "apply-1"), finished=True), {"network": RecordNow("ok", "apply-1")}, False)

    assert out["state"] == FINISHED and statuses(out) == {"network": "ok"}
    assert not is_uncertain(out)


def test_a_run_never_run_is_said_so() -> None:
    out = judge({**doc(), "run_id": None, "started_at": None}, {}, None)
    assert out["state"] == NEVER_RUN and not is_uncertain(out)


def test_a_run_whose_runner_lives_is_running() -> None:
    out = judge(doc(m("network", "running", "apply-1"), m("vm", "pending")),
                {"network": RecordNow("running", "apply-1"), "vm": OK}, True)

    assert out["state"] == RUNNING and statuses(out) == {"network": "running", "vm": "pending"}
    assert not is_uncertain(out)


def test_a_dead_runners_member_left_running_is_interrupted_and_uncertain() -> None:
    records = {"network": RecordNow("ok", "apply-1"),
               "vm": RecordNow("running", "apply-2", stale=True, active_command="apply"),
               "config": OK}
    out = judge(doc(m("network", "ok", "apply-1"), m("vm", "running", "apply-2"), m("config", "pending")),
                records, False)

    assert out["state"] == INTERRUPTED
    assert statuses(out) == {"network": "ok", "vm": "running", "config": "pending"}
    [vm] = [x for x in out["members"] if x["name"] == "vm"]
    assert "hyops stopped mid-apply" in vm["uncertain"][0]
    assert is_uncertain(out)


def test_a_member_that_settled_before_its_runner_died_shows_what_its_record_says() -> None:
    records = {"network": RecordNow("ok", "apply-1"), "vm": RecordNow("error", "apply-2", last_error="boom")}
    out = judge(doc(m("network", "running", "apply-1"), m("vm", "running", "apply-2")), records, False)

    assert statuses(out) == {"network": "ok", "vm": "error"}
    assert out["members"][1]["error"] == "boom"
    assert out["state"] == INTERRUPTED and is_uncertain(out)


def test_a_member_whose_record_never_reached_its_run_never_started() -> None:
    out = judge(doc(m("vm", "running", "apply-2")), {"vm": RecordNow("ok", "apply-0")}, False)

    assert out["members"] == [m("vm", "pending")]  # no run_id: nothing of run apply-2 exists


def test_while_the_runner_lives_a_member_not_yet_recorded_is_still_running() -> None:
    out = judge(doc(m("vm", "running", "apply-2")), {"vm": RecordNow("ok", "apply-0")}, True)
    assert statuses(out) == {"vm": "running"}


@pytest.mark.parametrize(("record", "state"), [
    (RecordNow("running", "apply-2"), RUNNING),  # its lock is held: the far runner still runs it
    (RecordNow("running", "apply-2", stale=True), INTERRUPTED),
    (RecordNow("ok", "apply-2"), INTERRUPTED),
])
def test_a_runner_on_another_host_is_judged_by_its_members_locks(record: RecordNow, state: str) -> None:
    assert judge(doc(m("vm", "running", "apply-2")), {"vm": record}, None)["state"] == state


def test_a_stale_record_or_orphans_are_uncertain_even_under_a_finished_report() -> None:
    records = {"network": RecordNow("running", "apply-9", stale=True),
               "vm": RecordNow("error", "apply-2", orphans=("sim_vm.this",))}
    out = judge(doc(m("network", "ok", "apply-1"), m("vm", "error", "apply-2"), finished=True), records, False)

    assert out["state"] == FINISHED
    assert [bool(x.get("uncertain")) for x in out["members"]] == [True, True]
    assert "sim_vm.this" in out["members"][1]["uncertain"][0]
    assert is_uncertain(out)


# --- each rule where it alone decides (issue 46) ---------------------------------------------------


def test_a_member_whose_dead_runs_engine_still_runs_is_uncertain_under_a_finished_report() -> None:
    # not stale (the check of its lock is not what says it), no orphans, a finished run:
    # only the engine still running makes it uncertain
    alive = RecordNow("running", "apply-2", stale=False, engine_alive=True, active_command="apply")

    out = judge(doc(m("network", "ok", "apply-1"), finished=True), {"network": alive}, False)

    assert out["state"] == FINISHED and is_uncertain(out)
    [why] = out["members"][0]["uncertain"]
    assert "apply-2" in why


def test_a_status_entry_whose_engine_still_runs_reads_as_an_engine_alive_record() -> None:
    from types import SimpleNamespace

    from hybridops_tf.record.lifecycle import Status
    from hybridops_tf.record.model import OperationRecord
    from hybridops_tf.stack.status import record_now

    rec = OperationRecord(module_ref="demo/network", status=Status.RUNNING, run_id="apply-2")
    now = record_now(SimpleNamespace(record=rec, stale=False, engine_alive=object(), problem=None, written=None,
                                     not_looked=None))

    assert now.engine_alive and not now.stale and not now.held


def test_an_interrupted_run_whose_members_all_settled_is_still_uncertain() -> None:
    # every member's record is ok and names the run's member run: nothing uncertain but the run's end
    out = judge(doc(m("network", "ok", "apply-1"), m("vm", "ok", "apply-2")),
                {"network": RecordNow("ok", "apply-1"), "vm": RecordNow("ok", "apply-2")}, False)

    assert out["state"] == INTERRUPTED and not any(x.get("uncertain") for x in out["members"])
    assert is_uncertain(out)


def test_an_unfinished_queued_run_is_running_whatever_process_queued_it() -> None:
    # no runner: the queue keeps the run, and a worker may take its next member at any time
    queued = {**doc(m("a", "ok", "apply-1", worker="w1"), m("b", "queued")), "queue": True}
    del queued["runner"]

    out = judge(queued, {"a": RecordNow("ok", "apply-1"), "b": RecordNow("none")}, False)

    assert out["state"] == RUNNING and not is_uncertain(out)
