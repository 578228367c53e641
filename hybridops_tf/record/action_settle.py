"""The settle rule of actions: a run whose action failed, or whose planned action never
started, never settles `ok` (docs/contract.md: The record, Actions).

An action changes no state, so the engine can finish a run with every resource complete and
an action that did not: Terraform exits 1 then (the record is `error` already), but its change
summary may still count `action_fail` where no invocation was named. A run that stops on
another error leaves its planned invocations `not_started`, and no later plan plans them again
once their trigger's object exists. Either way the record keeps the run's rows and says
`error`, naming the action; reconcile explains it (`action_failed`, `action_not_started`).
Pure: the settled record in, the record to write out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybridops_tf.record import actions, transitions
from hybridops_tf.record.actions import ActionRow
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord

if TYPE_CHECKING:  # the fold reads engine events: apply spawns the engine before it loads their parser
    from hybridops_tf.record.action_fold import ActionFold


def with_actions(settled: OperationRecord, fold: ActionFold, command: Command, reconcile: str,
                 carried: Sequence[ActionRow] = (), *, partial: bool = False) -> tuple[OperationRecord, bool]:
    """`settled` with the run's action rows as it left them (actions.at_end), and the `carried`
    unfinished rows of an earlier run (actions.carried_forward); `error` when an action failed
    or never started and it said `ok`; an `error` it already said names the actions that never
    started too (the summaries and the stack report show last_error). The bool: whether the
    command did what it was asked: never when one of its own actions failed or never started,
    nor, for a whole apply, over a carried one; a `partial` run (`-invoke=ADDR`, `-target`) was
    asked for less, so a carried row keeps its record `error` and its exit 0, as a targeted run's
    unconverged rest does (operation/settle.py). `reconcile`: the command that explains it, as a
    person pastes it."""
    own = actions.at_end(fold.rows)
    settled.actions = [*own, *carried]
    why = actions.failed(settled.actions, fold.failed_in_summary)
    if why is None:
        return settled, True
    succeeded = partial and actions.failed(own, fold.failed_in_summary) is None
    if settled.status is not Status.OK:
        waiting = actions.never_started_note(settled.actions)
        if waiting is not None and settled.status is Status.ERROR and waiting not in (settled.last_error or ""):
            settled.last_error = f"{settled.last_error}; {waiting}" if settled.last_error else waiting
        return settled, succeeded
    return transitions.failed(settled, command=command, error=f"{why}; run `{reconcile}`",
                              recovered_outputs=settled.outputs, resources=settled.resources, orphans=[]), succeeded
