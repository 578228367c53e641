"""Gather one module's evidence: the I/O half of reconcile (docs/contract.md: Reconcile).

Why it is careful about writing: a read-only reconcile must change nothing anywhere, so
- the plans run without `-out`, or with it only to a private temporary file outside the
  module and the runtime root (below) (`plan` never persists state; the engine's state lock
  file comes and goes);
- the runtime root's caches (parsed HCL, engine versions) are read, never written, and
  `init` leaves no marker under the runtime root;
- the one exception is `init` when the module has no `.terraform` yet (a fresh checkout):
  the engine cannot read state or plan without it. `init` changes no state and no remote
  object; it writes `.terraform/` (and `.terraform.lock.hcl` when absent) in the module
  directory, exactly as `tofu init` would, and reconcile says so on stderr.
Each part of the evidence is gathered on its own: when one fails, its reason goes to
`unchecked` and the rest still reaches `compare` (and `--write` then writes nothing).

The fewest engine calls: `show -json`, the refresh-only plan and, only for an `error` or
`running` record or one with suspect orphans, the normal plan. That normal plan runs with
`-refresh=false` when the refresh-only plan succeeded and showed no drift: the live objects
then match the saved state, so refreshing again would plan from the same values (same
changes, same output verdict) at the cost of reading every object a second time. After
drift (or a failed refresh-only plan) it refreshes: apply would plan from the live objects,
and a `-refresh=false` plan would miss e.g. the re-create of a vanished object.
`--write` reads the engine once under the lock: its report reuses that `EngineEvidence`
with the record it wrote (only a normal plan the new record needs and the old did not,
e.g. `ok` demoted to `error`, is then run).

When there are suspect orphans to look up, the normal plan is saved to a private temporary
file (RAM-backed /dev/shm when there is one, removed at once) so that `show -json` of it
gives the attributes each create was planned with; only their redacted form is kept.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import EngineError, Interrupted, RefusedError, UsageError
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.base.redact import EPHEMERAL, REDACTED, is_placeholder
from hybridops_tf.engine import commands
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.events import iter_events, summarize_diagnostics
from hybridops_tf.engine.jsonshape import as_dict
from hybridops_tf.engine.progress import ResourceTracker, run_succeeded
from hybridops_tf.engine.runner import Engine
from hybridops_tf.engine.state import StateFormatError, StateSnapshot, outputs_plain, parse_state
from hybridops_tf.engine.vocabulary import CREATE_ACTIONS, Progress
from hybridops_tf.inputs import values as inputs_mod
from hybridops_tf.operation import places, reads
from hybridops_tf.reconcile import members
from hybridops_tf.reconcile.model import (
    ModuleEvidence,
    OrphanEvidence,
    PlanEvidence,
)
from hybridops_tf.record import applied, layout
from hybridops_tf.record.address import record_key
from hybridops_tf.record.advice import Commands, Where, display_dir, where_of
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, ResourceStatus, Status
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.record.objects import missing_from_state, state_view
from hybridops_tf.record.stamp import StateStamp
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import EarlierRun
from hybridops_tf.store import Store

Note = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    """One module to reconcile: its ref, its directory (when known) and how to show it."""

    module_ref: str
    directory: Path | None
    workspace: str | None = None
    fallback_inputs: Mapping[str, Any] | None = None  # stack inputs, when no rerun.inputs.yml
    stack_file: Path | None = None  # set when the module is reconciled as a stack member
    unwired: tuple[str, ...] = ()  # a member's inputs whose value now is unknown (reconcile/members.py)

    @property
    def key(self) -> str:
        """The record key: the ref, plus `@workspace` outside the default workspace."""
        return record_key(self.module_ref, self.workspace)

    @property
    def display_dir(self) -> str | None:
        """Relative to the current directory when under it, so pasted commands stay short."""
        return None if self.directory is None else display_dir(self.directory)


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
        values = inputs_mod.load_inputs_file(rerun) if rerun.is_file() else {}
    except UsageError:
        values = {}
    if not values and target.stack_file is not None:
        return ()  # a member that never ran: `stack apply --resume` wires its inputs
    specs: dict[str, Any] = {}
    if directory is not None and directory.is_dir():
        try:
            specs = dict(inputs_mod.read_variables(directory, runtime.hcl_cache()))
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


@dataclass(frozen=True)
class GatherOptions:
    runtime: Runtime
    engine: EngineInfo | None
    engine_problem: str | None = None
    inputs_file: Path | None = None
    var_options: tuple[str, ...] = ()
    lock_held: bool = False  # --write holds the module lock: any running record is stale
    read_only: bool = True
    note: Note | None = None
    # module directory and workspace -> the refs whose records claim its state (places.claims)
    claims: Mapping[places.Place, tuple[str, ...]] = field(default_factory=dict)


def engine_display(info: EngineInfo | None) -> str:
    """The engine as a person types it: its name when PATH finds this very binary."""
    if info is None:
        return "tofu"
    name = info.binary.name
    found = shutil.which(name)
    if found and Path(found).resolve() == Path(info.binary).resolve():
        return name
    return str(info.binary)


def base_inputs(target: Target, runtime: Runtime) -> tuple[Mapping[str, Any] | None, str]:
    """The inputs the last run used (rerun.inputs.yml), else the stack's; and their label."""
    rerun = runtime.rerun_inputs_path(target.key)
    if rerun.is_file():  # a secret it holds as "<redacted>" comes from TF_VAR_ or --var, else is missing
        recorded = inputs_mod.load_inputs_file(rerun)
        return {k: v for k, v in recorded.items() if not is_placeholder(v)}, f"{rerun} (inputs of the last run)"
    return target.fallback_inputs, "stack inputs"


