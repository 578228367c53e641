"""What a run folder's result.json says, and the meta of a reconcile that changed a record
(docs/contract.md: Files under the runtime root).

Apart from run_folder.py because a run needs them only once it ends: a command loads them
after its engine ran (or on a refusal), not before it starts the engine (issue 37: each
dataclass costs its definition at start-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, fields
from enum import StrEnum
from typing import Any

from hybridops_tf import __version__
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.base.redact import redact_every_var
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import Owner, utc_now


@dataclass(frozen=True)
class ReconcileMeta:
    """meta.json of a reconcile that changed a record (`--write`, `--forget-orphan`), in its
    keys' order: which action, who, when, then the action's own details (`details`, last)."""

    action: str
    argv: list[str]  # every `--var` value redacted
    module_ref: str
    module_dir: str | None
    run_id: str
    started_at: str
    hyops_version: str
    pid: int
    host: str
    user: str
    details: dict[str, Any]

    @classmethod
    def start(cls, action: str, argv: Sequence[str], module_ref: str, module_dir: str | None,
              run_id: str, details: dict[str, Any]) -> ReconcileMeta:
        who = Owner.current(run_id)
        return cls(
            action=action, argv=redact_every_var(argv), module_ref=module_ref, module_dir=module_dir,
            run_id=run_id, started_at=utc_now(), hyops_version=__version__, pid=who.pid, host=who.host,
            user=who.user, details=details,
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"command": Command.RECONCILE.value}
        doc.update((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "details")
        return {**doc, **self.details}


class ResultOutcome(StrEnum):
    """result.json's `outcome` of a run that did not settle a record (a settled one says the
    record's Status)."""

    REFUSED = "refused"  # a preflight refusal, or the engine refused before changing anything
    FAILED = "failed"  # a plan that failed
    PLANNED = "planned"
    INTERRUPTED = "interrupted"  # SIGINT/SIGTERM stopped it before anything changed


@dataclass(frozen=True)
class StoppedResult:
    """result.json of a run stopped before its engine changed anything: `refused` (a
    preflight refusal), `interrupted` (a signal), or a plan that `failed`."""

    outcome: ResultOutcome
    error: str

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "error": self.error}


@dataclass(frozen=True)
class EngineRefusedResult:
    """The engine changed nothing (it refused the run, or a signal stopped it first): the
    record is back to what it was."""

    error: str
    record_status: str | None  # the restored record's status; None when there is no record
    outcome: ResultOutcome = ResultOutcome.REFUSED

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "error": self.error,
                "record_status": self.record_status}


@dataclass(frozen=True)
class SettledResult:
    """A run settled from evidence: the record's status (`running` when the settle write
    failed), its error, and what it knows of the module's objects."""

    outcome: Status
    error: str | None
    resources: dict[str, dict[str, Any]]
    suspect_orphans: list[dict[str, Any]]
    actions: list[dict[str, Any]] = field(default_factory=list)  # the record's `actions` rows

    def to_json(self) -> dict[str, Any]:
        doc = {"outcome": self.outcome.value, "error": self.error, "resources": self.resources,
               "suspect_orphans": self.suspect_orphans}
        return {**doc, "actions": self.actions} if self.actions else doc


@dataclass(frozen=True)
class PlannedResult:
    summary: str  # "1 to add, 0 to change, 0 to destroy"
    changes_pending: bool

    def to_json(self) -> dict[str, Any]:
        return {"outcome": ResultOutcome.PLANNED.value, "summary": self.summary,
                "changes_pending": self.changes_pending}


RunResult = StoppedResult | EngineRefusedResult | SettledResult | PlannedResult
