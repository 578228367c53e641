"""Gather one module's evidence: the I/O half of reconcile (DESIGN §9).

Why it is careful about writing: a read-only reconcile must change nothing anywhere, so
- the plans run without `-out` (`plan` never persists state; the engine's state lock
  file comes and goes);
- variables are read without the runtime root's HCL cache, the engine version without its
  cache, and `init` leaves no marker under the runtime root;
- the one exception is `init` when the module has no `.terraform` yet (a fresh checkout):
  the engine cannot read state or plan without it. `init` changes no state and no remote
  object; it writes `.terraform/` (and `.terraform.lock.hcl` when absent) in the module
  directory, exactly as `tofu init` would, and reconcile says so on stderr.
Each part of the evidence is gathered on its own: when one fails, its reason goes to
`unchecked` and the rest still reaches `compare`.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf import inputs as inputs_mod
from hybridops_tf.engine import commands
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.events import iter_events, summarize_diagnostics
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.engine.runner import Engine
from hybridops_tf.engine.state import StateFormatError, StateSnapshot, outputs_plain, parse_state
from hybridops_tf.errors import EngineError, Interrupted, RefusedError, UsageError
from hybridops_tf.lifecycle import Status
from hybridops_tf.reconcile.model import ModuleEvidence, PlanEvidence, Where
from hybridops_tf.record import CorruptRecordError, OperationRecord, RecordStore
from hybridops_tf.redact import REDACTED
from hybridops_tf.runs import may_hold_unseen_creates, read_run_events
from hybridops_tf.runtime import Runtime

Note = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    """One module to reconcile: its ref, its directory (when known) and how to show it."""

    module_ref: str
    directory: Path | None
    workspace: str | None = None
    fallback_inputs: Mapping[str, Any] | None = None  # stack inputs, when no rerun.inputs.yml
    stack_file: Path | None = None  # set when the module is reconciled as a stack member

    @property
    def display_dir(self) -> str | None:
        """Relative to the current directory when under it, so pasted commands stay short."""
        return None if self.directory is None else _display(self.directory)


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def rerun_args(target: Target, runtime_root: Path) -> tuple[str, ...]:
    """`--inputs rerun.inputs.yml` (plus a `--var NAME=<secret>` per redacted value) so a
    suggested `hyops apply`/`destroy` runs with the inputs the last run used."""
    rerun = Runtime(runtime_root).rerun_inputs_path(target.module_ref)
    try:
        values = inputs_mod.load_inputs_file(rerun) if rerun.is_file() else {}
    except UsageError:
        return ()
    if not values:
        return ()
    secrets = tuple(f"{name}=<secret>" for name, value in sorted(values.items()) if value == REDACTED)
    return ("--inputs", _display(rerun), *(part for s in secrets for part in ("--var", s)))


@dataclass(frozen=True)
class GatherOptions:
    runtime_root: Path
    engine: EngineInfo | None
    engine_problem: str | None = None
    inputs_file: Path | None = None
    var_options: tuple[str, ...] = ()
    lock_held: bool = False  # --write holds the module lock: any running record is stale
    read_only: bool = True
    note: Note | None = None


def engine_display(info: EngineInfo | None) -> str:
    """The engine as a person types it: its name when PATH finds this very binary."""
    if info is None:
        return "tofu"
    name = info.binary.name
    found = shutil.which(name)
    if found and Path(found).resolve() == Path(info.binary).resolve():
        return name
    return str(info.binary)


def base_inputs(target: Target, runtime_root: Path) -> tuple[Mapping[str, Any] | None, str]:
    """The inputs the last run used (rerun.inputs.yml), else the stack's; and their label."""
    rerun = Runtime(runtime_root).rerun_inputs_path(target.module_ref)
    if rerun.is_file():
        return inputs_mod.load_inputs_file(rerun), f"{rerun} (inputs of the last run)"
    return target.fallback_inputs, "stack inputs"


