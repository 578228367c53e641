"""Real storage faults for the runtime root: immutable folders, read-only binds, full disks.

Each helper is a context manager that undoes itself. They need root, chattr and mount;
when the machine cannot, the test FAILS with the reason (conftest.require), never skips.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.reliability.machine import require_root, require_tool, run_checked


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """chattr +i: no entry can be created, removed or renamed in path, even by root."""
    require_root()
    require_tool("chattr")
    run_checked(["chattr", "+i", str(path)], f"chattr +i on {path}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@contextmanager
def read_only_bind(path: Path) -> Iterator[None]:
    """path bind-mounted read-only over itself (EROFS on every write)."""
    require_root()
    require_tool("mount")
    run_checked(["mount", "--bind", str(path), str(path)], f"a bind mount of {path}")
    try:
        run_checked(["mount", "-o", "remount,ro,bind", str(path)], f"a read-only remount of {path}")
        yield
    finally:
        subprocess.run(["umount", str(path)], check=True)


@contextmanager
def tmpfs(path: Path, size: str = "4m", inodes: int | None = None) -> Iterator[Path]:
    """A small tmpfs mounted at path (which must exist and be empty), unmounted after."""
    require_root()
    require_tool("mount")
    options = f"size={size},mode=0700" + (f",nr_inodes={inodes}" if inodes else "")
    run_checked(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], f"a tmpfs at {path}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(filesystem_dir: Path) -> Path:
    """Fill the filesystem holding filesystem_dir until ENOSPC; return the filler file."""
    filler = filesystem_dir / "filler.bin"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as fh:
        while True:
            try:
                fh.write(chunk)
            except OSError as err:
                if err.errno != errno.ENOSPC:
                    raise
                break
    small = b"\0" * 512
    with open(filler, "ab", buffering=0) as fh:  # the last partial block too
        while True:
            try:
                fh.write(small)
            except OSError as err:
                if err.errno != errno.ENOSPC:
                    raise
                break
    probe = filesystem_dir / ".probe"
    try:
        with open(probe, "wb") as fh:
            fh.write(b"x" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
        full = False
    except OSError:
        full = True
    finally:
        probe.unlink(missing_ok=True)
    assert full, f"{filesystem_dir} is not full after filling it"
    return filler


def exhaust_inodes(filesystem_dir: Path) -> int:
    """Create empty files until the filesystem has no inode left; return how many."""
    spare = filesystem_dir / "inodes"
    spare.mkdir()
    n = 0
    while True:
        try:
            (spare / f"{n}").touch()
        except OSError as err:
            if err.errno != errno.ENOSPC:
                raise
            return n
        n += 1
