"""Bytes for an engine's stdin through a pipe: how the run's var file reaches the engine.

The engine reads `-var-file=/dev/fd/0` (engine/runner.py): the read end of a pipe, its
stdin. A thread writes the bytes and closes the write end, so a var file larger than the
pipe buffer never blocks hyops, and nothing is ever on disk, in argv or in the environment.
process.py opens the feed around its one spawn and closes hyops's read end right after it:
once the engine exits, a writer still blocked on a full pipe gets EPIPE and ends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # the engine exited without reading (EPIPE): it reports what it missed
    finally:
        os.close(fd)


@contextmanager
def feeding(data: bytes) -> Iterator[int]:
    """The read end of a pipe being filled with `data`; closed in this process on exit.

    Both ends are close-on-exec (os.pipe), so only the child given the read end as its
    stdin holds it: no other engine a stack run starts meanwhile inherits either end.
    """
    read_end, write_end = os.pipe()
    try:
        threading.Thread(target=_write_all, args=(write_end, data), name="hyops-var-file", daemon=True).start()
    except BaseException:
        os.close(write_end)
        os.close(read_end)
        raise
    try:
        yield read_end
    finally:
        os.close(read_end)
