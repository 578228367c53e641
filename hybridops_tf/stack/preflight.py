"""What every stack run checks before any member starts, in process (stack/runner.py) or
queued (stack/queue/submit.py): the command, whose engine state each member's is, and no
uncertain member under an apply."""

from __future__ import annotations

from collections.abc import Mapping

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.operation import places
from hybridops_tf.operation.missing import missing_at_start
from hybridops_tf.record import gate
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, Status, apply_refusal
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.outside_seen import OutsideSeenUnreadable
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.state_look import state_here
from hybridops_tf.stack.model import Stack
from hybridops_tf.store import RunStore

COMMANDS = ("apply", "destroy")


def refuse_places(stack: Stack, command: str, runtime: Runtime) -> None:
    """UsageError (exit 2) naming the first member whose engine state another root's record, or
    another ref's, claims (operation/places.py): a stack run over it starts nothing (a queued
    one too)."""
    try:
        places.refuse_members(command, [(m.name, m.target, m.workspace) for m in stack.members],
                              runtime.store, runtime.root, stack.file)
    except UsageError as err:
        raise UsageError(f"stack {stack.name}: {err.message}") from None


def refuse_uncertain(stack: Stack, records: Mapping[str, OperationRecord | None],
                     store: RunStore) -> None:
    """RefusedError naming the first member whose record's outcome is uncertain (a stale
    `running`, suspect orphans, objects no state holds: state_missing, as the member's own
    apply asks it: operation/missing.py): a stack apply over it starts nothing (a queued one
    too)."""
    for m in stack.members:
        rec = records[m.name]
        why = rec and apply_refusal(rec.status, stale=rec.status is Status.RUNNING,
                                    suspect_orphans=len(rec.suspect_orphans), allow_uncertain=False)
        if why:
            raise RefusedError(
                f"stack {stack.name}: nothing was run: member {m.name} ({m.module_ref}): {why}; "
                f"run `{reconcile_command(m.module_ref, m.directory, m.workspace)}` first")
        reconcile = reconcile_command(m.module_ref, m.directory, m.workspace)
        # the state here speaks for the record only where status compares it (runtime/state_look.py):
        # not behind a backend before init, not a local file another runner's checkout keeps
        stamp = state_here(rec, m.directory, m.workspace)[0] if rec is not None and m.directory.is_dir() else None
        held = {o.id for o in stamp.objects.values() if o.id} if stamp is not None else None
        try:
            lacks = missing_at_start(Command.APPLY, rec, held, m.directory, store, m.key)
        except OutsideSeenUnreadable as err:
            raise RefusedError(f"stack {stack.name}: nothing was run: member {m.name}: what reconcile saw another "
                               f"writer put in its state cannot be read ({err}); run `{reconcile}` first") from None
        missing = gate.missing_refusal("apply", m.module_ref, lacks, reconcile)
        if missing:
            raise RefusedError(f"stack {stack.name}: nothing was run: member {m.name}: {missing}")

