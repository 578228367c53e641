"""Statuses and the rules between them (docs/contract.md: Statuses). Pure: no I/O, exhaustively tested.

One Enum per vocabulary, shared by code, docs and tests, so the words cannot drift. Two
of them are facts of an engine run's event stream and are defined in the engine layer
(hybridops_tf.engine.vocabulary): Progress and CREATE_ACTIONS; they are named here too.
"""

from __future__ import annotations

from enum import StrEnum

from hybridops_tf.engine.vocabulary import CREATE_ACTIONS, Progress

__all__ = [
    "Command",
    "CLAIMS_EMPTY",
    "CREATE_ACTIONS",
    "DestroyStep",
    "MemberStatus",
    "Progress",
    "ResourceStatus",
    "Status",
    "apply_refusal",
    "destroy_step",
    "is_stale",
]


class Command(StrEnum):
    """What ran: meta.json's `command`, the run id's prefix, the record's active/failed command.
    A StrEnum, so it is written and compared as the plain string it names."""

    APPLY = "apply"
    DESTROY = "destroy"
    REFRESH = "refresh"
    IMPORT = "import"
    PLAN = "plan"
    RECONCILE = "reconcile"


class Status(StrEnum):
    """Module record status (`latest.json` "status")."""

    RUNNING = "running"
    OK = "ok"
    ERROR = "error"
    DESTROYED = "destroyed"
    ABSENT = "absent"
    RETAINED = "retained"


class ResourceStatus(StrEnum):
    """Per-resource status inside a record's "resources" map."""

    COMPLETE = "complete"
    ERROR = "error"
    PENDING = "pending"  # planned, never started
    DESTROYED = "destroyed"


class MemberStatus(StrEnum):
    """Stack member status in a stack run report (docs/contract.md: Stacks)."""

    OK = "ok"
    ERROR = "error"
    INTERRUPTED = "interrupted"  # a signal stopped it, or its queued run lost its worker; the record says more
    PENDING = "pending"  # never started (record untouched)
    CANCELLED = "cancelled"  # a queued run withdrawn before a worker took it (record untouched)
    DESTROYED = "destroyed"
    ABSENT = "absent"
    RETAINED = "retained"
    SKIPPED = "skipped"
    RUNNING = "running"  # only in the report of a run in progress: it started, not yet finished


# Outcomes that claim "nothing of this module may exist remotely".
CLAIMS_EMPTY = frozenset({Status.DESTROYED, Status.ABSENT})


class DestroyStep(StrEnum):
    """What a destroy does with one module, from its record (the stack's and the module's rule)."""

    SKIP = "skip"  # the record already claims the module is empty
    RETAIN = "retain"  # kept on purpose: not destroyed
    DESTROY = "destroy"


def destroy_step(status: Status | None, *, retain_on_destroy: bool = False,
                 include_retained: bool = False) -> DestroyStep:
    """Skip only destroyed and absent; a retained record (or a member declared
    `retain_on_destroy`) is kept unless `include_retained`; a module with no record is destroyed.

    `error`, a stale `running` and `ok` may all hold live objects, so they are destroyed.
    """
    if status in CLAIMS_EMPTY:
        return DestroyStep.SKIP
    if (retain_on_destroy or status is Status.RETAINED) and not include_retained:
        return DestroyStep.RETAIN
    return DestroyStep.DESTROY


def is_stale(status: Status, lock_free: bool) -> bool:
    """A running record whose lock no live process holds: its outcome is uncertain."""
    return status is Status.RUNNING and lock_free


def apply_refusal(
    status: Status | None, *, stale: bool, suspect_orphans: int, allow_uncertain: bool
) -> str | None:
    """Why a new apply must not start blind, or None when it may.

    A create whose response was lost may have made an object the state does not know; a
    blind re-apply would make a second one. Destroy is never guarded: cleanup stays open.
    """
    if allow_uncertain:
        return None
    if status is Status.RUNNING and stale:
        return "the last operation was interrupted (stale 'running' record): its outcome is uncertain"
    if suspect_orphans:
        return f"{suspect_orphans} suspect orphan(s) recorded: creates that started and left no state"
    return None
