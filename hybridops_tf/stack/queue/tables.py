"""A queued run's rows in the shared store (store/schema.py, migration 2): the run, and each
member's place in it. Every function works inside the caller's transaction on the caller's
connection, so a member's end and what follows from it commit together or not at all.

A member row's status is one of WAITING (not started by the Scheduler yet), QUEUED (its job
is in the queue), RUNNING (a worker claimed it) or a MemberStatus value (its end).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.stack.graph import RunGraph
from hybridops_tf.store.schema import SCHEMA

WAITING = "waiting"
QUEUED = "queued"
RUNNING = "running"
UNENDED = (WAITING, QUEUED, RUNNING)


@dataclass(frozen=True)
class RunOptions:
    """The options of `stack apply|destroy --queue` every worker runs the members with."""

    continue_on_error: bool = False
    resume: bool = False
    include_retained: bool = False
    lock_timeout: float = 0

    def to_json(self) -> dict[str, Any]:
        return {"continue_on_error": self.continue_on_error, "resume": self.resume,
                "include_retained": self.include_retained, "lock_timeout": self.lock_timeout}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunOptions:
        return cls(bool(doc.get("continue_on_error")), bool(doc.get("resume")),
                   bool(doc.get("include_retained")), float(doc.get("lock_timeout") or 0))


@dataclass(frozen=True)
class QueuedRun:
    """One queued run. `stack_file` is relative to the directory it was queued from (a
    checkout's top, in CI), so each worker finds the stack, and its modules, in its own checkout."""

    run_id: str
    stack: str
    stack_file: str
    stack_digest: str
    command: str
    options: RunOptions
    graph: RunGraph
    queued_by: str
    started_at: str
    finished_at: str | None = None


@dataclass
class MemberRow:
    name: str
    module_ref: str
    key: str
    position: int
    status: str = WAITING
    blocked_by: str | None = None
    error: str | None = None
    member_run_id: str | None = None
    worker: str | None = None
    job_id: int | None = None
    attempts: int = 0
    end_seq: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    changed: dict[str, Any] = field(default_factory=dict, compare=False)  # columns to write

    @property
    def ended(self) -> bool:
        return self.status not in UNENDED

    def set(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self, name, value)
            self.changed[name] = value


_MEMBER_COLUMNS = ("name", "module_ref", "key", "position", "status", "blocked_by", "error", "member_run_id",
                   "worker", "job_id", "attempts", "end_seq", "started_at", "finished_at")
_RUN_COLUMNS = ("run_id", "stack", "stack_file", "stack_digest", "command", "options", "graph", "queued_by",
                "started_at", "finished_at")


def graph_to_json(graph: RunGraph) -> dict[str, Any]:
    return {"dependencies": {k: list(v) for k, v in graph.dependencies.items()}, "order": list(graph.order),
            "success": sorted(s.value for s in graph.success), "groups": dict(graph.groups)}


def graph_from_json(doc: dict[str, Any]) -> RunGraph:
    return RunGraph({k: tuple(v) for k, v in doc["dependencies"].items()}, list(doc["order"]),
                    frozenset(MemberStatus(s) for s in doc["success"]), dict(doc["groups"]))


def insert_run(conn: Any, run: QueuedRun, members: list[MemberRow]) -> None:
    conn.execute(
        f"INSERT INTO {SCHEMA}.queue_runs ({', '.join(_RUN_COLUMNS)}) "
        "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s)",
        (run.run_id, run.stack, run.stack_file, run.stack_digest, run.command, json.dumps(run.options.to_json()),
         json.dumps(graph_to_json(run.graph)), run.queued_by, run.started_at, run.finished_at))
    for m in members:
        conn.execute(f"INSERT INTO {SCHEMA}.queue_members (run_id, {', '.join(_MEMBER_COLUMNS)}) "
                     f"VALUES (%s, {', '.join(['%s'] * len(_MEMBER_COLUMNS))})",
                     (run.run_id, *(getattr(m, c) for c in _MEMBER_COLUMNS)))


def _run_of(row: tuple[Any, ...]) -> QueuedRun:
    doc = dict(zip(_RUN_COLUMNS, row, strict=True))
    return QueuedRun(doc["run_id"], doc["stack"], doc["stack_file"], doc["stack_digest"], doc["command"],
                     RunOptions.from_json(doc["options"]), graph_from_json(doc["graph"]), doc["queued_by"],
                     doc["started_at"], doc["finished_at"])


def lock_run(conn: Any, run_id: str) -> QueuedRun | None:
    """The run, its row locked until the transaction ends: one member's end at a time."""
    row = conn.execute(f"SELECT {', '.join(_RUN_COLUMNS)} FROM {SCHEMA}.queue_runs WHERE run_id = %s FOR UPDATE",
                       (run_id,)).fetchone()
    return None if row is None else _run_of(row)


def read_run(conn: Any, run_id: str) -> QueuedRun | None:
    row = conn.execute(f"SELECT {', '.join(_RUN_COLUMNS)} FROM {SCHEMA}.queue_runs WHERE run_id = %s",
                       (run_id,)).fetchone()
    return None if row is None else _run_of(row)


def open_runs(conn: Any) -> list[QueuedRun]:
    """Runs not finished yet, oldest first."""
    rows = conn.execute(f"SELECT {', '.join(_RUN_COLUMNS)} FROM {SCHEMA}.queue_runs "
                        "WHERE finished_at IS NULL ORDER BY started_at, run_id").fetchall()
    return [_run_of(r) for r in rows]


def members(conn: Any, run_id: str) -> list[MemberRow]:
    rows = conn.execute(f"SELECT {', '.join(_MEMBER_COLUMNS)} FROM {SCHEMA}.queue_members WHERE run_id = %s "
                        "ORDER BY position", (run_id,)).fetchall()
    return [MemberRow(*row) for row in rows]


def save(conn: Any, run_id: str, rows: list[MemberRow]) -> None:
    """Write the columns each row changed since it was read."""
    for row in rows:
        if not row.changed:
            continue
        names = list(row.changed)
        conn.execute(f"UPDATE {SCHEMA}.queue_members SET {', '.join(f'{n} = %s' for n in names)} "
                     "WHERE run_id = %s AND name = %s", (*(row.changed[n] for n in names), run_id, row.name))
        row.changed.clear()


def claim(conn: Any, run_id: str, name: str, worker: str, job_id: int, now: str) -> bool:
    """Take a queued member for this worker. False when it is not queued (any more): another
    job of the same member took it, the run stopped and gave it up, or it already ended. This
    is the one door to running a member, so no member ever runs on two workers. The same job's
    claim tried again (outage.py) finds the member its own, as long as it has not started."""
    row = conn.execute(f"UPDATE {SCHEMA}.queue_members SET status = %s, worker = %s, job_id = %s, started_at = %s "
                       "WHERE run_id = %s AND name = %s AND (status = %s "
                       # this job's own claim, tried again: the first landed, its answer was lost
                       "OR status = %s AND worker = %s AND job_id = %s AND member_run_id IS NULL) RETURNING name",
                       (RUNNING, worker, job_id, now, run_id, name, QUEUED, RUNNING, worker, job_id)).fetchone()
    return row is not None


def name_member_run(conn: Any, run_id: str, name: str, worker: str, member_run_id: str) -> bool:
    """The run id of a member this worker runs, before its engine may start; False when the
    run no longer counts the member as this worker's (it was given up as lost)."""
    row = conn.execute(f"UPDATE {SCHEMA}.queue_members SET member_run_id = %s "
                       "WHERE run_id = %s AND name = %s AND status = %s AND worker = %s RETURNING name",
                       (member_run_id, run_id, name, RUNNING, worker)).fetchone()
    return row is not None


def finish_run(conn: Any, run_id: str, now: str) -> None:
    conn.execute(f"UPDATE {SCHEMA}.queue_runs SET finished_at = %s WHERE run_id = %s", (now, run_id))


def next_end(conn: Any, run_id: str) -> int:
    """The number of the next member end in this run (under the run's row lock)."""
    return int(conn.execute(f"UPDATE {SCHEMA}.queue_runs SET ends = ends + 1 WHERE run_id = %s RETURNING ends",
                            (run_id,)).fetchone()[0])
