"""The engine's half of one module's evidence (docs/contract.md: Reconcile): errored.tfstate,
the state, the refresh-only plan and, when the record needs it, the plan, for a `Target` with
the inputs a run would use. reconcile/gather.py reads the rest and asks for this.

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
Each part is read on its own: when one fails, its reason goes to `unchecked` and the rest
still reaches `compare` (and `--write` then writes nothing).

The fewest engine calls: `show -json`, the refresh-only plan and, only for an `error` or
`running` record or one with suspect orphans, the normal plan. Every plan here refreshes every
object (never `-refresh=false` nor `-minimal-refresh`): a plan that judges drift or settles
a record from a state not read again would miss an object deleted or changed since (the
re-create of a vanished object), and the live objects may move between the two plans.
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
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import EngineError, Interrupted, RefusedError, UsageError
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.base.redact import REDACTED, is_placeholder
from hybridops_tf.engine import commands
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.events import iter_events, summarize_diagnostics
from hybridops_tf.engine.jsonshape import as_dict
from hybridops_tf.engine.runner import Engine
from hybridops_tf.engine.state import StateFormatError, StateSnapshot, outputs_plain, parse_state
from hybridops_tf.inputs.values import ResolvedInputs, load_inputs_file
from hybridops_tf.operation import places, reads, run_inputs
from hybridops_tf.reconcile import members
from hybridops_tf.reconcile.model import PlanEvidence
from hybridops_tf.record import applied, layout
from hybridops_tf.record.address import ModuleTarget, record_key
from hybridops_tf.record.advice import Commands, display_dir, where_of
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.objects import missing_from_state, state_view
from hybridops_tf.record.stamp import StateStamp
from hybridops_tf.runtime.root import Runtime

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
        recorded = load_inputs_file(rerun)
        return {k: v for k, v in recorded.items() if not is_placeholder(v)}, f"{rerun} (inputs of the last run)"
    return target.fallback_inputs, "stack inputs"


def resolve_inputs(target: Target, opts: GatherOptions) -> ResolvedInputs:
    """The inputs of the apply reconcile advises (`hyops apply DIR --inputs rerun.inputs.yml`
    plus this reconcile's --inputs/--var): the record is judged by what its last run applied,
    through the one resolution every command uses (operation/run_inputs.py), so the plans are
    those of the printed command; UsageError when they do not cover the module."""
    assert target.directory is not None
    base, label = base_inputs(target, opts.runtime)
    return run_inputs.resolve(opts.runtime, ModuleTarget(target.directory, target.module_ref), opts.inputs_file,
                              opts.var_options, base, stack_sources={k: label for k in base or {}},
                              key=target.key, note=False, read_only=True)


@dataclass(frozen=True)
class EngineEvidence:
    """The engine's half of one module's evidence (what `engine_evidence` read)."""

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


def _judged(changed: tuple[str, ...] | None) -> bool:
    """An ok member whose record vouches for the stack now, or cannot say: its plan decides
    (any other change is config_changed already, and --resume applies it)."""
    return changed is not None and set(changed) <= {applied.UNKNOWN_CONFIG}


def engine_evidence(target: Target, record: OperationRecord | None, opts: GatherOptions,
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
        resolved: ResolvedInputs | None = resolve_inputs(target, opts)
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
    if want == "attributes":
        plan, why, attributes = _plan_with_attributes(engine)
    else:
        (plan, why), attributes = _plan(engine, refresh_only=False), None
    return dataclasses.replace(read, plan=plan, plan_unchecked=(why,) if why else (), planned_attributes=attributes,
                               plan_kind=want)


def _plain_plan_tells(read: EngineEvidence, resolved: ResolvedInputs | None) -> bool:
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


def _engine(opts: GatherOptions, directory: Path, resolved: ResolvedInputs | None,
            workspace: str | None, module_ref: str) -> Engine:
    """The engine as a run would set it up (inputs, sim mirror, workspace), init if needed."""
    assert opts.engine is not None
    engine = Engine(opts.engine, directory, opts.runtime.engine_env(directory, workspace),
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


def _plan_with_attributes(engine: Engine,
                          ) -> tuple[PlanEvidence | None, str | None, dict[str, dict[str, Any]] | None]:
    """The normal plan, saved to a private temporary file only long enough for `show -json`
    to name what each create would be made with (redacted); None when that part failed."""
    tmp = _private_tmp()
    try:
        out = Path(tmp) / "reconcile.tfplan"
        plan, why = _plan(engine, refresh_only=False, out=out)
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


def _plan(engine: Engine, *, refresh_only: bool, out: Path | None = None) -> tuple[PlanEvidence | None, str | None]:
    """`plan -json -detailed-exitcode`, without `-out` unless a private temporary `out` is given:
    evidence only, nothing persisted; it always refreshes (see the module's docstring)."""
    lines: list[str] = []
    stderr: list[str] = []
    extra = ["-detailed-exitcode"]
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
