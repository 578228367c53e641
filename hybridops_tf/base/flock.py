"""hyops's file locks, in one place: flock(2) on a lock file.

The kernel releases a flock when the last descriptor of its open file closes, however the
holder dies (SIGKILL too), so a dead process never leaves a lock behind, and a lock held by a
live one is never taken. Exclusive for one holder (a module's lock, an init that may write the
provider cache), shared for many (the engine commands that read the cache). `LockFile.take`
tries once and never blocks; `LockFile.wait` tries again and again up to a bound, asking the
caller's `stop` before each try (has a signal come?), which no blocking call allows.

Why not the `filelock` library, which hyops used before: the module lock and the cache's turns
need only this, and importing filelock (with `logging`, `traceback`, `random`, `secrets`,
`hmac`, ...) was an eighth of the instructions of a no-op apply (bench/bench_own_share.py).
The simulated cloud (hybridops_tf/sim) still uses filelock in its own process.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["LockFile"]

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


class LockFile:
    """One lock file, opened (created private, 0600, never through a symlink) as it is made:
    OSError when it cannot be. `take` tries the lock once; `close` releases it (and closes the
    file); a context manager closes it on leaving."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, _FLAGS, 0o600)

    def take(self, *, shared: bool = False) -> bool:
        """Try the lock once, without blocking: True when it is held now. A lock file removed
        or replaced while this one waited is opened again, so that two holders never hold two
        files of one name."""
        while True:
            if self._fd is None:
                raise ValueError(f"lock file {self.path} is closed")
            try:
                fcntl.flock(self._fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            if self._same_file():
                return True
            self.close()
            self._fd = os.open(self.path, _FLAGS, 0o600)

    def wait(self, seconds: float, *, shared: bool = False, stop: Callable[[], bool] | None = None,
             pause: float = 0.05, longest: float = 0.5) -> bool:
        """Take the lock, trying again after a pause that grows from `pause` to `longest`, for
        up to `seconds`: True when it is held; False when it is still busy then, or as soon as
        `stop()` (asked before each try; it may raise instead) says to give up."""
        deadline = time.monotonic() + seconds
        while True:
            if stop is not None and stop():
                return False
            if self.take(shared=shared):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(longest, pause * 2)

    def _same_file(self) -> bool:
        assert self._fd is not None
        held = os.fstat(self._fd)
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)

    def close(self) -> None:
        """Release the lock (if held) and close the file; again: nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> LockFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
