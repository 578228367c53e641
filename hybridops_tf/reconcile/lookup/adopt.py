"""`--write` acts on what the lookups proved: adopt the one found, drop what was never made.

Only orphans the record lists are acted on (a stale `running` record is settled first, which
lists its run's creates). For each:
- a found object (one candidate, at an address the state does not hold) is imported at its
  address through `reconcile --import ADDRESS=ID`'s own path (orphans.import_: the engine's
  import under the full per-module contract), so the record lists it with its id and the
  orphan goes;
- an orphan every lookup accounted for (found and adopted, or none from a complete lookup)
  is dropped through `--forget-orphan`'s own path (orphans.forget), with the lookups' answer
  as the reason in its audit run folder.
Nothing else is ever written from a lookup.

Why a lock and a second look: a stack's members are reconciled side by side, and two
members' lookups may both find the same free object; right before each import, the ids every
record holds are read again, under a lock this process's adoptions share, so an object one
member just adopted is never imported by another.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from hybridops_tf.reconcile import orphans
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.lookup.advice import said
from hybridops_tf.reconcile.lookup.consult import held_ids
from hybridops_tf.reconcile.model import Action, ActionKind, ModuleEvidence
from hybridops_tf.reconcile.verdict import OrphanLookup
from hybridops_tf.reconcile.write import WriteContext

_ADOPTING = threading.Lock()


def adopt(target: Target, found: Mapping[str, OrphanLookup], ev: ModuleEvidence, ctx: WriteContext
          ) -> tuple[list[Action], bool]:
    """Imports and forgets the lookups justify; (actions, whether all of them succeeded)."""
    store = ctx.gather.runtime.store
    record = store.read(target.key)
    listed = {o.address for o in record.suspect_orphans} if record is not None else set()
    actions: list[Action] = []
    for orphan, lookup in found.items():
        if orphan not in listed:
            continue
        adopted_all = True
        for ask in lookup.adoptable:
            candidate = ask.found
            assert candidate is not None
            with _ADOPTING:
                if candidate.id in held_ids(store, ev):
                    actions.append(Action(ActionKind.SETTLE, f"not adopted: {candidate.id} (found for {ask.address}) "
                                          "is held by a record now; reconcile again"))
                    adopted_all = False
                    continue
                action = orphans.import_(target, ask.address, candidate.id, ctx)
            run = f" (lookup run {lookup.run_id})" if lookup.run_id else ""
            actions.append(Action(action.kind, f"{action.detail}: {said(ask)}{run}", ok=action.ok,
                                  run_id=action.run_id, exit_code=action.exit_code))
            if not action.ok:
                return actions, False
        imported_here = any(a.address == orphan for a in lookup.adoptable)  # the import dropped it
        if lookup.settled and adopted_all and not imported_here:
            why = "; ".join(said(a) for a in lookup.asks)
            run = f" (lookup run {lookup.run_id})" if lookup.run_id else ""
            actions.append(orphans.forget(target, orphan, ctx, why=f"{why}{run}"))
    return actions, True
