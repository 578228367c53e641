"""The local store's inputs digest key: `config/digest.key` under the runtime root, 32 random
bytes, mode 0600.

Created once, by whichever process comes first: the key is written to a private temp file
(O_EXCL) and then hard-linked into place, which fails if another process linked its key
first; the loser reads the winner's. So two processes never hold two keys and nobody reads a
half-written one. Never follows a symlink.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.base.files import FILE_MODE, ensure_dir, fsync_dir, refuse_symlinks

KEY_BYTES = 32


def digest_key(path: Path, create: bool) -> bytes | None:
    """The key at `path` (made when `create` and there is none; else None). RefusedError, naming
    the file, when it cannot be read or made, or is damaged."""
    try:
        key = _read_key(path)
        if key is None and create:
            key = _create_key(path)
    except OSError as err:
        raise RefusedError(f"cannot use the inputs digest key {path}: {err.strerror or err}; "
                           "nothing was run") from None
    if key is not None and len(key) != KEY_BYTES:
        raise RefusedError(f"the inputs digest key {path} is damaged ({len(key)} bytes, not {KEY_BYTES}); remove "
                           "it (a new one is made, and `stack apply --resume` then reruns every member); nothing "
                           "was run")
    return key


def _read_key(path: Path) -> bytes | None:
    """The key file's bytes, or None when there is none. Never follows a symlink."""
    refuse_symlinks(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def _create_key(path: Path) -> bytes:
    """Make the key: 32 random bytes in a 0600 temp file (O_EXCL), linked into place
    atomically. If another process linked first, its key is the key."""
    import secrets

    ensure_dir(path.parent)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    try:
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            existing = _read_key(path)
            if existing is None:  # removed in between: try once more, as the first
                os.link(tmp, path, follow_symlinks=False)
                existing = key
            key = existing
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            key = _create_key_in_place(path, key)  # a filesystem without hard links
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    fsync_dir(path.parent)
    return key


def _create_key_in_place(path: Path, key: bytes) -> bytes:
    """The same, where hard links are refused: O_EXCL on the key file itself."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return _read_key(path) or b""  # reported as damaged if it is still being written
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key