def resolve_inputs(target: Target, opts: GatherOptions) -> inputs_mod.ResolvedInputs:
    """Last run's inputs < --inputs < --var, validated like a run's (UsageError if not)."""
    assert target.directory is not None
    base, label = base_inputs(target, opts.runtime)
    from_file = inputs_mod.load_inputs_file(opts.inputs_file) if opts.inputs_file else None
    specs = inputs_mod.read_variables(target.directory, opts.runtime.hcl_cache())  # read, never written
    from_vars = inputs_mod.parse_var_options(opts.var_options, specs)
    return inputs_mod.resolve_inputs(
        specs, stack_inputs=base, inputs_file=from_file, var_options=from_vars,
        module_dir=str(target.directory), stack_source=label,
        inputs_file_source=f"--inputs {opts.inputs_file}",
        base_layers=inputs_mod.module_layers(target.directory, specs))


def _read_record(store: Store, ref: str) -> tuple[OperationRecord | None, str | None]:
    try:
        return store.read(ref), None
    except CorruptRecordError as err:
        return None, err.message


@dataclass(frozen=True)
class EngineEvidence:
    """The engine's half of one module's evidence (what `_engine_evidence` read)."""

    state: StateSnapshot | None = None
    refresh: PlanEvidence | None = None
    plan: PlanEvidence | None = None
    errored_state: bool = False
    unchecked: tuple[str, ...] = ()  # engine setup, state and refresh-only plan
    state_unreadable: str | None = None  # why `show -json` failed (ModuleEvidence.state_unreadable)
    plan_unchecked: tuple[str, ...] = ()  # the normal plan's failure
    planned_attributes: dict[str, dict[str, Any]] | None = None
    plan_kind: str | None = None  # None: no normal plan; "plain"; "attributes" (saved and shown)
    final: bool = False  # no plan can be run (no engine, inputs missing): nothing more to read
    # a stack member's ok record against the stack now (reconcile/members.py), read once init
    # has run: the lock file an apply would read is there then
    applied_changes: tuple[str, ...] | None = None
    stamp: StateStamp | None = None  # who wrote the state last (None: could not be read)

    def changes(self) -> dict[str, Any]:
        return {"state": self.state, "stamp": self.stamp, "refresh": self.refresh, "plan": self.plan,
                "errored_state": self.errored_state, "unchecked": self.unchecked + self.plan_unchecked,
                "state_unreadable": self.state_unreadable,
                "planned_attributes": self.planned_attributes, "applied_changes": self.applied_changes}


def _plan_wanted(record: OperationRecord | None) -> str | None:
    """error/running: may settle ok; suspect orphans: the plan names what to look up."""
    if record is None or not (record.status in (Status.ERROR, Status.RUNNING) or record.suspect_orphans):
        return None
    return "attributes" if record.suspect_orphans or record.status is Status.RUNNING else "plain"


