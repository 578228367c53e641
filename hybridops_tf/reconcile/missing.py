"""`--forget-missing ID`: drop an object the record knows and no state holds, once it is gone
(or one reconcile saw another writer make, which no state or record holds: runtime/outside_seen.py).

Why: an entry whose id no state holds under any address, without a completed delete of that
id, may name a live object nothing manages (a `state rm`, another writer's apply over its
address, another state file put in place): reconcile reports it (`state_missing`) and no
advice, `--write` or state alone ever drops it. When a person deleted the object (or checked
it is gone), they drop it here, naming its id. The record, who decided, when and about which
object stay in a run folder, as for `--forget-orphan`. Nothing remote changes.
"""

from __future__ import annotations

import copy

from hybridops_tf.base import notices
from hybridops_tf.base.errors import UsageError
from hybridops_tf.reconcile import audit
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.model import Action, ActionKind
from hybridops_tf.reconcile.write import WriteContext
from hybridops_tf.record.stamp import cheap_stamp
from hybridops_tf.runtime import outside_seen
from hybridops_tf.store import Documents


def _seen(store: Documents, key: str) -> tuple[outside_seen.Sighting, ...]:
    """The objects reconcile saw another writer make (runtime/outside_seen.py); one that cannot
    be read is refused: forgetting needs to know what it forgets."""
    try:
        return outside_seen.read(store, key)
    except outside_seen.OutsideSeenUnreadable as err:
        raise UsageError(f"{err}; nothing was forgotten") from None


def forget_missing(target: Target, object_id: str, ctx: WriteContext) -> Action:
    """Drop the record's entry holding `object_id`, under the lock, leaving an audit run folder.
    Refused when the record knows no such id, or the module's local state holds it."""
    rt = ctx.gather.runtime
    with audit.locked_record(rt, target.key, target.module_ref, ctx.lock_timeout,
                             "there is no object to forget") as (record, run_id):
        keys = [k for k, e in (record.resources or {}).items() if e.id == object_id]
        seen = [s for s in _seen(rt.store, target.key) if s.id == object_id]
        if not keys and not seen:
            known = ", ".join(sorted({e.id for e in (record.resources or {}).values() if e.id})) or "none"
            raise UsageError(f"{target.module_ref}'s record knows no object {object_id} (ids it knows: {known})")
        state = cheap_stamp(target.directory, target.workspace) if target.directory is not None else None
        if state is not None and any(o.id == object_id for o in state.objects.values()):
            raise UsageError(f"the state of {target.module_ref} holds {object_id}: it is managed, not missing; "
                             "nothing was forgotten")
        updated = copy.deepcopy(record)
        updated.resources = {k: e for k, e in (record.resources or {}).items() if k not in keys}
        updated.run_id = run_id
        forgotten = [{"address": k, **record.resources[k].to_dict()} for k in keys] if record.resources else []
        forgotten += [{"address": s.address, "id": s.id, "seen_outside": s.seen_at} for s in seen]
        keys = keys or [seen[0].address]
        folder, meta = audit.open_run(rt, target.key, record.module_dir, run_id, "forget-missing",
                                      ctx.argv, address=keys[0], forgotten=forgotten)
        audit.write_record(rt, target.key, folder, meta, updated, keys[0], {
            "outcome": "forgotten", "id": object_id, "forgotten": forgotten,
            "by": {"user": meta.user, "host": meta.host, "pid": meta.pid},
        }, before=record, forgotten=frozenset({object_id}))
        if seen:
            try:
                outside_seen.drop(rt.store, target.key, target.module_ref, {object_id})
            except (OSError, outside_seen.OutsideSeenUnreadable) as err:
                notices.warning(f"could not let go of {object_id} in the list of objects reconcile saw another "
                                f"writer make ({err}): reconcile still reports it; forget it again")
    return Action(ActionKind.FORGET_MISSING, f"forgot {object_id} at {', '.join(keys)} (by {meta.user}@{meta.host}, "
                  f"run {run_id})", run_id=run_id)
