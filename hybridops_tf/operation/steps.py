"""apply/destroy/refresh/import for one module: the contract step by step (docs/contract.md).

1 validate -> 2 lock -> 3 preflight + uncertain-outcome guard -> 4 persist `running` ->
5 run the engine, streaming events -> 6 settle from evidence -> 7 release. Never retry.
`run` is these steps; the functions below it follow them in that order, except step 6's
settling from evidence, one function per command, which is settle.py.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import notices
from hybridops_tf.base.errors import (
    EngineInitFailed,
    EngineNotStarted,
    ExitCode,
    HyopsError,
    Interrupted,
    RefusedError,
    UsageError,
)
from hybridops_tf.base.files import PreparedWrite
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine import binary, commands, features, import_words, process
from hybridops_tf.engine.addresses import command_address
from hybridops_tf.engine.runner import Engine
from hybridops_tf.engine.vocabulary import CREATE_ACTIONS
from hybridops_tf.operation import guards, places, reads, run_inputs, settle
from hybridops_tf.operation.request import ModuleRequest, Outcome
from hybridops_tf.operation.stream import StreamReader
from hybridops_tf.operation.would_apply import applied_from
from hybridops_tf.record import gate, transitions
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord, Owner, RecordEngine
from hybridops_tf.record.objects import mark_outside
from hybridops_tf.runtime import outside_seen
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import (
    EVENTS_COMPLETE,
    EventLog,
    RunFolder,
    RunLife,
    RunMeta,
    RunNotOpened,
    new_run_id,
)
from hybridops_tf.store import Journal, RunStore

if TYPE_CHECKING:  # the event parser is loaded once the engine runs; see StreamReader
    from hybridops_tf.inputs.values import ResolvedInputs
    from hybridops_tf.record.stamp import StateStamp
    from hybridops_tf.runtime.run_result import RunResult  # loaded once the run ends (start-up cost)

@dataclass
class _Run:
    """One run under the module lock: what its steps share. Its run folder's lifecycle
    (runtime/run_folder.RunLife) is opened with meta.json and closed with result.json, last."""

    req: ModuleRequest
    store: RunStore
    previous: OperationRecord | None  # the record as the lock found it
    life: RunLife
    meta: RunMeta
    rerun_before: bytes | None = None  # rerun.inputs.yml as it was, restored if the engine refuses the run
    resolved: ResolvedInputs | None = None  # the run's inputs: an engine error in its var file names their source
    # the local state's ids by address as the run found it (None: not read): what a refresh's
    # drift delete at an address proves gone (record/gate.py)
    state_before: dict[str, str] | None = None

    @property
    def folder(self) -> RunFolder:
        return self.life.folder


def run(req: ModuleRequest) -> Outcome:
    """The whole contract; raises HyopsError for refusals and preflight failures."""
    rt = req.runtime
    places.refuse_other_root(req.command, req.target, req.workspace, rt.root, rt.store)  # writes nothing
    resolved = run_inputs.resolve(rt, req.target, req.inputs_file, req.var_options, req.stack_inputs,
                              req.sensitive_inputs, key=req.key)  # step 1
    run_id = req.run_id or new_run_id(req.command)
    store = rt.store
    rt.ensure_root()
    with process.FORWARDER, store.lock(req.key, run_id, req.lock_timeout):  # step 2
        one = _open_run(req, store, run_id, resolved)
        with one.life.closing(_stopped_before_engine):  # a refusal or a signal here: result.json says so
            try:
                engine = _preflight(one, rt, resolved)  # step 3
                running, rerun = _running_record(one, rt, engine, resolved)
                log = _persist_running(one, running, rerun)  # step 4
            except Interrupted as err:  # a signal before `running` was written (the probe, init, a read)
                said = err.message if "nothing was changed" in err.message else f"{err.message}; nothing was changed"
                raise Interrupted(said) from None
            except EngineInitFailed as err:  # `init` changes no state: the engine refused the run
                raise _settle_init_failure(one, err) from None
        outcome = _execute(one, engine, running, log)  # steps 5-6
        one.life.close(outcome.exit_code, _result(outcome, running).to_json())
        return outcome


def _stopped_before_engine(err: BaseException) -> tuple[int, dict[str, Any]] | None:
    """result.json of a run stopped before its engine: interrupted by a signal, or refused (a
    preflight failure, the engine's init); anything else (a bug) leaves none, as a crash does."""
    from hybridops_tf.runtime.run_result import ResultOutcome, StoppedResult

    if not isinstance(err, HyopsError):
        return None
    stopped = ResultOutcome.INTERRUPTED if isinstance(err, Interrupted) else ResultOutcome.REFUSED
    return err.exit_code, StoppedResult(stopped, err.message).to_json()


def _open_run(req: ModuleRequest, store: RunStore, run_id: str, resolved: ResolvedInputs) -> _Run:
    """The run folder with meta.json (first), journaled in the store: a refusal here leaves no
    result.json (there may be no folder to hold it)."""
    previous = store.read(req.key)
    meta = RunMeta.start(req.command, req.argv, req.target, req.workspace, run_id, resolved.sensitive_names,
                         resolved.ephemeral_names)
    try:
        life = RunLife.open(req.runtime.root, req.key, run_id, meta, store)
    except RunNotOpened as err:
        why = err.error.strerror or err.error
        if err.step == "journal":
            raise RefusedError(f"could not journal the run in {store.describe()}: {why}; "
                               "nothing was changed") from None
        raise RefusedError(f"could not create the run folder under {req.runtime.root}: {why}; "
                           "nothing was changed") from None
    return _Run(req, store, previous, life, meta, resolved=resolved)


def _preflight(one: _Run, rt: Runtime, resolved: ResolvedInputs) -> Engine:
    """Step 3: no other ref's state taken over, the engine found and `init`ed, the
    uncertain-outcome guard, no signal yet."""
    req = one.req
    places.refuse_shared_state(req.command, req.target, req.workspace, lambda: one.previous, one.store,
                               rt.root)  # before init: nothing runs for it
    engine = rt.engine_for(req.target, resolved, req.workspace, one.folder)
    if req.plan_file is not None:  # a saved plan keeps every value but the ephemeral ones (plan/saved.py)
        engine.inputs = resolved.var_file(only=resolved.ephemeral_names)
    one.meta.engine = engine.info
    recorded = one.previous.engine if one.previous is not None else None
    binary.warn_if_version_changed(recorded.to_json() if recorded is not None else None, engine.info)
    guards.guard(req, one.previous)
    one.state_before = guards.guard_missing(req, one.previous)
    process.FORWARDER.check("before the engine started; nothing was changed")
    return engine


def _settle_init_failure(one: _Run, err: EngineInitFailed) -> HyopsError:
    """The engine's `init` failed before `running` was written: nothing changed, so the record
    keeps what it said and gains `last_attempt` (no record: still none), as when the engine
    refuses the run itself (exit 2, docs/contract.md: Exit codes)."""
    req = one.req
    message = (f"the engine's init failed before the {req.command} changed anything: {err.message}; "
               "the record is unchanged")
    kept = transitions.attempt_refused(one.previous, run_id=one.folder.run_id, command=req.command,
                                       error=message, exit_code=ExitCode.USAGE)
    if kept is not None:
        try:
            one.store.write(kept, stamp=False)  # it says what it said: only last_attempt is new
        except OSError as write_err:
            notices.warning(f"could not note the refused attempt in {one.store.where(req.key)}: "
                            f"{write_err.strerror or write_err}; the record is unchanged")
    return UsageError(message)


def _reconcile(req: ModuleRequest) -> str:
    """`hyops reconcile` of this run's module, ref and workspace, as a person pastes it."""
    return reconcile_command(req.target.ref, req.target.directory, req.workspace)


def _running_record(one: _Run, rt: Runtime, engine: Engine,
                    resolved: ResolvedInputs) -> tuple[OperationRecord, PreparedWrite]:
    """The `running` record step 4 persists (taking over what a stale one knew), with the
    run's resolved.inputs.yml written and rerun.inputs.yml prepared, not yet in place."""
    req = one.req
    key = run_inputs.digest_key(rt)
    assert key is not None  # made if new, or refused
    digest, applied = resolved.digest(key), None  # a refresh, an import or a saved plan applies no configuration
    if req.command == Command.APPLY and req.plan_file is None:  # what --resume and reconcile --stack compare
        now = applied_from(req.target.directory, req.workspace, resolved, key, engine.info)
        digest, applied = now.inputs_digest, now.config_digest
    inherited, known = reads.takeover(one.store, req.key, one.previous, engine)
    if known is None and one.previous is not None:  # entries follow a `state mv` made by hand
        known = settle.following_state(req, engine, one.previous.resources)
    try:
        resolved_file = run_inputs.write_resolved(one.folder, resolved)
        rerun = run_inputs.prepare_rerun(rt, req.target, resolved, req.key)  # committed once running is
    except OSError as err:
        raise RefusedError(f"could not write the inputs files: {err.strerror or err}; "
                           "the engine was not started") from None
    running = transitions.begin(one.previous, transitions.RunStart(
        command=req.command, module_ref=req.target.ref, module_dir=str(req.target.directory),
        run_id=one.folder.run_id, owner=Owner.current(one.folder.run_id), resolved_inputs_file=str(resolved_file),
        rerun_inputs_file=str(rerun.path), inputs_digest=digest,
        engine=RecordEngine.of(engine.info), workspace=req.workspace, config_digest=applied,
    ), inherited, known)
    running, kept = gate.gated(one.previous, running)
    if kept:
        notices.warning(gate.kept_note(kept, _reconcile(req)))
    return running, rerun


def _persist_running(one: _Run, running: OperationRecord, rerun: PreparedWrite) -> EventLog:
    """Step 4: events.jsonl open and `running` durable before the engine may change anything;
    then rerun.inputs.yml goes into place. A failure here starts no engine."""
    try:
        log = EventLog(one.folder)
    except OSError as err:
        rerun.discard()
        raise RefusedError(f"could not open {one.folder.events_path}: {err.strerror or err}; "
                           "the engine was not started") from None
    try:
        one.store.write(running)
    except OSError as err:
        log.close()
        rerun.discard()
        raise RefusedError(
            f"could not write the running record {one.store.where(one.req.key)}: "
            f"{err.strerror or err}; the engine was not started"
        ) from None
    _commit_rerun_inputs(one, rerun, log)
    return log


def _commit_rerun_inputs(one: _Run, rerun: PreparedWrite, log: EventLog) -> None:
    """rerun.inputs.yml goes into place once `running` is persisted (its data is already
    durable beside it, so only a rename can fail here). If it does, the engine is not started
    and the record goes back to what it was: we hold the lock and nothing ran."""
    try:
        one.rerun_before = run_inputs.read_rerun(rerun.path)
        run_inputs.commit_rerun(rerun, one.store, one.req.key)
    except OSError as err:
        log.close()
        try:
            if one.previous is not None:
                one.store.write(one.previous)
            else:
                one.store.delete(one.req.key)
        except OSError:
            pass  # the record stays `running`: stale once we let go, which reconcile settles
        raise RefusedError(f"could not write {rerun.path}: {err.strerror or err}; "
                           "the engine was not started") from None


def _execute(one: _Run, engine: Engine, running: OperationRecord, log: EventLog) -> Outcome:
    """Steps 5-6: the engine runs, each stdout line logged before it is parsed; the record is
    then settled from that evidence (or restored, when the engine refused the run) and written."""
    req, folder = one.req, one.folder
    argv = _argv(req, engine)
    journal = one.store.journal(req.key, running.run_id)
    reader = StreamReader(req.on_event, folder, log, journal, req.planned_actions)
    try:
        result = engine.stream(argv, reader, folder.stderr_path, req.on_stderr, journal=reader.journal())
    except EngineNotStarted as err:  # it never ran: settle now rather than leave a stale running
        _close_journal(journal)
        return _write_settled(one, running, transitions.failed(
            running, command=req.command, recovered_outputs=None, resources=None, orphans=[],
            error=f"{err.message}; the engine never started, so nothing changed"), ExitCode.FAILED)
    finally:
        try:
            log.close()
        except OSError as err:
            reader.log_error.append(err)
        reader.write_census()
    if (folder.path / EVENTS_COMPLETE).exists():
        journal.complete()
    _close_journal(journal)
    if _refused_by_engine(req, reader, result):
        return _settle_refusal(one, running, reader, result)
    if _stopped_before_any_change(req, reader, result, folder):
        return _settle_unchanged(one, running, _stopped_before_why(req, result), ExitCode.INTERRUPTED)
    # the reads that settle from evidence run even after a signal (engine.for_settling)
    settled, code = settle.settle_run(req, engine.for_settling(), running, reader, result, folder, one.previous)
    stamp = reads.state_stamp(engine.for_settling(), req.passthrough)
    if code != ExitCode.OK and req.command == Command.IMPORT:
        if (why := import_words.found_nothing(_stderr(folder))) is not None:
            return _settle_found_gone(one, running, why)
        settled = _import_refused(req, folder, settled)
    tracker = reader.tracker()
    deleted = frozenset(i for p in tracker.resources.values() for i in p.deleted_ids)
    before = one.state_before or {}
    gone = frozenset(before[a] for a in tracker.gone_on_refresh if a in before)
    return _write_settled(one, running, _stamped(settled, stamp, one.previous, reader, req.import_address), code,
                          gate.Proof(deleted=deleted, gone=gone))


def _stamped(settled: OperationRecord, stamp: StateStamp | None, previous: OperationRecord | None,
             reader: StreamReader, imported: str | None) -> OperationRecord:
    """The settled record with the state as this run left it (None: it could not be read, so
    no later command can tell another writer's change from this run's, and none claims to),
    and the objects another writer put in the state since the last stamp marked `outside`
    (not after a `running` record: its own run may have made objects it never recorded)."""
    if (stamp is not None and previous is not None and previous.state_seen is not None and settled.resources
            and previous.status is not Status.RUNNING):
        makes = CREATE_ACTIONS | {"import"}
        made = {k for k, p in reader.tracker().resources.items() if {p.action, p.planned_action} & makes}
        made |= {imported} if imported else set()
        known = {e.id for e in (previous.resources or {}).values() if e.id}
        mark_outside(settled.resources, known, stamp, made)
    settled.state_seen = None if stamp is None else dataclasses.replace(stamp, run_id=settled.run_id)
    return settled


def _argv(req: ModuleRequest, engine: Engine) -> list[str]:
    extra = list(req.passthrough)
    if req.plan_file is not None:  # it carries its variables: a var file only for ephemeral ones
        return engine.argv(commands.apply_saved, req.plan_file, extra)
    if req.command == Command.APPLY:
        return engine.argv(commands.apply, extra)
    if req.command == Command.DESTROY:
        return engine.argv(commands.destroy, extra)
    if req.command == Command.REFRESH:  # state follows the live objects; nothing remote changes
        return engine.argv(commands.apply, ["-refresh-only", *extra])
    if req.command == Command.IMPORT and req.import_address and req.import_id:
        # the address as the engine prints it (the record's, `state list`'s), in the spelling it parses
        address = command_address(req.import_address, features.key_spelling(engine.info))
        return engine.argv(commands.import_, address, req.import_id, extra)
    raise ValueError(f"unsupported module command {req.command.value!r}")


def _close_journal(journal: Journal) -> None:
    """Flush the store's journal before the settle; a gap in it is worth a warning only (this
    run settles from its own events; the journal serves a runner that never saw them)."""
    problem = journal.close()
    if problem is not None:
        notices.warning(problem)


def _refused_by_engine(req: ModuleRequest, reader: StreamReader, result: process.ProcessResult) -> bool:
    """The engine exited on its own with an error, and its complete stream shows that no
    resource change and no action started (no apply_start, no action_start): an invalid value,
    an unknown flag, a failing validation, a provider that cannot be configured. A killed engine, a signal, or a stream
    hyops could not log completely keeps the conservative rule (the run may have changed things)."""
    if req.command not in (Command.APPLY, Command.DESTROY) or not result.started or result.interrupted is not None:
        return False
    if result.returncode <= 0 or result.returncode >= 128 or reader.log_error:
        return False
    return _nothing_started(reader)


def _stopped_before_any_change(req: ModuleRequest, reader: StreamReader, result: process.ProcessResult,
                               folder: RunFolder) -> bool:
    """A signal stopped the run before any resource change started: the engine never started
    (process.run_streaming starts none after a signal), or it stopped while planning: its
    complete event stream (the relay's marker, every line logged) holds no apply_start."""
    if result.interrupted is None:
        return False
    if not result.started:
        return True
    if req.command not in (Command.APPLY, Command.DESTROY) or reader.log_error:
        return False
    if not (folder.path / EVENTS_COMPLETE).exists():
        return False
    return _nothing_started(reader)


def _nothing_started(reader: StreamReader) -> bool:
    """No resource change and no action started: every resource still pending, no action_start
    (an action changes no state, but acts on the world: an `-invoke` run did something)."""
    from hybridops_tf.engine.vocabulary import Progress

    resources = reader.tracker().resources.values()
    return not reader.actions().started and all(p.status is Progress.PENDING for p in resources)


def _stopped_before_why(req: ModuleRequest, result: process.ProcessResult) -> str:
    name = process.FORWARDER.name() or "a signal"
    how = (f"the engine stopped while planning (exit {result.returncode})" if result.started
           else "the engine never started")
    return f"interrupted by {name} before the {req.command} changed anything ({how}); the record is unchanged"


def _settle_refusal(one: _Run, running: OperationRecord, reader: StreamReader,
                    result: process.ProcessResult) -> Outcome:
    """Nothing changed: the record goes back to what it said (exit 2), the attempt is kept."""
    from hybridops_tf.engine.events import summarize_diagnostics

    req, folder = one.req, one.folder
    only = one.resolved.ephemeral_names if one.resolved is not None and req.plan_file is not None else None
    why = summarize_diagnostics(run_inputs.cite_sources(reader.diagnostics, one.resolved, only)) or \
        f"see {folder.stderr_path}"
    message = (f"the engine refused the {req.command} before changing anything "
               f"(engine exit {result.returncode}): {why}; the record is unchanged")
    # a saved plan the engine will not apply (stale, most often) is refused like hyops's own check
    code = ExitCode.REFUSED if req.plan_file is not None else ExitCode.USAGE
    return _settle_unchanged(one, running, message, code)


def _settle_unchanged(one: _Run, running: OperationRecord, message: str, code: ExitCode) -> Outcome:
    """The engine changed nothing (it refused the run, or a signal stopped it first): the
    record goes back to what it said, the attempt is kept in `last_attempt`."""
    req, store, folder = one.req, one.store, one.folder
    said: int = code  # last_attempt keeps the exit hyops gives: 143 for SIGTERM (cli/interrupted.py)
    if code == ExitCode.INTERRUPTED and process.FORWARDER.received is not None:
        said = 128 + process.FORWARDER.received
    restored = transitions.engine_refused(one.previous, running, command=req.command, error=message, exit_code=said)
    try:
        if restored is None:
            store.delete(req.key)
        else:
            store.write(restored, stamp=False)  # it says what it said: only last_attempt is new
        run_inputs.restore_rerun(Path(running.rerun_inputs_file or ""), one.rerun_before, store, req.key)
    except OSError as err:
        failure = (f"could not restore the record {store.where(req.key)} after the engine "
                   f"changed nothing: {err.strerror or err}; it still says 'running': run `{_reconcile(req)}`")
        notices.error(failure)
        return Outcome(running, ExitCode.FAILED, running.run_id, folder.path, failure)
    return Outcome(restored, code, running.run_id, folder.path, message, unchanged=True)


def _write_settled(one: _Run, running: OperationRecord, settled: OperationRecord, code: ExitCode,
                   proof: gate.Proof = gate.NO_PROOF) -> Outcome:
    """Step 6's write, every object the run had no proof of deleting kept (record/gate.py); if
    the write fails, say so loudly and leave `running` (outcome uncertain)."""
    req, store, folder = one.req, one.store, one.folder
    settled, kept = gate.gated(running, settled, proof)
    _note_drift_unchecked(req, settled)
    if kept:
        notices.warning(gate.kept_note(kept, _reconcile(req)))
    try:
        store.write(settled)
    except OSError as err:
        message = (
            f"could not write the settled record {store.where(req.key)}: {err.strerror or err}; "
            f"the record still says 'running' (outcome uncertain): run `{_reconcile(req)}`"
        )
        notices.error(message)
        return Outcome(running, ExitCode.FAILED, running.run_id, folder.path, message)
    if proof.deleted or proof.gone:
        _let_go_seen(one, proof.deleted | proof.gone)
    if code == ExitCode.INTERRUPTED:
        message = settled.last_error or "interrupted"
    elif code != ExitCode.OK:
        message = settled.last_error or "failed"
    else:
        message = f"{req.command} of {req.target.ref}: {settled.status.value}"
    return Outcome(settled, code, running.run_id, folder.path, message)


def _let_go_seen(one: _Run, ids: frozenset[str]) -> None:
    """The objects reconcile saw another writer make (runtime/outside_seen.py) that this run
    proved gone (a completed delete, a provider that has no such object): no longer missing.
    Not written is a warning: reconcile then reports them as state_missing, never less."""
    try:
        outside_seen.drop(one.store, one.req.key, one.req.target.ref, ids)
    except (OSError, outside_seen.OutsideSeenUnreadable) as err:
        notices.warning(f"could not let go of the objects reconcile saw another writer make that this run proved gone "
                        f"({err}): reconcile reports them until `--forget-missing ID`")


def _import_refused(req: ModuleRequest, folder: RunFolder, settled: OperationRecord) -> OperationRecord:
    """An import the engine refused because the provider cannot import the type: the reason in
    one line, and the type kept in the record so no advice offers `--import` for it again."""
    reason = import_words.not_importable(_stderr(folder))
    kind = gate.resource_type(req.import_address or "")
    if reason is None or kind is None:
        return settled
    forget = reconcile_command(req.target.ref, req.target.directory, req.workspace,
                               "--forget-missing", shlex.quote(req.import_id or ""))
    settled.last_error = (f"the engine refused to import {req.import_address} = {req.import_id}: {reason}; "
                          f"once it is checked gone, `{forget}`")
    settled.extra[gate.NOT_IMPORTABLE] = sorted(gate.not_importable(settled) | {kind})
    return settled


def _stderr(folder: RunFolder) -> str:
    """The engine's stderr of this run ("" when unreadable)."""
    try:
        return folder.stderr_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _settle_found_gone(one: _Run, running: OperationRecord, why: str) -> Outcome:
    """An `--import ADDRESS=ID` whose import the provider answered with no such object: the
    engine read the id through the provider and found it gone, which is proof for the gate
    (record/gate.py: a refresh that shows the provider no longer has it). Nothing changed
    remotely, so the record says what it said, without that id; exit 0: the record is settled
    as far as that object goes (after a raw destroy, the advised import of each id settles it)."""
    req = one.req
    ident = req.import_id or ""
    message = (f"{ident} is gone: the engine's import of {req.import_address} asked the provider and found no "
               f"such object ({why}); the record forgets it")
    restored = transitions.engine_refused(one.previous, running, command=req.command, error=message, exit_code=0)
    if restored is None:
        return _settle_unchanged(one, running, message, ExitCode.FAILED)
    restored.resources = {k: e for k, e in (restored.resources or {}).items() if e.id != ident}
    restored.released = [o for o in restored.released if o.id != ident]
    outcome = _write_settled(one, running, restored, ExitCode.OK, gate.Proof(gone=frozenset({ident})))
    return dataclasses.replace(outcome, message=message, unchanged=True)


DRIFT_NOT_CHECKED = "drift_not_checked"  # the record's note of an apply that refreshed nothing


def _note_drift_unchecked(req: ModuleRequest, settled: OperationRecord) -> None:
    """An apply given `-refresh=false` (or `-minimal-refresh`) after `--` planned from the state
    without asking the provider: the record says drift was not checked (until an apply that
    refreshes)."""
    if req.command != Command.APPLY or req.plan_file is not None:
        return
    flags = [a for a in req.passthrough if commands.flag_name(a) == "-minimal-refresh"
             or (commands.flag_name(a) == "-refresh" and a.partition("=")[2].lower() == "false")]
    if flags:
        reconcile = reconcile_command(req.target.ref, req.target.directory, req.workspace)
        settled.extra[DRIFT_NOT_CHECKED] = (f"drift not checked: applied with {' '.join(flags)} (run "
                                            f"{settled.run_id}); `{reconcile}` refreshes every object")
    else:
        settled.extra.pop(DRIFT_NOT_CHECKED, None)


def _result(outcome: Outcome, running: OperationRecord) -> RunResult:
    """result.json of a run that got as far as its engine."""
    from hybridops_tf.runtime.run_result import EngineRefusedResult, ResultOutcome, SettledResult

    if outcome.unchanged:  # the engine refused, or a signal stopped it first: nothing ran, record unchanged
        stopped = ResultOutcome.INTERRUPTED if outcome.exit_code == ExitCode.INTERRUPTED else ResultOutcome.REFUSED
        return EngineRefusedResult(outcome.message, outcome.record.status.value if outcome.record else None,
                                   outcome=stopped)
    rec = outcome.record or running
    return SettledResult(
        outcome=rec.status,  # "running" here means the settle write failed
        error=rec.last_error or (outcome.message if outcome.exit_code else None),
        resources={a: r.to_dict() for a, r in (rec.resources or {}).items()},
        suspect_orphans=[o.to_dict() for o in rec.suspect_orphans],
        actions=[a.to_dict() for a in rec.actions],
    )
