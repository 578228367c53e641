"""Was a module's state written outside hyops since the record's stamp, told without the
engine (docs/recovery.md: Another writer).

The one decision `hyops status`, `hyops stack status`, the report and `stack apply --resume`
share: only a local state file is read (record/stamp.py's cheap_stamp), and every way it
cannot be compared has its reason in words. A module that declares a backend other than
`local` is not compared, whether or not `init` ran in this checkout: before it, no state file
is where a local one would be, which is no evidence of another writer (a fresh CI runner).
Reconcile reads the state with the engine and judges it by the same record/stamp.written (reconcile/outside.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import StateStamp, Written, cheap_stamp, written

NO_STAMP = "the record keeps no state_seen (written before hyops kept one)"
RUNNING = "its record says running: its own run may be writing the state"
NO_DIRECTORY = "the module directory is unknown or gone: the state was not read"
NOT_LOCAL = ("the state is not a local file hyops reads without the engine: not compared with the record "
             "(reconcile compares it)")


@dataclass(frozen=True, slots=True)
class StateLook:
    """What comparing the state with the record's stamp found.

    `written`: how another writer moved the state (None: it did not, or it was not compared);
    `now`: the state as read (None: not read); `not_looked`: why it was not compared;
    `quiet`: nothing a status needs to say about that (no stamp to compare with, a running
    record, a destroyed module whose folder is gone)."""

    written: Written | None = None
    now: StateStamp | None = None
    not_looked: str | None = None
    quiet: bool = False

    @property
    def compared(self) -> bool:
        return self.now is not None

    @property
    def shown_not_looked(self) -> str | None:
        """What a status says of a state it did not compare (None: nothing to say)."""
        return None if self.quiet else self.not_looked


def look(record: OperationRecord, directory: Path | None = None, workspace: str | None = None) -> StateLook:
    """The state of `record`'s module against its stamp. `directory`: where the module is
    here (a stack member's folder in this checkout), else the record's module_dir; the
    workspace is the record's unless given."""
    if record.state_seen is None:
        return StateLook(not_looked=NO_STAMP, quiet=True)
    if record.status is Status.RUNNING:
        return StateLook(not_looked=RUNNING, quiet=True)
    where = directory if directory is not None else (Path(record.module_dir) if record.module_dir else None)
    if where is None or not where.is_dir():
        return StateLook(not_looked=NO_DIRECTORY, quiet=record.status in CLAIMS_EMPTY)
    if _declares_remote_backend(where):  # before init too: no .terraform says where it is yet
        return StateLook(not_looked=NOT_LOCAL)
    now = cheap_stamp(where, workspace if workspace is not None else record.workspace)
    if now is None:
        return StateLook(not_looked=NOT_LOCAL)
    return StateLook(written(record.state_seen, now), now)


# `backend "pg" {` in HCL, `"backend": {"pg": ...` in JSON, and HCP Terraform's `cloud {`
_BACKEND = re.compile(r'\bbackend\s+"([^"]+)"|"backend"\s*:\s*\[?\s*\{\s*"([^"]+)"|^\s*cloud\s*\{', re.MULTILINE)


def _declares_remote_backend(directory: Path) -> bool:
    """Does the root module declare a backend other than `local` (or a `cloud` block)? Read
    from the configuration's text: `hyops status` loads no engine code (engine/initcheck.py
    parses HCL, at ~0.1 s a start), and a wrong guess only says "not compared"."""
    for path in [*directory.glob("*.tf"), *directory.glob("*.tf.json")]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _BACKEND.finditer(text):
            if (m.group(1) or m.group(2) or "cloud") != "local":
                return True
    return False
