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
