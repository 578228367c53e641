"""Who wrote the state last: the stamp a record keeps (`state_seen`, docs/contract.md: The record).

The engine bumps a state's `serial` at every write and gives a new state a new `lineage`. hyops
keeps both, with the state's objects (id and a digest of their attributes, never a value), as
its last apply, destroy, import or `reconcile --write` left the state; a state whose serial or
lineage moved since was written by something other than hyops. Read from the local state file
(format 4) or what `state pull` prints, without loading the engine's code: `hyops status`
compares without running anything.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.lazy_dataclass import dataclass

if TYPE_CHECKING:  # the engine's rooms load only where a state is read (tests/unit/test_cli_help.py)
    from hybridops_tf.engine.addresses import Spelling

STATE_FORMAT = 4  # the `version` of the state file Terraform >= 0.12 and OpenTofu write


class StampFormatError(ValueError):
    """Not a state file hyops can read a stamp from: the caller says it did not look."""


@dataclass(frozen=True, slots=True)
class SeenObject:
    """One object as a state holds it: its id and a digest of its attributes (a change made
    in place keeps the id and moves the digest). No attribute value is kept."""

    id: str | None
    digest: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "digest": self.digest} if self.id is not None else {"digest": self.digest}


@dataclass(frozen=True, slots=True)
class StateStamp:
    """A state's `lineage` and `serial`, with its objects by key (an address, or `ADDR (deposed
    KEY)` as the record keys a deposed object). `run_id`: the hyops run that left the state so,
    once a record keeps it. A module without a state has lineage "" and serial 0."""

    lineage: str
    serial: int
    objects: Mapping[str, SeenObject] = field(default_factory=dict)
    run_id: str = ""

    def same_state(self, other: StateStamp) -> bool:
        return self.lineage == other.lineage and self.serial == other.serial

    def to_json(self) -> dict[str, Any]:
        return {"lineage": self.lineage, "serial": self.serial, "run_id": self.run_id,
                "objects": {k: o.to_json() for k, o in sorted(self.objects.items())}}

    @classmethod
    def from_json(cls, doc: Any) -> StateStamp:
        """ValueError when `doc` is not a stamp as to_json writes it."""
        if not isinstance(doc, Mapping) or type(doc.get("serial")) is not int \
                or not isinstance(doc.get("lineage"), str) or not isinstance(doc.get("objects", {}), Mapping):
            raise ValueError("state_seen is not {lineage, serial, objects}")
        objects: dict[str, SeenObject] = {}
        for key, raw in doc.get("objects", {}).items():
            if not isinstance(raw, Mapping) or not isinstance(raw.get("digest"), str):
                raise ValueError(f"state_seen object {key!r} has no digest")
            ident = raw.get("id")
            objects[str(key)] = SeenObject(ident if isinstance(ident, str) else None, raw["digest"])
        run_id = doc.get("run_id")
        return cls(doc["lineage"], doc["serial"], objects, run_id if isinstance(run_id, str) else "")


NO_STATE = StateStamp("", 0)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse_state_stamp(doc: Mapping[str, Any] | str | bytes, spelling: Spelling | None = None) -> StateStamp:
    """The stamp of a state file (format 4), as on disk or as `state pull` prints it; an empty
    document (`state pull` of a module without state) is NO_STATE. StampFormatError otherwise.
    Addresses are spelled as the engine prints them (`spelling`; without it, as the engine that
    wrote the file would: engine/addresses.py)."""
    if isinstance(doc, (str, bytes)):
        if not doc.strip():
            return NO_STATE
        try:
            doc = json.loads(doc)
        except (ValueError, RecursionError) as err:
            raise StampFormatError(f"state file: not JSON ({err})") from None
    if not isinstance(doc, Mapping):
        raise StampFormatError("state file: not a JSON object")
    if not doc:
        return NO_STATE
    if doc.get("version") != STATE_FORMAT or type(doc.get("serial")) is not int:
        raise StampFormatError(f"state file: version {doc.get('version')!r} is not {STATE_FORMAT}")
    from hybridops_tf.engine.addresses import render_key
    from hybridops_tf.engine.features import key_spelling_of

    objects: dict[str, SeenObject] = {}
    if spelling is None:
        spelling = key_spelling_of(_text(doc.get("terraform_version")))
    for raw in map(_map, _list(doc.get("resources"))):
        if _text(raw.get("mode")) not in ("", "managed"):
            continue  # a data source is a read, not an object anyone wrote
        name = f"{_text(raw.get('type'))}.{_text(raw.get('name'))}"
        base = f"{raw['module']}.{name}" if _text(raw.get("module")) else name
        for inst in map(_map, _list(raw.get("instances"))):
            index = inst.get("index_key")
            address = base + render_key(index if isinstance(index, (int, str)) else None, spelling)
            deposed = _text(inst.get("deposed"))
            key = f"{address} (deposed {deposed})" if deposed else address
            attrs = _map(inst.get("attributes"))
            ident = attrs.get("id")
            digest = hashlib.sha256(json.dumps([attrs, inst.get("status")], sort_keys=True, default=str)
                                    .encode()).hexdigest()[:16]
            objects[key] = SeenObject(ident if isinstance(ident, str) else None, digest)
    return StateStamp(_text(doc.get("lineage")), doc["serial"], objects)


def local_state_path(module_dir: Path, workspace: str | None) -> Path:
    """Where the engine keeps a workspace's state when no backend is configured."""
    if not workspace or workspace == "default":
        return module_dir / "terraform.tfstate"
    return module_dir / "terraform.tfstate.d" / workspace / "terraform.tfstate"


def cheap_stamp(module_dir: Path, workspace: str | None, env: Mapping[str, str] | None = None) -> StateStamp | None:
    """The stamp of the module's local state file, read without the engine; None when the
    engine may keep the state elsewhere (a backend init configured, TF_DATA_DIR) or the file
    is of a format hyops does not read. No file: NO_STATE (nothing was ever written there)."""
    if "TF_DATA_DIR" in (env or os.environ) or not _local_file_backend(module_dir):
        return None
    try:
        return parse_state_stamp(local_state_path(module_dir, workspace).read_bytes())
    except FileNotFoundError:
        return NO_STATE
    except (OSError, StampFormatError):
        return None


def _local_file_backend(module_dir: Path) -> bool:
    """Does the engine keep the state in the module's own local file? With no backend `init`
    configured, yes; `.terraform/terraform.tfstate` holds the backend `init` configured, and
    only a `local` one that names no file (`path`, `workspace_dir`) keeps it there too."""
    try:
        doc = json.loads((module_dir / ".terraform" / "terraform.tfstate").read_bytes())
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False  # unreadable: the engine may keep it anywhere
    backend = doc.get("backend") if isinstance(doc, dict) else None
    config = backend.get("config") if isinstance(backend, dict) else None
    return (isinstance(backend, dict) and backend.get("type") == "local" and isinstance(config, dict)
            and not config.get("path") and not config.get("workspace_dir"))


@dataclass(frozen=True, slots=True)
class Written:
    """What another writer did to the state since run `since`, by object."""

    since: str  # the hyops run that left the state as the record knows it
    before: StateStamp
    now: StateStamp
    added: tuple[tuple[str, str | None], ...] = ()  # (key, id) the record's state did not hold
    removed: tuple[tuple[str, str | None], ...] = ()  # (key, id) the state no longer holds
    changed: tuple[tuple[str, str | None], ...] = ()  # (key, id): same object, other attributes
    moved: tuple[tuple[str, str, str | None], ...] = ()  # (old key, new key, id): same object, other address

    @property
    def other_lineage(self) -> bool:
        return self.before.lineage != self.now.lineage

    def headline(self) -> str:
        """One line, as status, stack status and `--resume` say it: since which run, and how."""
        how = (f"now another lineage, {self.now.lineage or 'none'}, serial {self.now.serial}" if self.other_lineage
               else f"serial {self.before.serial} -> {self.now.serial}")
        return f"its state was written outside hyops since run {self.since} ({how})"

    def to_json(self) -> dict[str, Any]:
        """As `hyops status --json` shows it (docs/contract.md: Status)."""
        def listed(pairs: tuple[tuple[str, str | None], ...]) -> list[dict[str, Any]]:
            return [{"address": k, "id": i} for k, i in pairs]
        return {"since_run": self.since, "serial_before": self.before.serial, "serial_now": self.now.serial,
                "other_lineage": self.other_lineage, "added": listed(self.added), "removed": listed(self.removed),
                "changed": listed(self.changed),
                "moved": [{"from": a, "to": b, "id": i} for a, b, i in self.moved]}


def written(before: StateStamp, now: StateStamp) -> Written | None:
    """None when `now` is the state `before` names; else what changed, objects by id first (an
    id at another key moved), by key for objects without one."""
    if before.same_state(now):
        return None
    was = {o.id: (k, o) for k, o in before.objects.items() if o.id}
    held = {o.id: (k, o) for k, o in now.objects.items() if o.id}
    added = [(k, o.id) for k, o in now.objects.items()
             if (o.id and o.id not in was) or (not o.id and k not in before.objects)]
    removed = [(k, o.id) for k, o in before.objects.items()
               if (o.id and o.id not in held) or (not o.id and k not in now.objects)]
    changed: list[tuple[str, str | None]] = []
    moved: list[tuple[str, str, str | None]] = []
    for ident, (key, obj) in held.items():
        if ident not in was:
            continue
        old_key, old = was[ident]
        if old_key != key:
            moved.append((old_key, key, ident))
        if old.digest != obj.digest:
            changed.append((key, ident))
    changed += [(k, None) for k, o in now.objects.items()
                if not o.id and k in before.objects and before.objects[k].digest != o.digest]
    return Written(before.run_id or "?", before, now, tuple(sorted(added)), tuple(sorted(removed)),
                   tuple(sorted(changed)), tuple(sorted(moved)))
