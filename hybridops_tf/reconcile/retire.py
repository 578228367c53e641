"""`--forget-record`: drop a record whose engine state another ref's record claims too.

Why: two refs on one module directory and workspace keep one engine state (operation/places.py),
and every mutating command of either is then refused, because it would act on the other's
objects. A person decides which ref keeps the directory and forgets the others' records:
hyops stops claiming anything for that ref. The engine state and every object stay as they
are; the record itself, who forgot it and when stay in a run folder. Only such a record can be
forgotten: a module whose state is its own leaves hyops by `destroy`, verified.
"""

from __future__ import annotations

from hybridops_tf.base.errors import ExitCode, OperationFailed, UsageError
from hybridops_tf.operation import places
from hybridops_tf.reconcile import audit
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.model import Action, ActionKind
from hybridops_tf.reconcile.write import WriteContext


def forget_record(target: Target, ctx: WriteContext) -> Action:
    """Delete `target`'s record under its lock, leaving an audit run folder; UsageError unless
    another ref's record claims the same engine state (read under the lock)."""
    rt = ctx.gather.runtime
    store = rt.store
    with audit.locked_record(rt, target.key, target.module_ref, ctx.lock_timeout,
                             "there is nothing to forget") as (record, run_id):
        place = places.Place.of(record.module_dir or ".", record.workspace)
        mine, now_shared = places.standing(places.claims_in(store), place, target.module_ref)
        if not (mine and now_shared):  # mine: it claims something, where it says it is
            raise UsageError(f"{target.module_ref}'s engine state is its own (no other ref's record claims it): "
                             "--forget-record only drops a record that shares its state; to stop managing a "
                             "module, destroy it; nothing was changed")
        folder, meta = audit.open_run(rt, target.key, record.module_dir, run_id, "forget-record", ctx.argv,
                                      shared_with=list(now_shared), record=record.to_dict())
        try:
            store.delete(target.key)
        except OSError as err:
            message = f"could not delete {store.where(target.key)}: {err.strerror or err}; the record stays"
            audit.close_run(rt, folder, meta, ExitCode.FAILED, {"outcome": "failed", "error": message})
            raise OperationFailed(message) from None
        audit.close_run(rt, folder, meta, ExitCode.OK, {
            "outcome": "forgotten", "record": record.to_dict(), "shared_with": list(now_shared),
            "by": {"user": meta.user, "host": meta.host, "pid": meta.pid},
        })
    return Action(ActionKind.FORGET_RECORD, f"forgot the record of {target.module_ref}, whose engine state is "
                  f"also module {', '.join(now_shared)}'s (by {meta.user}@{meta.host}, run {run_id})",
                  run_id=run_id)
