"""What refuses an apply or destroy of one module before its engine starts, under the lock:
an uncertain outcome (a stale `running`, suspect orphans) and objects the run would act
without (state_missing: operation/missing.py). Approval (plan/reviewed.py) asks the first
before planning too."""

from __future__ import annotations

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.engine import commands
from hybridops_tf.operation.missing import missing_at_start
from hybridops_tf.operation.request import ModuleRequest
from hybridops_tf.record import gate
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, Status, apply_refusal
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import cheap_stamp
from hybridops_tf.runtime import outside_seen
from hybridops_tf.runtime.state_look import elsewhere


def _reconcile(req: ModuleRequest) -> str:
    """`hyops reconcile` of this run's module, ref and workspace, as a person pastes it."""
    return reconcile_command(req.target.ref, req.target.directory, req.workspace)


def guard(req: ModuleRequest, previous: OperationRecord | None) -> None:
    """Uncertain-outcome guard. Under the lock a `running` record we see is stale (approval
    also asks it before planning, without the lock: the run asks it again under it)."""
    if req.command != Command.APPLY or previous is None:
        return  # destroy, refresh and import create nothing: cleanup and adoption stay open
    why = apply_refusal(
        previous.status,
        stale=previous.status is Status.RUNNING,
        suspect_orphans=len(previous.suspect_orphans),
        allow_uncertain=req.allow_uncertain,
    )
    if why:
        raise RefusedError(
            f"apply of {req.target.ref} refused: {why}; run `{_reconcile(req)}` first, or pass "
            "--allow-uncertain to apply anyway"
        )


def refresh_only(req: ModuleRequest) -> bool:
    """An apply given `-refresh-only` (after `--`): it creates and deletes nothing, so it cannot
    act without an object; it is how a state lets go of objects the provider no longer has,
    with the refresh as the gate's proof (the advice of reconcile/compare.py)."""
    if req.command is not Command.APPLY or req.plan_file is not None:
        return False
    for arg in req.passthrough:
        if arg == "--":
            break
        if commands.flag_name(arg) == "-refresh-only" and arg.partition("=")[2].lower() not in ("false", "0"):
            return True
    return False


def guard_missing(req: ModuleRequest, previous: OperationRecord | None) -> dict[str, str] | None:
    """An apply or destroy refuses while the record holds an object no state holds and nothing
    proved deleted (operation/missing.py): it would act without it (a refresh-only apply does
    not). Returns the local state's
    ids by address as read here (None: not read without the engine)."""
    stamp = cheap_stamp(req.target.directory, req.workspace)
    ids = {k: o.id for k, o in stamp.objects.items() if o.id} if stamp is not None else None
    if req.allow_uncertain or previous is None or refresh_only(req):
        return ids
    held = set(ids.values()) if ids is not None else None
    try:
        missing = missing_at_start(req.command, previous, held, req.target.directory, req.runtime.store, req.key)
    except outside_seen.OutsideSeenUnreadable as err:
        raise RefusedError(f"{req.command.value} of {req.target.ref} refused: what reconcile saw another writer put in "
                           f"its state cannot be read ({err}); run `{_reconcile(req)}` first, which looks again, "
                           "or pass --allow-uncertain") from None
    why = gate.missing_refusal(req.command.value, req.target.ref, missing, _reconcile(req))
    if why and (other := elsewhere(previous, req.target.directory, req.workspace)):
        why = f"{why} ({other})"  # the state here is not the one the record stamped
    if why:
        raise RefusedError(why)
    return ids


