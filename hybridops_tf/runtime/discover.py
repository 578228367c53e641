"""Which runtime root a command uses when none is given (docs/contract.md: Commands and options).

`--runtime-root`, else `HYOPS_RUNTIME_ROOT`, else the nearest `.hyops/` found walking up
from the current directory (as git finds `.git`), else `./.hyops`, created by the first
command that writes and announced then. So one project keeps one root whichever of its
folders a command runs from.

A `.hyops` met on the way up is used only when it is a real directory owned by the user
running hyops. A symlink, a file or another user's directory (a stray `/tmp/.hyops`) is
skipped with a warning and the walk goes on: records are never written where someone
else chose. `HYOPS_CEILING_DIRECTORIES` (colon-separated absolute paths, like git's
GIT_CEILING_DIRECTORIES) stops the walk: a ceiling and everything above it are never
searched (the current directory itself always is).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from hybridops_tf.base import numbers
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record import layout
from hybridops_tf.record.model import OperationRecord

ROOT_NAME = ".hyops"
CEILING_ENV = "HYOPS_CEILING_DIRECTORIES"

HOW_OPTION = "--runtime-root"
HOW_ENV = "HYOPS_RUNTIME_ROOT"
HOW_FOUND = "found"  # the nearest .hyops walking up
HOW_NEW = "new"  # none found: ./.hyops, created when first written


@dataclass(frozen=True)
class RootChoice:
    """The runtime root of this command and how it was chosen."""

    path: Path  # absolute
    how: str  # HOW_*
    skipped: tuple[str, ...] = ()  # why each unsafe `.hyops` on the way up was not used

    def describe(self) -> str:
        """`<path> (<how>)` for a one-line note on stderr."""
        why = {
            HOW_OPTION: "from --runtime-root",
            HOW_ENV: "from HYOPS_RUNTIME_ROOT",
            HOW_FOUND: "the nearest .hyops above the current directory",
            HOW_NEW: "no .hyops in the current directory or above it",
        }[self.how]
        return f"{self.path} ({why})"


def ceilings_from_env(value: str | None) -> tuple[Path, ...]:
    """Absolute entries of HYOPS_CEILING_DIRECTORIES (relative ones are ignored, as git does)."""
    if not value:
        return ()
    return tuple(Path(os.path.realpath(p)) for p in value.split(os.pathsep) if p and os.path.isabs(p))


def _unusable(candidate: Path, uid: int) -> str | None:
    """Why `candidate` (which exists) is not a runtime root, or None when it is one."""
    try:
        st = os.lstat(candidate)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink (pass --runtime-root to use its target)"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != uid:
        return f"belongs to uid {st.st_uid}, not to you (uid {uid})"
    return None


def discover(start: Path, ceilings: Sequence[Path] = (), uid: int | None = None) -> RootChoice:
    """The nearest usable `.hyops` from `start` upwards, else `start/.hyops` (HOW_NEW)."""
    uid = os.geteuid() if uid is None else uid
    start = Path(os.path.abspath(start))
    stops = {Path(os.path.abspath(c)) for c in ceilings}
    skipped: list[str] = []
    folder = start
    while True:
        candidate = folder / ROOT_NAME
        if os.path.lexists(candidate):
            why = _unusable(candidate, uid)
            if why is None:
                return RootChoice(candidate, HOW_FOUND, tuple(skipped))
            skipped.append(f"ignoring {candidate}: it {why}")
        parent = folder.parent
        if parent == folder or parent in stops:
            break
        folder = parent
    return RootChoice(start / ROOT_NAME, HOW_NEW, tuple(skipped))


def choose(given: Path | None, how_given: str | None, cwd: Path, environ: Mapping[str, str]) -> RootChoice:
    """The root for this command: the one given (HOW_OPTION/HOW_ENV), else discover()."""
    if given is not None:
        return RootChoice(Path(os.path.abspath(given)), how_given or HOW_OPTION)
    return discover(cwd, ceilings_from_env(environ.get(CEILING_ENV)))


def module_root(directory: Path, environ: Mapping[str, str]) -> Path | None:
    """The runtime root a command run in `directory` (a module's folder) would find, walking up
    as `discover` does; None when there is none (a command there would make one)."""
    found = discover(directory, ceilings_from_env(environ.get(CEILING_ENV)))
    return found.path if found.how == HOW_FOUND else None


def records_in(root: Path) -> list[OperationRecord]:
    """The readable records of another root's local store, read as files (no lock: a look
    only; a corrupt or unreadable one is skipped)."""

    found = []
    try:
        folders = sorted(layout.records_dir(root).iterdir())
    except OSError:
        return []
    for folder in folders:
        try:
            found.append(OperationRecord.from_dict(numbers.loads((folder / layout.RECORD_FILE).read_text("utf-8"))))
        except (OSError, ValueError, RecursionError):
            continue
    return found


def record_count(root: Path) -> int:
    """How many module records the root holds (0 when it does not exist)."""
    try:
        return sum(1 for d in layout.records_dir(root).iterdir() if (d / layout.RECORD_FILE).exists())
    except OSError:
        return 0


def emptiness_warning(choice: RootChoice) -> str | None:
    """The loud line for a question about modules asked of a missing or empty root, or None."""
    if not choice.path.exists():
        state = "does not exist"
    elif record_count(choice.path) == 0:
        state = "holds no records"
    else:
        return None
    hint = (" (none was found in the current directory or above it: run from the project "
            "folder that holds .hyops, or pass --runtime-root)") if choice.how == HOW_NEW else ""
    return f"WARNING: the runtime root {choice.path} {state}: no module has a record there{hint}"
