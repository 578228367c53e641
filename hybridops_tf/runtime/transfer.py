"""`hyops store import-local`: a local runtime root's records and documents into the store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.base import notices
from hybridops_tf.base.errors import RefusedError
from hybridops_tf.record import layout
from hybridops_tf.record.model import CorruptRecordError
from hybridops_tf.runtime import live_journal
from hybridops_tf.store import Admin, Documents, local_root
from hybridops_tf.store.documents import DRIFT_SEEN, OUTSIDE_SEEN, RERUN_INPUTS, STACK_REPORT


@dataclass
class ImportCounts:
    records: int = 0
    kept: int = 0  # the store's record was newer (or as new): left as it is
    documents: int = 0
    skipped: int = 0  # unreadable local records, left for the user to look at


def import_local(source: Path, store: Admin) -> ImportCounts:
    """Copy every readable record (each under its lock in the store) with its documents (rerun
    inputs, what reconcile saw), and every stack report. A record the store holds with the same
    or a later `updated_at` is kept, and so are its documents, which speak of that record, so
    running the import twice, or after the store moved on, changes nothing."""
    local = local_root(source)
    counts = ImportCounts()
    for key in local.keys():
        try:
            record = local.read(key)
        except CorruptRecordError as err:
            notices.warning(f"skipped: {err.message}")
            counts.skipped += 1
            continue
        if record is None:
            continue
        try:
            with store.lock(key, "store-import", timeout=0):
                current = store.read(key)
                if current is not None and current.updated_at >= record.updated_at:
                    counts.kept += 1
                    continue
                store.write(record, stamp=False)  # the import keeps when it happened
                counts.records += 1
                for kind in (RERUN_INPUTS, DRIFT_SEEN, OUTSIDE_SEEN):
                    counts.documents += _copy(local, store, kind, key)
        except OSError as err:
            raise RefusedError(f"could not write {store.where(key)}: {err.strerror or err}") from None
    stacks = layout.stacks_dir(source)
    for folder in sorted(stacks.iterdir()) if stacks.is_dir() else []:
        try:
            counts.documents += _copy(local, store, STACK_REPORT, folder.name)
        except OSError as err:
            raise RefusedError(f"could not copy the stack report of {folder.name} into {store.describe()}: "
                               f"{err.strerror or err}") from None
    return counts


def _copy(local: Documents, store: Documents, kind: str, name: str) -> int:
    """One document from the local root into the store (a stack report with the lines of the
    run that wrote it, when it was killed before its finish); how many were copied."""
    try:
        text = local.fetch_document(kind, name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    if kind == STACK_REPORT:
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None  # unreadable: imported as it is, for `stack status` to refuse loudly
        if isinstance(doc, dict) and not doc.get("finished_at") and isinstance(doc.get("run_id"), str):
            lines = local.document_lines(kind, name, doc["run_id"])
            if lines:  # a run killed mid-way: what it journaled too
                text = json.dumps(live_journal.fold_lines(doc, lines), indent=2) + "\n"
    store.put_document(kind, name, text)
    return 1