def _lost_ids(record: OperationRecord | None, state: StateSnapshot | None) -> bool:
    """The record knows ids the state holds under no address, or under another one (a `state
    mv`): only the plan tells whether the configuration still declares, or agrees with, each."""
    if record is None or state is None or record.status in CLAIMS_EMPTY:
        return False
    view = state_view(state.resources)
    if missing_from_state(record.resources, view):
        return True
    where = {o.id: key for key, o in view.items() if o.id}
    return any(e.id in where and where[e.id] != key for key, e in (record.resources or {}).items())


def _reusable(reuse: EngineEvidence, want: str | None) -> EngineEvidence | None:
    """`reuse` as a fresh read for a record wanting `want` would give it; None if it lacks a plan."""
    if want is None or reuse.final:
        return dataclasses.replace(reuse, plan=None, plan_unchecked=(), planned_attributes=None, plan_kind=None)
    if reuse.plan_kind == "attributes" or (want == "plain" and reuse.plan_kind == "plain"):
        if want == "plain":
            return dataclasses.replace(reuse, planned_attributes=None, plan_kind="plain")
        return reuse
    return None


def forgotten(target: Target, runtime: Runtime) -> ModuleEvidence:
    """A module whose record --forget-record just dropped: hyops claims nothing of it now."""
    shown = None if target.directory is None else display_dir(target.directory, runtime.root.parent)
    return ModuleEvidence(where=Where(target.module_ref, shown, target.workspace), forgotten=True)


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
    base = ModuleEvidence(where=where, record=record, record_problem=problem,
                          record_path=store.where(target.key), lock_free=lock_free)
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
                     stream_complete=earlier.complete)
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
    module = Target(target.module_ref, directory, workspace, target.fallback_inputs)
    if opts.lock_held or store.read_lock_needs_files(target.key):
        parts = _engine_evidence(module, record, opts, reuse, member)
        return _stale_imports(_replanned(_with(base, **parts.changes()), unseen), directory), parts
    # Hold the module lock while the engine reads (its plans take the engine's state lock):
    # an apply that starts meanwhile is refused with exit 4, nothing changed, instead of
    # failing on the engine's state lock and recording `error` because of a read.
    from hybridops_tf.record.model import LockBusyError

    try:
        with store.lock(target.key, "reconcile-read", timeout=0):
            parts = _engine_evidence(module, record, opts, reuse, member)
            return _stale_imports(_replanned(_with(base, **parts.changes()), unseen), directory), parts
    except LockBusyError:
        return _with(base, unchecked=("in progress: another hyops run took the module lock; "
                                      "reconcile again when it has finished",)), None


def _stale_imports(ev: ModuleEvidence, directory: Path) -> ModuleEvidence:
    """After a failed read: the configuration's `import` blocks naming an object the record
    saw deleted. The engine cannot import it, so every plan fails until the block goes."""
    retired = {e.id for e in ((ev.record.resources or {}) if ev.record else {}).values()
               if e.id is not None and e.status is ResourceStatus.DESTROYED}
    if not ev.unchecked or not retired:
        return ev
    from hybridops_tf.inputs.declarations import read_import_blocks

    stale = tuple(b for b in read_import_blocks(directory) if b.id in retired)
    return _with(ev, stale_imports=stale) if stale else ev


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


