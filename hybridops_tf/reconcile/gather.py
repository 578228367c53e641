"""Gather one module's evidence: the I/O half of reconcile (docs/contract.md: Reconcile).

The record, the module lock, the claims of other records on its state, the interrupted run's
events and each listed suspect orphan's run; then, unless one of those already decides (a
busy lock, a shared state, a live engine, no module directory), the engine's half
(reconcile/evidence.py), under the module lock. Each part is gathered on its own: when one
fails, its reason goes to `unchecked` and the rest still reaches `compare`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hybridops_tf.base import notices
from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.redact import EPHEMERAL, REDACTED, is_placeholder
from hybridops_tf.engine.progress import ResourceTracker, run_succeeded
from hybridops_tf.engine.vocabulary import CREATE_ACTIONS, Progress
from hybridops_tf.inputs.values import load_inputs_file, read_variables
from hybridops_tf.operation import places
from hybridops_tf.operation.declared_actions import may_declare
from hybridops_tf.reconcile import members
from hybridops_tf.reconcile.evidence import EngineEvidence, GatherOptions, Target, engine_evidence
from hybridops_tf.reconcile.model import ModuleEvidence, OrphanEvidence
from hybridops_tf.record.action_fold import ActionFold
from hybridops_tf.record.actions import ActionRow, unfinished
from hybridops_tf.record.advice import Where, display_dir
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.runtime import outside_seen, state_look
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import EarlierRun
from hybridops_tf.store import Documents, RunRecords


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def rerun_args(target: Target, runtime: Runtime, directory: Path | None = None,
               var_options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """`--inputs rerun.inputs.yml` plus a `--var` for each input it cannot supply, so a
    suggested `hyops apply`/`destroy` runs with the inputs the last run used.

    A redacted value, or a required variable (read from the module's HCL) the file lacks,
    gets a placeholder, `NAME=<secret>`, `NAME=<ephemeral>` (a variable declared ephemeral,
    which no run keeps) or `NAME=<value>`; a non-sensitive value passed to this reconcile
    with `--var` is carried as given. Never a secret or ephemeral value.
    """
    rerun = runtime.rerun_inputs_path(target.key)
    try:
        values = load_inputs_file(rerun) if rerun.is_file() else {}
    except UsageError:
        values = {}
    if not values and target.stack_file is not None:
        return ()  # a member that never ran: `stack apply --resume` wires its inputs
    specs: dict[str, Any] = {}
    if directory is not None and directory.is_dir():
        try:
            specs = dict(read_variables(directory, runtime.hcl_cache(),
                                                   tofu=runtime.reads_tofu()))
        except (UsageError, OSError, ValueError):
            specs = {}
    given = {text.partition("=")[0].strip(): text for text in var_options if "=" in text}
    supplied = set(target.fallback_inputs or {})  # a stack member's inputs come from the stack
    extra: list[str] = []
    for name in sorted(set(values) | set(specs)):
        spec = specs.get(name)
        ephemeral = bool(spec is not None and spec.ephemeral) or values.get(name) == EPHEMERAL
        secret = ephemeral or bool(spec is not None and spec.sensitive) or values.get(name) == REDACTED
        if name in values and not is_placeholder(values[name]):
            continue
        if name not in values and (spec is None or not spec.required or name in supplied):
            continue
        if secret and f"TF_VAR_{name}" in os.environ:
            continue  # the caller's environment gives it, as it gave the run: never on a command line
        if name in given and not secret:
            extra.append(given[name])
        else:
            extra.append(f"{name}={EPHEMERAL}" if ephemeral else f"{name}=<secret>" if secret else f"{name}=<value>")
    head = ("--inputs", _display(rerun)) if values else ()
    return (*head, *(part for text in extra for part in ("--var", text)))


def _read_record(store: RunRecords, ref: str) -> tuple[OperationRecord | None, str | None]:
    try:
        return store.read(ref), None
    except CorruptRecordError as err:
        return None, err.message


def forgotten(target: Target, runtime: Runtime) -> ModuleEvidence:
    """A module whose record --forget-record just dropped: hyops claims nothing of it now."""
    shown = None if target.directory is None else display_dir(target.directory, runtime.root.parent)
    return ModuleEvidence(where=Where(target.module_ref, shown, target.workspace), forgotten=True)


def _seen_outside(store: Documents, key: str) -> tuple[outside_seen.Sighting, ...] | None:
    """What reconcile saw another writer put in the state (runtime/outside_seen.py); when that
    cannot be read, a warning and None (this reconcile looks again and keeps its own look)."""
    try:
        return outside_seen.read(store, key)
    except outside_seen.OutsideSeenUnreadable as err:
        notices.warning(f"the objects an earlier reconcile saw another writer make are not known ({err})")
        return None


def gather(target: Target, opts: GatherOptions) -> ModuleEvidence:
    """Read the record, the lock, the last run's events, errored.tfstate, state and plans."""
    return gather_parts(target, opts)[0]


def gather_parts(target: Target, opts: GatherOptions, reuse: EngineEvidence | None = None
                 ) -> tuple[ModuleEvidence, EngineEvidence | None]:
    """gather, plus the engine's half; with `reuse` (read under the lock this caller still
    holds), the engine is asked only for what `reuse` lacks."""
    from hybridops_tf.runtime import hooks  # the sim registers the one hook hyops has

    store = opts.runtime.store
    record, problem = _read_record(store, target.key)
    directory = target.directory
    if directory is None and record is not None and record.module_dir:
        directory = Path(record.module_dir)
    exists = directory is not None and directory.is_dir()
    workspace = target.workspace or (record.workspace if record else None)
    shown = None if directory is None else display_dir(directory, opts.runtime.root.parent)
    member = None if target.stack_file is None else members.Member(
        directory, workspace, target.fallback_inputs or {}, target.unwired)
    where = Where(target.module_ref, shown, workspace,
                  exists and directory is not None and bool(hooks.applying(directory)),
                  inputs_args=rerun_args(target, opts.runtime, directory if exists else None,
                                         opts.var_options),
                  stack_file=_display(target.stack_file) if target.stack_file else None,
                  stack_args=members.stack_args(member, record, opts.runtime) if member else None)
    lock_free = True if opts.lock_held else store.lock_is_free(target.key)
    seen = _seen_outside(opts.runtime.store, target.key)
    base = ModuleEvidence(where=where, record=record, record_problem=problem,
                          record_path=store.where(target.key), lock_free=lock_free,
                          undeclared_actions=_undeclared(directory if exists else None,
                                                         record.actions if record else []),
                          seen_outside=seen)
    if base.busy:
        holder = f" (run {record.run_id})" if record else ""
        busy = (f"in progress: a live process holds the module lock{holder}; "
                "reconcile again when it has finished")
        return _with(base, unchecked=(busy,)), None
    if directory is not None:
        mine, others = places.standing(opts.claims, places.Place.of(directory, workspace), target.module_ref)
        if mine and others:  # the state is not this record's alone: no engine read can settle anything
            return _with(base, shared_with=others), None
        if others and record is None:  # its state is another ref's: what it holds is theirs, not untracked
            return _with(base, claimed_by=others), None
    unseen = False
    run_events: dict[str, list[Any]] = {}
    if record is not None and record.status is Status.RUNNING:
        earlier = EarlierRun.read(store, target.key, record.run_id)
        events = earlier.events
        run_events[record.run_id] = events
        tracker = ResourceTracker().feed_all(events)
        if run_succeeded(events):  # killed after its engine exited 0: every delete it began is done
            tracker.engine_succeeded()
        base = _with(base, last_run=dict(tracker.resources), deleted=completed_deletes(tracker, events),
                     stream_complete=earlier.complete, last_run_actions=tuple(ActionFold().feed_all(events).rows))
        base = _with(base, undeclared_actions=base.undeclared_actions | _undeclared(
            directory if exists else None, base.last_run_actions or ()))
        unseen = earlier.may_hold_unseen_creates(record.active_command)
        if unseen:
            base = _with(base, replanned_creates=None)  # until a plan names them
        live = _live_engine(opts.runtime.root, target.key, record.run_id)
        if live is not None:
            return _with(base, live_engine=live), None  # nothing can be judged while it runs
    if record is not None and record.suspect_orphans:
        base = _with(base, orphan_evidence=_listed_evidence(store, target.key,
                                                            record, run_events))
    if base.stale:
        base = _progress_evidence(base)
    if directory is None or not exists:
        why = (f"module directory {directory} does not exist" if directory is not None
               else "the module directory is unknown (the record names none)")
        return _with(base, unchecked=(f"{why}: state and plans were not read",)), None
    other = state_look.elsewhere(record, directory, workspace) if record is not None else None
    if other is not None:  # the engine here would read this folder's state, not the record's
        return _with(base, unchecked=(f"{other}: state and plans were not read",)), None
    module = Target(target.module_ref, directory, workspace, target.fallback_inputs)
    if opts.lock_held or store.read_lock_needs_files(target.key):
        parts = engine_evidence(module, record, opts, reuse, member)
        return _stale_imports(_replanned(_with(base, **parts.changes()), unseen), directory), parts
    # Hold the module lock while the engine reads (its plans take the engine's state lock):
    # an apply that starts meanwhile is refused with exit 4, nothing changed, instead of
    # failing on the engine's state lock and recording `error` because of a read.
    from hybridops_tf.record.model import LockBusyError

    try:
        with store.lock(target.key, "reconcile-read", timeout=0):
            parts = engine_evidence(module, record, opts, reuse, member)
            return _stale_imports(_replanned(_with(base, **parts.changes()), unseen), directory), parts
    except LockBusyError:
        return _with(base, unchecked=("in progress: another hyops run took the module lock; "
                                      "reconcile again when it has finished",)), None


def _undeclared(directory: Path | None, rows: Sequence[ActionRow]) -> frozenset[str]:
    """The unfinished rows' action addresses that no configuration file of `directory`'s
    module declares any more (none when the folder is not there: unsure keeps them)."""
    if directory is None:
        return frozenset()
    return frozenset(r.address for r in unfinished(rows) if not may_declare(directory, r.address))


def _stale_imports(ev: ModuleEvidence, directory: Path) -> ModuleEvidence:
    """After a failed read: the configuration's `import` blocks naming an object the record
    saw deleted, by its id or by its identity. The engine cannot import it, so every plan
    fails until the block goes."""
    gone = [e for e in ((ev.record.resources or {}) if ev.record else {}).values()
            if e.status is ResourceStatus.DESTROYED and (e.id is not None or e.identity)]
    if not ev.unchecked or not gone:
        return ev
    from hybridops_tf.inputs.declarations import read_import_blocks

    ids = {e.id for e in gone if e.id is not None}
    identities = [_as_text(e.identity) for e in gone if e.identity]
    stale = tuple(b for b in read_import_blocks(directory)
                  if b.id in ids or (b.identity is not None and _as_text(b.identity) in identities))
    return _with(ev, stale_imports=stale) if stale else ev


def _as_text(identity: Mapping[str, Any]) -> dict[str, str]:
    """An identity with each value as its text: the state's JSON and the configuration's HCL
    spell a number or a bool alike this way."""
    return {k: json.dumps(v) if isinstance(v, bool) else str(v) for k, v in identity.items()}


def _replanned(ev: ModuleEvidence, unseen: bool) -> ModuleEvidence:
    """The plan's creates, when the interrupted run's own plan was never read (None: no plan);
    then what shows each derived orphan's create may have happened."""
    if unseen and ev.plan is not None:
        ev = _with(ev, replanned_creates=ev.plan.creates)
    if ev.stale and ev.replanned_creates:
        known = dict(ev.orphan_evidence or {})
        for address in ev.replanned_creates:
            known.setdefault(address, OrphanEvidence.PLANNED)
        ev = _with(ev, orphan_evidence=known)
    return ev


def _progress_evidence(ev: ModuleEvidence) -> ModuleEvidence:
    """What the interrupted run's own events show of each create: started, or only planned."""
    known = dict(ev.orphan_evidence or {})
    for address, p in (ev.last_run or {}).items():
        if p.status in (Progress.STARTED, Progress.ERROR):
            known.setdefault(address, OrphanEvidence.STARTED)
        elif p.status is Progress.PENDING and not ev.stream_complete:  # complete: it never started
            known.setdefault(address, OrphanEvidence.PLANNED)
    return _with(ev, orphan_evidence=known)


def completed_deletes(tracker: ResourceTracker, events: list[Any]) -> dict[str, tuple[str | None, ...]]:
    """address -> the ids of the objects whose delete completed in this stream, as the tracker
    fed with it retired them (several at one address: a replaced object and a deposed one);
    (None,) where a delete completed without any event naming its object."""
    from hybridops_tf.engine.events import ApplyComplete, ApplyStart

    out: dict[str, tuple[str | None, ...]] = {
        addr: p.deleted_ids for addr, p in tracker.resources.items() if p.deleted_ids}
    named = {e.addr for e in events if isinstance(e, ApplyStart) and e.action == "delete" and e.id_value}
    for event in events:
        if (isinstance(event, ApplyComplete) and event.action == "delete" and event.addr
                and event.addr not in named and not event.id_value):
            out[event.addr] = (None,)
    return out


def _create_started(events: list[Any]) -> set[str]:
    from hybridops_tf.engine.events import ApplyErrored, ApplyProgress, ApplyStart

    return {e.addr for e in events if isinstance(e, ApplyStart | ApplyProgress | ApplyErrored)
            and e.action in CREATE_ACTIONS and e.addr}


def _listed_evidence(store: RunRecords, module_ref: str, record: OperationRecord,
                     cache: dict[str, list[Any]]) -> dict[str, OrphanEvidence]:
    """Per listed suspect orphan: its run's events saw the create start, or only planned it."""
    from hybridops_tf.runtime.run_folder import run_path

    out: dict[str, OrphanEvidence] = {}
    for orphan in record.suspect_orphans:
        recorded = getattr(orphan, "evidence", None)  # a record field, when a writer sets one
        if recorded in (OrphanEvidence.STARTED.value, OrphanEvidence.PLANNED.value):
            out.setdefault(orphan.address, OrphanEvidence(recorded))
            continue
        if not orphan.run_id:
            out.setdefault(orphan.address, OrphanEvidence.UNKNOWN)
            continue
        if orphan.run_id not in cache:
            cache[orphan.run_id] = EarlierRun.read(store, module_ref, orphan.run_id).events
        events = cache[orphan.run_id]
        if orphan.address in _create_started(events):
            out[orphan.address] = OrphanEvidence.STARTED
        elif events or run_path(store.root, module_ref, orphan.run_id).is_dir():
            out.setdefault(orphan.address, OrphanEvidence.PLANNED)
        else:
            out.setdefault(orphan.address, OrphanEvidence.UNKNOWN)
    return out


def _live_engine(runtime_root: Path, module_ref: str, run_id: str) -> Any:
    """liveness.live_engine when that module is installed; None when it is not or fails."""
    try:
        from hybridops_tf.runtime import liveness
    except ImportError:
        return None
    try:
        return liveness.live_engine(runtime_root, module_ref, run_id)
    except (OSError, ValueError):
        return None


def _with(base: ModuleEvidence, **changes: Any) -> ModuleEvidence:
    from dataclasses import replace

    return replace(base, **changes)


