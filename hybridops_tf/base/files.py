"""Durable file writes: temp file in the same directory, fsync, replace, fsync the dir.

Every file hyops writes under the runtime root goes through here, so a crash at any
instant leaves either the old file or the new one, never a torn one. Modes are 0600 for
files and 0700 for directories (docs/contract.md: Commands and options). In the engine layer because the engine writes
files too (its version cache, init logs, the stderr log); the core reads these helpers
through hybridops_tf.base.files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700

# Runtime roots in use: below one, no path component may be a symlink (a symlinked state/
# or runs/ would make hyops write, or run a provider launcher, somewhere else).
_PRIVATE_ROOTS: set[Path] = set()


def register_private_root(root: Path) -> None:
    _PRIVATE_ROOTS.add(Path(os.path.abspath(root)))


def refuse_symlinks(path: Path) -> None:
    """Raise OSError if any component of path below a registered runtime root is a symlink."""
    full = Path(os.path.abspath(path))
    for root in _PRIVATE_ROOTS:
        if full != root and root not in full.parents:
            continue
        probe = full
        while probe != root:
            if probe.is_symlink():
                raise OSError(f"refusing to follow the symlink {probe} inside the runtime root {root}")
            probe = probe.parent


def ensure_dir(path: Path) -> Path:
    """Create path (and parents) with mode 0700; refuse a symlink where a directory should be."""
    refuse_symlinks(path)
    if path.is_symlink():
        raise OSError(f"refusing to use symlinked directory {path}")
    if path.is_dir():
        return path
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for part in reversed(missing):  # every level we create is 0700, not just the leaf
        try:
            part.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass
        os.chmod(part, DIR_MODE)
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a directory")
    return path


def keep_copy(path: Path, text: str) -> None:
    """Write `text` to `path` (atomically) unless it already holds it: a local copy of what a
    store holds, which its readers treat as a cache (a copy that cannot be written is no
    document, never an error)."""
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return
        atomic_write_text(path, text)
    except OSError:
        pass


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class PreparedWrite:
    """The first half of an atomic write: data durable in a temp file beside `path`.

    `commit()` renames it into place (and fsyncs the directory), `discard()` removes it. Lets
    a caller do everything that can fail (space, permissions) before a point of no return,
    and only the rename after it.

    `keep_same`: when `path` already holds exactly `data`, nothing is written and commit()
    leaves it as it is: no temp file, no disk flush. Only for a file every writer writes
    durably, so that what it holds is already on disk.
    """

    def __init__(self, path: Path, data: bytes, *, durable: bool = True, keep_same: bool = False) -> None:
        ensure_dir(path.parent)
        if path.is_symlink():
            raise OSError(f"refusing to replace symlink {path}")
        self.path = path
        self.durable = durable
        self._tmp: str | None = None
        self._same = keep_same and _holds(path, data)
        if self._same:
            return
        import tempfile  # here: it loads shutil and its compression modules, which a read-only command never needs

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        self._tmp = tmp
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
            os.chmod(tmp, FILE_MODE)
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        if self._same:
            return  # the file already holds the data, durably (see keep_same)
        if self._tmp is None:
            raise RuntimeError("prepared write already committed or discarded")
        try:
            os.replace(self._tmp, self.path)
        except BaseException:
            self.discard()
            raise
        self._tmp = None
        if self.durable:
            fsync_dir(self.path.parent)

    def discard(self) -> None:
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except FileNotFoundError:
                pass
            self._tmp = None


def _holds(path: Path, data: bytes) -> bool:
    """`path` is a regular file of mode FILE_MODE holding exactly `data`."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != FILE_MODE or st.st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace path with data atomically (mode 0600): a reader sees the old file or the new
    one, never part of one. `durable`: fsync the data before the rename and the directory
    after it, so the new file also survives a machine crash. Without it the write costs no
    disk flush; only a machine crash (which kills every process anyway) may lose it."""
    PreparedWrite(path, data, durable=durable).commit()


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def open_append(path: Path):
    """Open an append-only log (events.jsonl, stderr log) created with mode 0600."""
    ensure_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE)
    return os.fdopen(fd, "ab")
