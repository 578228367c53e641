"""The last run's timeline, from its events (events.jsonl): one bar per resource change, from
the engine's `apply_start` to its `apply_complete` or `apply_errored`, so what ran side by
side and where the run stopped can be seen. Pure: parsed events in, a Timeline out.

Times are the engine's own `@timestamp`s, offsets in seconds from the first event of all the
runs drawn together (a stack's members run in one timeline). A change started and never
answered (the run was interrupted, hyops or the engine killed) is `unfinished`, drawn to its
run's last event. The stop line is the end of the first failure; changes the engine planned
and never started, and members that never started at all, are listed after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from hybridops_tf.engine.events import ApplyComplete, ApplyErrored, ApplyStart, Event, PlannedChange

# Planned actions that change nothing remotely: never "waiting" when not started.
_QUIET = frozenset({"noop", "read", ""})


class Outcome(StrEnum):
    COMPLETE = "complete"
    ERROR = "error"
    UNFINISHED = "unfinished"  # started, never answered: outcome unknown


@dataclass(frozen=True, slots=True)
class Bar:
    lane: str  # whose run: the stack member (or module ref)
    address: str
    action: str
    start: float  # seconds after the timeline's start
    end: float
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Waiting:
    """Something the run never started: a planned change (address set) or a whole member."""

    lane: str
    address: str | None
    why: str


@dataclass(frozen=True, slots=True)
class RunSpan:
    """One run's engine output, first event to last (init, plan, apply): drawn behind its bars."""

    lane: str
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class RunEvents:
    """One run's parsed events, and the lane (member or module) it is drawn in."""

    lane: str
    run_id: str
    events: Sequence[Event]


@dataclass(frozen=True)
class Timeline:
    started_at: datetime | None  # the first event's time; None: no timed event at all
    span: float  # seconds from the first to the last event
    bars: tuple[Bar, ...]  # in start order
    stop: float | None  # end of the first failed (or, interrupted, unfinished) change
    stop_reason: str | None
    waiting: tuple[Waiting, ...]
    runs: tuple[RunSpan, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.bars and not self.waiting


def _when(event: Event) -> datetime | None:
    stamp = getattr(event, "timestamp", "")
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


@dataclass(slots=True)
class _Open:
    at: datetime
    action: str


def build(runs: Sequence[RunEvents], never_started: Sequence[Waiting] = ()) -> Timeline:
    """The timeline of `runs` drawn together; `never_started` (members the run never reached)
    is listed after the stop line with the changes planned and never started."""
    stamped = [(run, ev, when) for run in runs for ev in run.events if (when := _when(ev)) is not None]
    if not stamped:
        return Timeline(None, 0.0, (), None, None, tuple(never_started))
    t0 = min(when for _, _, when in stamped)

    def offset(when: datetime) -> float:
        return round((when - t0).total_seconds(), 3)

    bars: list[Bar] = []
    waiting: list[Waiting] = []
    spans: list[RunSpan] = []
    for run in runs:
        times = [w for r, _, w in stamped if r is run]
        last = max(times) if times else t0
        if times:
            spans.append(RunSpan(run.lane, offset(min(times)), offset(last)))
        opened: dict[str, _Open] = {}
        started: set[str] = set()
        planned: dict[str, str] = {}
        for ev in run.events:
            when = _when(ev)
            if isinstance(ev, PlannedChange):
                planned.setdefault(ev.resource.addr, ev.action)
            elif isinstance(ev, ApplyStart) and when is not None:
                opened[ev.resource.addr] = _Open(when, ev.action)
                started.add(ev.resource.addr)
            elif isinstance(ev, ApplyComplete | ApplyErrored) and when is not None:
                begun = opened.pop(ev.resource.addr, None) or _Open(when, ev.action)
                outcome = Outcome.COMPLETE if isinstance(ev, ApplyComplete) else Outcome.ERROR
                bars.append(Bar(run.lane, ev.resource.addr, begun.action, offset(begun.at), offset(when), outcome))
        for address, begun in opened.items():
            bars.append(Bar(run.lane, address, begun.action, offset(begun.at), offset(last), Outcome.UNFINISHED))
        for address, action in planned.items():
            if address not in started and action not in _QUIET:
                waiting.append(Waiting(run.lane, address, f"planned {action}, never started"))
    bars.sort(key=lambda b: (b.start, b.end, b.lane, b.address))
    failed = [b for b in bars if b.outcome is Outcome.ERROR] or [b for b in bars if b.outcome is Outcome.UNFINISHED]
    first = min(failed, key=lambda b: (b.end, b.start)) if failed else None
    reason = None
    if first is not None:
        verb = "errored" if first.outcome is Outcome.ERROR else "never answered (interrupted)"
        reason = f"{first.lane}: {first.address} {first.action} {verb}"
    span = offset(max(when for _, _, when in stamped))
    return Timeline(t0, span, tuple(bars), first.end if first else None, reason,
                    tuple(waiting) + tuple(never_started), tuple(spans))
