"""`hyops stack apply|destroy STACK --queue`: record a stack run in the shared store and queue
its ready members; workers (`hyops stack work`) do the rest.

Nothing runs here. The stack is validated (stack/loader.py did), its members' places are
checked as `stack apply` checks them (another ref's or another root's state: exit 2), the
members' records are read (a corrupt one is exit 2) and, for apply, an uncertain one refuses
the run as `stack apply` does (exit 4); a signal before the run is written queues nothing;
then the run, its members and the first jobs are written in one transaction. A stack with an
unfinished queued run (a cancelled pipeline's, say) is refused (exit 4): its members would run
beside the new run's, older configuration after newer; `supersede` cancels it (cancel.py) in
the same transaction instead.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.record.advice import ADVISE, Commands
from hybridops_tf.record.model import Owner, utc_now
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.stack import graph
from hybridops_tf.stack.model import Stack
from hybridops_tf.stack.preflight import COMMANDS, refuse_places, refuse_uncertain
from hybridops_tf.stack.queue import cancel, jobs, progress, tables, view
from hybridops_tf.stack.queue.tables import MemberRow, QueuedRun, RunOptions


@dataclass(frozen=True)
class Queued:
    run: QueuedRun
    rows: list[MemberRow]
    superseded: tuple[cancel.Cancelled, ...] = ()


def stack_digest(path: Path) -> str:
    """What a worker checks its checkout's stack file against before it runs a member."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def relative_stack_file(path: Path) -> str:
    """The stack file as every worker finds it in its own checkout: relative to the directory
    the run is queued from (run each worker from the same place in its checkout)."""
    return os.path.relpath(os.path.abspath(path))


class UnfinishedRunError(RefusedError):
    """The stack has a queued run that has not finished: queue beside it only with --supersede."""


def queue_run(stack: Stack, command: str, runtime: Runtime, options: RunOptions, *, supersede: bool = False,
              advise: Commands = ADVISE) -> Queued:
    """Queue the run; `advise` builds the commands a refusal names (with the global options
    typed on this command line)."""
    if command not in COMMANDS:
        raise ValueError(f"unsupported stack command {command!r}")
    store = runtime.store
    port = jobs.queue_store(store, "--queue")
    refuse_places(stack, command, runtime)
    records = {m.name: store.read(m.key) for m in stack.members}  # corrupt: exit 2
    if command == "apply":
        refuse_uncertain(stack, records, store)
    INTERRUPTS.check("before the run was queued; nothing was queued")
    run_id = new_run_id(f"stack-{command}")
    now = utc_now()
    owner = Owner.current(run_id)
    run = QueuedRun(run_id, stack.name, relative_stack_file(stack.file), stack_digest(stack.file), command,
                    options, graph.run_graph(stack, command), f"pid {owner.pid} on {owner.host}", now)
    rows = [MemberRow(m.name, m.module_ref, m.key, i) for i, m in enumerate(stack.members)]
    app = jobs.deferring_app(port.url)
    conn = _connect(port.url)
    superseded: list[cancel.Cancelled] = []
    try:
        with conn.transaction():
            for old in cancel.guard_stack(conn, stack.name):
                if not supersede:
                    raise _unfinished(old, advise)
                done = cancel.cancel_run(conn, app, port, old.run_id, f"cancelled: superseded by run {run_id}", now)
                assert done is not None
                superseded.append(done)
            tables.insert_run(conn, run, rows)
            locked = tables.lock_run(conn, run_id)
            assert locked is not None
            progress.advance(conn, app, locked, rows, now)
            view.publish(conn, port, run_id, queued=True)
    except Exception as err:  # psycopg's errors: the run was not queued
        if isinstance(err, UsageError | RefusedError):
            raise
        raise RefusedError(f"could not queue the run in {store.describe()}: {_first_line(err)}; "
                           f"nothing was queued (`{advise.store('init')}` migrates an older store)") from None
    finally:
        conn.close()
    return Queued(run, rows, tuple(superseded))


def _unfinished(run: QueuedRun, advise: Commands) -> UnfinishedRunError:
    return UnfinishedRunError(
        f"stack {run.stack} has an unfinished queued run {run.run_id} ({run.command}, queued {run.started_at} by "
        f"{run.queued_by}): its members would run beside this run's; withdraw it with "
        f"`{advise.stack_cancel(run.run_id)}`, or queue with --supersede to cancel it first; nothing was queued")


def _connect(url: str) -> Any:
    try:
        return jobs.connect(url)
    except OSError as err:
        raise RefusedError(f"{getattr(err, 'strerror', None) or err}; nothing was queued") from None


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
