"""The record's `actions`: each action invocation the last run planned or reported, and how far
it got (docs/contract.md: The record, Actions).

Why: Terraform 1.14+ runs `action` blocks after a resource's create or update (its lifecycle's
`action_trigger`) or on `apply -invoke=ADDR`. An action changes no state, so neither the state
nor the resources' statuses show it: a run can fail with every resource complete (an action
errored), an `-invoke` run changes nothing in state yet acts on the world, and a run that stops
early leaves planned invocations that never ran (an `after_create` does not fire again for an
object that exists by then). A row exists from the moment the plan knows the invocation
(`planned`), then says `invoked`, `completed` or `error`; a run that ends without starting it
leaves it `not_started`. `failed` is the one rule that keeps such a run from settling `ok`.
Pure, and free of the event parser (the record is read by every command; action_fold.py folds
a run's events into these rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any

from hybridops_tf.base.lazy_dataclass import dataclass

INVOKE = "invoke"  # the trigger of an `apply -invoke=ADDR`
UNREPORTED = "the engine did not report how the action ended"


class ActionOutcome(StrEnum):
    PLANNED = "planned"  # the plan holds it; the run has not started it (yet)
    INVOKED = "invoked"  # started; how it ended was not reported (yet)
    COMPLETED = "completed"
    ERROR = "error"
    NOT_STARTED = "not_started"  # planned, and the run ended without starting it


# Spellings of records written before these outcomes (issue 48 wrote `complete`).
_READ_AS = {"complete": ActionOutcome.COMPLETED}
_NEVER_STARTED = frozenset({ActionOutcome.PLANNED, ActionOutcome.NOT_STARTED})
_STARTED_UNFINISHED = frozenset({ActionOutcome.INVOKED, ActionOutcome.ERROR})


@dataclass(frozen=True, slots=True)
class ActionRow:
    """One invocation: `trigger` is `ADDRESS EVENT` (`sim_vm.vm after_create`) or `invoke`."""

    address: str
    trigger: str
    outcome: ActionOutcome
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Exactly these four keys (`hyops status --json` lists them under `actions`)."""
        return {"address": self.address, "trigger": self.trigger, "outcome": self.outcome.value,
                "error": self.error}

    @classmethod
    def from_dict(cls, doc: Any) -> ActionRow:
        error = doc.get("error")
        said = str(doc["outcome"])
        return cls(str(doc["address"]), str(doc["trigger"]), _READ_AS.get(said) or ActionOutcome(said),
                   error if isinstance(error, str) else None)


def unfinished(rows: Sequence[ActionRow]) -> list[ActionRow]:
    """The rows of invocations that did not complete: started and not finished, or never started."""
    return [r for r in rows if r.outcome is not ActionOutcome.COMPLETED]


def did_not_finish(rows: Sequence[ActionRow]) -> list[ActionRow]:
    """The rows of invocations that started and did not finish (`error`, or `invoked` with no end)."""
    return [r for r in rows if r.outcome in _STARTED_UNFINISHED]


def never_started(rows: Sequence[ActionRow]) -> list[ActionRow]:
    """The rows of planned invocations that no run started (`not_started`, or `planned` in a
    killed run's events)."""
    return [r for r in rows if r.outcome in _NEVER_STARTED]


def at_end(rows: Sequence[ActionRow]) -> list[ActionRow]:
    """The rows as the run that made them left them once it ended: what it planned and never
    started is `not_started` (an `invoked` row stays: nobody can say how it ended)."""
    return [replace(r, outcome=ActionOutcome.NOT_STARTED) if r.outcome is ActionOutcome.PLANNED else r
            for r in rows]


def _shown(rows: Sequence[ActionRow], with_error: bool) -> str:
    return "; ".join(f"{r.address} ({r.trigger})" + (f": {r.error or UNREPORTED}" if with_error else "")
                     for r in rows[:3])


def never_started_note(rows: Sequence[ActionRow]) -> str | None:
    """What a record's never-started rows say in words (None: none)."""
    waiting = never_started(rows)
    if not waiting:
        return None
    return f"{len(waiting)} planned action(s) never started: {_shown(waiting, with_error=False)}"


def failed(rows: Sequence[ActionRow], failed_in_summary: int = 0) -> str | None:
    """Why a run with these actions is not `ok` (None: every action it planned completed)."""
    errored = did_not_finish(rows)
    why = [f"{len(errored)} action(s) did not finish: {_shown(errored, with_error=True)}"] if errored else []
    waiting = never_started_note(rows)
    why += [waiting] if waiting else []
    if not why and failed_in_summary > 0:
        return f"the engine counts {failed_in_summary} failed action invocation(s) it did not name"
    return "; ".join(why) or None


def carried_forward(earlier: Sequence[ActionRow], now: Sequence[ActionRow],
                    declared: Callable[[str], bool]) -> list[ActionRow]:
    """The earlier run's unfinished rows (failed, or never started) an apply keeps: those whose
    action this run did not plan or run again (an `-invoke` of it, or its trigger firing anew,
    answers for it) and that the configuration may still `declare` (a removed action block is
    no longer asked for). An apply with nothing to change triggers no action, so without this
    it would read `ok` over a restart that never happened."""
    ran = {row.address for row in now}
    return [row for row in unfinished(earlier) if row.address not in ran and declared(row.address)]


def after_run(earlier: Sequence[ActionRow], now: Sequence[ActionRow],
              declared: Callable[[str], bool]) -> list[ActionRow]:
    """The rows an apply's record keeps once it ended: its own (action_fold.py), as it left
    them, then the earlier run's it carries forward."""
    return [*at_end(now), *carried_forward(earlier, now, declared)]


def still_asked(rows: Sequence[ActionRow], declared: Callable[[str], bool]) -> list[ActionRow]:
    """`rows` less the unfinished ones whose action the configuration no longer declares (an
    `ok` record holds no unfinished row: reconcile --write settles `ok` only over those)."""
    return [row for row in rows if row.outcome is ActionOutcome.COMPLETED or declared(row.address)]


def rows_from(doc: Any) -> list[ActionRow]:
    """A record's `actions` as stored; ValueError when malformed."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise ValueError("field actions is not a list")
    try:
        return [ActionRow.from_dict(row) for row in doc]
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"malformed actions: {err!r}") from None
