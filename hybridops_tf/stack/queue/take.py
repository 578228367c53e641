"""One member's job on a worker: claim it, run the member's step as `stack apply` runs it
(stack/member.py), record its end and queue what follows, in one transaction.

The member runs in this worker's own checkout: the run's stack file, relative to where the
worker runs, must hold what was queued (its digest), so every member resolves its module
directory here, as records name modules by ref and not by path (docs/shared-store.md).
Inputs are wired from the upstreams' records in the store (stack/wiring.py), exactly as an
in-process run wires them from the records its members just wrote.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from hybridops_tf.base import notices
from hybridops_tf.base.errors import HyopsError
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.record.model import utc_now
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.member import MemberResult, MemberSteps, StackListener, StackRequest
from hybridops_tf.stack.model import Stack
from hybridops_tf.stack.queue import jobs, progress, tables, view
from hybridops_tf.stack.queue.outage import Outage
from hybridops_tf.stack.queue.submit import stack_digest
from hybridops_tf.stack.queue.tables import QUEUED, QueuedRun

T = TypeVar("T")


@dataclass(frozen=True)
class MemberEnd:
    """How a member this worker took ended. `counted` is False when the run had given it up
    meanwhile (this worker was silent past its heartbeat and found lost, lost.py): the run
    still says `interrupted: worker NAME lost` and its dependants pending; only its record
    says what the run did. `handed_back`: this worker did not run it (its checkout cannot
    serve the run, or it stopped before anything could change and went back to the queue for
    another worker); a worker's exit code counts only the members it ran."""

    run_id: str
    member: str
    result: MemberResult
    counted: bool = True
    handed_back: bool = False


class CannotServe(HyopsError):
    """This worker's checkout cannot run the run's members (no such stack file, or another one)."""


