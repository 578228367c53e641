"""stack/graph.py: the pure scheduler (pending propagation, continue-on-error, stop after a
failure, interrupt, parallelism) and the destroy ordering with ownership (docs/contract.md: Stacks)."""

from __future__ import annotations

import graphlib
from collections.abc import Mapping
from pathlib import Path

import pytest

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack import graph
from hybridops_tf.stack.graph import DESTROY_SUCCESS, Resolution, Scheduler
from hybridops_tf.stack.model import Member, Stack

OK, ERROR, PENDING, SKIPPED = MemberStatus.OK, MemberStatus.ERROR, MemberStatus.PENDING, MemberStatus.SKIPPED

# network -> vm -> config -> health, plus an independent branch dns -> mail
DEMO = {"network": (), "vm": ("network",), "config": ("vm",), "health": ("vm", "config"),
        "dns": (), "mail": ("dns",)}


def drive(sched: Scheduler, outcome: Mapping[str, MemberStatus]) -> list[str]:
    """Run to the end, one member at a time as started; returns the start order."""
    started: list[str] = []
    while not sched.done:
        batch = sched.start()
        assert batch, "scheduler stalled"
        for name in batch:
            started.append(name)
            sched.finish(name, outcome.get(name, OK))
    return started


def test_all_ok_runs_every_member_after_its_upstreams() -> None:
    sched = Scheduler(DEMO, parallelism=1)

    order = drive(sched, {})

    assert sorted(order) == sorted(DEMO)
    for name, ups in DEMO.items():
        assert all(order.index(u) < order.index(name) for u in ups)
    assert all(r == Resolution(OK) for r in sched.resolutions().values())


def test_descendants_of_a_failure_are_pending_not_failed() -> None:
    sched = Scheduler(DEMO, continue_on_error=True)

    drive(sched, {"vm": ERROR})
    res = sched.resolutions()

    assert res["vm"] == Resolution(ERROR)
    assert res["config"] == Resolution(PENDING, "vm")
    assert res["health"] == Resolution(PENDING, "vm")  # the failed upstream, not the pending one
    assert res["network"].status is OK


def test_pending_names_a_pending_upstream_when_no_upstream_failed() -> None:
    chain = {"a": (), "b": ("a",), "c": ("b",)}
    sched = Scheduler(chain, continue_on_error=True)

    drive(sched, {"a": ERROR})

    assert sched.resolutions()["c"] == Resolution(PENDING, "b")


def test_a_pending_member_is_never_started() -> None:
    sched = Scheduler(DEMO, parallelism=8, continue_on_error=True)

    started = drive(sched, {"network": ERROR})

    assert "vm" not in started and "config" not in started and "health" not in started


def test_continue_on_error_lets_an_independent_branch_complete() -> None:
    sched = Scheduler(DEMO, parallelism=1, continue_on_error=True,
                      order=["network", "vm", "config", "health", "dns", "mail"])

    started = drive(sched, {"vm": ERROR})

    assert started[-2:] == ["dns", "mail"]
    assert sched.resolutions()["mail"] == Resolution(OK)


def test_without_continue_on_error_nothing_new_starts_after_a_failure() -> None:
    sched = Scheduler(DEMO, parallelism=1, order=["network", "vm", "config", "health", "dns", "mail"])

    started = drive(sched, {"vm": ERROR})
    res = sched.resolutions()

    assert started == ["network", "vm"]
    assert res["dns"] == Resolution(PENDING, "vm")  # unrelated, but the run stopped at vm
    assert res["mail"] == Resolution(PENDING, "vm")
    assert res["config"] == Resolution(PENDING, "vm")


def test_running_members_finish_after_a_failure_stops_the_run() -> None:
    sched = Scheduler({"a": (), "b": (), "c": ("a",)}, parallelism=2)
    assert sched.start() == ["a", "b"]

    sched.finish("b", ERROR)
    assert sched.start() == []
    assert not sched.done  # a is still running and will be waited for
    sched.finish("a", OK)

    assert sched.done
    assert sched.resolutions() == {"a": Resolution(OK), "b": Resolution(ERROR),
                                   "c": Resolution(PENDING, "b")}


def test_interrupt_starts_nothing_new_and_reports_the_rest_pending() -> None:
    sched = Scheduler(DEMO, parallelism=2, order=["network", "dns", "vm", "mail", "config", "health"])
    assert sched.start() == ["network", "dns"]

    sched.interrupt()
    sched.finish("network", OK)
    assert sched.start() == []
    sched.finish("dns", ERROR)  # its engine was stopped by the forwarded signal
    res = sched.resolutions()

    assert sched.done
    assert res["vm"] == Resolution(PENDING)  # nothing failed upstream: only the interrupt
    assert res["mail"] == Resolution(PENDING, "dns")
    assert res["health"].status is PENDING


