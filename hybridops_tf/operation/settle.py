"""Step 6 of an operation (steps.py): settle one run from its evidence.

What the record may say after the engine exited, one function per command when it exited 0
and one for every command when it did not. Success is claimed only on whole evidence: the
state read back after the run (or, for an empty result, the local state file the run wrote)
and every event logged; evidence that cannot be read leaves an honest `error`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from hybridops_tf.base import notices
from hybridops_tf.base.errors import EngineError, ExitCode
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.operation import reads
from hybridops_tf.operation.declared_actions import may_declare
from hybridops_tf.record import action_settle, actions, transitions
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord, ReleasedObject, ResourceEntry
from hybridops_tf.record.objects import (
    StateView,
    gone_on_refresh,
    new_suspect_orphans,
    objects_after_run,
    released_after,
    resources_after_run,
    state_view,
)
from hybridops_tf.runtime.run_folder import RunFolder

if TYPE_CHECKING:
    from hybridops_tf.engine import process
    from hybridops_tf.engine.progress import ResourceTracker
    from hybridops_tf.engine.runner import Engine
    from hybridops_tf.engine.state import StateSnapshot
    from hybridops_tf.operation.request import ModuleRequest
    from hybridops_tf.operation.stream import StreamReader


def settle_run(req: ModuleRequest, engine: Engine, running: OperationRecord, reader: StreamReader,
               result: process.ProcessResult, folder: RunFolder,
               before: OperationRecord | None = None) -> tuple[OperationRecord, ExitCode]:
    """Step 6: the record the evidence supports, and the exit code. Success is claimed only
    on whole evidence: the state read back after the run, and every event logged. `before`:
    the record as the run found it (an import keeps the failure it follows)."""
    try:
        settled, succeeded = _settle(req, engine, running, reader, result)
    except EngineError as err:  # evidence could not be read after the run: stay honest
        settled, succeeded = _evidence_unreadable(req, running, reader, result, err), False
    if req.command in (Command.APPLY, Command.DESTROY):
        fold = reader.actions()
        carried = actions.carried_forward(running.actions, fold.rows, partial(may_declare, engine.module_dir)
                                          ) if req.command is Command.APPLY else []
        settled, ok_actions = action_settle.with_actions(settled, fold, req.command, _reconcile(running), carried,
                                                         partial=bool(reads.partial_run_flags(req.passthrough)))
        succeeded = succeeded and ok_actions
    if req.command == Command.IMPORT:
        settled = transitions.after_import(settled, before)
    if reader.log_error and succeeded:  # the run's own evidence is incomplete: claim no success
        log_err = reader.log_error[0]
        succeeded = False
        settled = transitions.failed(
            settled, command=req.command, recovered_outputs=settled.outputs, resources=settled.resources,
            orphans=[], error=(f"{folder.events_path} could not be written ({log_err.strerror or log_err}); the "
                               f"engine exited {result.returncode}: run `{_reconcile(running)}` to settle from "
                               "evidence"),
        )
    if result.interrupted is not None:
        return settled, ExitCode.INTERRUPTED
    return settled, ExitCode.FAILED if not succeeded else ExitCode.OK


def _evidence_unreadable(req: ModuleRequest, running: OperationRecord, reader: StreamReader,
                         result: process.ProcessResult, err: EngineError) -> OperationRecord:
    """The state could not be read after the run: what its events show, and no success."""
    progress = reader.tracker().resources
    return transitions.failed(
        running, command=req.command, error=f"{err.message} (after engine exit {result.returncode})",
        recovered_outputs=None, resources=resources_after_run(running.resources, progress, None),
        # without the state, nothing proves an unfinished create left no object behind
        orphans=new_suspect_orphans(progress, None, running.run_id, known=running.resources),
    )


@dataclass(frozen=True)
class _StateEvidence:
    """The state as read after the run, and the record's objects it supports."""

    state: StateSnapshot
    view: StateView
    resources: dict[str, ResourceEntry]
    released: list[ReleasedObject]

    @classmethod
    def read(cls, engine: Engine, running: OperationRecord, tracker: ResourceTracker,
             written: StateSnapshot | None = None, *, converged: bool = False) -> _StateEvidence:
        """written: the state this run's engine wrote in its local state file, if any (then
        no `show -json`)."""
        from hybridops_tf.engine.state import parse_state

        state = written if written is not None else parse_state(engine.show_state_doc())
        view = state_view(state.resources)
        objects = objects_after_run(running.resources, tracker.resources, view,
                                    run_id=running.run_id, converged=converged)
        return cls(state, view, objects.resources, objects.released)


