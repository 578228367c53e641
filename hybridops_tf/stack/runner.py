"""`stack apply` / `stack destroy`: members through `operation.run` on threads (docs/contract.md: Stacks).

Each member goes through exactly the per-module contract of a standalone run (record,
lock, run folder), so a stack member and `hyops apply --ref <stack>/<name>` are the same
thing. The rules of who may start live in graph.Scheduler; this module only runs what it
says on a thread pool, in the main thread's signal forwarder, and writes the report.

Before anything runs every member's record is read (a corrupt one is exit 2) and its lock
probed (a busy one is exit 4): a stack refused halfway would be harder to read than one
refused whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hybridops_tf.base import notices
from hybridops_tf.base.errors import ExitCode, HyopsError, Interrupted, RefusedError, UsageError
from hybridops_tf.engine import process
from hybridops_tf.operation import config_digest, inputs, places, steps
from hybridops_tf.operation.request import EventSink, ModuleRequest
from hybridops_tf.record import applied, transitions
from hybridops_tf.record.lifecycle import (
    CLAIMS_EMPTY,
    Command,
    DestroyStep,
    MemberStatus,
    Status,
    apply_refusal,
    destroy_step,
)
from hybridops_tf.record.model import OperationRecord, utc_now
from hybridops_tf.runtime.liveness import process_note
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.stack import graph
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport, write_report
from hybridops_tf.stack.wiring import Wiring

COMMANDS = ("apply", "destroy")
_POLL_SECONDS = 0.2  # how soon a signal stops the scheduling; completions wake at once


@dataclass
class MemberResult:
    """What one member's step did. `changed`: a record was written or an engine mutated."""

    status: MemberStatus
    run_id: str | None = None
    error: str | None = None
    outputs: dict[str, Any] | None = None
    changed: bool = True
    refused: bool = False


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


@dataclass
class StackResult:
    report: StackReport
    exit_code: int
    report_path: Path | None = None


def run_stack(req: StackRequest) -> StackResult:
    """Run the stack. HyopsError (invalid record, busy lock, uncertain member, no engine)
    is raised only before any member ran; after that, every outcome is in the report.
    With `junit`, the run's JUnit file is written either way (a refused run: its one failing
    case); a file that cannot be written is an error notice, and makes an ok run exit 1."""
    if req.junit is None:
        return _run_stack(req)
    from hybridops_tf.stack import junit  # xml.etree: loaded only for a run that writes one

    try:
        result = _run_stack(req)
    except HyopsError as err:
        _write_junit(req.junit, junit.refusal_xml(req.stack.name, req.command, str(req.stack.file), err.message))
        raise
    if not _write_junit(req.junit, junit.report_xml(result.report)) and result.exit_code == ExitCode.OK:
        result.exit_code = ExitCode.FAILED
    return result


def _junit_writer(path: Path | None) -> Callable[[StackReport], None] | None:
    """The JUnit file of a run in progress, rewritten with its report (a killed run's file then
    says it did not finish); quiet on failure: the end of the run writes it loudly."""
    if path is None:
        return None
    from hybridops_tf.stack import junit

    def write(report: StackReport) -> None:
        try:
            junit.write(path, junit.report_xml(report))
        except OSError:
            pass

    return write


def _write_junit(path: Path, document: str) -> bool:
    from hybridops_tf.stack import junit

    try:
        junit.write(path, document)
    except OSError as err:
        notices.error(f"could not write the JUnit file {path}: {err.strerror or err}")
        return False
    return True


