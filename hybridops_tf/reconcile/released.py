"""`--forget-released ADDRESS`: drop an object the record lists as released, once it is gone.

Why: a released object (a `removed` block with destroy = false, a `state rm` with its block
gone) was alive when the engine stopped managing it, and hyops sees it no more after that: no
state, plan or refresh of the module reads it. So the record can only say it was released
alive, never that it lives; when a person deleted it (or checked it is gone), they drop it
from the record here. The record, who decided, when and about which object stay in a run
folder, as for `--forget-orphan`. Nothing remote changes, and nothing else clears the list but
an object adopted back into state.
"""

from __future__ import annotations

import copy

from hybridops_tf.base.errors import UsageError
from hybridops_tf.reconcile import audit
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.model import Action, ActionKind
from hybridops_tf.reconcile.write import WriteContext


def forget_released(target: Target, address: str, ctx: WriteContext) -> Action:
    """Drop `address` from the record's `released`, under the lock, leaving an audit run folder."""
    rt = ctx.gather.runtime
    with audit.locked_record(rt, target.key, target.module_ref, ctx.lock_timeout,
                             "there is no released object to forget") as (record, run_id):
        gone = [o for o in record.released if o.address == address]
        if not gone:
            listed = ", ".join(o.address for o in record.released) or "none"
            raise UsageError(f"{address} is not released by {target.module_ref}'s record (listed: {listed}); "
                             "an object the configuration stopped declaring is listed once `--write` records it")
        updated = copy.deepcopy(record)
        updated.released = [o for o in record.released if o.address != address]
        updated.run_id = run_id
        forgotten = [o.to_dict() for o in gone]
        folder, meta = audit.open_run(rt, target.key, record.module_dir, run_id, "forget-released",
                                      ctx.argv, address=address, forgotten=forgotten)
        audit.write_record(rt, target.key, folder, meta, updated, address, {
            "outcome": "forgotten", "address": address, "forgotten": forgotten,
            "by": {"user": meta.user, "host": meta.host, "pid": meta.pid},
            "remaining_released": [o.to_dict() for o in updated.released],
        }, before=record, forgotten=frozenset(o.id for o in gone))
    return Action(ActionKind.FORGET_RELEASED, f"forgot released object {address} (by {meta.user}@{meta.host}, "
                  f"run {run_id})", run_id=run_id)
