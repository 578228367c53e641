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
from hybridops_tf.runtime.root import RERUN_INPUTS, STACK_REPORT
from hybridops_tf.store.local import RecordStore
from hybridops_tf.store.postgres import PgStore


@dataclass
class ImportCounts:
    records: int = 0
    kept: int = 0  # the store's record was newer (or as new): left as it is
    documents: int = 0
    skipped: int = 0  # unreadable local records, left for the user to look at


def import_local(source: Path, store: PgStore) -> ImportCounts:
    """Copy every readable record (each under its lock in the store), its rerun inputs, and
    every stack report. A record the store holds with the same or a later `updated_at` is
    kept, so running the import twice, or after the store moved on, changes nothing."""
    local = RecordStore(source)
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
                else:
                    store.write(record, stamp=False)  # the import keeps when it happened
                    counts.records += 1
        except OSError as err:
            raise RefusedError(f"could not write {store.where(key)}: {err.strerror or err}") from None
        rerun = layout.rerun_inputs(source, key)
        if rerun.is_file():
            store.put_document(RERUN_INPUTS, key, rerun.read_text(encoding="utf-8"))
            counts.documents += 1
    stacks = layout.stacks_dir(source)
    for folder in sorted(stacks.iterdir()) if stacks.is_dir() else []:
        report = layout.stack_report(source, folder.name)
        if report.is_file():
            text = report.read_text(encoding="utf-8")
            if live_journal.journal_path(report).is_file():  # a run killed mid-way: what it journaled too
                try:
                    doc = json.loads(text)
                except ValueError:
                    doc = None  # unreadable: imported as it is, for `stack status` to refuse loudly
                if isinstance(doc, dict):
                    text = json.dumps(live_journal.fold(doc, report), indent=2) + "\n"
            store.put_document(STACK_REPORT, folder.name, text)
            counts.documents += 1
    return counts
