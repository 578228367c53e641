"""One engine state per module directory and workspace: a second ref there is refused.

The engine keeps a module's state where its backend says (the local `terraform.tfstate` in
the module directory, or a remote key the configuration fixes), per workspace, whatever ref
hyops files the record under. Two refs on one directory and workspace therefore keep one
state: an apply of the second replaces what the first's record still claims as live, and
each record then lies about the other's objects. The shared store's `pg` backend is no
exception: a directory's `.terraform/` keeps the schema of the ref whose `init` configured it,
and the other ref's runs use that one.

So a mutating run, or a plan, is refused while another ref's record on the same directory
and workspace claims something. On the local store a small file per place (cache/places/)
names the last ref that passed this check there: that ref's runs skip the check, any other
ref's run (or a place with no such file) reads every record once. A shared store's records
name each runner's own checkout, so there the check runs when a ref comes to a place (it
claims nothing yet). Two refs arriving at one place for the first time at the same moment
are not serialised (each holds only its own module lock); reconcile then reports them.
Records made before this check may already share a state: `claims` and `standing` find them,
for reconcile to say so instead of advising an apply that would replace the other's objects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.address import DEFAULT_WORKSPACE, record_key
from hybridops_tf.record.advice import ADVISE, where_of
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY
from hybridops_tf.record.model import CorruptRecordError, OperationRecord

if TYPE_CHECKING:
    from hybridops_tf.record.address import ModuleTarget
    from hybridops_tf.store import Records


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


def claims(records: Iterable[OperationRecord]) -> dict[Place, tuple[str, ...]]:
    """place -> the refs whose records claim something there (pure)."""
    by_place: dict[Place, set[str]] = {}
    for rec in records:
        if rec.status not in CLAIMS_EMPTY and rec.module_dir:
            by_place.setdefault(Place.of(rec.module_dir, rec.workspace), set()).add(rec.module_ref)
    return {place: tuple(sorted(refs)) for place, refs in by_place.items()}


def claims_in(store: Records) -> dict[Place, tuple[str, ...]]:
    """`claims` over every readable record of `store`."""
    return claims(_records(store))


def standing(claimed: Mapping[Place, tuple[str, ...]], place: Place, ref: str) -> tuple[bool, tuple[str, ...]]:
    """Whether `ref`'s record claims `place`, and the other refs whose records do (pure): both
    means their records share one state; only others, that the place is theirs."""
    refs = claimed.get(place, ())
    return ref in refs, tuple(r for r in refs if r != ref)


def starts_from_nothing(previous: OperationRecord | None) -> bool:
    """Whether the ref claims nothing yet (no record, or one that claims nothing)."""
    return previous is None or previous.status in CLAIMS_EMPTY


def refuse_shared_state(command: str, target: ModuleTarget, workspace: str | None,
                        previous: Callable[[], OperationRecord | None], store: Records, runtime_root: Path) -> None:
    """UsageError when `command` of `target` would act on (or, for a plan, show) a state another
    ref's record claims (see the module docstring). `previous()`: the ref's own record, read
    only with a store that spans roots (store/ports.py)."""
    place = Place.of(target.directory, workspace)
    marker = None if store.spans_roots else _marker_path(runtime_root, place)
    if marker is None:
        if not starts_from_nothing(previous()):
            return
    elif _marker_ref(marker) == target.ref:
        return
    others = claimants(place, target.ref, _records(store, record_key(target.ref, workspace)))
    if not others:
        if marker is not None:
            _write_marker(marker, place, target.ref)
        return
    other = others[0]
    where = place.directory
    if place.workspace != DEFAULT_WORKSPACE:
        where += f" (workspace {place.workspace})"
    raise UsageError(
        f"{command} of {target.ref} refused: {where} is module {other.module_ref}'s, whose record "
        f"({other.status}) claims what the engine's state there holds; a second ref would keep that same "
        f"state and each record would lie about the other's objects. Run it as --ref {other.module_ref}, "
        "or keep it in a workspace of its own (--workspace NAME); nothing was run"
    )


def refuse_other_root(command: str, target: ModuleTarget, workspace: str | None, runtime_root: Path,
                      records: Records) -> None:
    """UsageError when the runtime root the module's own folder belongs to (the nearest `.hyops`
    above it) is not this command's and holds a record claiming the module's engine state: a
    command run from another folder would keep a second record, in a second root, of that same
    state, where the two-refs check of one root cannot see it. Called before anything is written,
    so the wrong root is not even created. Where that root claims nothing there, a command that
    is about to create its own root is warned. A store that spans roots keeps every record in
    one place: nothing to check."""
    if records.spans_roots:
        return
    import os

    from hybridops_tf.base import notices
    from hybridops_tf.runtime import discover

    other = discover.module_root(target.directory, os.environ)
    if other is None or os.path.realpath(other) == os.path.realpath(runtime_root):
        return
    place = Place.of(target.directory, workspace)
    claiming = [rec for rec in discover.records_in(other) if rec.status not in CLAIMS_EMPTY and rec.module_dir
                and Place.of(rec.module_dir, rec.workspace) == place]
    if not claiming:
        if not runtime_root.exists():
            notices.warning(f"{target.directory} is in the folder of the runtime root {other}, but this command "
                            f"creates and uses {runtime_root}: pass --runtime-root {other} (or run it from that "
                            "folder) to keep one root")
        return
    rec = claiming[0]
    there = ADVISE.with_root(other).module(command, where_of(rec.module_ref, target.directory, place.workspace))
    raise UsageError(
        f"{command} of {target.ref} refused: {place.directory} is module {rec.module_ref}'s in the runtime root "
        f"{other}, the one its folder belongs to, whose record ({rec.status}) claims what the engine's state there "
        f"holds; this command's root is {runtime_root}, and a second root would keep a second record of that same "
        f"state. Run it as `{there}` (or from the folder "
        "holding that root); nothing was run")


def refuse_members(command: str, members: Sequence[tuple[str, ModuleTarget, str | None]], store: Records,
                   runtime_root: Path, stack_file: Path) -> None:
    """For a stack, before anything is written: UsageError naming the first member (name,
    target, workspace) whose engine state another root's record claims, or another ref's record
    here while the member's own claims nothing. Each would be refused when its turn came, after
    the members before it ran; a default ref that clashes with an earlier standalone record is
    fixed by `ref:` in the stack file."""
    claimed: dict[Place, tuple[str, ...]] | None = None
    passed: list[tuple[Place, str]] = []
    for name, target, workspace in members:
        try:
            refuse_other_root(command, target, workspace, runtime_root, store)
        except UsageError as err:
            raise UsageError(f"nothing was run: member {name}: {err.message}") from None
        claimed = claims_in(store) if claimed is None else claimed
        place = Place.of(target.directory, workspace)
        mine, others = standing(claimed, place, target.ref)
        if not others:
            passed.append((place, target.ref))
        if others and not mine:
            where = f" (workspace {workspace})" if workspace else ""
            raise UsageError(
                f"nothing was run: member {name} ({target.ref}): {target.directory}{where} is module {others[0]}'s, "
                f"whose record claims what the engine's state there holds; give the member `ref: {others[0]}` in "
                f"{stack_file} to run it as that record (or a `workspace:` of its own)")
    if store.spans_roots:
        return
    # Every member passed: each one's own run reads its marker instead of every record again (a
    # first stack run would otherwise read all records once per member). Another ref reaching a
    # place meanwhile finds no record of the member there, passes, and overwrites the marker, so
    # the member's run then reads the records and finds it. Written only now: a refused stack
    # writes nothing, not even the runtime root.
    for place, ref in passed:
        _write_marker(_marker_path(runtime_root, place), place, ref)


def _marker_path(runtime_root: Path, place: Place) -> Path:
    from hashlib import sha256

    from hybridops_tf.record import layout

    digest = sha256(f"{place.directory}\0{place.workspace}".encode()).hexdigest()[:32]
    return layout.places_cache(runtime_root) / f"{digest}.json"


def _marker_ref(path: Path) -> str | None:
    """The ref that last passed the check at the place, None when unknown."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ref = doc.get("ref") if isinstance(doc, dict) else None
    return ref if isinstance(ref, str) else None


def _write_marker(path: Path, place: Place, ref: str) -> None:
    """A cache: lost, the next run reads the records again, so neither synced nor required."""
    try:
        atomic_write_text(path, json.dumps({"directory": place.directory, "workspace": place.workspace,
                                            "ref": ref}) + "\n", durable=False)
    except OSError:
        pass


def _records(store: Records, skip_key: str | None = None) -> Iterable[OperationRecord]:
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