def _run_stack(req: StackRequest) -> StackResult:
    if req.command not in COMMANDS:
        raise ValueError(f"unsupported stack command {req.command!r}")
    run_id = new_run_id(f"stack-{req.command}")
    try:  # before anything is written: another root's or another ref's state is exit 2
        places.refuse_members(req.command, [(m.name, m.target, m.workspace) for m in req.stack.members],
                              req.runtime.store, req.runtime.root, req.stack.file)
    except UsageError as err:
        raise UsageError(f"stack {req.stack.name}: {err.message}") from None
    req.runtime.ensure_root()
    try:
        _preflight(req, run_id)
        stopped_first = False
    except Interrupted:  # a signal before any member started: the report says none did
        stopped_first = True
    started_at = utc_now()
    runner = process_note()
    live = LiveReport(req.runtime, StackReport(
        req.stack.name, str(req.stack.file), run_id, req.command, started_at, None,
        [MemberEntry(m.name, m.module_ref, MemberStatus.PENDING.value) for m in req.stack.members], runner),
        also=_junit_writer(req.junit))
    try:  # before any member starts: a runner killed from here on leaves a report saying so
        live.start()
    except OSError as err:
        raise RefusedError(f"stack {req.stack.name}: could not write the stack report under "
                           f"{req.runtime.root}: {err.strerror or err}; nothing was run") from None
    execution = _Execution(req, run_id, live)
    if stopped_first:
        execution.interrupted = True
        resolutions = {m.name: graph.Resolution(MemberStatus.PENDING) for m in req.stack.members}
    else:
        resolutions = execution.run()
    members = []
    for m in req.stack.members:
        res, result = resolutions[m.name], execution.results.get(m.name)
        members.append(MemberEntry(
            name=m.name, module_ref=m.module_ref, status=res.status.value, blocked_by=res.blocked_by,
            run_id=result.run_id if result else None, error=result.error if result else None,
        ))
    report = StackReport(req.stack.name, str(req.stack.file), run_id, req.command, started_at,
                         utc_now(), members, runner)
    path: Path | None = None
    try:
        path = write_report(req.runtime, report)
    except OSError as err:
        notices.error(f"could not write the stack report under {req.runtime.root}: "
                      f"{err.strerror or err}; the member records still say what happened")
    if execution.crash is not None:
        raise execution.crash  # a bug: keep its traceback, after the report is safe
    code = exit_code_of(execution.interrupted, execution.results)
    if path is None and code == ExitCode.OK:
        code = ExitCode.FAILED
    return StackResult(report, code, path)


def exit_code_of(interrupted: bool, results: dict[str, MemberResult]) -> int:
    """130 interrupted; 4 when every failure was a refusal and nothing changed; 1 any
    failure; else 0. Pending alone is not a failure: something else failed or stopped it."""
    if interrupted:
        return ExitCode.INTERRUPTED
    errors = [r for r in results.values() if r.status is MemberStatus.ERROR]
    if not errors:
        return ExitCode.OK
    if all(r.refused for r in errors) and not any(r.changed for r in results.values()):
        return ExitCode.REFUSED
    return ExitCode.FAILED


def _preflight(req: StackRequest, run_id: str) -> None:
    """Records readable, locks free, no uncertain outcome to apply over: else nothing runs."""
    store = req.runtime.store
    records = {m.name: store.read(m.key) for m in req.stack.members}  # corrupt: exit 2
    for m in req.stack.members:
        if store.lock_is_free(m.key):
            continue  # a cheap probe; only a busy lock is taken for real, to name its holder
        try:
            with store.lock(m.key, run_id, req.lock_timeout):
                pass
        except RefusedError as err:
            raise RefusedError(f"stack {req.stack.name}: nothing was run: member {m.name}: "
                               f"{err.message}") from None
    # The engine is found and its version read once, so a missing engine is one clear
    # error before anything ran (exit 1), not the same failure on every member.
    req.runtime.engine_info()
    if req.command != "apply":
        return  # destroy is never guarded: cleanup stays possible
    for m in req.stack.members:
        rec = records[m.name]
        why = rec and apply_refusal(rec.status, stale=rec.status is Status.RUNNING,
                                    suspect_orphans=len(rec.suspect_orphans), allow_uncertain=False)
        if why:
            raise RefusedError(
                f"stack {req.stack.name}: nothing was run: member {m.name} ({m.module_ref}): {why}; "
                f"run `hyops reconcile {m.directory} --ref {m.module_ref}` first")


