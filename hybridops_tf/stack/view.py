"""A stack's last run read together with every member's record now (docs/stacks.md: Status
after a crash). Pure: the run report and what each record says in, the status document out.

Why: the run report says what the runner knew when it last wrote it. A runner killed
(SIGKILL, a lost machine, a cancelled CI job) never writes its end, and a member's record
then knows more than the report: it settled, or it is a stale `running` whose outcome is
uncertain. The report alone would show a run that looks fine, or the previous run. So:

- the run's `state`: `never_run`; `running` (its end not written and its runner alive, or,
  for a runner on another host that cannot be checked from here, a member's run holding
  its module lock; a queued run, `queue: true`, until it has finished: the shared store keeps
  it, whichever workers come and go); `finished`; `interrupted` (its end never written and
  its runner gone);
- a member the report last saw `running` takes what its record says of that run (ok, error,
  ...); a record that never reached that run's `running` means the member's engine never
  started, so in an interrupted run it is `pending` ("not started: the run was
  interrupted");
- a member is `uncertain` (with why) whatever the run's state when its record is a stale
  `running`, its dead hyops's engine still runs, it lists suspect orphans (what exists is
  not known), or its state was written outside hyops since its record's stamp (what the
  record says is not what the state holds: `state_written_outside`, as `hyops status` says
  it, runtime/state_look.py); a member whose state was not compared says why
  (`state_not_read`). `stack status` exits 3 for an interrupted run or an uncertain member.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridops_tf.record.advice import ADVISE
from hybridops_tf.record.lifecycle import MemberStatus

NEVER_RUN = "never_run"
RUNNING = "running"
FINISHED = "finished"
INTERRUPTED = "interrupted"
# record statuses a member status says alike
_SETTLED = {"ok": MemberStatus.OK, "error": MemberStatus.ERROR, "destroyed": MemberStatus.DESTROYED,
            "absent": MemberStatus.ABSENT, "retained": MemberStatus.RETAINED}


@dataclass(frozen=True, slots=True)
class RecordNow:
    """One member's record as it stands now."""

    status: str  # the record's status, `none` without one, `corrupt` when unreadable
    run_id: str | None = None
    stale: bool = False  # `running`, and no live process holds its lock
    engine_alive: bool = False  # `running`, its hyops is gone, its engine still runs
    active_command: str | None = None
    last_error: str | None = None
    orphans: tuple[str, ...] = ()  # suspect orphans' addresses
    # its state was written outside hyops since the record's stamp (runtime/state_look.py):
    # as `hyops status --json` gives it, and in one line
    written: Mapping[str, Any] | None = None
    written_line: str | None = None
    not_read: str | None = None  # why its state was not compared with the record's stamp

    @property
    def held(self) -> bool:
        """A run is under way: a live process holds the lock of this `running` record."""
        return self.status == "running" and not self.stale and not self.engine_alive

    @property
    def shown(self) -> str:
        """As `hyops status` shows it (runtime/status.py): `running (stale)`, `running (engine
        alive)`, else its status."""
        if self.stale:
            return f"{self.status} (stale)"
        if self.engine_alive:
            return f"{self.status} (engine alive)"
        return self.status


def state_of(doc: Mapping[str, Any], records: Mapping[str, RecordNow], runner_alive: bool | None) -> str:
    """The last run's state (see the module docstring)."""
    if doc.get("run_id") is None:
        return NEVER_RUN
    if doc.get("finished_at"):
        return FINISHED
    if doc.get("queue") is True:  # kept by the store, not a process: stack/queue/lost.py finds lost workers
        return RUNNING
    if runner_alive is True:
        return RUNNING
    if runner_alive is None:  # its runner cannot be checked from here: do its members still run?
        running = {str(m.get("name")) for m in _members(doc) if m.get("status") == MemberStatus.RUNNING}
        if any(records[n].held for n in running if n in records):
            return RUNNING
    return INTERRUPTED


