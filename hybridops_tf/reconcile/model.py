"""The vocabulary of reconcile: evidence in, findings out (docs/contract.md: Reconcile).

Why a separate module: `compare` must stay pure, so everything it reads (the record, the
state, both plans, the interrupted run's progress) is gathered first into one frozen
`ModuleEvidence`, and everything it says is a `Finding` whose `next_actions` are exact
commands. The I/O that fills the evidence lives in evidence.py; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from hybridops_tf.engine.events import (
    ChangeSummary,
    Event,
    OutputsMessage,
    PlannedChange,
    ResourceDrift,
)
from hybridops_tf.engine.progress import ResourceProgress, planned_creates
from hybridops_tf.engine.state import StateSnapshot
from hybridops_tf.reconcile.verdict import OrphanLookup
from hybridops_tf.record.actions import ActionRow
from hybridops_tf.record.advice import Where
from hybridops_tf.record.lifecycle import Status, is_stale
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import StateStamp

SCHEMA_VERSION = 1
FORGOTTEN = "forgotten"  # a module's report status once --forget-record dropped its record
_NO_CHANGE = frozenset({"no-op", "noop", "read", ""})


class Code(StrEnum):
    """Finding codes, in the order a person should deal with them."""

    CORRUPT_RECORD = "corrupt_record"
    SHARED_STATE = "shared_state"
    ERRORED_STATEFILE = "errored_statefile"
    ENGINE_RUNNING = "engine_running"
    STALE_RUNNING = "stale_running"
    STATE_WRITTEN_OUTSIDE = "state_written_outside"
    STATE_UNREADABLE = "state_unreadable"
    LOST_FROM_STATE = "lost_from_state"
    STATE_MISSING = "state_missing"
    STALE_IMPORT = "stale_import"
    ORPHAN_FOUND = "orphan_found"
    SUSPECT_ORPHAN = "suspect_orphan"
    TAINTED = "tainted"
    DRIFT = "drift"
    ACTION_FAILED = "action_failed"
    ACTION_NOT_STARTED = "action_not_started"
    PARTIAL_APPLY = "partial_apply"
    STATE_AFTER_DESTROY = "state_after_destroy"
    MOVED_IN_STATE = "moved_in_state"
    OUTPUTS_MISMATCH = "outputs_mismatch"
    CONFIG_CHANGED = "config_changed"
    PLAN_CHANGES = "plan_changes"
    NO_RECORD = "no_record"


PRIORITY = {code: i for i, code in enumerate(Code)}


@dataclass(frozen=True, slots=True)
class Alternative:
    """One of several commands a person chooses between (run exactly one), and when."""

    command: str
    when: str

    def to_dict(self) -> dict[str, str]:
        return {"command": self.command, "when": self.when}


class OrphanEvidence(StrEnum):
    """What shows a suspect orphan's create may have made an object."""

    STARTED = "started"  # an apply_start of the create was seen
    PLANNED = "planned"  # only a plan shows it: the engine may have started it unseen
    UNKNOWN = "unknown"  # the run's events are gone


@dataclass(frozen=True, slots=True)
class Finding:
    """One inconsistency between the record and the evidence, with what to do about it.

    `next_actions` are steps, run in order; `alternatives` are choices, run exactly one of
    them after the steps (e.g. apply *or* destroy: followed in a row, the second would undo
    the first).
    """

    code: Code
    module_ref: str
    detail: str
    next_actions: tuple[str, ...] = ()
    addresses: tuple[str, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    evidence: OrphanEvidence | None = None  # suspect_orphan only
    planned_attributes: Mapping[str, Any] | None = None  # suspect_orphan: what the create was planned with
    lookup: Mapping[str, Any] | None = None  # orphan_found/suspect_orphan: what its lookups answered

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"code": self.code.value, "module_ref": self.module_ref,
                               "detail": self.detail, "next_actions": list(self.next_actions),
                               "alternatives": [a.to_dict() for a in self.alternatives]}
        if self.addresses:
            doc["addresses"] = list(self.addresses)
        if self.evidence is not None:
            doc["evidence"] = self.evidence.value
        if self.planned_attributes is not None:
            doc["planned_attributes"] = dict(self.planned_attributes)
        if self.lookup is not None:
            doc["lookup"] = dict(self.lookup)
        return doc


@dataclass(frozen=True, slots=True)
class Change:
    """One resource the engine would touch (plan) or saw changed outside it (drift)."""

    address: str
    action: str