def _listed_evidence(store: Store, module_ref: str, record: OperationRecord,
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


def _judged(changed: tuple[str, ...] | None) -> bool:
    """An ok member whose record vouches for the stack now, or cannot say: its plan decides
    (any other change is config_changed already, and --resume applies it)."""
    return changed is not None and set(changed) <= {applied.UNKNOWN_CONFIG}


def _engine_evidence(target: Target, record: OperationRecord | None, opts: GatherOptions,
                     reuse: EngineEvidence | None = None, member: members.Member | None = None) -> EngineEvidence:
    """errored.tfstate, `show -json`, the refresh-only plan and (for error/running) the plan;
    for a stack `member` its record against the stack now and, when that does not already say
    it must be applied again, the plan too, unless drift says so: `plan_changes`."""
    assert target.directory is not None
    changed = reuse.applied_changes if reuse is not None else None
    want = _plan_wanted(record) or ("plain" if _judged(changed) else None)
    if want is None and reuse is not None and _lost_ids(record, reuse.state):
        want = "plain"
    if reuse is not None and (kept := _reusable(reuse, want)) is not None:
        return kept
    errored = (target.directory / "errored.tfstate").is_file()
    if opts.engine is None:
        return EngineEvidence(errored_state=errored, unchecked=(opts.engine_problem or "no engine found",), final=True)
    try:
        resolved: inputs_mod.ResolvedInputs | None = resolve_inputs(target, opts)
        inputs_problem = None
    except UsageError as err:
        resolved, inputs_problem = None, err.message
    try:
        engine = _engine(opts, target.directory, resolved, target.workspace, target.module_ref)
    except (EngineError, RefusedError) as err:
        return EngineEvidence(errored_state=errored, unchecked=(err.message,), final=True)
    if reuse is None and member is not None:  # after init, as a run compares it
        changed = members.applied_changes(member, record, opts.runtime, opts.engine)
    judge = _judged(changed)
    want = want or ("plain" if judge else None)
    read = reuse if reuse is not None else _read_state_and_refresh(engine, target.directory, errored, inputs_problem)
    read = dataclasses.replace(read, applied_changes=changed)
    if want is None and _lost_ids(record, read.state):
        want = "plain"  # lost from state, or no longer declared: only the plan tells which
    elif judge and _plan_wanted(record) is None and not _plain_plan_tells(read, resolved):
        want = None
    if read.final or want is None:
        return read
    if read.refresh is not None and not read.refresh.drift:
        refresh_again = False  # the live objects match the saved state: plan from it
    else:
        refresh_again = True
    if want == "attributes":
        plan, why, attributes = _plan_with_attributes(engine, refresh=refresh_again)
    else:
        (plan, why), attributes = _plan(engine, refresh_only=False, refresh=refresh_again), None
    return dataclasses.replace(read, plan=plan, plan_unchecked=(why,) if why else (), planned_attributes=attributes,
                               plan_kind=want)


def _plain_plan_tells(read: EngineEvidence, resolved: inputs_mod.ResolvedInputs | None) -> bool:
    """An ok member's plan says something drift has not said already, with the values it
    was applied with (a sensitive one is only `<redacted>` in rerun.inputs.yml: a plan with
    that would show a change that is not there)."""
    if read.refresh is None or read.refresh.drift or resolved is None:
        return False
    return REDACTED not in resolved.values.values()


def _read_state_and_refresh(engine: Engine, directory: Path, errored: bool, inputs_problem: str | None
                            ) -> EngineEvidence:
    """The state and the refresh-only plan (final: no plan can run without the inputs). The
    state is the module's local state file where the engine keeps it there and no
    errored.tfstate asks for a comparison of every attribute; else `show -json`."""
    unchecked: list[str] = []
    unreadable: str | None = None
    state = None if errored else reads.local_state(engine)
    try:
        state = state if state is not None else parse_state(engine.show_state_doc())
    except (EngineError, StateFormatError) as err:
        unreadable = str(getattr(err, "message", err))
        unchecked.append(f"state (show -json) could not be read: {unreadable}")
    if errored and state is not None and _errored_was_pushed(engine, directory / "errored.tfstate", state):
        errored = False  # the state already holds exactly what errored.tfstate holds
    stamp = reads.state_stamp(engine) if state is not None else None
    if inputs_problem and state is not None and state.is_empty:
        # A refresh-only plan of an empty state reads no object and can show no drift; only
        # the inputs are missing (e.g. a module recorded absent never had a rerun file).
        return EngineEvidence(state, PlanEvidence(), errored_state=errored, unchecked=tuple(unchecked), final=True,
                              stamp=stamp, state_unreadable=unreadable)
    if inputs_problem:
        unchecked.append(f"plans not run: {inputs_problem}")
        return EngineEvidence(state, None, errored_state=errored, unchecked=tuple(unchecked), final=True,
                              stamp=stamp, state_unreadable=unreadable)
    refresh, why = _plan(engine, refresh_only=True)
    unchecked += [why] if why else []
    return EngineEvidence(state, refresh, errored_state=errored, unchecked=tuple(unchecked), stamp=stamp,
                          state_unreadable=unreadable)


def _with(base: ModuleEvidence, **changes: Any) -> ModuleEvidence:
    from dataclasses import replace

    return replace(base, **changes)


def _engine(opts: GatherOptions, directory: Path, resolved: inputs_mod.ResolvedInputs | None,
            workspace: str | None, module_ref: str) -> Engine:
    """The engine as a run would set it up (inputs, sim mirror, workspace), init if needed."""
    assert opts.engine is not None
    engine = Engine(opts.engine, directory, opts.runtime.engine_env(directory, resolved, workspace),
                    inputs=resolved.var_file() if resolved is not None else None)
    from hybridops_tf.store import backend

    engine.ensure_init(layout.init_cache(opts.runtime.root), announce=opts.note, announce_first=True,
                       record=not opts.read_only,
                       extra=lambda: backend.init_args(directory, module_ref, opts.runtime.record_refs),
                       upgrade=Commands().init(where_of(module_ref, directory, workspace), "-upgrade"))
    return engine


def _fingerprint(state: StateSnapshot) -> tuple[object, ...]:
    objects = sorted((r.address, r.deposed_key or "", r.tainted, json.dumps(dict(r.values), sort_keys=True,
                      default=str)) for r in state.resources)
    return tuple(objects), json.dumps(outputs_plain(state.outputs), sort_keys=True, default=str)


def _errored_was_pushed(engine: Engine, path: Path, state: StateSnapshot) -> bool:
    """True when `show -json errored.tfstate` equals the current state: it was pushed back."""
    try:
        errored = parse_state(engine.show_plan_doc(path))
    except (EngineError, StateFormatError):
        return False
    return _fingerprint(errored) == _fingerprint(state)


def _private_tmp() -> str:
    shm = Path("/dev/shm")
    return tempfile.mkdtemp(prefix="hyops-reconcile-", dir=str(shm) if shm.is_dir() else None)


def _plan_with_attributes(engine: Engine, *, refresh: bool = True
                          ) -> tuple[PlanEvidence | None, str | None, dict[str, dict[str, Any]] | None]:
    """The normal plan, saved to a private temporary file only long enough for `show -json`
    to name what each create would be made with (redacted); None when that part failed."""
    tmp = _private_tmp()
    try:
        out = Path(tmp) / "reconcile.tfplan"
        plan, why = _plan(engine, refresh_only=False, out=out, refresh=refresh)
        if plan is None or not out.is_file():
            return plan, why, None
        try:
            doc = engine.show_plan_doc(out)
        except EngineError:
            return plan, why, None
        return plan, why, planned_attributes(doc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def planned_attributes(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """address -> attribute values of each planned create: sensitive ones redacted, unknown
    (computed at create time), null and empty ones omitted, and never `id`."""
    from hybridops_tf.engine.sensitive import redact_sensitive

    out: dict[str, dict[str, Any]] = {}
    for rc in redact_sensitive(doc).get("resource_changes") or []:
        if not isinstance(rc, dict) or rc.get("mode", "managed") != "managed" or not rc.get("address"):
            continue
        change = as_dict(rc.get("change"))
        after = change.get("after")
        if "create" not in (change.get("actions") or []) or not isinstance(after, dict):
            continue
        unknown = as_dict(change.get("after_unknown"))
        out[str(rc["address"])] = {
            key: value for key, value in after.items()
            if key != "id" and unknown.get(key) is not True and value not in (None, "", [], {})
        }
    return out


def _plan(engine: Engine, *, refresh_only: bool, out: Path | None = None,
          refresh: bool = True) -> tuple[PlanEvidence | None, str | None]:
    """`plan -json -detailed-exitcode`, without `-out` unless a private temporary `out` is given:
    evidence only, nothing persisted; `refresh=False` adds `-refresh=false`."""
    lines: list[str] = []
    stderr: list[str] = []
    extra = ["-detailed-exitcode"] + ([] if refresh else ["-refresh=false"])
    argv = engine.argv(commands.plan, out, refresh_only=refresh_only, extra=extra)
    result = engine.stream(argv, lines.append, None, stderr.append)
    if result.interrupted is not None:
        raise Interrupted(f"interrupted by {signal_name(result.interrupted)} while reading evidence; "
                          "nothing was changed")
    events = list(iter_events(lines))
    what = "refresh-only plan" if refresh_only else "plan"
    if result.returncode not in (0, 2):
        why = summarize_diagnostics(events) or next(
            (ln.strip(" │╷╵") for ln in stderr if ln.strip(" │╷╵")), "") or "no diagnostics"
        return None, f"{what} failed (exit {result.returncode}): {why}"
    return PlanEvidence.from_events(events, result.returncode), None
