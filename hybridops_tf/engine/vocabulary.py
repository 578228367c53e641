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


class Progress(StrEnum):
    """Where one resource stands in an engine run's event stream. `started` is internal: it
    never survives a settled record, it becomes an orphan suspect (create) or `error`. The
    rest are the words a record keeps per resource (lifecycle.ResourceStatus)."""

    PENDING = "pending"
    STARTED = "started"
    COMPLETE = "complete"
    DESTROYED = "destroyed"
    ERROR = "error"
