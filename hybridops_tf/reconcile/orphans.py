"""Resolve suspect orphans without prompts: `--forget-orphan ADDRESS`, `--import ADDRESS=ID`.

Why two ways and no third: a suspect orphan is a create whose outcome nobody knows. Either
the object exists and should be managed (import it: the engine adopts it into state, under
the full per-module contract), or a person looked and it does not exist or was removed by
hand (forget it: the record says who decided that, when, and about which orphan). Nothing
else may clear one; `--write` never does.
"""

from __future__ import annotations

import copy

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.operation import steps
from hybridops_tf.reconcile import audit
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.model import Action, ActionKind
from hybridops_tf.reconcile.write import WriteContext, contract_request
from hybridops_tf.record.lifecycle import Status


def parse_import(text: str) -> tuple[str, str]:
    """`ADDRESS=ID` split at the first `=` outside brackets and quotes (`a["k=v"]=id-1`)."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth = max(0, depth - 1)
        elif ch == "=" and depth == 0 and not quoted:
            address, object_id = text[:i].strip(), text[i + 1:].strip()
            if address and object_id:
                return address, object_id
            break
    raise UsageError(f"--import {text!r}: expected ADDRESS=ID, e.g. --import sim_network.this=net-1a2b3c4d")


def forget(target: Target, address: str, ctx: WriteContext, *, why: str | None = None) -> Action:
    """Drop one suspect orphan from the record, under the lock, leaving an audit run folder;
    `why` is what decided it when no person did (a complete lookup that found nothing)."""
    rt = ctx.gather.runtime
    with audit.locked_record(rt, target.key, target.module_ref, ctx.lock_timeout,
                             "there is no suspect orphan to forget") as (record, run_id):
        gone = [o for o in record.suspect_orphans if o.address == address]
        if not gone:
            listed = ", ".join(o.address for o in record.suspect_orphans) or "none"
            hint = ""
            if record.status is Status.RUNNING:
                hint = ("; the record is a stale `running`: add --write to settle it first, which "
                        "lists the creates its run left as suspect orphans")
            raise UsageError(f"{address} is not a suspect orphan of {target.module_ref} "
                             f"(listed: {listed}){hint}")
        updated = copy.deepcopy(record)
        updated.suspect_orphans = [o for o in record.suspect_orphans if o.address != address]
        updated.run_id = run_id
        folder, meta = audit.open_run(rt, target.key, record.module_dir, run_id, "forget-orphan",
                                      ctx.argv, address=address,
                                      forgotten=[o.to_dict() for o in gone], **({"why": why} if why else {}))
        audit.write_record(rt, target.key, folder, meta, updated, address, {
            "outcome": "forgotten", "address": address, "forgotten": [o.to_dict() for o in gone],
            "by": {"user": meta.user, "host": meta.host, "pid": meta.pid},
            "remaining_suspect_orphans": [o.to_dict() for o in updated.suspect_orphans],
            **({"why": why} if why else {}),
        }, before=record)
    because = f": {why}" if why else ""
    return Action(ActionKind.FORGET_ORPHAN, f"forgot suspect orphan {address} (by {meta.user}@{meta.host}, "
                  f"run {run_id}){because}", run_id=run_id)


def import_(target: Target, address: str, object_id: str, ctx: WriteContext) -> Action:
    """The engine's `import`, under the per-module contract (running first, then settled)."""
    if target.directory is None:
        raise UsageError(f"{target.module_ref}: the module directory is unknown; pass MODULE_DIR")
    outcome = steps.run(contract_request(target, ctx, "import", import_address=address, import_id=object_id))
    ok = outcome.exit_code == ExitCode.OK  # the engine imported it and the state now holds it
    if ok and outcome.unchanged:  # the provider has no such object: the record forgot it (operation/steps.py)
        text = f"{outcome.message} (run {outcome.run_id})"
    else:
        text = (f"imported {address} = {object_id} (run {outcome.run_id})" if ok
                else f"import of {address} = {object_id} failed (run {outcome.run_id}): {outcome.message}")
    return Action(ActionKind.IMPORT, text, ok=ok, run_id=outcome.run_id,
                  exit_code=0 if ok else (outcome.exit_code or ExitCode.FAILED))
