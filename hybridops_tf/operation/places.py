"""One engine state per module directory and workspace: a second ref there is refused.

The engine keeps a module's state where its backend says (the local `terraform.tfstate` in
the module directory, or a remote key the configuration fixes), per workspace, whatever ref
hyops files the record under. Two refs on one directory and workspace therefore keep one
state: an apply of the second replaces what the first's record still claims as live, and
each record then lies about the other's objects. The exception is the shared store's own
`pg` backend, which gives every ref a schema of its own (store/backend.py).

So a ref that starts from nothing there (no record, or one that claims nothing) is refused
while another ref's record on the same directory and workspace still claims something.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.base.errors import UsageError
from hybridops_tf.record.address import DEFAULT_WORKSPACE
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY
from hybridops_tf.record.model import CorruptRecordError, OperationRecord

if TYPE_CHECKING:
    from hybridops_tf.operation.request import ModuleRequest
    from hybridops_tf.store import Store


@dataclass(frozen=True)
class Place:
    """Where the engine keeps a module's state: its directory (resolved) and workspace."""

    directory: str
    workspace: str

    @classmethod
    def of(cls, directory: str | Path, workspace: str | None) -> Place:
        return cls(os.path.realpath(directory), workspace or DEFAULT_WORKSPACE)


def claimants(place: Place, ref: str, records: Iterable[OperationRecord]) -> list[OperationRecord]:
    """The records of other refs at `place` that still claim something (pure)."""
    return [rec for rec in records
            if rec.module_ref != ref and rec.status not in CLAIMS_EMPTY and rec.module_dir
            and Place.of(rec.module_dir, rec.workspace) == place]


def starts_from_nothing(previous: OperationRecord | None) -> bool:
    """Whether this ref claims nothing yet: the only time it can come to share another's state."""
    return previous is None or previous.status in CLAIMS_EMPTY


def refuse_shared_state(req: ModuleRequest, previous: OperationRecord | None, store: Store) -> None:
    """UsageError when this run would share another ref's state (see the module docstring)."""
    if not starts_from_nothing(previous):
        return
    from hybridops_tf.store import backend

    if backend.state_is_per_ref(req.target.directory):
        return
    place = Place.of(req.target.directory, req.workspace)
    others = claimants(place, req.target.ref, _records(store, req.key))
    if not others:
        return
    other = others[0]
    where = place.directory
    if place.workspace != DEFAULT_WORKSPACE:
        where += f" (workspace {place.workspace})"
    raise UsageError(
        f"{req.command} of {req.target.ref} refused: {where} is module {other.module_ref}'s, whose record "
        f"({other.status}) claims what the engine's state there holds; a second ref would keep that same "
        f"state and each record would lie about the other's objects. Run it as --ref {other.module_ref}, "
        "or keep it in a workspace of its own (--workspace NAME); nothing was run"
    )


def _records(store: Store, skip_key: str) -> Iterable[OperationRecord]:
    """Every readable record but `skip_key`'s (a corrupt one is reported where it is read)."""
    for key in store.keys():
        if key == skip_key:
            continue
        try:
            record = store.read(key)
        except CorruptRecordError:
            continue
        if record is not None:
            yield record
