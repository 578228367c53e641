"""`action_failed`: the last run's action did not finish, its objects did (docs/contract.md:
Reconcile, action_failed).

Why a finding of its own: an action (Terraform 1.14+) changes no state, so a record that is
`error` because one failed looks, to every other rule, like a module whose state holds the full
configuration. `partial_apply` would then offer an apply (the plan has nothing to do: the action,
triggered by a create, never runs again) or a destroy (which removes live, complete objects).
The one step that finishes the work is to invoke the action again, alone: `hyops apply DIR --
-invoke=ADDR`, which re-creates nothing. Pure: the evidence in, the finding out.
"""

from __future__ import annotations

from collections.abc import Sequence

from hybridops_tf.reconcile.model import Code, Finding, ModuleEvidence
from hybridops_tf.record.actions import INVOKE, UNREPORTED, ActionRow, did_not_finish, unfinished
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.lifecycle import ResourceStatus
from hybridops_tf.record.model import OperationRecord


def wanted(ev: ModuleEvidence, rows: Sequence[ActionRow]) -> list[ActionRow]:
    """`rows` whose action the configuration may still declare (gather asks
    operation/declared_actions.py): a removed action block is no longer asked for."""
    return [row for row in rows if row.address not in ev.undeclared_actions]


def only_cause(ev: ModuleEvidence, rec: OperationRecord) -> bool:
    """An action that failed or never started is all that keeps the record `error`: every
    recorded object complete, no suspect orphan, and the plan has nothing left to do (then
    `partial_apply` says nothing the action findings do not)."""
    return (bool(wanted(ev, unfinished(rec.actions))) and not rec.suspect_orphans and ev.plan is not None
            and not ev.plan.changes
            and all(e.status is ResourceStatus.COMPLETE for e in (rec.resources or {}).values()))


def trigger_resource(row: ActionRow) -> str | None:
    """The resource whose lifecycle event triggered the row's action; None for an `-invoke`."""
    return None if row.trigger == INVOKE else row.trigger.split(" ", 1)[0]


def finding(ev: ModuleEvidence, rec: OperationRecord, cmd: Commands) -> Finding | None:
    """The finding for `rec`'s unfinished actions, None when every action of its last run
    finished. Its steps invoke each failed action again, once its trigger's object is in the
    state (otherwise the action has nothing to act on: the other findings come first)."""
    failed = wanted(ev, did_not_finish(rec.actions))
    if not failed:
        return None
    in_state = set(ev.state.addresses()) if ev.state is not None else set()
    resources = rec.resources or {}
    parts, steps, addresses = [], [], []
    for row in failed:
        resource = trigger_resource(row)
        why = f"{row.address} ({'invoked' if resource is None else 'triggered by ' + row.trigger}) " \
              f"did not finish: {row.error or UNREPORTED}"
        entry = resources.get(resource) if resource else None
        if resource is not None and entry is not None and entry.status is ResourceStatus.COMPLETE:
            held = "held by the state" if resource in in_state else "NOT in the state"
            why += f"; {resource} is live and complete ({entry.id or 'no id recorded'}, {held})"
            addresses.append(resource)
        parts.append(why)
        if resource is None or resource in in_state:
            steps.append(cmd.invoke(ev.where, row.address))
    detail = ("an action of the last run did not finish, the objects it acts on did: "
              + "; ".join(parts)
              + ". Nothing is to be re-created: once the action's cause is fixed, invoke it again alone")
    return Finding(Code.ACTION_FAILED, ev.where.module_ref, detail, tuple(dict.fromkeys(steps)),
                   tuple(dict.fromkeys(addresses)))
