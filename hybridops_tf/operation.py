"""apply/destroy for one module: DESIGN §6, step by step.

1 validate -> 2 lock -> 3 preflight + uncertain-outcome guard -> 4 persist `running` ->
5 run the engine, streaming events -> 6 settle from evidence -> 7 release. Never retry.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf import run_reads, settle
from hybridops_tf.engine import binary, commands, process
from hybridops_tf.engine.runner import Engine
from hybridops_tf.errors import (
    EngineError,
    EngineNotStarted,
    ExitCode,
    HyopsError,
    Interrupted,
    RefusedError,
)
from hybridops_tf.fsutil import PreparedWrite
from hybridops_tf.lifecycle import Status, apply_refusal
from hybridops_tf.modules import ModuleTarget
from hybridops_tf.record import (
    OperationRecord,
    Owner,
    record_key,
)
from hybridops_tf.runs import (
    EVENTS_COMPLETE,
    EventLog,
    RunFolder,
    new_run_id,
)
from hybridops_tf.runtime import Runtime
from hybridops_tf.store import Journal, Store, open_store
from hybridops_tf.stream_reader import StreamReader

if TYPE_CHECKING:  # the event parser is loaded once the engine runs; see StreamReader
    from hybridops_tf.engine.events import Event

EventSink = Callable[["Event"], None]


@dataclass
class ModuleRequest:
    """Everything one apply/destroy of one module needs; built by the CLI or the stack runner."""

    command: str  # "apply" | "destroy" | "refresh" | "import"
    target: ModuleTarget
    runtime_root: Path
    engine: str | None = None
    inputs_file: Path | None = None
    var_options: Sequence[str] = ()
    stack_inputs: Mapping[str, Any] | None = None
    sensitive_inputs: frozenset[str] = frozenset()  # e.g. wired from a sensitive upstream output
    passthrough: Sequence[str] = ()
    lock_timeout: float = 0
    allow_uncertain: bool = False
    argv: Sequence[str] = ()
    workspace: str | None = None
    on_event: EventSink | None = None
    on_stderr: Callable[[str], None] | None = process.echo_stderr
    run_id: str | None = None
    import_address: str | None = None  # command "import": adopt this object into state
    import_id: str | None = None
    empty_status: Status = Status.DESTROYED  # command "refresh": what a confirmed-empty state means
    expect_empty: bool = True  # command "refresh": False = just bring state and outputs up to date
    plan_file: Path | None = None  # apply/destroy exactly this saved plan (planning.saved_plan_request)

    @property
    def key(self) -> str:
        """The record key: the ref, plus `@workspace` outside the default workspace."""
        return record_key(self.target.ref, self.workspace)


@dataclass
class Outcome:
    record: OperationRecord | None
    exit_code: int
    run_id: str
    run_dir: Path | None
    message: str


def run(req: ModuleRequest) -> Outcome:
    """The whole contract; raises HyopsError for refusals and preflight failures."""
    ws = Runtime(req.runtime_root)
    resolved = ws.resolve_inputs(req.target, req.inputs_file, req.var_options, req.stack_inputs,
                                 req.sensitive_inputs)  # step 1
    run_id = req.run_id or new_run_id(req.command)
    store = open_store(req.runtime_root)
    ws.ensure_root()
    with process.FORWARDER, store.lock(req.key, run_id, req.lock_timeout):  # step 2
        previous = store.read(req.key)
        meta = ws.meta(req, run_id, resolved)
        try:
            folder = RunFolder.create(req.runtime_root, req.key, run_id)
            folder.write_meta(meta)
        except OSError as err:
            raise RefusedError(
                f"could not create the run folder under {req.runtime_root}: {err.strerror or err}; "
                "nothing was changed"
            ) from None
        try:
            store.journal_doc(req.key, run_id, "meta", meta)
        except OSError as err:
            raise RefusedError(f"could not journal the run in {store.describe()}: {err.strerror or err}; "
                               "nothing was changed") from None
        try:
            engine = ws.engine_for(req.target, req.engine, resolved, req.workspace, folder)  # step 3
            meta["engine"] = engine.info.to_json()
            binary.warn_if_version_changed(previous.engine if previous is not None else None, engine.info)
            guard(req, previous)
            if process.FORWARDER.received is not None:
                raise Interrupted("interrupted before the engine started; nothing was changed")
            digest = ws.inputs_digest(resolved)
            inherited, known = run_reads.takeover(req.runtime_root, req.key, previous, engine)
            try:
                run_inputs = ws.write_run_inputs(folder, resolved)
                rerun_inputs = ws.prepare_rerun_inputs(req.target, resolved, req.key)  # committed once running is
            except OSError as err:
                raise RefusedError(f"could not write the inputs files: {err.strerror or err}; "
                                   "the engine was not started") from None
            running = settle.begin(previous, settle.RunStart(
                command=req.command, module_ref=req.target.ref, module_dir=str(req.target.directory),
                run_id=run_id, owner=Owner.current(run_id), resolved_inputs_file=str(run_inputs),
                rerun_inputs_file=str(rerun_inputs.path), inputs_digest=digest,
                engine=engine.info.to_json(), workspace=req.workspace,
            ), inherited, known)
            try:
                log = EventLog(folder)
            except OSError as err:
                rerun_inputs.discard()
                raise RefusedError(f"could not open {folder.events_path}: {err.strerror or err}; "
                                   "the engine was not started") from None
            try:
                store.write(running)  # step 4
            except OSError as err:
                log.close()
                rerun_inputs.discard()
                raise RefusedError(
                    f"could not write the running record {store.where(req.key)}: "
                    f"{err.strerror or err}; the engine was not started"
                ) from None
            _commit_rerun_inputs(rerun_inputs, store, req, previous, log)
        except HyopsError as err:
            _finish(ws, store, req.key, folder, meta, err.exit_code, {"outcome": "refused", "error": err.message})
            raise
        outcome = _execute(req, engine, store, previous, running, folder, log)  # steps 5-6
        rec = outcome.record or running
        if outcome.exit_code in (ExitCode.USAGE, ExitCode.REFUSED):  # the engine refused: nothing ran, record unchanged
            _finish(ws, store, req.key, folder, meta, outcome.exit_code, {
                "outcome": "refused", "error": outcome.message,
                "record_status": outcome.record.status.value if outcome.record else None})
            return outcome
        _finish(ws, store, req.key, folder, meta, outcome.exit_code, {
            "outcome": rec.status.value,  # "running" here means the settle write failed
            "error": rec.last_error or (outcome.message if outcome.exit_code else None),
            "resources": {a: r.to_dict() for a, r in (rec.resources or {}).items()},
            "suspect_orphans": [o.to_dict() for o in rec.suspect_orphans],
        })
        return outcome


def _finish(ws: Runtime, store: Store, key: str, folder: RunFolder, meta: dict[str, Any], code: int,
            result: dict[str, Any]) -> None:
    """result.json last; a shared store's journal gets the result too (a courtesy: the record
    already says what happened, so a failure here is a warning)."""
    ws.finish_run(folder, meta, code, result)
    try:
        store.journal_doc(key, folder.run_id, "result", {"exit_code": int(code), **result})
    except OSError as err:
        print(f"hyops: warning: could not journal the result of {folder.run_id} in {store.describe()}: "
              f"{err.strerror or err}", file=sys.stderr, flush=True)


def _commit_rerun_inputs(rerun: PreparedWrite, store: Store, req: ModuleRequest,
                         previous: OperationRecord | None, log: EventLog) -> None:
    """rerun.inputs.yml goes into place once `running` is persisted (its data is already
    durable beside it, so only a rename can fail here). If it does, the engine is not started
    and the record goes back to what it was: we hold the lock and nothing ran."""
    from hybridops_tf.runtime import RERUN_INPUTS

    try:
        rerun.commit()
        if store.shared:
            store.put_document(RERUN_INPUTS, req.key, rerun.path.read_text(encoding="utf-8"))
    except OSError as err:
        log.close()
        try:
            if previous is not None:
                store.write(previous)
            else:
                store.delete(req.key)
        except OSError:
            pass  # the record stays `running`: stale once we let go, which reconcile settles
        raise RefusedError(f"could not write {rerun.path}: {err.strerror or err}; "
                           "the engine was not started") from None


def guard(req: ModuleRequest, previous: OperationRecord | None) -> None:
    """Uncertain-outcome guard. Under the lock a `running` record we see is stale (approval
    also asks it before planning, without the lock: the run asks it again under it)."""
    if req.command != "apply" or previous is None:
        return  # destroy, refresh and import create nothing: cleanup and adoption stay open
    why = apply_refusal(
        previous.status,
        stale=previous.status is Status.RUNNING,
        suspect_orphans=len(previous.suspect_orphans),
        allow_uncertain=req.allow_uncertain,
    )
    if why:
        raise RefusedError(
            f"apply of {req.target.ref} refused: {why}; run `hyops reconcile {req.target.directory} "
            f"--ref {req.target.ref}` first, or pass --allow-uncertain to apply anyway"
        )


def _argv(req: ModuleRequest, engine: Engine) -> list[str]:
    extra = list(req.passthrough)
    if req.plan_file is not None:  # it carries its variables: no var file, so nothing fed on stdin
        return commands.apply_saved(engine.info.binary, engine.module_dir, req.plan_file, extra)
    if req.command == "apply":
        return engine.argv(commands.apply, extra)
    if req.command == "destroy":
        return engine.argv(commands.destroy, extra)
    if req.command == "refresh":  # state follows the live objects; nothing remote changes
        return engine.argv(commands.apply, ["-refresh-only", *extra])
    if req.command == "import" and req.import_address and req.import_id:
        return engine.argv(commands.import_, req.import_address, req.import_id, extra)
    raise ValueError(f"unsupported module command {req.command!r}")


def _execute(
    req: ModuleRequest,
    engine: Engine,
    store: Store,
    previous: OperationRecord | None,
    running: OperationRecord,
    folder: RunFolder,
    log: EventLog,
) -> Outcome:
    argv = _argv(req, engine)
    journal = store.journal(req.key, running.run_id)
    reader = StreamReader(req.on_event, folder, log, journal)
    try:
        result = engine.stream(argv, reader, folder.stderr_path, req.on_stderr, journal=reader.journal())
    except EngineNotStarted as err:  # it never ran: settle now rather than leave a stale running
        _close_journal(journal)
        return _write_settled(req, store, running, folder, settle.failed(
            running, command=req.command, recovered_outputs=None, resources=None, orphans=[],
            error=f"{err.message}; the engine never started, so nothing changed"), ExitCode.FAILED)
    finally:
        try:
            log.close()
        except OSError as err:
            reader.log_error.append(err)
    if (folder.path / EVENTS_COMPLETE).exists():
        journal.complete()
    _close_journal(journal)
    if _refused_by_engine(req, reader, result):
        return _settle_refusal(req, store, previous, running, folder, reader, result)
    try:
        settled, succeeded = _settle(req, engine, running, reader, result)
    except EngineError as err:  # evidence could not be read after the run: stay honest
        succeeded = False
        progress = reader.tracker().resources
        settled = settle.failed(
            running, command=req.command, error=f"{err.message} (after engine exit {result.returncode})",
            recovered_outputs=None, resources=settle.resources_after_run(running.resources, progress, None),
            # without the state, nothing proves an unfinished create left no object behind
            orphans=settle.new_suspect_orphans(progress, None, running.run_id, known=running.resources),
        )
    if reader.log_error and succeeded:  # the run's own evidence is incomplete: claim no success
        succeeded = False
        err = reader.log_error[0]
        settled = settle.failed(
            settled, command=req.command, recovered_outputs=settled.outputs, resources=settled.resources,
            orphans=[], error=(f"{folder.events_path} could not be written ({err.strerror or err}); the "
                               f"engine exited {result.returncode}: run `hyops reconcile` to settle from evidence"),
        )
    if result.interrupted is not None:
        code = ExitCode.INTERRUPTED
    else:
        code = ExitCode.FAILED if not succeeded else ExitCode.OK
    return _write_settled(req, store, running, folder, settled, code)


def _close_journal(journal: Journal) -> None:
    """Flush the store's journal before the settle; a gap in it is worth a warning only (this
    run settles from its own events; the journal serves a runner that never saw them)."""
    problem = journal.close()
    if problem is not None:
        print(f"hyops: warning: {problem}", file=sys.stderr, flush=True)


def _refused_by_engine(req: ModuleRequest, reader: StreamReader, result: process.ProcessResult) -> bool:
    """The engine exited on its own with an error, and its complete stream shows that no
    resource change started (no apply_start): an invalid value, an unknown flag, a failing
    validation, a provider that cannot be configured. A killed engine, a signal, or a stream
    hyops could not log completely keeps the conservative rule (the run may have changed things)."""
    if req.command not in ("apply", "destroy") or not result.started or result.interrupted is not None:
        return False
    if result.returncode <= 0 or result.returncode >= 128 or reader.log_error:
        return False
    from hybridops_tf.lifecycle import Progress

    return all(p.status is Progress.PENDING for p in reader.tracker().resources.values())


def _settle_refusal(req: ModuleRequest, store: Store, previous: OperationRecord | None,
                    running: OperationRecord, folder: RunFolder, reader: StreamReader,
                    result: process.ProcessResult) -> Outcome:
    """Nothing changed: the record goes back to what it said (exit 2), the attempt is kept."""
    from hybridops_tf.engine.events import summarize_diagnostics

    why = summarize_diagnostics(reader.diagnostics) or f"see {folder.stderr_path}"
    message = (f"the engine refused the {req.command} before changing anything "
               f"(engine exit {result.returncode}): {why}; the record is unchanged")
    # a saved plan the engine will not apply (stale, most often) is refused like hyops's own check
    code = ExitCode.REFUSED if req.plan_file is not None else ExitCode.USAGE
    restored = settle.engine_refused(previous, running, command=req.command, error=message, exit_code=code)
    try:
        if restored is None:
            store.delete(req.key)
        else:
            store.write(restored)
    except OSError as err:
        failure = (f"could not restore the record {store.where(req.key)} after the engine "
                   f"refused the run: {err.strerror or err}; it still says 'running': run `hyops reconcile "
                   f"{req.target.directory} --ref {req.target.ref}`")
        print(f"hyops: ERROR: {failure}", file=sys.stderr, flush=True)
        return Outcome(running, ExitCode.FAILED, running.run_id, folder.path, failure)
    return Outcome(restored, code, running.run_id, folder.path, message)


def _write_settled(req: ModuleRequest, store: Store, running: OperationRecord, folder: RunFolder,
                   settled: OperationRecord, code: ExitCode) -> Outcome:
    """Step 6's write; if it fails, say so loudly and leave `running` (outcome uncertain)."""
    try:
        store.write(settled)
    except OSError as err:
        message = (
            f"could not write the settled record {store.where(req.key)}: {err.strerror or err}; "
            f"the record still says 'running' (outcome uncertain): run `hyops reconcile "
            f"{req.target.directory} --ref {req.target.ref}`"
        )
        print(f"hyops: ERROR: {message}", file=sys.stderr, flush=True)
        return Outcome(running, ExitCode.FAILED, running.run_id, folder.path, message)
    if code == ExitCode.INTERRUPTED:
        message = settled.last_error or "interrupted"
    elif code != ExitCode.OK:
        message = settled.last_error or "failed"
    else:
        message = f"{req.command} of {req.target.ref}: {settled.status.value}"
    return Outcome(settled, code, running.run_id, folder.path, message)