@dataclass
class Taker:
    """What a worker's jobs share: its name, its runtime root, the store, its stacks."""

    name: str
    runtime: Runtime
    connections: jobs.Connections
    listener: StackListener | None = None
    argv: Sequence[str] = ()
    on_end: Callable[[MemberEnd], None] | None = None
    outage: Outage | None = None  # the worker's: each transaction is tried again while the server is away
    given_up: set[int] = field(default_factory=set)  # job ids whose end the run no longer counted
    _stacks: dict[str, Stack | CannotServe] = field(default_factory=dict)
    _app: Any = None  # procrastinate's App that defers and cancels on our connections, made once
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def job(self, context: Any, run_id: str, member: str) -> None:
        """procrastinate's task (jobs.worker_app): one member of one run. The claim and the end
        are each one transaction on a connection lent for it (none is held while it runs)."""
        job_id, attempts = int(context.job.id), int(context.job.attempts)
        run = self._weather(lambda: self._claim(run_id, member, job_id), f"claiming {member} of {run_id}")
        if run is None:
            return
        app = self._deferring_app()
        try:
            result, served = self._run(run, member)
        except Exception as exc:  # a bug: the member ends as an error, then the traceback
            self._weather(partial(self._end_as_bug, app, run_id, member, f"internal error: {exc!r}"),
                          f"ending {member} of {run_id}")
            raise
        retry = result.retryable and attempts < jobs.RETRIES
        tried = False

        def end() -> bool:
            nonlocal tried
            with self.connections.connection() as conn, conn.transaction():
                locked = tables.lock_run(conn, run_id)
                assert locked is not None
                if tried and self._landed(conn, run_id, member, job_id, result, retry):
                    return True
                tried = True
                if retry:
                    counted = progress.requeue(conn, locked, member, self.name, result.error or "")
                else:
                    counted = progress.end_member(conn, app, locked, member, self.name, utc_now(),
                                                  status=result.status.value, error=result.error,
                                                  member_run_id=result.run_id)
                if counted:
                    view.publish(conn, self.connections.port, run_id)
                return counted

        counted = self._weather(end, f"ending {member} of {run_id}")
        if not counted:  # its job left the queue when it was found lost: procrastinate cannot end it
            self.given_up.add(job_id)
        handed_back = not served or (retry and counted)
        if self.listener is not None and not handed_back:
            self.listener.member_finished(member, result)
        if self.on_end is not None:
            self.on_end(MemberEnd(run_id, member, result, counted, handed_back))
        if retry and counted:
            raise jobs.NotYetRun(result.error or "not run")

    def _end_as_bug(self, app: Any, run_id: str, member: str, error: str) -> None:
        with self.connections.connection() as conn, conn.transaction():
            locked = tables.lock_run(conn, run_id)
            assert locked is not None
            progress.end_member(conn, app, locked, member, self.name, utc_now(),
                                status=MemberStatus.ERROR.value, error=error)
            view.publish(conn, self.connections.port, run_id)

    def _weather(self, call: Callable[[], T], doing: str) -> T:
        """`call()`, tried again while the store's server is away (outage.py)."""
        return call() if self.outage is None else self.outage.call(call, doing)

    def _landed(self, conn: Any, run_id: str, member: str, job_id: int, result: MemberResult, retry: bool) -> bool:
        """Whether this member's end, tried once already, landed (the server ended the session
        after it committed, before it answered): it is not written twice."""
        row = next(r for r in tables.members(conn, run_id) if r.name == member)
        if retry:
            return row.status == QUEUED and row.worker is None and row.job_id == job_id
        return row.status == result.status.value and row.worker == self.name and row.job_id == job_id

    def _claim(self, run_id: str, member: str, job_id: int) -> QueuedRun | None:
        """The run, once this worker claimed the member in it; None when it is not this job's
        to run (the run ended, another job of it, or the run gave it up): never run twice."""
        with self.connections.connection() as conn, conn.transaction():
            run = tables.read_run(conn, run_id)
            if run is None or run.finished_at is not None:
                return None
            if not tables.claim(conn, run_id, member, self.name, job_id, utc_now()):
                return None
        return run

    def _deferring_app(self) -> Any:
        with self._lock:
            if self._app is None:
                self._app = jobs.deferring_app(self.connections.url)
            return self._app

    def _run(self, run: QueuedRun, name: str) -> tuple[MemberResult, bool]:
        """The member's step, and whether this checkout could serve it: one that cannot is a
        failure before anything changed (retried on another worker)."""
        try:
            stack = self.stack_of(run)
        except CannotServe as err:
            return MemberResult(MemberStatus.ERROR, error=err.message, changed=False, retryable=True), False
        member = stack.member(name)
        store = self.runtime.store
        self.connections.port.check_idle_connection()  # idle since this worker's last member: alive, or replaced
        before = self._weather(lambda: store.read(member.key), f"reading the record of {name}")
        steps = MemberSteps(StackRequest(
            stack=stack, command=run.command, runtime=self.runtime, continue_on_error=run.options.continue_on_error,
            resume=run.options.resume, include_retained=run.options.include_retained,
            lock_timeout=run.options.lock_timeout, argv=self.argv, listener=self.listener), run.run_id,
            on_run=lambda member_name, member_run_id: self._started(run.run_id, member_name, member_run_id))
        steps.results.update(self._upstreams(run, stack, name))
        result = steps.step(name)
        after = self._weather(lambda: store.read(member.key), f"reading the record of {name}")
        if result.retryable and (after is None) != (before is None) or (
                after is not None and before is not None and after.run_id != before.run_id):
            result.retryable = False  # its record changed: something ran, never again by itself
        return result, True

    def _started(self, run_id: str, name: str, member_run_id: str) -> None:
        """The member's run id in its row and the run's report before its engine may start, as
        `stack apply` names it (stack/member.py: OnRun): a worker killed from here on leaves a
        report whose member that run's record settles (stack/view.py). A store that cannot take
        it is a warning: the member's end writes it again."""
        try:
            with self.connections.connection() as conn, conn.transaction():
                tables.lock_run(conn, run_id)
                tables.name_member_run(conn, run_id, name, self.name, member_run_id)
        except Exception as err:  # noqa: BLE001 - psycopg's errors: the member goes on, its end says it
            notices.warning(f"could not name run {member_run_id} of {name} in queued run {run_id}: "
                            f"{str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__}")

    def _upstreams(self, run: QueuedRun, stack: Stack, name: str) -> dict[str, MemberResult]:
        """How the members this one waits for ended in the run, with their recorded outputs."""
        member = stack.member(name)
        wanted = set(run.graph.dependencies.get(name, ())) | ({member.owned_by} if member.owned_by else set())
        def read() -> dict[str, Any]:
            with self.connections.connection() as conn:
                return {r.name: r for r in tables.members(conn, run.run_id) if r.name in wanted}

        rows = self._weather(read, f"reading the upstreams of {name} in {run.run_id}")
        out = {}
        for up, row in rows.items():
            rec = self.runtime.store.read(stack.member(up).key) if run.command == "apply" else None
            out[up] = MemberResult(MemberStatus(row.status), run_id=row.member_run_id,
                                   outputs=rec.outputs if rec is not None else None, changed=False)
        return out

    def stack_of(self, run: QueuedRun) -> Stack:
        """The run's stack as this checkout has it (loaded once per run)."""
        with self._lock:
            known = self._stacks.get(run.run_id)
        if known is None:
            known = self._load(run)
            with self._lock:
                self._stacks[run.run_id] = known
        if isinstance(known, CannotServe):
            raise known
        return known

    def _load(self, run: QueuedRun) -> Stack | CannotServe:
        from hybridops_tf.inputs.declarations import remember
        from hybridops_tf.stack.loader import load_stack

        path = Path(run.stack_file)
        where = f"worker {self.name} cannot run {run.run_id} here ({Path.cwd()})"
        try:
            if stack_digest(path) != run.stack_digest:
                return CannotServe(f"{where}: its {run.stack_file} differs from the one queued; "
                                   "run every worker on the same commit as the queueing job")
            stack = load_stack(path, self.runtime.hcl_cache(), tofu=self.runtime.reads_tofu())
        except OSError as err:
            return CannotServe(f"{where}: {run.stack_file}: {err.strerror or err}; run workers from the "
                               "directory the run was queued from, in a checkout of the same commit")
        except HyopsError as err:
            return CannotServe(f"{where}: {err.message}")
        # the stack is valid: keep each module's parse, so this runner's next worker loads the
        # stack without python-hcl2 (a member's run keeps only its own module's)
        for member in stack.members:
            remember(member.directory, self.runtime.hcl_cache())
        return stack
