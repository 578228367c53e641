"""Durable, private file writes for the core: the engine layer's helpers (docs/contract.md: Commands and options).

They live in hybridops_tf.engine.files because the engine writes files too and imports
nothing above its layer; the core names them here. One set of functions, one registry of
runtime roots below which no symlink is followed.
"""

from __future__ import annotations

from hybridops_tf.engine.files import (
    DIR_MODE,
    FILE_MODE,
    PreparedWrite,
    atomic_write_bytes,
    atomic_write_text,
    ensure_dir,
    fsync_dir,
    open_append,
    refuse_symlinks,
    register_private_root,
)

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "PreparedWrite",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_dir",
    "fsync_dir",
    "open_append",
    "refuse_symlinks",
    "register_private_root",
]
