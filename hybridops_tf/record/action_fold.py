"""The fold of a run's events into the rows of the record's `actions` (record/actions.py).

Kept apart from actions.py so that reading a record never loads the event parser; the run's
StreamReader (operation/stream.py) feeds this as the engine prints.
"""

from __future__ import annotations

from collections.abc import Iterable

from hybridops_tf.engine.events import ActionMessage, ChangeSummary, Event
from hybridops_tf.record.actions import INVOKE, UNREPORTED, ActionOutcome, ActionRow


def trigger_of(event: ActionMessage) -> str:
    """`sim_vm.vm after_create` (the event as the `action_trigger` block spells it), or `invoke`."""
    if not event.trigger_addr:
        return INVOKE
    raw = event.trigger_event or ""
    spelled = "".join(f"_{c.lower()}" if c.isupper() else c for c in raw).lstrip("_")  # AfterCreate
    return f"{event.trigger_addr} {spelled}" if spelled else event.trigger_addr


class ActionFold:
    """Folds a run's events into its rows, in the order the plan (or, for an invocation the
    plan did not list, its start) named them: `planned` from the engine's
    `planned_action_invocation`, `invoked` at `action_start`, then `completed` or `error`. A
    started invocation the engine never reported the end of (it was killed) stays `invoked`:
    nobody can say it finished. What the run planned and never started is `not_started` once it
    ended (actions.at_end): the configuration still asks for it, and a later plan may never
    plan it again (an `after_create` fires for a create only)."""

    __slots__ = ("_rows", "failed_in_summary")

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], ActionRow] = {}
        self.failed_in_summary = 0  # the apply's change summary `action_fail`

    def feed(self, event: Event) -> None:
        if isinstance(event, ChangeSummary):
            if event.operation in ("apply", "destroy") and event.action_fail:
                self.failed_in_summary = event.action_fail
            return
        if not isinstance(event, ActionMessage) or not event.action_addr:
            return
        key = (event.action_addr, trigger_of(event))
        if event.type == "planned_action_invocation":
            if key not in self._rows:  # a plan's listing never undoes what the run reported
                self._rows[key] = ActionRow(*key, ActionOutcome.PLANNED)
        elif event.type == "action_start":
            self._rows[key] = ActionRow(*key, ActionOutcome.INVOKED)
        elif event.type == "action_complete":
            self._rows[key] = ActionRow(*key, ActionOutcome.COMPLETED)
        elif event.type == "action_errored":
            self._rows[key] = ActionRow(*key, ActionOutcome.ERROR, event.error or UNREPORTED)

    def feed_all(self, events: Iterable[Event]) -> ActionFold:
        for event in events:
            self.feed(event)
        return self

    @property
    def started(self) -> bool:
        """An action ran: the run acted on the world, whatever the state says (a planned
        invocation alone did nothing)."""
        return any(row.outcome is not ActionOutcome.PLANNED for row in self._rows.values())

    @property
    def rows(self) -> list[ActionRow]:
        """The rows as the stream has them so far (`planned` still planned: actions.at_end)."""
        return list(self._rows.values())