@dataclass(frozen=True, slots=True)
class PlanEvidence:
    """What one `plan -json -detailed-exitcode` (normal or refresh-only) proved.

    `outputs_changed` is the engine's own verdict that only output values differ (exit 2
    with no resource change), e.g. right after an `import`, which never writes outputs.
    """

    drift: tuple[Change, ...] = ()
    changes: tuple[Change, ...] = ()
    outputs_changed: bool = False
    creates: tuple[str, ...] | None = ()  # progress.planned_creates: None when unnamed

    @classmethod
    def from_events(cls, events: Iterable[Event], returncode: int) -> PlanEvidence:
        """Fold a plan's UI stream (already parsed); exit 2 means "changes"."""
        events = list(events)
        drift: dict[str, Change] = {}
        changes: dict[str, Change] = {}
        counted = 0
        outputs_changed = False
        for event in events:
            if isinstance(event, ResourceDrift) and event.action not in _NO_CHANGE and event.addr:
                drift[event.addr] = Change(event.addr, event.action)
            elif isinstance(event, PlannedChange) and event.action not in _NO_CHANGE and event.addr:
                changes[event.addr] = Change(event.addr, event.action)
            elif isinstance(event, ChangeSummary):
                counted = event.add + event.change + event.remove
            elif isinstance(event, OutputsMessage):
                outputs_changed |= any((o.action or "noop") not in _NO_CHANGE for o in event.outputs.values())
        if counted and not changes:  # an engine that summarised without naming them
            changes["(unnamed)"] = Change("(unnamed)", f"{counted} change(s)")
        if returncode == 2 and not changes and not drift:
            outputs_changed = True
        return cls(tuple(drift.values()), tuple(changes.values()), outputs_changed, planned_creates(events))


@dataclass(frozen=True)
class ModuleEvidence:
    """Everything known about one module, gathered before any judgement.

    A part that could not be gathered is None and its reason is in `unchecked`; compare
    then says only what the remaining evidence proves.
    """

    where: Where
    record: OperationRecord | None = None
    record_problem: str | None = None  # corrupt latest.json (never overwritten)
    record_path: str = ""
    lock_free: bool = True
    state: StateSnapshot | None = None  # `show -json`
    stamp: StateStamp | None = None  # the state's lineage, serial and objects now (None: not read)
    refresh: PlanEvidence | None = None  # `plan -refresh-only`
    plan: PlanEvidence | None = None  # normal `plan`, gathered only when it can settle `ok`
    last_run: Mapping[str, ResourceProgress] | None = None  # the interrupted run's progress
    last_run_actions: tuple[ActionRow, ...] | None = None  # the interrupted run's action invocations
    stream_complete: bool = False  # the interrupted run's events hold all its engine wrote
    # Creates the plan shows when hyops read none of the interrupted run's plan (it may have
    # started them unseen); None when that plan could not be read either. () when not needed.
    replanned_creates: tuple[str, ...] | None = ()
    errored_state: bool = False  # errored.tfstate in the module directory
    unchecked: tuple[str, ...] = ()
    # The engine's words when `show -json` failed on a state that exists: the state is
    # unknown then, never empty (after a provider upgrade, its identity schema, say).
    state_unreadable: str | None = None
    # The interrupted run's completed deletes: address -> the ids of the objects deleted there
    # (a deposed one among them; None for a delete whose id the events did not say); those
    # objects are gone, so their ids are never offered to --import.
    deleted: Mapping[str, tuple[str | None, ...]] | None = None
    # Per suspect-orphan address: whether its create was seen starting or only planned.
    orphan_evidence: Mapping[str, OrphanEvidence] | None = None
    # Per address: the attribute values a plan would create it with (sensitive redacted,
    # unknown omitted), so a person can look a suspect orphan up in the provider.
    planned_attributes: Mapping[str, Mapping[str, Any]] | None = None
    live_engine: Any = None  # liveness.LiveEngine: the engine of a dead hyops still runs
    # After a failed plan: the configuration's `import` blocks (declarations.ImportBlock) whose
    # id the record saw deleted; the engine cannot import it, so no plan succeeds until it goes.
    stale_imports: tuple[Any, ...] = ()
    # Other refs whose records claim this module's engine state too (one directory and
    # workspace, operation/places.py): nothing of this module can be judged on its own.
    shared_with: tuple[str, ...] = ()
    forgotten: bool = False  # --forget-record dropped its record: nothing to judge
    # No record, and other refs' records claim this directory and workspace's engine state.
    claimed_by: tuple[str, ...] = ()
    # Per suspect orphan: what its lookups answered (reconcile/lookup/consult.py); None: none asked.
    lookups: Mapping[str, OrphanLookup] | None = None
    # A stack member's `ok` record against the stack now (record/applied.py): why it does not
    # vouch for what `stack apply` would apply; None when not judged (not a member, not ok).
    applied_changes: tuple[str, ...] | None = None
    # The unfinished action rows' addresses no configuration file declares any more
    # (operation/declared_actions.py): nothing asks for them, so they hold nothing back.
    undeclared_actions: frozenset[str] = frozenset()
    # The objects reconcile saw another writer put in the state that the record did not hold
    # (runtime/outside_seen.Sighting): one no state or record holds now is state_missing;
    # None: the kept list could not be read (reconcile replaces it with its own look).
    seen_outside: tuple[Any, ...] | None = ()

    @property
    def stale(self) -> bool:
        """A running record whose lock no live process holds: its outcome is uncertain."""
        return self.record is not None and is_stale(self.record.status, self.lock_free)

    @property
    def engine_alive(self) -> bool:
        """A stale running record whose engine still runs: it may still change objects."""
        return self.live_engine is not None and self.record is not None and self.record.status is Status.RUNNING

    @property
    def busy(self) -> bool:
        """A live process holds the lock of a running record: nothing can be judged now."""
        return self.record is not None and self.record.status is Status.RUNNING and not self.lock_free


