"""The words an engine run's event stream is read in, shared by the layers above (docs/contract.md: Statuses).

Facts of the stream, not of a record: where one resource stands (Progress) and which
planned actions make a new remote object (CREATE_ACTIONS). progress.py folds events into
them; hybridops_tf.record.lifecycle names them beside the record's statuses. No imports: the
lifecycle stays cheap to load.
"""

from __future__ import annotations

from enum import StrEnum

# Planned actions that make a new remote object (a replace makes one before or after it deletes).
CREATE_ACTIONS = frozenset({"create", "replace"})

# An ephemeral resource's operations: Terraform 1.10+, then OpenTofu's own names. Never an
# object: an ephemeral resource lives for one run and is never in state.
EPHEMERAL_OP_TYPES = frozenset({
    "ephemeral_op_start", "ephemeral_op_progress", "ephemeral_op_complete", "ephemeral_op_errored",
    "ephemeral_action_started", "ephemeral_action_complete",
})
# Terraform 1.14+ actions: operations a provider runs, planned then invoked; never an object.
ACTION_TYPES = frozenset({
    "planned_action_invocation", "action_start", "action_progress", "action_complete", "action_errored",
})
# The resource mode of an ephemeral resource's address (`ephemeral.T.N`, `module.m.ephemeral.T.N`).
EPHEMERAL_MODE = "ephemeral"


def is_ephemeral_address(addr: str) -> bool:
    """True for an ephemeral resource's address, in the root or in a module: the first word
    after the `module.NAME[KEY].` steps is `ephemeral`."""
    rest = addr
    while rest.startswith("module."):
        step_end = rest.find(".", len("module."))
        bracket = rest.find("[", len("module."))
        if bracket != -1 and (step_end == -1 or bracket < step_end):
            close = rest.find("]", bracket)
            step_end = rest.find(".", close) if close != -1 else -1
        if step_end == -1:
            return False
        rest = rest[step_end + 1:]
    return rest.startswith(EPHEMERAL_MODE + ".")


class Progress(StrEnum):
    """Where one resource stands in an engine run's event stream. `started` is internal: it
    never survives a settled record, it becomes an orphan suspect (create) or `error`. The
    rest are the words a record keeps per resource (lifecycle.ResourceStatus)."""

    PENDING = "pending"
    STARTED = "started"
    COMPLETE = "complete"
    DESTROYED = "destroyed"
    ERROR = "error"
