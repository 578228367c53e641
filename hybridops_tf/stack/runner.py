"""`stack apply` / `stack destroy`: members through `operation.steps.run` on threads
(docs/contract.md: Stacks).

Each member goes through exactly the per-module contract of a standalone run (record,
lock, run folder), so a stack member and `hyops apply --ref <stack>/<name>` are the same
thing. The rules of who may start live in graph.Scheduler; this module only runs what it
says on a thread pool, in the main thread's signal forwarder, and writes the report.

Before anything runs every member's record is read (a corrupt one is exit 2) and its lock
probed (a busy one is exit 4): a stack refused halfway would be harder to read than one
refused whole.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.base import notices
from hybridops_tf.base.errors import ExitCode, HyopsError, Interrupted, RefusedError
from hybridops_tf.engine import process
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.record.model import utc_now
from hybridops_tf.runtime.liveness import process_note
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.stack import graph
from hybridops_tf.stack.member import MemberResult, MemberSteps, StackListener, StackRequest
from hybridops_tf.stack.preflight import COMMANDS, refuse_places, refuse_uncertain
from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport, write_report

__all__ = ["COMMANDS", "MemberResult", "StackListener", "StackRequest", "StackResult", "exit_code_of", "run_stack"]

_POLL_SECONDS = 0.2  # how soon a signal stops the scheduling; completions wake at once


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
        junit.write_or_say(req.junit, junit.refusal_xml(req.stack.name, req.command, str(req.stack.file), err.message))
        raise
    if not junit.write_or_say(req.junit, junit.report_xml(result.report)) and result.exit_code == ExitCode.OK:
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


def _run_stack(req: StackRequest) -> StackResult:
    if req.command not in COMMANDS:
        raise ValueError(f"unsupported stack command {req.command!r}")
    run_id = new_run_id(f"stack-{req.command}")
    refuse_places(req.stack, req.command, req.runtime)  # before anything is written
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
            compared=result.compared if result else None,
        ))
    report = StackReport(req.stack.name, str(req.stack.file), run_id, req.command, started_at,
                         utc_now(), members, runner)
    path: Path | None = None
    try:
        path = write_report(req.runtime, report)
    except OSError as err:
        notices.error(f"could not write the stack report under {req.runtime.root}: "
                      f"{err.strerror or err}; the member records still say what happened")
    live.finish(written=path is not None)
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
    if req.command == "apply":  # destroy is never guarded: cleanup stays possible
        refuse_uncertain(req.stack, records, store)


class _Execution(MemberSteps):
    """One stack run: the scheduler loop in the main thread, member steps on workers; each
    member's start and end go to the live report."""

    def __init__(self, req: StackRequest, run_id: str, live: LiveReport) -> None:
        super().__init__(req, run_id, on_run=self._started)
        self.live = live
        self.crash: BaseException | None = None
        self.interrupted = False

    def _started(self, name: str, member_run_id: str) -> None:
        self.live.member(name, MemberStatus.RUNNING, member_run_id)

    def run(self) -> dict[str, graph.Resolution]:
        req = self.req
        plan = graph.run_graph(req.stack, req.command)
        sched = plan.scheduler(req.parallelism, req.continue_on_error)
        rank = {name: i for i, name in enumerate(plan.order)}
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
                    futures[pool.submit(self.step, name)] = name
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
