"""Who may start in a queued run, from what the run recorded: graph.Scheduler, replayed. Pure.

A queued run keeps no scheduler in memory: any worker may record a member's end. Each end
is numbered in the run (its `end_seq`, under the run's row lock), so the ends replayed in
that order through a fresh Scheduler put it in exactly the state an in-process run would
have reached, and its `start()` then names what is ready. A member is "active" once the
Scheduler started it and until its end: its job is queued or a worker runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.graph import Resolution, RunGraph


class InconsistentRun(ValueError):
    """The recorded ends cannot have come from this graph (a bug, or rows edited by hand)."""


@dataclass(frozen=True)
class Progress:
    """Where a run stands: `active` members are queued or running; `resolved` ones have an end
    (finished, or pending because an upstream did not succeed); `done` when nothing is active
    and nothing more can start; `final` then holds every member's end, never-started ones too."""

    active: frozenset[str]
    resolved: dict[str, Resolution]
    stopped: bool
    done: bool
    final: dict[str, Resolution] | None


def replay(graph: RunGraph, continue_on_error: bool, ends: Sequence[tuple[str, MemberStatus]]) -> Progress:
    """The Scheduler after `ends` (member, how it ended; in the order the run recorded them).
    Parallelism is not the Scheduler's here: the workers' number and `-p` bound it."""
    sched = graph.scheduler(max(1, len(graph.dependencies)), continue_on_error)
    active: set[str] = set()
    for name, status in ends:
        active.update(sched.start())
        if name not in active:
            raise InconsistentRun(f"member {name} ended but the run never started it")
        active.discard(name)
        sched.finish(name, status)
    active.update(sched.start())
    done = sched.done
    return Progress(frozenset(active), sched.resolved(), sched.stopped, done,
                    sched.resolutions() if done else None)