def _with_released(rec: OperationRecord, released: list[ReleasedObject],
                   view: StateView | None) -> OperationRecord:
    """The record, listing also what this run released (once per object), and no longer what
    the state manages again (an `import` block adopted it back)."""
    rec.released = released_after(rec.released, released, view, rec.resources)
    return rec


def written_state(req: ModuleRequest, engine: Engine, running: OperationRecord) -> StateSnapshot | None:
    """The state this run's engine wrote in the module's local state file, else None."""
    since = _utc_seconds(running.started_at or "")
    return reads.local_state(engine, req.passthrough, since) if since is not None else None


def _utc_seconds(stamp: str) -> float | None:
    """A record's timestamp (record.model.utc_now: YYYY-MM-DDTHH:MM:SSZ) in seconds since the
    epoch, None when it is not one. Not datetime.strptime, whose first use imports _strptime
    and compiles its regular expressions (~2 ms on every apply)."""
    from datetime import UTC, datetime

    if len(stamp) != 20 or stamp[10] != "T" or stamp[19] != "Z":
        return None
    try:
        return datetime.fromisoformat(stamp[:19]).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def following_state(req: ModuleRequest, engine: Engine, known: dict[str, ResourceEntry] | None
                    ) -> dict[str, ResourceEntry] | None:
    """What the record knows, its entries moved to where the state holds their objects now
    (a `state mv` by hand since the last run), read from the local state file before the run
    (no engine call); `known` as it is when there is no such file to read."""
    if not known:
        return known
    state = reads.local_state(engine, req.passthrough)
    if state is None:
        return known
    return objects_after_run(known, {}, state_view(state.resources)).resources


def written_empty_state(req: ModuleRequest, engine: Engine, running: OperationRecord) -> StateSnapshot | None:
    """The empty state this run's destroy (or refresh) wrote locally, else None: a managed
    object left, or anything unexpected, is for `show -json` to tell."""
    if req.command not in (Command.DESTROY, Command.REFRESH):
        return None
    state = written_state(req, engine, running)
    return state if state is not None and state.is_empty else None


def _settle(req: ModuleRequest, engine: Engine, running: OperationRecord, reader: StreamReader,
            result: process.ProcessResult) -> tuple[OperationRecord, bool]:
    """The record to write, and whether the command did what it was asked: one settle per
    command when the engine exited 0, one for every command when it did not."""
    ok = result.returncode == 0 and result.interrupted is None
    if ok:
        reader.tracker().engine_succeeded()
    if ok and req.command == Command.APPLY:
        return _settle_apply(req, engine, running, reader)
    written = written_empty_state(req, engine, running) if ok else None  # then no `show -json`
    evidence = _StateEvidence.read(engine, running, reader.tracker(), written)
    if not ok:
        settled, succeeded = _settle_failure(req, engine, running, reader, result, evidence), False
    elif req.command == Command.IMPORT:
        settled, succeeded = _settle_import(req, running, evidence)
    elif req.command == Command.REFRESH:
        settled, succeeded = _settle_refresh(req, running, reader.tracker(), evidence)
    else:
        settled, succeeded = _settle_destroy(running, evidence)
    return _with_released(settled, evidence.released, evidence.view), succeeded


def _settle_apply(req: ModuleRequest, engine: Engine, running: OperationRecord,
                  reader: StreamReader) -> tuple[OperationRecord, bool]:
    """Applied: the outputs the engine sent, the objects the state now holds, and `error`
    after a partial run that left the rest of the configuration unconverged (the command
    still did what it was asked)."""
    from hybridops_tf.engine.state import StateFormatError, outputs_plain, parse_outputs

    if reader.outputs:
        outputs = outputs_plain(reader.outputs[-1].outputs)
    else:  # older engines may not send the outputs message
        outputs = outputs_plain(parse_outputs(engine.output_doc()))
    partial = reads.partial_run_flags(req.passthrough)
    try:
        evidence = _StateEvidence.read(engine, running, reader.tracker(), written_state(req, engine, running),
                                       converged=not partial)
        resources, released, view = evidence.resources, evidence.released, evidence.view
    except (EngineError, StateFormatError) as err:  # the listing is lost, not the success
        notices.warning(f"could not read the state to list its objects: {err}")
        resources = resources_after_run(running.resources, reader.tracker().resources, None)
        released, view = [], None
    applied = _with_released(transitions.apply_succeeded(running, outputs, resources), released, view)
    why = reads.unconverged(engine, partial) if partial else None
    if why is None:
        return applied, True
    notices.note(f"{req.target.ref} is recorded as error: {why}")
    return transitions.not_converged(applied, command=Command.APPLY, why=why), True


