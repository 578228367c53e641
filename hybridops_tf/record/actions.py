"""The record's `actions`: each action invocation the last run reported, and whether it finished
(docs/contract.md: The record, Actions).

Why: Terraform 1.14+ runs `action` blocks after a resource's create or update (its lifecycle's
`action_trigger`) or on `apply -invoke=ADDR`. An action changes no state, so neither the state
nor the resources' statuses show it: a run can fail with every resource complete (an action
errored), and an `-invoke` run changes nothing in state yet acts on the world. The rows say
which action ran, what triggered it, and how it ended; `failed` is the one rule that keeps such
a run from settling `ok`. Pure, and free of the event parser (the record is read by every
command; action_fold.py folds a run's events into these rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

INVOKE = "invoke"  # the trigger of an `apply -invoke=ADDR`
UNREPORTED = "the engine did not report how the action ended"


class ActionOutcome(StrEnum):
    COMPLETE = "complete"
    ERROR = "error"


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
        return cls(str(doc["address"]), str(doc["trigger"]), ActionOutcome(str(doc["outcome"])),
                   error if isinstance(error, str) else None)


def unfinished(rows: Sequence[ActionRow]) -> list[ActionRow]:
    """The rows of invocations that did not finish (`error`)."""
    return [r for r in rows if r.outcome is ActionOutcome.ERROR]


def failed(rows: Sequence[ActionRow], failed_in_summary: int = 0) -> str | None:
    """Why a run with these actions is not `ok` (None: every action it ran completed)."""
    errored = unfinished(rows)
    if errored:
        shown = "; ".join(f"{r.address} ({r.trigger}): {r.error or UNREPORTED}" for r in errored[:3])
        return f"{len(errored)} action(s) did not finish: {shown}"
    if failed_in_summary > 0:
        return f"the engine counts {failed_in_summary} failed action invocation(s) it did not name"
    return None


def carried_forward(earlier: Sequence[ActionRow], now: Sequence[ActionRow],
                    declared: Callable[[str], bool]) -> list[ActionRow]:
    """The earlier run's unfinished rows an apply keeps: those whose action this run did not
    run again (an `-invoke` of it, or its trigger firing anew, answers for it) and that the
    configuration may still `declare` (a removed action block is no longer asked for). An
    apply with nothing to change triggers no action, so without this it would read `ok` over
    a restart that never happened."""
    ran = {row.address for row in now}
    return [row for row in unfinished(earlier) if row.address not in ran and declared(row.address)]


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