class _Execution:
    """One stack run: the scheduler loop in the main thread, member steps on workers."""

    def __init__(self, req: StackRequest, run_id: str, live: LiveReport) -> None:
        self.req = req
        self.run_id = run_id
        self.live = live
        self.store = req.runtime.store
        self.wiring = Wiring(req.stack, req.runtime)
        self.results: dict[str, MemberResult] = {}
        self.crash: BaseException | None = None
        self.interrupted = False

    def run(self) -> dict[str, graph.Resolution]:
        stack, req = self.req.stack, self.req
        if req.command == "apply":
            deps, order, success = stack.dependencies(), graph.topological_order(stack), graph.APPLY_SUCCESS
        else:
            deps, order, success = (graph.destroy_dependencies(stack), graph.destroy_order(stack),
                                    graph.DESTROY_SUCCESS)
        dirs = [str(m.directory) for m in stack.members]
        groups = {m.name: str(m.directory) for m in stack.members if dirs.count(str(m.directory)) > 1}
        sched = graph.Scheduler(deps, parallelism=req.parallelism, continue_on_error=req.continue_on_error,
                                success=success, order=order, groups=groups)
        rank = {name: i for i, name in enumerate(order)}
        with process.FORWARDER, ThreadPoolExecutor(max_workers=req.parallelism,
                                                   thread_name_prefix="hyops-stack") as pool:
            futures: dict[Future[MemberResult], str] = {}
            while True:
                if process.FORWARDER.received is not None and not self.interrupted:
                    self.interrupted = True
                    sched.interrupt()
                if sched.done:  # asked after the interrupt: one that came between two members ends here
                    break
                for name in sched.start():
                    futures[pool.submit(self._step, name)] = name
                if not futures:
                    raise RuntimeError("stack scheduler stalled with nothing running")  # a bug
                finished, _ = wait(futures, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
                for fut in sorted(finished, key=lambda f: rank[futures[f]]):
                    name = futures.pop(fut)
                    self.results[name] = result = self._result_of(fut)
                    sched.finish(name, result.status)
                    self.live.member(name, result.status, result.run_id, result.error)
                    if req.listener is not None:
                        req.listener.member_finished(name, result)
            if process.FORWARDER.received is not None:
                self.interrupted = True
        return sched.resolutions()

    def _result_of(self, fut: Future[MemberResult]) -> MemberResult:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - a bug: reported, then re-raised after the report
            self.crash = self.crash or exc
            return MemberResult(MemberStatus.ERROR, error=f"internal error: {exc!r}")

    # --- one member (worker thread) -----------------------------------------------------------
    def _step(self, name: str) -> MemberResult:
        member = self.req.stack.member(name)
        if process.FORWARDER.received is not None:  # it came as this member was handed out: never started
            return MemberResult(MemberStatus.PENDING, changed=False)
        try:
            if self.req.command == "apply":
                return self._apply(member)
            return self._destroy(member)
        except Interrupted as err:  # stopped before its engine started: nothing changed
            return MemberResult(MemberStatus.PENDING, error=err.message, changed=False)
        except RefusedError as err:
            return MemberResult(MemberStatus.ERROR, error=err.message, changed=False, refused=True)
        except HyopsError as err:
            return MemberResult(MemberStatus.ERROR, error=err.message, changed=False)

    def _notify(self, name: str, action: str) -> None:
        if self.req.listener is not None:
            self.req.listener.member_started(name, action)

    def _request(self, member: Member, command: str, values: dict[str, Any],
                 sensitive: frozenset[str]) -> ModuleRequest:
        """The member's run, named in the stack report before it starts (LiveReport)."""
        listener = self.req.listener
        run_id = new_run_id(command)
        self.live.member(member.name, MemberStatus.RUNNING, run_id)
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
            if rec is not None and not why:
                self._notify(member.name, "skip (ok, nothing changed)")
                return MemberResult(MemberStatus.SKIPPED, run_id=rec.run_id, outputs=rec.outputs,
                                    changed=False)
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
        inputs (digested as operation.run does), this engine and workspace."""
        if rec is None:
            return ("it has no record",)
        rt = self.wiring.runtime
        key = inputs.digest_key(rt, create=False)  # none yet: no digest can match
        if key is None:
            return ("no digest can match: the runtime root has no digest key",)
        resolved = inputs.resolve(rt, member.target, None, (), values, sensitive)
        info = rt.engine_info()
        now = applied.AppliedFrom(
            config_digest=config_digest.config_digest(member.directory, config_digest.env_values(resolved), key),
            inputs_digest=resolved.digest(key), engine_binary=str(info.binary), engine_version=info.version,
            workspace=member.workspace)
        return applied.changes(rec, now)

    def _destroy(self, member: Member) -> MemberResult:
        """One engine call per member on the critical path: its `destroy` (an owned member: a
        refresh-only apply once its owner is verified gone), verified from the state file that
        call wrote where the engine keeps state locally (run_settle.written_empty_state), else
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
                    f"run `hyops reconcile {member.directory} --ref {member.module_ref}` first"))
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