def _settle_import(req: ModuleRequest, running: OperationRecord,
                   evidence: _StateEvidence) -> tuple[OperationRecord, bool]:
    address = req.import_address or ""
    return transitions.imported(running, address, evidence.view, evidence.resources), address in evidence.view


def _settle_refresh(req: ModuleRequest, running: OperationRecord, tracker: ResourceTracker,
                    evidence: _StateEvidence) -> tuple[OperationRecord, bool]:
    """State refreshed from the live objects: empty is `req.empty_status`; anything else is
    an error, and a failure only when an empty state was expected."""
    from hybridops_tf.engine.state import outputs_plain

    state = evidence.state
    resources = gone_on_refresh(evidence.resources, tracker.read_addresses, evidence.view)
    if state.is_empty:
        emptied = transitions.confirmed_empty(running, resources, req.empty_status)
        return emptied, emptied.status is req.empty_status
    if not req.expect_empty:
        return transitions.failed(
            running, command=Command.APPLY, resources=None, orphans=[],  # begin() cleared failed_command
            error=f"state refreshed from the live objects; run `{_reconcile(running, '--write')}` to settle",
            recovered_outputs=outputs_plain(state.outputs),
        ), True
    remaining = sorted(state.addresses())
    return transitions.failed(
        running, command=Command.REFRESH, resources=resources, orphans=[],
        error=f"refresh found {len(remaining)} resources still live: {', '.join(remaining[:5])}",
        recovered_outputs=outputs_plain(state.outputs),
    ), False


def _settle_destroy(running: OperationRecord, evidence: _StateEvidence) -> tuple[OperationRecord, bool]:
    """Destroyed only when the state is confirmed empty, and nothing left alive on purpose
    (released by this destroy: `retained`)."""
    from hybridops_tf.engine.state import outputs_plain

    if evidence.state.is_empty:
        if evidence.released:  # objects it kept alive on purpose: listed as released, not destroyed
            kept = transitions.destroy_left_alive(running, evidence.resources)
            return kept, kept.status is Status.RETAINED
        emptied = transitions.destroy_verified(running, evidence.resources)
        return emptied, emptied.status is Status.DESTROYED
    remaining = sorted(evidence.state.addresses())
    return transitions.failed(
        running, command=Command.DESTROY, resources=evidence.resources, orphans=[],
        error=f"destroy reported success but {len(remaining)} resources remain: {', '.join(remaining[:5])}",
        recovered_outputs=outputs_plain(evidence.state.outputs),
    ), False


def _settle_failure(req: ModuleRequest, engine: Engine, running: OperationRecord, reader: StreamReader,
                    result: process.ProcessResult, evidence: _StateEvidence) -> OperationRecord:
    """The engine failed or was interrupted: its error, and a suspect orphan for each create
    it started that the state does not hold."""
    from hybridops_tf.engine.state import outputs_plain

    return transitions.failed(
        running,
        command=req.command,
        error=_failure_error(engine, reader, result),
        recovered_outputs=outputs_plain(evidence.state.outputs),
        resources=evidence.resources,
        orphans=new_suspect_orphans(reader.tracker().resources, evidence.view, running.run_id,
                                    known=running.resources),
    )


def _failure_error(engine: Engine, reader: StreamReader, result: process.ProcessResult) -> str:
    from hybridops_tf.engine.events import summarize_diagnostics

    summary = summarize_diagnostics(reader.diagnostics)
    if result.interrupted is not None:  # also the only way an engine is not started (process.run_streaming)
        import signal

        name = signal.Signals(result.interrupted).name
        error = (f"interrupted by {name}; the engine stopped (exit {result.returncode})" if result.started
                 else f"interrupted by {name} before the engine started")
        error = f"{error}: {summary}" if summary else error
    else:
        error = summary or f"engine exited with code {result.returncode}"
    errored_state = engine.module_dir / "errored.tfstate"
    if errored_state.exists():
        error += f"; the engine could not save state and wrote {errored_state} (push it with `state push`)"
    return error


def _reconcile(rec: OperationRecord, *extra: str) -> str:
    """`hyops reconcile` of this record's module, ref and workspace (record/advice.py)."""
    from hybridops_tf.record.advice import reconcile_command

    return reconcile_command(rec.module_ref, rec.module_dir, rec.workspace, *extra)