def test_parallelism_caps_how_many_run_at_once() -> None:
    wide = {f"m{i}": () for i in range(10)}
    sched = Scheduler(wide, parallelism=3)

    first = sched.start()

    assert len(first) == 3
    assert sched.start() == []
    sched.finish(first[0], OK)
    assert len(sched.start()) == 1


def test_members_of_one_group_never_run_together() -> None:
    sched = Scheduler({"a": (), "b": (), "c": ()}, parallelism=3, groups={"a": "dir", "b": "dir"})

    assert sched.start() == ["a", "c"]
    sched.finish("a", OK)

    assert sched.start() == ["b"]


def test_skipped_counts_as_ok_for_dependants() -> None:
    sched = Scheduler({"a": (), "b": ("a",)})

    drive(sched, {"a": SKIPPED})

    assert sched.resolutions()["b"] == Resolution(OK)


def test_retained_lets_destroy_go_on_but_an_error_blocks() -> None:
    deps = {"leaf": (), "kept": (), "base": ("leaf", "kept")}
    ok = Scheduler(deps, success=DESTROY_SUCCESS, continue_on_error=True)
    drive(ok, {"leaf": MemberStatus.DESTROYED, "kept": MemberStatus.RETAINED,
               "base": MemberStatus.DESTROYED})
    blocked = Scheduler(deps, success=DESTROY_SUCCESS, continue_on_error=True)
    drive(blocked, {"leaf": ERROR, "kept": MemberStatus.RETAINED})

    assert ok.resolutions()["base"].status is MemberStatus.DESTROYED
    assert blocked.resolutions()["base"] == Resolution(PENDING, "leaf")


def test_finishing_a_member_that_is_not_running_is_a_bug() -> None:
    sched = Scheduler({"a": ()})

    with pytest.raises(ValueError):
        sched.finish("a", OK)


def test_a_cycle_is_refused() -> None:
    with pytest.raises(graphlib.CycleError):
        Scheduler({"a": ("b",), "b": ("a",)})


# --- destroy ordering --------------------------------------------------------------------------
def member(name: str, *deps: str, owned_by: str | None = None) -> Member:
    return Member(name=name, directory=Path("/nowhere") / name, module_ref=f"demo/{name}",
                  depends_on=deps, owned_by=owned_by)


DEMO_STACK = Stack("demo", Path("/nowhere/stack.yml"), (
    member("network"), member("vm", "network"), member("config", "vm", owned_by="vm"),
    member("health", "vm", "config"),
))


def test_apply_order_follows_depends_on() -> None:
    assert graph.topological_order(DEMO_STACK) == ["network", "vm", "config", "health"]


def test_destroy_goes_in_reverse_with_the_owned_member_after_its_owner() -> None:
    order = graph.destroy_order(DEMO_STACK)

    assert order.index("health") < order.index("vm")  # dependants go first
    assert order.index("vm") < order.index("config")  # owned: confirmed after its owner
    assert order.index("vm") < order.index("network")


def test_dependants_of_an_owned_member_go_before_its_owner() -> None:
    deps = graph.destroy_dependencies(DEMO_STACK)

    assert "health" in deps["vm"]  # health reads config, which vm's destroy takes along
    assert deps["config"] == ("health", "vm")


def test_a_failed_owner_destroy_leaves_the_owned_member_unresolved() -> None:
    sched = Scheduler(graph.destroy_dependencies(DEMO_STACK), success=DESTROY_SUCCESS,
                      order=graph.destroy_order(DEMO_STACK))

    drive(sched, {"health": MemberStatus.DESTROYED, "vm": ERROR})
    res = sched.resolutions()

    assert res["config"] == Resolution(PENDING, "vm")
    assert res["network"] == Resolution(PENDING, "vm")


def test_graph_text_and_dot_name_every_member_and_edge() -> None:
    text = graph.to_text(DEMO_STACK)
    dot = graph.to_dot(DEMO_STACK)

    assert "config: ref demo/config; after vm; owned by vm" in text
    assert "destroy order: health -> vm -> config -> network" in text
    assert dot.startswith('digraph "demo" {')
    assert '"vm" -> "config" [style=bold];' in dot
    assert '"network" -> "vm";' in dot
