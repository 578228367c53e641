"""Was a module's state written outside hyops since the record's stamp, told without the
engine (docs/recovery.md: Another writer).

The one decision `hyops status`, `hyops stack status`, the report, `stack apply --resume` and
the stack's state_missing preflight share: only a local state file is read (record/stamp.py's
cheap_stamp), and every way it cannot be compared has its reason in words ("not compared").
Two states are never taken for the record's, as neither is evidence of another writer:
- a module that declares a backend other than `local`, or a `local` one that names its file
  (`path`, `workspace_dir`: shared by every checkout), whether or not `init` ran in this
  checkout: before it, no state file is where a local one would be (a fresh CI runner);
- a local state in another folder than the one the record was written from that is not the
  record's state (none, or another lineage): a member another runner applied in its own
  checkout keeps its state file there. The record's own lineage here is its state, moved or
  copied, and is compared.
Reconcile reads the state with the engine and judges it by the same record/stamp.written
(reconcile/outside.py); it asks `elsewhere` first, as the engine here would read this
folder's state, not the one the record stamped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import StateStamp, Written, cheap_stamp, written

NO_STAMP = "the record keeps no state_seen (written before hyops kept one)"
RUNNING = "its record says running: its own run may be writing the state"
NO_DIRECTORY = "the module directory is unknown or gone: the state was not read"
NOT_LOCAL = ("the state is not a local file hyops reads without the engine: not compared with the record "
             "(reconcile compares it)")


def elsewhere_reason(module_dir: str) -> str:
    """Why a local state here is not the record's: it was written from `module_dir`."""
    return (f"its record was written from {module_dir}, which keeps its local state file (another checkout): "
            "not compared here (reconcile in that checkout compares it)")


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
    now, why = state_here(record, where, workspace)
    if now is None:
        return StateLook(not_looked=why)
    return StateLook(written(record.state_seen, now), now)


def state_here(record: OperationRecord, directory: Path, workspace: str | None = None
               ) -> tuple[StateStamp | None, str | None]:
    """The stamp of the state `record` speaks of, as `directory` holds it here without the
    engine (a folder that exists), or None and why it is not compared (see the module's
    docstring)."""
    if _declares_remote_backend(directory):  # before init too: no .terraform says where it is yet
        return None, NOT_LOCAL
    now = cheap_stamp(directory, workspace if workspace is not None else record.workspace)
    if now is None:
        return None, NOT_LOCAL
    if record.module_dir and _another_checkouts(record, directory, now):
        return None, elsewhere_reason(record.module_dir)
    return now, None


def elsewhere(record: OperationRecord, directory: Path, workspace: str | None = None) -> str | None:
    """Why the state the engine would read in `directory` is not the one `record` stamped: a
    local state file that another folder, the one the record was written from, keeps (see
    _another_checkouts); None otherwise (a backend: the engine reads the same state from any
    checkout)."""
    now, why = state_here(record, directory, workspace)
    return why if now is None and why != NOT_LOCAL else None


def _another_checkouts(record: OperationRecord, directory: Path, now: StateStamp) -> bool:
    """The record was written from another folder than `directory`, and the local state here
    is not its state (none, or another lineage): that folder (another runner's checkout)
    keeps it. The same lineage here is the record's state, moved or copied: compared."""
    if not record.module_dir or _same_folder(record.module_dir, directory):
        return False
    return record.state_seen is None or now.lineage != record.state_seen.lineage


def _same_folder(recorded: str, directory: Path) -> bool:
    try:
        return os.path.realpath(recorded) == os.path.realpath(directory)
    except (OSError, ValueError):
        return False


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
            if (m.group(1) or m.group(2) or "cloud") != "local" or _LOCAL_ELSEWHERE.search(_block(text, m.end())):
                return True
    return False


# a `local` backend that names its file (`path`, `workspace_dir`): every checkout's engine reads
# that one file, which is no folder's own; reconcile reads it through the engine
_LOCAL_ELSEWHERE = re.compile(r'(?:^|[\s{,])"?(?:path|workspace_dir)"?\s*[=:]')


def _block(text: str, start: int) -> str:
    """The backend block's body after its label (to its first closing brace)."""
    return text[start:text.find("}", start) if "}" in text[start:] else len(text)]
