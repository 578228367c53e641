"""Who wrote the state last, judged from reconcile's evidence (docs/recovery.md: Another
writer). Pure; the stamp and its diff are record/stamp.py's.

hyops keeps, in the record, the state as its last apply, destroy, import or `reconcile
--write` left it (`state_seen`). A state whose serial or lineage moved since was written by
something other than hyops: a teammate's raw `terraform apply`, a script's `state rm` or
`import`, another environment's state file put in its place.
"""

from __future__ import annotations

from hybridops_tf.reconcile.model import ModuleEvidence
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.stamp import Written, written


def written_outside(ev: ModuleEvidence) -> Written | None:
    """The state's writes since hyops left it, by object; None when the state is as hyops
    left it, or when that cannot be told (no stamp in the record, the state unread, or a
    `running` record: its own run may have written the state)."""
    rec, now = ev.record, ev.stamp
    if rec is None or now is None or rec.state_seen is None or rec.status is Status.RUNNING:
        return None
    return written(rec.state_seen, now)
