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

from hybridops_tf import settle
from hybridops_tf.engine import commands, process
from hybridops_tf.engine.runner import Engine
from hybridops_tf.errors import (
    EngineError,
    EngineNotStarted,
    ExitCode,
    HyopsError,
    Interrupted,
    RefusedError,
)
from hybridops_tf.lifecycle import Status, apply_refusal
from hybridops_tf.modules import ModuleTarget
from hybridops_tf.record import OperationRecord, Owner, RecordStore, SuspectOrphan
from hybridops_tf.redact import redact_event_line
from hybridops_tf.runs import (
    EventLog,
    RunFolder,
    may_hold_unseen_creates,
    new_run_id,
    read_run_events,
)
from hybridops_tf.runtime import Runtime

if TYPE_CHECKING:  # the event parser is loaded once the engine runs; see _StreamReader
    from hybridops_tf.engine.events import Event, OutputsMessage
    from hybridops_tf.engine.progress import ResourceTracker

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
    store = RecordStore(req.runtime_root)
    ws.ensure_root()
    with process.FORWARDER, store.lock(req.target.ref, run_id, req.lock_timeout):  # step 2
        previous = store.read(req.target.ref)
        meta = ws.meta(req, run_id, resolved)
        try:
            folder = RunFolder.create(req.runtime_root, req.target.ref, run_id)
            folder.write_meta(meta)
        except OSError as err:
            raise RefusedError(
                f"could not create the run folder under {req.runtime_root}: {err.strerror or err}; "
                "nothing was changed"
            ) from None
        try:
            engine = ws.engine_for(req.target, req.engine, resolved, req.workspace, folder)  # step 3
            meta["engine"] = engine.info.to_json()
            _guard(req, previous)
            if process.FORWARDER.received is not None:
                raise Interrupted("interrupted before the engine started; nothing was changed")
            try:
                inputs_files = ws.write_inputs(req.target, folder, resolved)
            except OSError as err:
                raise RefusedError(f"could not write the inputs files: {err.strerror or err}; "
                                   "the engine was not started") from None
            inherited = _orphans_of_interrupted_run(req, previous, engine)
            running = settle.begin(previous, settle.RunStart(
                command=req.command, module_ref=req.target.ref, module_dir=str(req.target.directory),
                run_id=run_id, owner=Owner.current(run_id), resolved_inputs_file=str(inputs_files[0]),
                rerun_inputs_file=str(inputs_files[1]), inputs_digest=resolved.digest(),
                engine=engine.info.to_json(), workspace=req.workspace,
            ), inherited)
            try:
                log = EventLog(folder)
            except OSError as err:
                raise RefusedError(f"could not open {folder.events_path}: {err.strerror or err}; "
                                   "the engine was not started") from None
            try:
                store.write(running)  # step 4
            except OSError as err:
                log.close()
                raise RefusedError(
                    f"could not write the running record {store.record_path(req.target.ref)}: "
                    f"{err.strerror or err}; the engine was not started"
                ) from None
        except HyopsError as err:
            ws.finish_run(folder, meta, err.exit_code, {"outcome": "refused", "error": err.message})
            raise
        outcome = _execute(req, engine, store, running, folder, log)  # steps 5-6
        rec = outcome.record or running
        ws.finish_run(folder, meta, outcome.exit_code, {
            "outcome": rec.status.value,  # "running" here means the settle write failed
            "error": rec.last_error or (outcome.message if outcome.exit_code else None),
            "resources": {a: r.to_dict() for a, r in (rec.resources or {}).items()},
            "suspect_orphans": [o.to_dict() for o in rec.suspect_orphans],
        })
        return outcome


def _guard(req: ModuleRequest, previous: OperationRecord | None) -> None:
    """Uncertain-outcome guard. We hold the lock, so a `running` record we see is stale."""
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


def _orphans_of_interrupted_run(
    req: ModuleRequest, previous: OperationRecord | None, engine: Engine
) -> list[SuspectOrphan]:
    """A stale `running` record: creates its run started and the state does not hold.

    hyops died while that run's engine may still have been creating things; without this,
    a later verified destroy could say `destroyed` while such an object lives on. When hyops
    read none of that run's plan, a fresh read-only plan names what it may have created.
    """
    if previous is None or previous.status is not Status.RUNNING:
        return []
    from hybridops_tf.engine.progress import ResourceTracker
    from hybridops_tf.engine.state import StateFormatError, parse_state

    events = read_run_events(req.runtime_root, req.target.ref, previous.run_id)
    progress = ResourceTracker().feed_all(events).resources
    try:
        in_state = parse_state(engine.show_state_doc()).addresses()
    except (EngineError, StateFormatError):
        in_state = []  # unreadable state: every started create stays a suspect
    replanned: tuple[str, ...] | None = ()
    if may_hold_unseen_creates(req.runtime_root, req.target.ref, previous.run_id,
                               previous.active_command, events):
        replanned = _planned_creates(engine)
    return settle.interrupted_run_orphans(progress, in_state, previous.run_id, replanned)


def _planned_creates(engine: Engine) -> tuple[str, ...] | None:
    """Creates a read-only `plan -refresh=false` shows; None when it cannot say."""
    from hybridops_tf.engine.events import iter_events
    from hybridops_tf.engine.progress import planned_creates

    lines: list[str] = []
    argv = engine.argv(commands.plan, None, extra=["-refresh=false"])
    result = engine.stream(argv, lines.append, None, lambda _line: None)
    if result.interrupted is not None:
        raise Interrupted("interrupted while planning; nothing was changed")
    if result.returncode != 0:
        return None
    return planned_creates(iter_events(lines))


