"""One stack member's step, shared by every way a stack runs (docs/contract.md: Stacks).

`stack apply|destroy` (runner.py) runs members on threads of one process; a queued run
(stack/queue/) runs them on workers of many. Either way a member is exactly this step: the
per-module contract of a standalone run through `operation.steps.run` (record, lock, run
folder), its inputs wired from its upstreams (wiring.py), `--resume`'s skip by what would
change (record/applied.py) and what may have changed outside hyops (skip.py), destroy's
skip/retain rules, and a member's run id named where the run's report is (`on_run`) before
its engine may start. The caller fills `results` with its upstreams' ends before the step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hybridops_tf.base import notices
from hybridops_tf.base.errors import (
    EngineError,
    EngineNotFound,
    ExitCode,
    HyopsError,
    Interrupted,
    RefusedError,
)
from hybridops_tf.engine import process
from hybridops_tf.operation import run_inputs, steps
from hybridops_tf.operation.request import EventSink, ModuleRequest
from hybridops_tf.operation.would_apply import MemberInputs, would_apply
from hybridops_tf.record import applied, transitions
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import (
    CLAIMS_EMPTY,
    Command,
    DestroyStep,
    MemberStatus,
    Status,
    destroy_step,
)
from hybridops_tf.record.model import LockBusyError, OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.stack import skip
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.wiring import Wiring
from hybridops_tf.store.pgconn import StoreUnavailable


@dataclass
class MemberResult:
    """What one member's step did. `changed`: a record was written or an engine mutated."""

    status: MemberStatus
    run_id: str | None = None
    error: str | None = None
    outputs: dict[str, Any] | None = None
    changed: bool = True
    refused: bool = False
    # stopped before anything could change, for a reason that may pass (the lock busy past
    # --lock-timeout, the engine's init or its registry, a signal before the engine started):
    # a queued run tries it again (stack/queue); an in-process run does not
    retryable: bool = False
    # a --resume skip: what it compared, and what it did not (stack/skip.py), for the report
    compared: str | None = None


# A member's run id, before its engine may start: the run's report names it (report.LiveReport
# for `stack apply`, the queued run's row for a worker), so a runner killed from then on leaves a
# report whose member the record of that run settles (stack/view.py).
OnRun = Callable[[str, str], None]  # (member name, its run id)


class StackListener(Protocol):
    """What the CLI shows while a stack runs; called from member threads."""

    def member_started(self, name: str, action: str) -> None: ...
    def member_finished(self, name: str, result: MemberResult) -> None: ...
    def event_sink(self, name: str) -> EventSink | None: ...
    def stderr_sink(self, name: str) -> Callable[[str], None] | None: ...


@dataclass
class StackRequest:
    stack: Stack
    command: str  # "apply" | "destroy"
    runtime: Runtime
    parallelism: int = 4
    continue_on_error: bool = False
    resume: bool = False
    include_retained: bool = False
    lock_timeout: float = 0
    argv: Sequence[str] = ()
    listener: StackListener | None = None
    junit: Path | None = None  # `--junit FILE`: the run as JUnit XML, a refused run too


