"""A queued run's dispatch (stack/queue/dispatch.py): graph.Scheduler replayed from the ends a
run recorded, so a run on many workers starts members exactly when an in-process run would."""

from __future__ import annotations

import pytest

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.graph import APPLY_SUCCESS, RunGraph
from hybridops_tf.stack.queue.dispatch import InconsistentRun, replay
from hybridops_tf.stack.queue.progress import ends_of, first_failure
from hybridops_tf.stack.queue.tables import MemberRow

OK, ERROR, PENDING = MemberStatus.OK, MemberStatus.ERROR, MemberStatus.PENDING
INTERRUPTED = MemberStatus.INTERRUPTED

# a -> c <- b ; c -> d ; e alone
DIAMOND = RunGraph({"a": (), "b": (), "c": ("a", "b"), "d": ("c",), "e": ()}, ["a", "b", "c", "d", "e"],
                   APPLY_SUCCESS, {})


def test_at_queueing_every_member_without_upstreams_is_ready() -> None:
    progress = replay(DIAMOND, False, [])
    assert progress.active == {"a", "b", "e"} and not progress.done


def test_a_dependant_is_queued_only_once_all_its_upstreams_are_ok() -> None:
    assert "c" not in replay(DIAMOND, False, [("a", OK)]).active
    assert "c" in replay(DIAMOND, False, [("a", OK), ("b", OK)]).active


def test_after_an_error_its_dependants_are_pending_blocked_by_it_and_never_queued() -> None:
    progress = replay(DIAMOND, True, [("a", ERROR), ("b", OK), ("e", OK)])
    assert progress.done and not progress.active
    assert progress.resolved["c"].status is PENDING and progress.resolved["c"].blocked_by == "a"
    assert progress.final is not None and progress.final["d"].blocked_by == "c"


def test_an_error_without_continue_on_error_stops_the_run_and_starts_nothing_new() -> None:
    progress = replay(DIAMOND, False, [("a", ERROR)])
    assert progress.stopped and progress.active == {"b", "e"}  # still queued: withdrawn by progress.advance
    after = replay(DIAMOND, False, [("a", ERROR), ("b", PENDING), ("e", PENDING)])
    assert after.done and after.final is not None and after.final["d"].status is PENDING


def test_a_lost_workers_member_blocks_its_dependants_but_does_not_stop_the_run() -> None:
    progress = replay(DIAMOND, False, [("a", INTERRUPTED), ("b", OK)])
    assert not progress.stopped and "e" in progress.active
    assert progress.resolved["c"].status is PENDING and progress.resolved["c"].blocked_by == "a"


def test_members_sharing_a_directory_are_never_queued_together() -> None:
    grouped = RunGraph({"x": (), "y": ()}, ["x", "y"], APPLY_SUCCESS, {"x": "/m", "y": "/m"})
    assert replay(grouped, False, []).active == {"x"}
    assert replay(grouped, False, [("x", OK)]).active == {"y"}


def test_an_end_of_a_member_the_run_never_started_is_refused() -> None:
    with pytest.raises(InconsistentRun):
        replay(DIAMOND, False, [("c", OK)])


def test_ends_replay_in_the_order_the_run_numbered_them_and_the_first_failure_is_the_earliest() -> None:
    rows = [MemberRow("a", "s/a", "s/a", 0, status="error", end_seq=2),
            MemberRow("b", "s/b", "s/b", 1, status="error", end_seq=1),
            MemberRow("c", "s/c", "s/c", 2, status="waiting")]
    assert ends_of(rows) == [("b", ERROR), ("a", ERROR)]
    assert first_failure(rows) == "b"


def test_once_the_run_stopped_the_jobs_no_worker_took_are_withdrawn_and_their_members_pending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """a failed; b's job is still queued (no worker took it); e's worker runs it. Only b's job
    is withdrawn, and b alone of them is pending, blocked by a."""
    from hybridops_tf.stack.queue import jobs, progress, tables
    from hybridops_tf.stack.queue.tables import QUEUED, RUNNING, QueuedRun, RunOptions

    cancelled: list[int] = []
    ends = iter(range(2, 100))
    monkeypatch.setattr(jobs, "cancel", lambda _app, _conn, job_id: cancelled.append(job_id))
    monkeypatch.setattr(jobs, "defer", lambda *_a: pytest.fail("a stopped run queued a member"))
    monkeypatch.setattr(tables, "next_end", lambda _conn, _run: next(ends))
    monkeypatch.setattr(tables, "save", lambda *_a: None)
    monkeypatch.setattr(tables, "finish_run", lambda *_a: None)
    rows = [MemberRow("a", "m/a", "m__a", 0, status=ERROR.value, job_id=1, end_seq=1),
            MemberRow("b", "m/b", "m__b", 1, status=QUEUED, job_id=2),
            MemberRow("c", "m/c", "m__c", 2), MemberRow("d", "m/d", "m__d", 3),
            MemberRow("e", "m/e", "m__e", 4, status=RUNNING, job_id=3, worker="w1")]
    run = QueuedRun("apply-1", "s", "stack.yml", "digest", "apply", RunOptions(), DIAMOND, "test", "now")

    progress.advance(None, None, run, rows, "later")

    assert cancelled == [2]
    by_name = {r.name: r for r in rows}
    assert (by_name["b"].status, by_name["b"].blocked_by) == (PENDING.value, "a")
    assert by_name["e"].status == RUNNING