def resolve_inputs(target: Target, opts: GatherOptions) -> inputs_mod.ResolvedInputs:
    """Last run's inputs < --inputs < --var, validated like a run's (UsageError if not)."""
    assert target.directory is not None
    base, label = base_inputs(target, opts.runtime_root)
    from_file = inputs_mod.load_inputs_file(opts.inputs_file) if opts.inputs_file else None
    specs = inputs_mod.read_variables(target.directory, None)
    from_vars = inputs_mod.parse_var_options(opts.var_options, specs)
    return inputs_mod.resolve_inputs(
        specs, stack_inputs=base, inputs_file=from_file, var_options=from_vars,
        module_dir=str(target.directory), stack_source=label,
        inputs_file_source=f"--inputs {opts.inputs_file}")


def _read_record(store: RecordStore, ref: str) -> tuple[OperationRecord | None, str | None]:
    try:
        return store.read(ref), None
    except CorruptRecordError as err:
        return None, err.message


def gather(target: Target, opts: GatherOptions) -> ModuleEvidence:
    """Read the record, the lock, the last run's events, errored.tfstate, state and plans."""
    from hybridops_tf.sim import install as sim_install

    store = RecordStore(opts.runtime_root)
    record, problem = _read_record(store, target.module_ref)
    directory = target.directory
    if directory is None and record is not None and record.module_dir:
        directory = Path(record.module_dir)
    exists = directory is not None and directory.is_dir()
    workspace = target.workspace or (record.workspace if record else None)
    where = Where(target.module_ref, Target(target.module_ref, directory).display_dir, workspace,
                  exists and directory is not None and sim_install.module_uses_sim(directory),
                  inputs_args=rerun_args(target, opts.runtime_root),
                  stack_file=_display(target.stack_file) if target.stack_file else None)
    lock_free = True if opts.lock_held else store.lock_is_free(target.module_ref)
    base = ModuleEvidence(where=where, record=record, record_problem=problem,
                          record_path=str(store.record_path(target.module_ref)), lock_free=lock_free)
    if base.busy:
        holder = f" (run {record.run_id})" if record else ""
        busy = (f"in progress: a live process holds the module lock{holder}; "
                "reconcile again when it has finished")
        return _with(base, unchecked=(busy,))
    unseen = False
    if record is not None and record.status is Status.RUNNING:
        events = read_run_events(opts.runtime_root, target.module_ref, record.run_id)
        base = _with(base, last_run=dict(ResourceTracker().feed_all(events).resources))
        unseen = may_hold_unseen_creates(opts.runtime_root, target.module_ref, record.run_id,
                                         record.active_command, events)
        if unseen:
            base = _with(base, replanned_creates=None)  # until a plan names them
    if directory is None or not exists:
        why = (f"module directory {directory} does not exist" if directory is not None
               else "the module directory is unknown (the record names none)")
        return _with(base, unchecked=(f"{why}: state and plans were not read",))
    module = Target(target.module_ref, directory, workspace, target.fallback_inputs)
    if opts.lock_held or not store.lock_path(target.module_ref).exists():
        return _replanned(_with(base, **_engine_evidence(module, record, opts)), unseen)
    # Hold the module lock while the engine reads (its plans take the engine's state lock):
    # an apply that starts meanwhile is refused with exit 4, nothing changed, instead of
    # failing on the engine's state lock and recording `error` because of a read.
    from hybridops_tf.record import LockBusyError

    try:
        with store.lock(target.module_ref, "reconcile-read", timeout=0):
            return _replanned(_with(base, **_engine_evidence(module, record, opts)), unseen)
    except LockBusyError:
        return _with(base, unchecked=("in progress: another hyops run took the module lock; "
                                      "reconcile again when it has finished",))


def _replanned(ev: ModuleEvidence, unseen: bool) -> ModuleEvidence:
    """The plan's creates, when the interrupted run's own plan was never read (None: no plan)."""
    if not unseen or ev.plan is None:
        return ev
    return _with(ev, replanned_creates=ev.plan.creates)