class ActionKind(StrEnum):
    """What reconcile did because it was asked to (the JSON's `actions[].kind`)."""

    SETTLE = "settle"
    REFRESH = "refresh"
    IMPORT = "import"
    FORGET_ORPHAN = "forget-orphan"
    FORGET_RELEASED = "forget-released"
    FORGET_MISSING = "forget-missing"
    FORGET_RECORD = "forget-record"
    ERROR = "error"  # a write that could not be made


@dataclass(frozen=True, slots=True)
class Action:
    """Something reconcile changed (or tried to) because it was asked to."""

    kind: ActionKind
    detail: str
    ok: bool = True
    run_id: str | None = None
    exit_code: int = 0

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind.value, "detail": self.detail, "ok": self.ok}
        if self.run_id:
            doc["run_id"] = self.run_id
        return doc


@dataclass(frozen=True)
class ModuleReport:
    """One module's part of the reconcile document."""

    module_ref: str
    status: str  # the record's status, "none" or "corrupt"
    module_dir: str | None
    findings: tuple[Finding, ...] = ()
    unchecked: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    addressed: tuple[str, ...] = ()  # addresses a successful --forget-orphan/--import dealt with
    released: tuple[tuple[str, str], ...] = ()  # (address, id): unmanaged on purpose, alive then (information)
    workspace: str | None = None  # the record's workspace; None: the default one

    @property
    def name(self) -> str:
        """The module as a person tells it from its other workspaces' records."""
        return self.module_ref + (f" in workspace {self.workspace}" if self.workspace else "")

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "module_ref": self.module_ref, "status": self.status, "module_dir": self.module_dir,
            "checked": not self.unchecked,
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.workspace:
            doc["workspace"] = self.workspace
        if self.released:
            doc["released"] = [{"address": a, "id": i} for a, i in self.released]
        if self.unchecked:
            doc["could_not_check"] = list(self.unchecked)
        if self.actions:
            doc["actions"] = [a.to_dict() for a in self.actions]
        return doc


@dataclass(frozen=True)
class Report:
    """The whole answer: `{"consistent": bool, "modules": [...]}` plus its exit code."""

    modules: tuple[ModuleReport, ...] = ()
    errors: tuple[tuple[str, int], ...] = field(default=())  # (message, exit code) of failed writes

    @property
    def consistent(self) -> bool:
        return not self.errors and all(not m.findings and not m.unchecked for m in self.modules)

    @property
    def exit_code(self) -> int:
        """First failed write's code; else 1 could not check; 3 findings; 0 consistent.

        After a successful --forget-orphan/--import, 0 once no finding names an address it
        dealt with, even if unrelated findings remain (they are still reported).
        """
        if self.errors:
            return self.errors[0][1]
        if any(m.unchecked for m in self.modules):
            return 1
        addressed = [m for m in self.modules if m.addressed]
        if addressed:
            left = any(set(f.addresses) & set(m.addressed) for m in addressed for f in m.findings)
            return 3 if left else 0
        if any(m.findings for m in self.modules):
            return 3
        return 0

    def summary(self) -> str:
        """The report's last line, in every format."""
        if self.consistent:
            return f"consistent: {len(self.modules)} module(s) checked, nothing to do"
        found = sum(len(m.findings) for m in self.modules)
        unchecked = sum(1 for m in self.modules if m.unchecked)
        return (f"{found} finding(s) in {len(self.modules)} module(s)"
                + (f"; {unchecked} module(s) could not be fully checked" if unchecked else ""))

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "consistent": self.consistent,
                               "modules": [m.to_dict() for m in self.modules]}
        if self.errors:
            doc["errors"] = [message for message, _ in self.errors]
        return doc


LISTED = 5  # objects a finding's detail names before "and N more"


def finding(ev: ModuleEvidence, code: Code, detail: str, actions: Iterable[str],
            addresses: Iterable[str] = (), *, alternatives: Iterable[Alternative] = (), **extra: Any) -> Finding:
    """A finding of `ev`'s module: its next actions in order, each once."""
    return Finding(code, ev.where.module_ref, detail, tuple(dict.fromkeys(actions)), tuple(addresses),
                   tuple(alternatives), **extra)


def names(addresses: list[str]) -> str:
    """The first LISTED of `addresses`, and how many more."""
    shown = ", ".join(addresses[:LISTED])
    return shown + (f" and {len(addresses) - LISTED} more" if len(addresses) > LISTED else "")

