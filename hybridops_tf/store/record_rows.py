"""A record as a database store keeps it, one JSON text per key (store/postgres.py,
store/sqlite.py): read back with its numbers as their text (base/numbers.py), one way for both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.record.model import CorruptRecordError, OperationRecord


def record_from_row(text: str, key: str, where: str) -> OperationRecord:
    """The record a row's text holds; CorruptRecordError (naming `where`) when it is none."""
    try:
        return OperationRecord.from_dict(numbers.loads(text))
    except (ValueError, RecursionError) as err:
        raise CorruptRecordError(Path(key), str(err), where=where) from None


def doc_from_row(text: str | None) -> dict[str, Any] | None:
    """A row's text as the raw document (None: no row, or no JSON object)."""
    try:
        doc = numbers.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