def judge(doc: Mapping[str, Any], records: Mapping[str, RecordNow], runner_alive: bool | None) -> dict[str, Any]:
    """The status document: `doc` (a run report, or its never-run stand-in) with `state`, each
    member the report saw running as its record says now, and `uncertain` where it is."""
    state = state_of(doc, records, runner_alive)
    members = []
    for entry in _members(doc):
        member = dict(entry)
        now = records.get(str(member.get("name")))
        if now is not None and state in (RUNNING, INTERRUPTED) and member.get("status") == MemberStatus.RUNNING:
            member = _as_recorded(member, now, state)
        why = uncertain(now) if now is not None else []
        if why:
            member["uncertain"] = why
        if now is not None and now.written is not None:
            member["state_written_outside"] = dict(now.written)
        if now is not None and now.not_read is not None:
            member["state_not_read"] = now.not_read
        members.append(member)
    return {**doc, "state": state, "members": members}


def uncertain(now: RecordNow) -> list[str]:
    """Why what exists of a member is not known, in words ([] when it is)."""
    command = now.active_command or "its run"
    why = []
    if now.stale:
        why.append(f"its record says running (run {now.run_id}) and nothing holds its lock: hyops "
                   f"stopped mid-{command}, the outcome is uncertain")
    if now.engine_alive:
        why.append(f"its record says running (run {now.run_id}): its hyops is gone and its engine still "
                   "runs, so it may still change objects")
    if now.orphans:
        why.append(f"suspect orphan(s) {', '.join(now.orphans)}: a create may have made an object the "
                   "state does not hold")
    if now.written_line is not None:
        why.append(f"state_written_outside: {now.written_line}: the record no longer says what its state "
                   "holds, and the next apply undoes that writer's changes (plan first)")
    return why


def is_uncertain(document: Mapping[str, Any]) -> bool:
    """What makes `stack status` exit 3: an interrupted run, or a member that is uncertain."""
    return document.get("state") == INTERRUPTED or any(m.get("uncertain") for m in _members(document))


def _as_recorded(member: dict[str, Any], now: RecordNow, state: str) -> dict[str, Any]:
    """A member the report last saw start (run R): what its record says of run R now."""
    run_id = member.get("run_id")
    if run_id is not None and now.run_id == run_id:
        settled = _SETTLED.get(now.status)
        if settled is not None:  # it finished; the runner died before it could say so
            member["status"] = settled.value
            if settled is MemberStatus.ERROR and now.last_error:
                member["error"] = now.last_error
        return member  # still `running`: live, or stale (then uncertain)
    if state == INTERRUPTED:  # its record never reached run R's `running`: its engine never started
        member["status"] = MemberStatus.PENDING.value
        member.pop("run_id", None)
    return member


def _members(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    members = doc.get("members")
    return [m for m in members if isinstance(m, Mapping)] if isinstance(members, list) else []


def headline(document: Mapping[str, Any]) -> str:
    """The one line that says what the last run is: first what is not known, then the rest."""
    name, command, run = document.get("stack"), document.get("command"), document.get("run_id")
    state = document.get("state")
    if state == NEVER_RUN or run is None:
        return f"stack {name}: never run (records as they stand)"
    if state == INTERRUPTED:
        return (f"stack {name}: the {command} run {run} (started {document.get('started_at')}) did not finish: "
                "its runner stopped before writing its end; each member below is as its record says now")
    if state == RUNNING and document.get("queue") is True:
        return (f"stack {name}: the queued {command} run {run} (started {document.get('started_at')}) goes on "
                f"with its workers (`{ADVISE.stack_work()}`)")
    if state == RUNNING:
        return f"stack {name}: the {command} run {run} (started {document.get('started_at')}) is still running"
    return f"stack {name}: last {command} run {run}, finished {document.get('finished_at')}"


def uncertain_lines(document: Mapping[str, Any]) -> list[str]:
    """`MEMBER: why` for each uncertain member, in the document's order."""
    return [f"{m.get('name')}: {'; '.join(m['uncertain'])}" for m in _members(document) if m.get("uncertain")]


def not_read_lines(document: Mapping[str, Any]) -> list[str]:
    """`MEMBER: why` for each member whose state status did not compare with its record."""
    return [f"{m.get('name')}: {m['state_not_read']}" for m in _members(document) if m.get("state_not_read")]


def reconcile_compares(document: Mapping[str, Any]) -> bool:
    """A member's state was not compared because it sits behind a backend: `reconcile --stack`
    reads it through the engine and compares it (runtime/state_look.py: NOT_LOCAL)."""
    from hybridops_tf.runtime.state_look import NOT_LOCAL

    return any(m.get("state_not_read") == NOT_LOCAL for m in _members(document))