def _engine_evidence(target: Target, record: OperationRecord | None, opts: GatherOptions) -> dict[str, Any]:
    """errored.tfstate, `show -json`, the refresh-only plan and (for error/running) the plan."""
    assert target.directory is not None
    errored = (target.directory / "errored.tfstate").is_file()
    if opts.engine is None:
        return {"errored_state": errored, "unchecked": (opts.engine_problem or "no engine found",)}
    try:
        resolved: inputs_mod.ResolvedInputs | None = resolve_inputs(target, opts)
        inputs_problem = None
    except UsageError as err:
        resolved, inputs_problem = None, err.message
    try:
        engine = _engine(opts, target.directory, resolved, target.workspace)
    except (EngineError, RefusedError) as err:
        return {"errored_state": errored, "unchecked": (err.message,)}
    unchecked: list[str] = []
    state = None
    try:
        state = parse_state(engine.show_state_doc())
    except (EngineError, StateFormatError) as err:
        unchecked.append(f"state (show -json) could not be read: {getattr(err, 'message', err)}")
    if errored and state is not None and _errored_was_pushed(engine, target.directory / "errored.tfstate", state):
        errored = False  # the state already holds exactly what errored.tfstate holds
    refresh = plan = None
    if inputs_problem and state is not None and state.is_empty:
        # A refresh-only plan of an empty state reads no object and can show no drift; only
        # the inputs are missing (e.g. a module recorded absent never had a rerun file).
        refresh = PlanEvidence()
    elif inputs_problem:
        unchecked.append(f"plans not run: {inputs_problem}")
    else:
        refresh, why = _plan(engine, refresh_only=True)
        unchecked += [why] if why else []
        if record is not None and record.status in (Status.ERROR, Status.RUNNING):  # may settle ok
            plan, why = _plan(engine, refresh_only=False)
            unchecked += [why] if why else []
    return {"state": state, "refresh": refresh, "plan": plan, "errored_state": errored,
            "unchecked": tuple(unchecked)}


def _with(base: ModuleEvidence, **changes: Any) -> ModuleEvidence:
    from dataclasses import replace

    return replace(base, **changes)


def _engine(opts: GatherOptions, directory: Path, resolved: inputs_mod.ResolvedInputs | None,
            workspace: str | None) -> Engine:
    """The engine as a run would set it up (inputs, sim mirror, workspace), init if needed."""
    assert opts.engine is not None
    engine = Engine(opts.engine, directory, Runtime(opts.runtime_root).engine_env(directory, resolved, workspace))
    markers = opts.runtime_root / "cache" / "init"
    if engine.needs_init(markers):
        if opts.note is not None:
            opts.note(f"running `init` in {directory} (no .terraform yet): it writes .terraform/ "
                      "there and changes no state")
        engine.init(None, None if opts.read_only else markers)
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


def _plan(engine: Engine, *, refresh_only: bool) -> tuple[PlanEvidence | None, str | None]:
    """`plan -json -detailed-exitcode` without `-out`: evidence only, nothing persisted."""
    lines: list[str] = []
    stderr: list[str] = []
    argv = engine.argv(commands.plan, None, refresh_only=refresh_only, extra=["-detailed-exitcode"])
    result = engine.stream(argv, lines.append, None, stderr.append)
    if result.interrupted is not None:
        raise Interrupted("interrupted while reading evidence; nothing was changed")
    events = list(iter_events(lines))
    what = "refresh-only plan" if refresh_only else "plan"
    if result.returncode not in (0, 2):
        why = summarize_diagnostics(events) or next(
            (ln.strip(" │╷╵") for ln in stderr if ln.strip(" │╷╵")), "") or "no diagnostics"
        return None, f"{what} failed (exit {result.returncode}): {why}"
    return PlanEvidence.from_events(events, result.returncode), None
