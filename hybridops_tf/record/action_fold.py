"""The fold of a run's events into the rows of the record's `actions` (record/actions.py).

Kept apart from actions.py so that reading a record never loads the event parser; the run's
StreamReader (operation/stream.py) feeds this as the engine prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hybridops_tf.engine.events import ActionMessage, ChangeSummary, Event
from hybridops_tf.record.actions import INVOKE, UNREPORTED, ActionOutcome, ActionRow


def trigger_of(event: ActionMessage) -> str:
    """`sim_vm.vm after_create` (the event as the `action_trigger` block spells it), or `invoke`."""
    return _trigger(event.trigger_addr, event.trigger_event)


def _trigger(resource: str | None, event: str | None) -> str:
    if not resource:
        return INVOKE
    spelled = "".join(f"_{c.lower()}" if c.isupper() else c for c in event or "").lstrip("_")  # AfterCreate
    return f"{resource} {spelled}" if spelled else resource


def planned_in(plan_doc: Mapping[str, Any]) -> list[ActionRow]:
    """The `planned` rows of a saved plan's `show -json` (its `action_invocations`, Terraform
    1.14+): applying a saved plan prints no `planned_action_invocation`, so the rows come from
    the plan itself (plan/saved.py reads it). Anything malformed is skipped, never fatal: the
    rows the run's own events report still come."""
    rows: list[ActionRow] = []
    invocations = plan_doc.get("action_invocations")
    for item in invocations if isinstance(invocations, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("address"), str):
            continue
        trigger = item.get("lifecycle_action_trigger")
        trigger = trigger if isinstance(trigger, Mapping) else {}
        resource, event = trigger.get("triggering_resource_address"), trigger.get("action_trigger_event")
        rows.append(ActionRow(item["address"], _trigger(resource if isinstance(resource, str) else None,
                                                        event if isinstance(event, str) else None),
                              ActionOutcome.PLANNED))
    return rows


class ActionFold:
    """Folds a run's events into its rows, in the order the plan (or, for an invocation the
    plan did not list, its start) named them: `planned` from the engine's
    `planned_action_invocation`, `invoked` at `action_start`, then `completed` or `error`. A
    started invocation the engine never reported the end of (it was killed) stays `invoked`:
    nobody can say it finished. What the run planned and never started is `not_started` once it
    ended (actions.at_end): the configuration still asks for it, and a later plan may never
    plan it again (an `after_create` fires for a create only)."""

    __slots__ = ("_rows", "failed_in_summary")

    def __init__(self, planned: Sequence[ActionRow] = ()) -> None:
        """`planned`: the rows a saved plan holds (planned_in), before the run's own events."""
        self._rows: dict[tuple[str, str], ActionRow] = {(r.address, r.trigger): r for r in planned}
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
