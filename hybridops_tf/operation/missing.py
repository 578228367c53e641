"""What an apply or destroy would act without: the objects the record holds that no state
holds and nothing proved deleted (state_missing, record/gate.py).

One answer for a module's own run (operation/steps.py) and a stack's preflight
(stack/preflight.py), so a stack refuses exactly where its member's own run would. Beyond the
gate's rule it counts two things only a run's surroundings know:
- a stale `running` record's own run completed a delete (its events say so: reads.py), which
  is proof the object is gone;
- an `import` block of the module adopts the missing address: the apply brings the object
  back, so it does not act without it (a destroy has no such way back).
And beside the record's own objects, those reconcile saw another writer put in the state that
no state or record holds now (runtime/outside_seen.py): a rolled-back teammate's object lives
all the same, and an apply would make a second one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.operation import reads
from hybridops_tf.record import gate
from hybridops_tf.record.lifecycle import Command
from hybridops_tf.record.model import OperationRecord, entry_address
from hybridops_tf.runtime import outside_seen

if TYPE_CHECKING:
    from hybridops_tf.store import RunStore


def missing_at_start(command: Command, record: OperationRecord | None, held: set[str] | None,
                     directory: Path, store: RunStore, key: str) -> list[tuple[str, str]]:
    """(key, id) of the objects `command` in `directory` would act without. `held`: the ids
    the module's state holds as read here (None: not read without the engine, then only the
    entries the gate kept at a missing key count). OutsideSeenUnreadable when what reconcile
    saw cannot be read (not known is not "nothing")."""
    if record is None or command not in (Command.APPLY, Command.DESTROY):
        return []
    proof = gate.Proof(deleted=reads.deleted_by_stale_run(store, key, record))
    missing = gate.held_missing(record, held, proof)
    if held is not None:
        missing += outside_seen.unheld(outside_seen.read(store, key), record, held, proof.deleted)
    if missing and command is Command.APPLY:
        from hybridops_tf.inputs.declarations import import_targets  # parsed only when something is missing

        adopted = import_targets(directory)
        missing = [(k, ident) for k, ident in missing if entry_address(k) not in adopted]
    return missing
