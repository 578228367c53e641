"""Pure record transitions of the apply/destroy contract (docs/contract.md: Statuses).

Each function takes the record as it stands plus the evidence of the run and returns the
record to write: its status (running, then ok, error, destroyed, absent, retained) and what
goes with it. No I/O, so every rule (outputs never fewer, orphans never hidden, destroyed only
when verified) is unit-tested without a process. What the record knows of each object (its
entries, released and orphaned objects) is record/objects.py's.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.model import (
    LastAttempt,
    OperationRecord,
    Owner,
    RecordEngine,
    ResourceEntry,
    SuspectOrphan,
    utc_now,
)
from hybridops_tf.record.objects import StateView, as_view, identity_of, is_data_source, missing_from_state


@dataclass(frozen=True, slots=True)
class RunStart:
    """What step 4 persists before the engine may mutate anything."""

    command: Command
    module_ref: str
    module_dir: str
    run_id: str
    owner: Owner
    resolved_inputs_file: str
    rerun_inputs_file: str
    inputs_digest: str
    engine: RecordEngine
    workspace: str | None = None
    config_digest: str | None = None  # an apply of the configuration only (record/applied.py)


def begin(
    previous: OperationRecord | None, start: RunStart, inherited_orphans: Iterable[SuspectOrphan] = (),
    known_resources: dict[str, ResourceEntry] | None = None,
) -> OperationRecord:
    """`running`, carrying everything already known (outputs, orphans, previous outputs).

    inherited_orphans and known_resources come from an interrupted earlier run (a stale
    `running` record): its orphans, and the resources its events prove.
    """
    rec = copy.deepcopy(previous) if previous is not None else OperationRecord(
        module_ref=start.module_ref, status=Status.RUNNING, run_id=start.run_id
    )
    rec.module_ref = start.module_ref
    rec.status = Status.RUNNING
    rec.run_id = start.run_id
    rec.module_dir = start.module_dir
    rec.active_command = start.command
    rec.failed_command = None
    rec.last_error = None
    rec.started_at = utc_now()
    rec.owner = start.owner
    rec.resolved_inputs_file = start.resolved_inputs_file
    rec.rerun_inputs_file = start.rerun_inputs_file
    rec.inputs_digest = start.inputs_digest
    rec.config_digest = start.config_digest
    rec.engine = start.engine
    rec.workspace = start.workspace
    rec.suspect_orphans = _merge_orphans(rec.suspect_orphans, inherited_orphans)
    if known_resources is not None:
        rec.resources = known_resources
    return rec


def _merge_orphans(known: list[SuspectOrphan], new: Iterable[SuspectOrphan]) -> list[SuspectOrphan]:
    seen = {(o.address, o.run_id) for o in known}
    merged = list(known)
    for orphan in new:
        if (orphan.address, orphan.run_id) not in seen:
            seen.add((orphan.address, orphan.run_id))
            merged.append(orphan)
    return merged


def _finish(rec: OperationRecord, status: Status) -> OperationRecord:
    rec.status = status
    rec.active_command = None
    rec.owner = None
    rec.last_attempt = None  # this run's outcome is the news now
    if status is not Status.ERROR:
        rec.failed_command = None
        rec.last_error = None
    return rec


def apply_succeeded(
    running: OperationRecord, outputs: Mapping[str, Any], resources: dict[str, ResourceEntry]
) -> OperationRecord:
    rec = _finish(copy.deepcopy(running), Status.OK)
    rec.outputs = dict(outputs)
    rec.resources = resources
    return rec


def failed(
    running: OperationRecord,
    *,
    command: Command,
    error: str,
    recovered_outputs: Mapping[str, Any] | None,
    resources: dict[str, ResourceEntry] | None,
    orphans: list[SuspectOrphan],
) -> OperationRecord:
    """`error`: outputs = known outputs merged with what the partial state holds, never fewer."""
    rec = copy.deepcopy(running)
    merged = dict(running.outputs or {})
    merged.update(recovered_outputs or {})
    rec.outputs = merged or running.outputs
    if resources is not None:
        rec.resources = resources
    rec.suspect_orphans = _merge_orphans(rec.suspect_orphans, orphans)
    rec = _finish(rec, Status.ERROR)
    rec.failed_command = command
    rec.last_error = error
    return rec


def destroy_verified(running: OperationRecord, resources: dict[str, ResourceEntry]) -> OperationRecord:
    """`destroyed` only after the state was confirmed empty: outputs move to previous_outputs."""
    return confirmed_empty(running, resources, Status.DESTROYED, command=Command.DESTROY)


def destroy_left_alive(running: OperationRecord, resources: dict[str, ResourceEntry]) -> OperationRecord:
    """A destroy that emptied the state but left objects alive on purpose (`lifecycle { destroy
    = false }`: the engine forgot them, and the caller lists them in `released`): `retained`,
    never `destroyed` over live objects, never a failure for doing what was asked. An object
    the state lost without a delete still makes it `error` (state_missing), as for any destroy."""
    rec = destroy_verified(running, resources)
    if rec.status is Status.DESTROYED:
        rec.status = Status.RETAINED
    return rec


def confirmed_empty(
    running: OperationRecord, resources: dict[str, ResourceEntry], status: Status, *, command: Command = Command.REFRESH
) -> OperationRecord:
    """`destroyed` or `absent`, only from a state confirmed empty (by destroy or refresh), and
    only when every object the record knows got a completed delete: an id the record holds
    that vanished from state without one may still be live (`state_missing`, so `error`)."""
    if status not in (Status.DESTROYED, Status.ABSENT):
        raise ValueError(f"an empty state cannot mean {status.value}")
    missing = missing_from_state(resources, {})
    if missing:
        return failed(running, command=command, error=state_missing_error(running, missing),
                      recovered_outputs=None, resources=resources, orphans=[])
    rec = _finish(copy.deepcopy(running), status)
    if running.outputs:
        rec.previous_outputs = dict(running.outputs)
    rec.outputs = None
    # a data source is a read the empty state no longer holds, not an object left live
    rec.resources = {a: e for a, e in resources.items() if not is_data_source(a, e)}
    return rec


def state_missing_error(rec: OperationRecord, missing: Sequence[tuple[str, str]]) -> str:
    """last_error for objects the record knows that the state lost, with the command that
    adopts each back (hyops reconcile --import) so the next destroy can remove it."""
    listed = ", ".join(f"{addr} (id {ident})" for addr, ident in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    imports = [word for addr, ident in missing for word in ("--import", shlex.quote(f"{addr}={ident}"))]
    command = reconcile_command(rec.module_ref, rec.module_dir, rec.workspace, *imports)
    return (f"state_missing: the state is empty but the record knows {listed}{more}, which no completed "
            f"delete removed: it may still be live. Look it up in the provider, then adopt it with "
            f"`{command}` and destroy again")


def retained(rec: OperationRecord, run_id: str) -> OperationRecord:
    """`retained` by a stack destroy (not destroyed on purpose): outputs and resources stay,
    the run that decided it is `run_id`. A failure the record held (failed_command,
    last_error) is kept: keeping a module does not make its last failed apply converge."""
    out = copy.deepcopy(rec)
    out.status = Status.RETAINED
    out.active_command = None
    out.owner = None
    out.run_id = run_id
    return out


def imported(
    running: OperationRecord, address: str, state: StateView | Iterable[str],
    resources: dict[str, ResourceEntry] | None = None,
) -> OperationRecord:
    """An orphan adopted into state: it stops being a suspect; nothing else is promoted.

    The module keeps `error` (its last apply did not finish); reconcile may settle it `ok`
    from evidence once the state holds the full configuration. `resources` is what the
    record knows after the import (resources_after_run); the adopted address is marked.
    """
    view = as_view(state) or {}
    rec = copy.deepcopy(running)
    if address not in view:
        return failed(running, command=Command.IMPORT, error=f"import reported success but {address} is not in state",
                      recovered_outputs=None, resources=resources, orphans=[])
    rec.suspect_orphans = [o for o in rec.suspect_orphans if o.address != address]
    merged = dict(resources if resources is not None else (rec.resources or {}))
    entry = merged.get(address)
    merged[address] = ResourceEntry(status=ResourceStatus.COMPLETE, action="import",
                                    id=view[address].id or (entry.id if entry else None),
                                    tainted=True if view[address].tainted else None,
                                    **identity_of(view[address], entry))
    resources = merged
    rec.resources = resources
    rec = _finish(rec, Status.ERROR)
    rec.failed_command = running.failed_command or Command.APPLY
    settle = reconcile_command(rec.module_ref, rec.module_dir, rec.workspace)
    rec.last_error = f"{address} was imported into state; run `{settle}` to settle the module"
    return rec


def after_import(settled: OperationRecord, before: OperationRecord | None) -> OperationRecord:
    """An import adopts one object beside a failure it does not fix: an `error` record keeps the
    failed command and error of the run it follows, with what the import did (or why it failed)
    after it. The run's real failure is never lost to a note about the adoption."""
    if settled.status is not Status.ERROR or before is None or before.status is not Status.ERROR \
            or not before.last_error or before.failed_command is Command.IMPORT:
        return settled  # an earlier import's failure is its own run's news: never quoted again
    out = copy.deepcopy(settled)
    out.failed_command = before.failed_command or settled.failed_command
    out.last_error = f"{before.last_error}; then {settled.last_error}" if settled.last_error else before.last_error
    return out