class MemberSteps:
    """The step of one member (called on a worker thread), and what it needs of its run."""

    def __init__(self, req: StackRequest, run_id: str, on_run: OnRun | None = None) -> None:
        self.req = req
        self.run_id = run_id
        self.on_run = on_run
        self.store = req.runtime.store
        self.wiring = Wiring(req.stack, req.runtime)
        self.results: dict[str, MemberResult] = {}

    # --- one member (worker thread) -----------------------------------------------------------
    def step(self, name: str) -> MemberResult:
        """One member's step, any failure of it as the result (the runner's threads and a
        queued run's worker call this)."""
        member = self.req.stack.member(name)
        if process.FORWARDER.received is not None:  # it came as this member was handed out: never started
            return MemberResult(MemberStatus.PENDING, changed=False, retryable=True)
        try:
            if self.req.command == "apply":
                return self._apply(member)
            return self._destroy(member)
        except Interrupted as err:  # stopped before its engine started: nothing changed
            return MemberResult(MemberStatus.PENDING, error=err.message, changed=False, retryable=True)
        except RefusedError as err:
            # the store away before the engine started (its lock, its `running` record) passes too
            passes = isinstance(err, LockBusyError) or isinstance(err.__context__, StoreUnavailable)
            return MemberResult(MemberStatus.ERROR, error=err.message, changed=False, refused=True,
                                retryable=passes)
        except HyopsError as err:
            return MemberResult(MemberStatus.ERROR, error=err.message, changed=False,
                                retryable=isinstance(err, EngineError) and not isinstance(err, EngineNotFound))

    def _notify(self, name: str, action: str) -> None:
        if self.req.listener is not None:
            self.req.listener.member_started(name, action)

    def _request(self, member: Member, command: str, values: dict[str, Any],
                 sensitive: frozenset[str]) -> ModuleRequest:
        """The member's run, named in the run's report before it starts (on_run)."""
        listener = self.req.listener
        run_id = new_run_id(command)
        if self.on_run is not None:
            self.on_run(member.name, run_id)
        if command == "apply":  # resolved.inputs.yml names each wired input's upstream output
            from hybridops_tf.inputs.values import StackInputs

            values = StackInputs(values, {k: f"inputs_from {w}" for k, w in member.inputs_from.items()})
        return ModuleRequest(
            command=Command(command), target=member.target, runtime=self.req.runtime,
            stack_inputs=values, sensitive_inputs=sensitive,
            lock_timeout=self.req.lock_timeout, argv=self.req.argv, workspace=member.workspace, run_id=run_id,
            on_event=listener.event_sink(member.name) if listener else None,
            on_stderr=listener.stderr_sink(member.name) if listener else notices.engine_stderr,
        )

    def _apply(self, member: Member) -> MemberResult:
        upstream = {u: self.results[u].outputs for u in member.depends_on}
        wired = self.wiring.for_apply(member, upstream)
        action = "apply"
        if self.req.resume:
            rec = self.store.read(member.key)
            why = self._changes(member, rec, wired.values, wired.sensitive)
            check = skip.outside(member, rec, self.store) if rec is not None and not why else None
            why = (check.changed,) if check is not None and check.changed else why
            if rec is not None and check is not None and not why:
                note = check.skip_note()
                self._notify(member.name, f"skip (ok, nothing changed: {note})")
                return MemberResult(MemberStatus.SKIPPED, run_id=rec.run_id, outputs=rec.outputs,
                                    changed=False, compared=note)
            if rec is not None and rec.status is Status.OK:
                action = f"apply ({'; '.join(why)})"
        self._notify(member.name, action)
        outcome = steps.run(self._request(member, "apply", wired.values, wired.sensitive))
        rec = outcome.record
        if outcome.exit_code == ExitCode.OK and rec is not None and rec.status is Status.OK:
            return MemberResult(MemberStatus.OK, run_id=outcome.run_id, outputs=rec.outputs)
        return MemberResult(_failed(outcome.exit_code), run_id=outcome.run_id, error=outcome.message)

    def _changes(self, member: Member, rec: OperationRecord | None, values: dict[str, Any],
                 sensitive: frozenset[str]) -> tuple[str, ...]:
        """--resume: why `rec` does not vouch for applying the member now (record/applied.py);
        () when it is `ok` and was applied from exactly this configuration, these resolved
        inputs (digested as operation.steps.run does), this engine and workspace."""
        if rec is None:
            return ("it has no record",)
        rt = self.wiring.runtime
        key = run_inputs.digest_key(rt, create=False)  # none yet: no digest can match
        if key is None:
            return ("no digest can match: the runtime root has no digest key",)
        now = would_apply(rt, MemberInputs(member.target, member.workspace, values, sensitive), key, rt.engine_info())
        return applied.changes(rec, now)

    def _destroy(self, member: Member) -> MemberResult:
        """One engine call per member on the critical path: its `destroy` (an owned member: a
        refresh-only apply once its owner is verified gone), verified from the state file that
        call wrote where the engine keeps state locally (settle.written_empty_state), else
        by `show -json`; `init` only when initcheck says the module needs it. Counted by
        tests/integration/test_stack_destroy_engine_calls.py."""
        rec = self.store.read(member.key)
        step = destroy_step(rec.status if rec is not None else None, retain_on_destroy=member.retain_on_destroy,
                            include_retained=self.req.include_retained)
        if step is DestroyStep.SKIP and rec is not None:
            self._notify(member.name, f"skip (already {rec.status.value})")
            return MemberResult(MemberStatus(rec.status.value), run_id=rec.run_id, changed=False)
        owner = self.results.get(member.owned_by) if member.owned_by else None
        if owner is not None and owner.status is MemberStatus.RETAINED:
            return self._retain(member, f"its owner {member.owned_by} is retained")
        if step is DestroyStep.RETAIN:
            return self._retain(member, "retain_on_destroy" if member.retain_on_destroy else "retained")
        if rec is None and self.wiring.state_is_empty(member):
            self._notify(member.name, "skip (no record, state empty)")
            return MemberResult(MemberStatus.ABSENT, changed=False)  # proven empty; no record invented
        wired = self.wiring.for_destroy(member)
        command = "refresh" if member.owned_by else "destroy"  # an owned member goes with its owner
        self._notify(member.name, command)
        outcome = steps.run(self._request(member, command, wired.values, wired.sensitive))
        after = outcome.record
        if outcome.exit_code == ExitCode.OK and after is not None and after.status is Status.DESTROYED:
            return MemberResult(MemberStatus.DESTROYED, run_id=outcome.run_id)
        return MemberResult(_failed(outcome.exit_code), run_id=outcome.run_id, error=outcome.message)

    def _retain(self, member: Member, why: str) -> MemberResult:
        """Not destroyed on purpose: the record says `retained`, written under the module lock."""
        self._notify(member.name, f"retain ({why})")
        with self.store.lock(member.key, self.run_id, self.req.lock_timeout):
            rec = self.store.read(member.key)
            if rec is None:
                return MemberResult(MemberStatus.RETAINED, changed=False)  # nothing recorded to keep
            if rec.status in CLAIMS_EMPTY:
                return MemberResult(MemberStatus(rec.status.value), run_id=rec.run_id, changed=False)
            if rec.status is Status.RETAINED:
                return MemberResult(MemberStatus.RETAINED, changed=False, error=_kept_failure(rec))
            if rec.status is Status.RUNNING:  # we hold the lock: stale, outcome uncertain
                return MemberResult(MemberStatus.ERROR, changed=False, error=(
                    f"{member.module_ref} has a stale 'running' record; not marking it retained: "
                    f"run `{reconcile_command(member.module_ref, member.directory, member.workspace)}` "
                    "first"))
            try:
                self.store.write(transitions.retained(rec, self.run_id))
            except OSError as err:
                return MemberResult(MemberStatus.ERROR, changed=False, error=(
                    f"could not mark {member.module_ref} retained: {err.strerror or err}; "
                    "its record is unchanged"))
        # no run folder: the record names the stack run; a kept failure still needs attention
        return MemberResult(MemberStatus.RETAINED, error=_kept_failure(rec))


def _failed(code: int) -> MemberStatus:
    """A member whose engine ran and did not succeed: `interrupted` when a signal stopped it
    (its record says what the evidence shows), else `error`."""
    return MemberStatus.INTERRUPTED if code == ExitCode.INTERRUPTED else MemberStatus.ERROR


def _kept_failure(rec: OperationRecord) -> str | None:
    """Why a retained member still needs attention: its last command failed."""
    if rec.failed_command is None:
        return None
    return f"retained, but its last {rec.failed_command} failed: {rec.last_error or 'no detail recorded'}"
