"""`action_not_started`: the last run planned an action invocation and stopped before it ran
(docs/contract.md: Reconcile, action_not_started).

Why a finding of its own: a run that stops on another error (a lost create, say) leaves its
planned `after_create` invocations undone, and nothing else brings them back. Once the
trigger's object is in the state (adopted by `reconcile --write`, or created by that run),
no plan plans the action again: `after_create` fires for a create only. So an apply is a no-op
for it, and without this finding reconcile would call the module consistent while the restart
(or whatever the action does) never happened. While the configuration declares the action,
its one step is to invoke it alone, `hyops apply DIR -- -invoke=ADDR`, once nothing else comes
first (a suspect orphan, a stale record: the apply would be refused) and its trigger's object
is in the state; a trigger's object the state lacks is for the apply that creates it, which
runs the action with it. Pure: the evidence in, the finding out.
"""

from __future__ import annotations

from hybridops_tf.reconcile.action_failed import trigger_resource, wanted
from hybridops_tf.reconcile.model import Code, Finding, ModuleEvidence
from hybridops_tf.record.actions import never_started
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord


def finding(ev: ModuleEvidence, rec: OperationRecord, cmd: Commands) -> Finding | None:
    """The finding for `rec`'s planned invocations that never started and that the
    configuration still declares; None when there are none."""
    waiting = wanted(ev, never_started(rec.actions))
    if not waiting:
        return None
    in_state = set(ev.state.addresses()) if ev.state is not None else set()
    first = _comes_first(rec)
    parts, steps, addresses = [], [], []
    for row in waiting:
        resource = trigger_resource(row)
        why = f"{row.address} ({'invoke' if resource is None else 'triggered by ' + row.trigger})"
        if first is None and resource is not None and resource not in in_state:
            why += f": {resource} is not in the state, and the apply that creates it runs the action"
        elif first is None:
            steps.append(cmd.invoke(ev.where, row.address))
        if resource is not None and resource in in_state:
            addresses.append(resource)
        parts.append(why)
    detail = (f"{len(waiting)} planned action invocation(s) never started, and no later plan plans one again "
              f"once its object exists: {'; '.join(parts)}. "
              + (f"Once {first}, invoke each alone" if first else "Invoke each alone")
              + "; nothing is re-created")
    return Finding(Code.ACTION_NOT_STARTED, ev.where.module_ref, detail, tuple(dict.fromkeys(steps)),
                   tuple(dict.fromkeys(addresses)))


def _comes_first(rec: OperationRecord) -> str | None:
    """What an `-invoke` apply would be refused over now (operation/steps.py guard), in words."""
    if rec.status is Status.RUNNING:
        return "the stale running record is settled"
    if rec.suspect_orphans:
        return "the suspect orphans are dealt with (the findings above)"
    return None
