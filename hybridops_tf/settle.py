"""Pure record transitions of the apply/destroy contract (DESIGN §6 steps 4 and 6).

Each function takes the record as it stands plus the evidence of the run and returns the
record to write. No I/O, so every rule (outputs never fewer, orphans never hidden,
destroyed only when verified) is unit-tested without a process.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybridops_tf.lifecycle import CREATE_ACTIONS, Progress, ResourceStatus, Status
from hybridops_tf.record import OperationRecord, Owner, ResourceEntry, SuspectOrphan, utc_now

if TYPE_CHECKING:  # the event parser loads only once the engine runs (start-up cost)
    from hybridops_tf.engine.progress import ResourceProgress


_PROGRESS_TO_STATUS = {
    Progress.PENDING: ResourceStatus.PENDING,
    Progress.STARTED: ResourceStatus.ERROR,  # in flight when the engine stopped: not complete
    Progress.COMPLETE: ResourceStatus.COMPLETE,
    Progress.DESTROYED: ResourceStatus.DESTROYED,
    Progress.ERROR: ResourceStatus.ERROR,
}


@dataclass(frozen=True, slots=True)
class RunStart:
    """What step 4 persists before the engine may mutate anything."""

    command: str
    module_ref: str
    module_dir: str
    run_id: str
    owner: Owner
    resolved_inputs_file: str
    rerun_inputs_file: str
    inputs_digest: str
    engine: Mapping[str, str]
    workspace: str | None = None


def begin(
    previous: OperationRecord | None, start: RunStart, inherited_orphans: Iterable[SuspectOrphan] = ()
) -> OperationRecord:
    """`running`, carrying everything already known (outputs, orphans, previous outputs).

    inherited_orphans come from an interrupted earlier run (a stale `running` record).
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
    rec.engine = dict(start.engine)
    rec.workspace = start.workspace
    rec.suspect_orphans = _merge_orphans(rec.suspect_orphans, inherited_orphans)
    return rec


def _merge_orphans(known: list[SuspectOrphan], new: Iterable[SuspectOrphan]) -> list[SuspectOrphan]:
    seen = {(o.address, o.run_id) for o in known}
    merged = list(known)
    for orphan in new:
        if (orphan.address, orphan.run_id) not in seen:
            seen.add((orphan.address, orphan.run_id))
            merged.append(orphan)
    return merged


def resources_from_progress(
    progress: Mapping[str, ResourceProgress], tainted: Iterable[str] = ()
) -> dict[str, ResourceEntry]:
    tainted_set = set(tainted)
    entries: dict[str, ResourceEntry] = {}
    for addr, p in progress.items():
        entries[addr] = ResourceEntry(
            status=_PROGRESS_TO_STATUS[p.status].value,
            action=p.action or (p.planned_action or ""),
            id=p.id_value,
            tainted=True if addr in tainted_set else None,
        )
    return entries


def new_suspect_orphans(
    progress: Mapping[str, ResourceProgress],
    state_addresses: Iterable[str],
    run_id: str,
    *,
    interrupted_run: bool = False,
) -> list[SuspectOrphan]:
    """Creates that started and left nothing in state: the object may exist, unrecorded.

    For an interrupted run (hyops died), planned creates count too: the engine may have
    started them after hyops stopped reading its output, so no apply_start was recorded.
    """
    in_state = set(state_addresses)
    now = utc_now()
    statuses = {Progress.STARTED, Progress.ERROR} | ({Progress.PENDING} if interrupted_run else set())
    return [
        SuspectOrphan(address=addr, action="create", run_id=run_id, at=now)
        for addr, p in progress.items()
        if p.action in CREATE_ACTIONS
        and p.status in statuses
        and addr not in in_state
    ]


UNNAMED_ORPHAN = "*"
"""The address of a suspect orphan nobody could name: an interrupted apply may have created
objects, and neither its events nor a fresh plan can say which (look in the provider)."""


def interrupted_run_orphans(
    progress: Mapping[str, ResourceProgress],
    state_addresses: Iterable[str],
    run_id: str,
    replanned: Sequence[str] | None = (),
) -> list[SuspectOrphan]:
    """Suspect orphans of a run hyops died in.

    `replanned` matters when hyops read none of the run's plan (it froze or died before):
    the creates a fresh plan shows and the state does not hold may have been started
    unseen; None means that plan failed too, so one unnamed suspect keeps the doubt listed.
    """
    in_state = set(state_addresses)
    found = new_suspect_orphans(progress, in_state, run_id, interrupted_run=True)
    named = {o.address for o in found} | set(progress)
    extra = [UNNAMED_ORPHAN] if replanned is None else [
        a for a in replanned if a not in in_state and a not in named]
    now = utc_now()
    return found + [SuspectOrphan(address=a, action="create", run_id=run_id, at=now)
                    for a in dict.fromkeys(extra)]


def _finish(rec: OperationRecord, status: Status) -> OperationRecord:
    rec.status = status
    rec.active_command = None
    rec.owner = None
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
    command: str,
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
    return confirmed_empty(running, resources, Status.DESTROYED)


def confirmed_empty(
    running: OperationRecord, resources: dict[str, ResourceEntry], status: Status
) -> OperationRecord:
    """`destroyed` or `absent`, only from a state confirmed empty (by destroy or refresh)."""
    if status not in (Status.DESTROYED, Status.ABSENT):
        raise ValueError(f"an empty state cannot mean {status.value}")
    rec = _finish(copy.deepcopy(running), status)
    if running.outputs:
        rec.previous_outputs = dict(running.outputs)
    rec.outputs = None
    rec.resources = resources
    return rec


def retained(rec: OperationRecord, run_id: str) -> OperationRecord:
    """`retained` by a stack destroy (not destroyed on purpose): outputs and resources stay,
    the run that decided it is `run_id`, and no command or failure is left pending."""
    out = _finish(copy.deepcopy(rec), Status.RETAINED)
    out.run_id = run_id
    return out


def imported(running: OperationRecord, address: str, state_addresses: Iterable[str]) -> OperationRecord:
    """An orphan adopted into state: it stops being a suspect; nothing else is promoted.

    The module keeps `error` (its last apply did not finish); reconcile may settle it `ok`
    from evidence once the state holds the full configuration.
    """
    rec = copy.deepcopy(running)
    if address not in set(state_addresses):
        return failed(running, command="import", error=f"import reported success but {address} is not in state",
                      recovered_outputs=None, resources=None, orphans=[])
    rec.suspect_orphans = [o for o in rec.suspect_orphans if o.address != address]
    resources = dict(rec.resources or {})
    entry = resources.get(address)
    resources[address] = ResourceEntry(status=ResourceStatus.COMPLETE.value, action="import",
                                       id=entry.id if entry else None)
    rec.resources = resources
    rec = _finish(rec, Status.ERROR)
    rec.failed_command = running.failed_command or "apply"
    rec.last_error = f"{address} was imported into state; run `hyops reconcile` to settle the module"
    return rec
