"""`hyops reconcile` as one core call: request in, report out (docs/contract.md: Reconcile).

Order per module: `--write` settles what the evidence allows (a stale `running` first, so
its orphans become listed), then `--forget-orphan` and `--import`, then `--write` again
(an import may complete the configuration); last, the evidence is compared, so the report
always describes the module as it is now, not as it was before the writes. When the last
step was a settle, its evidence (read under the module lock, with the record it wrote) is
that evidence: nothing else changed the module meanwhile, so it is not read a second time;
after an `--import`/`--forget-orphan` without `--write`, or a failed settle, it is read afresh.

Modules are checked `parallelism` at a time on a thread pool, each on its own (a `--write`
under its own module lock); the report keeps the order of the targets. The pool runs in the
main thread's signal forwarder, so Ctrl-C reaches every engine the workers started.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from hybridops_tf.base import notices
from hybridops_tf.base.errors import EngineError, ExitCode, HyopsError, Interrupted, UsageError
from hybridops_tf.engine import process
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.operation import places
from hybridops_tf.reconcile import missing, orphans, released, retire, rules, targets
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.evidence import GatherOptions, Target, engine_display
from hybridops_tf.reconcile.gather import forgotten, gather
from hybridops_tf.reconcile.lookup import adopt, consult
from hybridops_tf.reconcile.lookup.spec import Lookups, load_chosen
from hybridops_tf.reconcile.model import (
    FORGOTTEN,
    Action,
    ActionKind,
    ModuleEvidence,
    ModuleReport,
    Report,
)
from hybridops_tf.reconcile.verdict import OrphanLookup
from hybridops_tf.reconcile.write import Settled, WriteContext, settle
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.model import entry_address
from hybridops_tf.record.objects import state_view
from hybridops_tf.runtime import drift_seen, outside_seen
from hybridops_tf.runtime.root import Runtime

DEFAULT_PARALLELISM = 4  # modules checked side by side (as `stack apply`)


@dataclass(frozen=True)
class ReconcileRequest:
    runtime: Runtime
    modules_root: Path | None = None
    module_dir: Path | None = None
    ref: str | None = None
    stack_file: Path | None = None
    all_records: bool = False
    write: bool = False
    forget: tuple[str, ...] = ()
    forget_released: tuple[str, ...] = ()  # released objects a person found gone
    forget_missing: tuple[str, ...] = ()  # ids of state_missing objects a person deleted or found gone
    imports: tuple[str, ...] = ()
    forget_record: bool = False  # drop a record whose engine state another ref's record claims too
    inputs_file: Path | None = None
    var_options: tuple[str, ...] = ()
    lock_timeout: float = 0
    argv: tuple[str, ...] = ()
    hyops_prefix: str = "hyops"  # `hyops` plus the global options the user typed
    note: Callable[[str], None] | None = None
    workspace: str | None = None  # a single module's workspace (None: the default one)
    parallelism: int = DEFAULT_PARALLELISM  # modules checked at the same time
    lookups_file: Path | None = None  # --lookups/HYOPS_LOOKUPS (None: the project top's hyops.lookups.yml, if any)

    @property
    def read_only(self) -> bool:
        return not (self.write or self.forget or self.forget_released or self.forget_missing or self.imports
                    or self.forget_record)


def _targets(req: ReconcileRequest) -> list[Target]:
    chosen = sum([req.module_dir is not None, req.stack_file is not None, req.all_records])
    if chosen > 1:
        raise UsageError("pass one of MODULE_DIR, --stack FILE or --all")
    single_only = [name for name, given in (("--forget-orphan", req.forget), ("--import", req.imports),
                                            ("--forget-released", req.forget_released),
                                            ("--forget-missing", req.forget_missing),
                                            ("--inputs", req.inputs_file), ("--var", req.var_options),
                                            ("--ref", req.ref), ("--forget-record", req.forget_record))
                   if given]
    if (req.stack_file is not None or req.all_records) and single_only:
        raise UsageError(f"{', '.join(single_only)} name(s) one module: pass MODULE_DIR instead of "
                         "--stack/--all")
    if req.all_records:
        return targets.all_records(req.runtime.store)
    if req.stack_file is not None:
        return targets.stack_members(req.stack_file, req.runtime, read_only=not req.write)
    return [targets.single(req.module_dir or Path("."), req.ref, req.modules_root, req.workspace,
                           req.runtime.root.parent)]


def _engine(req: ReconcileRequest) -> tuple[EngineInfo | None, str | None]:
    try:  # a read-only reconcile reads the version cache, never writes it
        return req.runtime.engine_info(remember=not req.read_only), None
    except EngineError as err:
        return None, err.message


def reconcile(req: ReconcileRequest) -> Report:
    """Every chosen module: optional writes, then fresh evidence, then findings."""
    lookups = load_chosen(req.lookups_file, req.runtime.root.parent)  # exit 2 before anything runs
    chosen = _targets(req)
    if req.all_records and not chosen:  # a CI gate over the wrong folder must not pass
        return Report((), ((f"no records under {req.runtime.root}: nothing to reconcile, so nothing "
                            "is known to be consistent (wrong folder? pass --runtime-root)",
                            ExitCode.INCONSISTENT),))
    imports = [orphans.parse_import(text) for text in req.imports]
    info, problem = _engine(req)
    claimed = places.claims_in(req.runtime.store)
    read_opts = GatherOptions(req.runtime, info, problem, req.inputs_file, req.var_options,
                              read_only=True, note=req.note, claims=claimed)
    ctx = WriteContext(
        GatherOptions(req.runtime, info, problem, req.inputs_file, req.var_options,
                      read_only=False, note=req.note, claims=claimed),
        lock_timeout=req.lock_timeout, argv=req.argv)
    cmd = Commands(req.hyops_prefix, engine_display(info))
    workers = max(1, min(req.parallelism, len(chosen)))
    with process.FORWARDER, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hyops-reconcile") as pool:
        checked = _by_directory(pool, chosen, lambda t: _check(req, t, ctx, read_opts, imports, lookups))
    modules: list[ModuleReport] = []
    errors: list[tuple[str, int]] = []
    for target, one in zip(chosen, checked, strict=True):
        ev = one.evidence
        errors.extend(one.failed)
        modules.append(ModuleReport(
            module_ref=target.module_ref, status=_status(ev),
            module_dir=str(target.directory) if target.directory else (ev.record.module_dir if ev.record else None),
            findings=tuple(compare(ev, cmd)), unchecked=ev.unchecked, actions=tuple(one.actions),
            addressed=one.addressed, released=_released(ev), workspace=target.workspace))
    return Report(tuple(modules), tuple(errors))


def _by_directory(pool: ThreadPoolExecutor, chosen: list[Target],
                  check: Callable[[Target], _Checked]) -> list[_Checked]:
    """check(target) for each target on the pool, in the targets' order; targets sharing a
    directory (workspaces of one module) one after the other, as `stack apply` runs them:
    their engines would share `.terraform/` (an init, the plugin lock file)."""
    groups: dict[str, list[int]] = {}
    for i, target in enumerate(chosen):
        where = str(target.directory.resolve()) if target.directory is not None else f"#{i}"
        groups.setdefault(where, []).append(i)

    def run(indexes: list[int]) -> list[tuple[int, _Checked]]:
        return [(i, check(chosen[i])) for i in indexes]

    done: dict[int, _Checked] = {}
    for future in [pool.submit(run, indexes) for indexes in groups.values()]:
        done.update(future.result())
    return [done[i] for i in range(len(chosen))]


@dataclass(frozen=True)
class _Checked:
    """One module done: what was changed, what failed, and the evidence to report from."""

    evidence: ModuleEvidence
    actions: tuple[Action, ...] = ()
    failed: tuple[tuple[str, int], ...] = ()
    addressed: tuple[str, ...] = ()


def _check(req: ReconcileRequest, target: Target, ctx: WriteContext, read_opts: GatherOptions,
           imports: list[tuple[str, str]], lookups: Lookups) -> _Checked:
    """One module (on a worker thread): the writes asked for, then the evidence to report
    (with what the lookups answered about its suspect orphans)."""
    if req.read_only:
        return _Checked(_looked_up(req, target, _kept(req, target, gather(target, read_opts)), lookups, read_opts))
    asked: dict[str, OrphanLookup] = {}
    actions, failed, addressed, settled = _mutate(req, target, ctx, imports, lookups, asked)
    if any(a.kind is ActionKind.FORGET_RECORD and a.ok for a in actions):
        return _Checked(forgotten(target, req.runtime), tuple(actions), tuple(failed), addressed)
    ev = settled.evidence if settled is not None and settled.evidence is not None else gather(target, read_opts)
    return _Checked(_looked_up(req, target, _kept(req, target, ev), lookups, read_opts, asked), tuple(actions),
                    tuple(failed), addressed)


def _kept(req: ReconcileRequest, target: Target, ev: ModuleEvidence) -> ModuleEvidence:
    """`ev`, once the drift its refresh-only plan showed is kept for `stack apply --resume`
    (runtime/drift_seen.py): a member whose live objects reconcile saw differ is applied, not
    skipped. Not keeping it is a warning: the report is right all the same."""
    record = ev.record
    if record is None or ev.forgotten:
        return ev
    if ev.state is not None and not ev.busy:
        ev = _seen(req, target, ev)
    if ev.refresh is None:
        return ev
    try:
        drift_seen.keep(req.runtime.store, target.key, record, [(c.address, c.action) for c in ev.refresh.drift])
    except OSError as err:
        notices.warning(f"could not keep the drift reconcile saw in {target.module_ref} "
                        f"({err.strerror or err}): `stack apply --resume` cannot know of it")
    return ev


def _seen(req: ReconcileRequest, target: Target, ev: ModuleEvidence) -> ModuleEvidence:
    """`ev` with the objects another writer put in its state that the record does not hold,
    kept (runtime/outside_seen.py): after a rollback of the state, they are known all the same."""
    assert ev.state is not None
    view = state_view(ev.state.resources)
    state = {a: o.id for a, o in view.items() if o.id}
    vanished = {c.address for c in ev.refresh.drift if c.action == "delete"} if ev.refresh is not None else set()
    gone = {o.id for a, o in view.items() if o.id and a in vanished}
    try:
        seen = outside_seen.keep(req.runtime.store, target.key, target.module_ref, ev.record, state, gone,
                                 kept=ev.seen_outside)  # as gather read it: one read a reconcile
    except OSError as err:
        notices.warning(f"could not keep the objects another writer put in {target.module_ref}'s state "
                        f"({err.strerror or err}): after a rollback of the state, nothing would know of them")
        seen = outside_seen.look(ev.seen_outside or (), ev.record, state, gone)
    return replace(ev, seen_outside=seen)


def _looked_up(req: ReconcileRequest, target: Target, ev: ModuleEvidence, lookups: Lookups,
               opts: GatherOptions, asked: dict[str, OrphanLookup] | None = None) -> ModuleEvidence:
    """The evidence with its suspect orphans' lookups: asked now, or (after `--write` asked
    them) those answers again for the orphans that remain, so nothing is asked twice."""
    if not lookups:
        return ev
    if asked:
        left = {o: asked[o] for o in consult.suspects(ev) if o in asked}
        return consult.with_lookups(ev, left)
    return consult.with_lookups(ev, consult.consult(ev, target, lookups, req.runtime, req.argv, gather=opts))


def _mutate(req: ReconcileRequest, target: Target, ctx: WriteContext,
            imports: list[tuple[str, str]], lookups: Lookups | None = None,
            asked: dict[str, OrphanLookup] | None = None,
            ) -> tuple[list[Action], list[tuple[str, int]], tuple[str, ...], Settled | None]:
    """--write, --forget-orphan, --import, --write: stop at the first refusal or failure.

    Also returns the addresses a successful --forget-orphan/--import dealt with: the exit
    code then says whether their findings are gone (Report.exit_code); and the last settle
    when nothing changed the module after it (its evidence is then the report's). With
    `--write` and lookups, what they answered about the suspect orphans goes into `asked`
    and is acted on (lookup/adopt.py) right after the first settle.
    """
    actions: list[Action] = []
    addressed: list[str] = []
    last: Settled | None = None
    adopted = False
    try:
        if req.forget_record:
            if req.write or req.forget or req.forget_released or req.forget_missing or imports:
                raise UsageError("--forget-record drops the record: pass it alone, without --write, "
                                 "--import or --forget-orphan")
            return [retire.forget_record(target, ctx)], [], (), None
        mine, others = (False, ()) if target.directory is None else places.standing(
            ctx.gather.claims, places.Place.of(target.directory, target.workspace), target.module_ref)
        if mine and others:
            raise UsageError(f"{target.module_ref}'s engine state is also module {', '.join(others)}'s: "
                             "--write, --import and --forget-orphan would settle or change it from objects "
                             "that are not its own; nothing was changed (see its shared_state finding, "
                             "and --forget-record)")
        if others:
            raise UsageError(f"{target.module_ref} has no claim on its directory's engine state, which is "
                             f"module {others[0]}'s: --write, --import and --forget-orphan would settle or change "
                             f"it from objects that are not its own; nothing was changed (reconcile --ref "
                             f"{others[0]})")
        if req.write:
            last = settle(target, ctx)
            actions += last.actions
            if lookups:
                ev = last.evidence if last.evidence is not None else gather(target, ctx.gather)
                found = consult.consult(ev, target, lookups, req.runtime, req.argv, gather=ctx.gather) or {}
                if asked is not None:
                    asked.update(found)
                named = set(req.forget) | {address for address, _ in imports}  # a person's own call wins
                done, ok = adopt.adopt(target, {o: f for o, f in found.items() if o not in named}, ev, ctx)
                actions += done
                adopted = bool(done)
                last = None if done else last
                if not ok:
                    return actions, [(f"{target.module_ref}: {done[-1].detail}", done[-1].exit_code or 1)], (), None
        for address in req.forget:
            last = None
            actions.append(orphans.forget(target, address, ctx))
            addressed.append(address)
        for address in req.forget_released:
            last = None
            actions.append(released.forget_released(target, address, ctx))
        for object_id in req.forget_missing:
            last = None
            actions.append(missing.forget_missing(target, object_id, ctx))
        for address, object_id in imports:
            last = None
            action = orphans.import_(target, address, object_id, ctx)
            actions.append(action)
            if not action.ok:
                return actions, [(f"{target.module_ref}: {action.detail}", action.exit_code or 1)], (), None
            addressed.append(address)
        if req.write and (req.forget or imports or adopted):
            last = settle(target, ctx)
            actions += last.actions
    except Interrupted:
        raise
    except HyopsError as err:
        actions.append(Action(ActionKind.ERROR, err.message, ok=False))
        return actions, [(f"{target.module_ref}: {err.message}", err.exit_code)], (), None
    return actions, [], tuple(addressed), last


def _released(ev: ModuleEvidence) -> tuple[tuple[str, str], ...]:
    """Objects unmanaged on purpose, alive when released: the record's released list, and those
    the configuration stopped declaring since (what `--write` would list)."""
    listed = [(o.address, o.id) for o in ev.record.released] if ev.record is not None else []
    listed += [(entry_address(a), i) for a, i in sorted(rules.no_longer_managed(ev).items())]
    return tuple(dict.fromkeys(listed))


def _status(ev: ModuleEvidence) -> str:
    if ev.forgotten:
        return FORGOTTEN
    if ev.record_problem:
        return "corrupt"
    if ev.record is None:
        return "none"
    return ev.record.status.value
