"""`stack apply|destroy --queue --wait`: follow a queued run until it ends, saying what each
member did as it happens, and looking for lost workers as the workers do (lost.py); a server
that closed the connection or restarts is waited for as a worker waits (outage.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass

from hybridops_tf.engine import process
from hybridops_tf.stack.queue import jobs, lost, tables
from hybridops_tf.stack.queue.outage import Outage
from hybridops_tf.stack.queue.tables import MemberRow, QueuedRun
from hybridops_tf.store import QueueStore
from hybridops_tf.store.url import redact_url

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Waited:
    run: QueuedRun
    rows: list[MemberRow]
    interrupted: int | None = None  # the signal that stopped the waiting (the run goes on)


def wait_run(port: QueueStore, run_id: str, on_change: Callable[[MemberRow], None]) -> Waited:
    """Poll the run until it finished (or a signal stops the waiting); on_change gets each
    member whose status changed since the last look."""
    heartbeat = jobs.Heartbeat.from_env()
    seen: dict[str, str] = {}
    next_sweep = 0.0
    connections = jobs.Connections(port, 1)  # one login for the whole wait, not one a look
    outage = Outage(heartbeat.lost_after, redact_url(port.url))  # a server restarting: wait for it, say so
    with process.FORWARDER, closing(connections):
        while True:
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + heartbeat.interval
                outage.call(lambda: lost.sweep(connections, heartbeat.lost_after), "looking for lost workers")
            run, rows = outage.call(lambda: _look(connections, run_id), f"reading run {run_id}")
            assert run is not None
            for row in rows:
                if seen.get(row.name) != row.status:
                    seen[row.name] = row.status
                    on_change(row)
            if run.finished_at is not None:
                return Waited(run, rows)
            if process.FORWARDER.received is not None:
                return Waited(run, rows, process.FORWARDER.received)
            time.sleep(POLL_SECONDS)


def _look(connections: jobs.Connections, run_id: str) -> tuple[QueuedRun | None, list[MemberRow]]:
    with connections.connection() as conn:
        return tables.read_run(conn, run_id), tables.members(conn, run_id)