def _argv(req: ModuleRequest, engine: Engine) -> list[str]:
    extra = list(req.passthrough)
    if req.command == "apply":
        return engine.argv(commands.apply, extra)
    if req.command == "destroy":
        return engine.argv(commands.destroy, extra)
    if req.command == "refresh":  # state follows the live objects; nothing remote changes
        return engine.argv(commands.apply, ["-refresh-only", *extra])
    if req.command == "import" and req.import_address and req.import_id:
        return engine.argv(commands.import_, req.import_address, req.import_id, extra)
    raise ValueError(f"unsupported module command {req.command!r}")


class _StreamReader:
    """The engine's stdout, line by line: the raw line to events.jsonl first, then parsed,
    tracked and shown.

    The event parser (its ~25 message classes) is imported at the first line, which comes
    after the spawn: the import then overlaps the engine's own start-up instead of adding to
    hyops's overhead before it (issue #3's budget).
    """

    def __init__(self, req: ModuleRequest, folder: RunFolder, log: EventLog) -> None:
        self._req = req
        self._folder = folder
        self._log = log
        self._tracker: ResourceTracker | None = None
        self.diagnostics: list[Event] = []
        self.outputs: list[OutputsMessage] = []
        self.log_error: list[OSError] = []

    def tracker(self) -> ResourceTracker:
        if self._tracker is None:
            from hybridops_tf.engine.progress import ResourceTracker

            self._tracker = ResourceTracker()
        return self._tracker

    def __call__(self, line: str) -> None:
        from hybridops_tf.engine.events import OutputsMessage, parse_event

        if not self.log_error:
            try:
                self._log.append(redact_event_line(line))  # raw line first (never a secret)
            except OSError as err:  # never stop an engine mid-flight over our own log
                self.log_error.append(err)
                print(f"hyops: ERROR: cannot append to {self._folder.events_path}: {err.strerror or err}; "
                      "the engine goes on, and the run will be recorded as error", file=sys.stderr, flush=True)
        event = parse_event(line)
        self.tracker().feed(event)
        if isinstance(event, OutputsMessage):
            self.outputs.append(event)
        elif getattr(event, "type", "") == "diagnostic":
            self.diagnostics.append(event)
        if self._req.on_event is not None:
            self._req.on_event(event)


def _execute(
    req: ModuleRequest,
    engine: Engine,
    store: RecordStore,
    running: OperationRecord,
    folder: RunFolder,
    log: EventLog,
) -> Outcome:
    argv = _argv(req, engine)
    reader = _StreamReader(req, folder, log)
    try:
        result = engine.stream(argv, reader, folder.stderr_path, req.on_stderr)
    except EngineNotStarted as err:  # it never ran: settle now rather than leave a stale running
        return _write_settled(req, store, running, folder, settle.failed(
            running, command=req.command, recovered_outputs=None, resources=None, orphans=[],
            error=f"{err.message}; the engine never started, so nothing changed"), ExitCode.FAILED)
    finally:
        try:
            log.close()
        except OSError as err:
            reader.log_error.append(err)
    try:
        settled, succeeded = _settle(req, engine, running, reader, result)
    except EngineError as err:  # evidence could not be read after the run: stay honest
        succeeded = False
        settled = settle.failed(
            running, command=req.command, error=f"{err.message} (after engine exit {result.returncode})",
            recovered_outputs=None, resources=settle.resources_from_progress(reader.tracker().resources), orphans=[],
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


def _write_settled(req: ModuleRequest, store: RecordStore, running: OperationRecord, folder: RunFolder,
                   settled: OperationRecord, code: ExitCode) -> Outcome:
    """Step 6's write; if it fails, say so loudly and leave `running` (outcome uncertain)."""
    try:
        store.write(settled)
    except OSError as err:
        message = (
            f"could not write the settled record {store.record_path(req.target.ref)}: {err.strerror or err}; "
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
    reader: _StreamReader,
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
        return settle.apply_succeeded(running, outputs, settle.resources_from_progress(tracker.resources)), True

    state = parse_state(engine.show_state_doc())
    tainted = [r.address for r in state.resources if r.tainted]
    resources = settle.resources_from_progress(tracker.resources, tainted)
    if ok and req.command == "import":
        address = req.import_address or ""
        return settle.imported(running, address, state.addresses()), address in state.addresses()
    if ok and req.command == "refresh":
        if state.is_empty:
            return settle.confirmed_empty(running, resources, req.empty_status), True
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
            return settle.destroy_verified(running, resources), True
        remaining = sorted(state.addresses())
        return settle.failed(
            running, command="destroy", resources=resources, orphans=[],
            error=f"destroy reported success but {len(remaining)} resources remain: {', '.join(remaining[:5])}",
            recovered_outputs=outputs_plain(state.outputs),
        ), False
    if interrupted is not None:
        import signal

        error = f"interrupted by {signal.Signals(interrupted).name}; the engine stopped (exit {result.returncode})"
        summary = summarize_diagnostics(reader.diagnostics)
        error = f"{error}: {summary}" if summary else error
    elif not result.started:
        error = "the engine was not started"
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
        orphans=settle.new_suspect_orphans(tracker.resources, state.addresses(), running.run_id),
    ), False