def engine_refused(
    previous: OperationRecord | None, running: OperationRecord, *, command: Command, error: str, exit_code: int
) -> OperationRecord | None:
    """The record after a run the engine refused before any resource change started.

    Nothing changed remotely, so the record goes back to what it said before the run (None:
    there was no record, and there still is none); the attempt is kept in `last_attempt` and
    in its run folder. Suspect orphans inherited from an interrupted earlier run stay listed.
    """
    rec = attempt_refused(previous, run_id=running.run_id, command=command, error=error, exit_code=exit_code)
    if rec is not None:
        rec.suspect_orphans = _merge_orphans(rec.suspect_orphans, running.suspect_orphans)
    return rec


def attempt_refused(previous: OperationRecord | None, *, run_id: str, command: Command, error: str,
                    exit_code: int) -> OperationRecord | None:
    """The record after an attempt that changed nothing (refused by the engine, or stopped by a
    failing `init` before `running` was written): what it said, with the attempt in
    `last_attempt` (None: there was no record, and there still is none)."""
    if previous is None:
        return None
    rec = copy.deepcopy(previous)
    rec.last_attempt = LastAttempt(run_id=run_id, command=command, at=utc_now(), exit_code=exit_code, error=error)
    return rec


def not_converged(rec: OperationRecord, *, command: Command, why: str) -> OperationRecord:
    """A targeted (or -replace / -refresh-only) run that did what it was asked while the whole
    configuration did not converge: not `ok`, so nothing (resume, reconcile) takes it as done."""
    out = copy.deepcopy(rec)
    out = _finish(out, Status.ERROR)
    out.failed_command = command
    out.last_error = f"not converged: {why}"
    return out
