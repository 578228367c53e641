"""The documents hyops keeps beside the records, by kind, and the local file each one is in a
runtime root: the file itself on the local store, the copy readers use (and printed commands
name, `--inputs .hyops/config/modules/.../rerun.inputs.yml`) on a store outside the root.

One place says where each kind lives, so no caller chooses between writing a file and
writing a document: it puts the document (`Documents.put_document`) and reads the local file
the store brings up to date (`Documents.fetch_document`).
"""

from __future__ import annotations

from pathlib import Path

from hybridops_tf.record import layout
from hybridops_tf.record.address import module_id

RERUN_INPUTS = "rerun_inputs"  # a record key's rerun.inputs.yml
STACK_REPORT = "stack_report"  # a stack's latest.json (its member updates as lines: LINES_FILE)
DRIFT_SEEN = "drift_seen"  # what reconcile last saw of a record key's live objects (runtime/drift_seen.py)
OUTSIDE_SEEN = "outside_seen"  # objects reconcile saw another writer put in a state (runtime/outside_seen.py)
LINES_FILE = "live.jsonl"  # a document's appended lines, beside its local file (runtime/live_journal.py)


def local_path(root: Path, kind: str, name: str) -> Path:
    """The local file of document `kind`/`name` under the runtime root `root`."""
    if kind == RERUN_INPUTS:
        return layout.rerun_inputs(root, name)
    if kind == STACK_REPORT:
        return layout.stack_report(root, name)
    if kind == DRIFT_SEEN:
        return layout.drift_seen(root, name)
    if kind == OUTSIDE_SEEN:
        return layout.outside_seen(root, name)
    return root / "documents" / kind / module_id(name)  # a kind with no place of its own


def lines_path(root: Path, kind: str, name: str) -> Path:
    """The local file of a document's appended lines: LINES_FILE beside it (each kind that has
    lines keeps one document a folder)."""
    return local_path(root, kind, name).with_name(LINES_FILE)


def lines_key(kind: str, name: str) -> str:
    """Where a store outside the root keeps a document's appended lines: its journal table, one
    short insert each, under this key, which no record has (':' is in no ref)."""
    return f"{kind}:{name}"