def _settle(
    req: ModuleRequest,
    engine: Engine,
    running: OperationRecord,
    reader: StreamReader,
    result: process.ProcessResult,
) -> tuple[OperationRecord, bool]:
    """The record to write, and whether the command did what it was asked."""
    from hybridops_tf.engine.events import summarize_diagnostics
    from hybridops_tf.engine.state import outputs_plain, parse_outputs, parse_state

    interrupted = result.interrupted
    ok = result.returncode == 0 and interrupted is None
    tracker = reader.tracker()
    if ok and req.command == "apply":
        if reader.outputs:
            outputs = outputs_plain(reader.outputs[-1].outputs)
        else:  # older engines may not send the outputs message
            outputs = outputs_plain(parse_outputs(engine.output_doc()))
        applied = settle.apply_succeeded(running, outputs, run_reads.resources_after_success(engine, running, tracker))
        partial = run_reads.partial_run_flags(req.passthrough)
        if partial:
            why = run_reads.unconverged(engine, partial)
            if why is not None:
                print(f"hyops: note: {req.target.ref} is recorded as error: {why}", file=sys.stderr, flush=True)
                return settle.not_converged(applied, command="apply", why=why), True
        return applied, True

    state = parse_state(engine.show_state_doc())
    view = settle.state_view(state.resources)
    resources = settle.resources_after_run(running.resources, tracker.resources, view)
    if ok and req.command == "import":
        address = req.import_address or ""
        return settle.imported(running, address, view, resources), address in view
    if ok and req.command == "refresh":
        resources = settle.gone_on_refresh(resources, tracker.read_addresses, view)
        if state.is_empty:
            emptied = settle.confirmed_empty(running, resources, req.empty_status)
            return emptied, emptied.status is req.empty_status
        remaining = sorted(state.addresses())
        if not req.expect_empty:
            return settle.failed(
                running, command="apply", resources=None, orphans=[],  # begin() cleared failed_command
                error="state refreshed from the live objects; run `hyops reconcile --write` to settle",
                recovered_outputs=outputs_plain(state.outputs),
            ), True
        return settle.failed(
            running, command="refresh", resources=resources, orphans=[],
            error=f"refresh found {len(remaining)} resources still live: {', '.join(remaining[:5])}",
            recovered_outputs=outputs_plain(state.outputs),
        ), False
    if ok:  # destroy: success only when the state is confirmed empty
        if state.is_empty:
            emptied = settle.destroy_verified(running, resources)
            return emptied, emptied.status is Status.DESTROYED
        remaining = sorted(state.addresses())
        return settle.failed(
            running, command="destroy", resources=resources, orphans=[],
            error=f"destroy reported success but {len(remaining)} resources remain: {', '.join(remaining[:5])}",
            recovered_outputs=outputs_plain(state.outputs),
        ), False
    if interrupted is not None:  # also the only way an engine is not started (process.run_streaming)
        import signal

        name = signal.Signals(interrupted).name
        error = (f"interrupted by {name}; the engine stopped (exit {result.returncode})" if result.started
                 else f"interrupted by {name} before the engine started")
        summary = summarize_diagnostics(reader.diagnostics)
        error = f"{error}: {summary}" if summary else error
    else:
        error = summarize_diagnostics(reader.diagnostics) or f"engine exited with code {result.returncode}"
    errored_state = engine.module_dir / "errored.tfstate"
    if errored_state.exists():
        error += f"; the engine could not save state and wrote {errored_state} (push it with `state push`)"
    return settle.failed(
        running,
        command=req.command,
        error=error,
        recovered_outputs=outputs_plain(state.outputs),
        resources=resources,
        orphans=settle.new_suspect_orphans(tracker.resources, view, running.run_id, known=running.resources),
    ), False


