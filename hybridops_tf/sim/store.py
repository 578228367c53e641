"""The simulated cloud's object store: one JSON file per object under HYOPS_SIM_ROOT.

Why files and a lock: the engine runs up to 10 provider calls at once inside one provider
process, and a stack runs several provider processes side by side. Every mutation takes
one lock (a thread lock, then a file lock) and every file is replaced atomically, so a
reader never sees half an object and two creators never race a cascade.

Layout of the root:
    objects/<id>.json     {schema_version, type, id, name, attributes, created_at, updated_at}
    calls.jsonl           one line per provider call (op, type, name, id, time, pid, ...)
    faults.fired.json     {schema_version, fired: {key: count}} for `times` limits, the key
                          `<faults file run>/<rule key>` (see sim.faults.FaultsFile)
    .lock                 the store lock
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybridops_tf.sim.kinds import KINDS, kind_of

SIM_ROOT_ENV = "HYOPS_SIM_ROOT"
SCHEMA_VERSION = 1
LOCK_TIMEOUT_SECONDS = 60.0

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class SimRootError(Exception):
    """HYOPS_SIM_ROOT is unset or unusable; the message is one line for the user."""


class StoreError(Exception):
    """An object file on disk cannot be understood; the message names the file."""


class MissingParentError(Exception):
    """A create named a parent object (network, vm) that does not exist."""


def utc_now() -> str:
    """UTC ISO-8601 with a Z, the timestamp format used across hybridops."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class SimObject:
    """One live object of the simulated cloud, exactly as stored."""

    type: str
    id: str
    name: str
    attributes: dict[str, Any]
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any, source: Path) -> SimObject:
        """Parse a stored object; refuse (loudly) what this version does not understand."""
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise StoreError(f"{source}: not a sim object with schema_version {SCHEMA_VERSION}")
        try:
            return cls(
                type=str(data["type"]),
                id=str(data["id"]),
                name=str(data["name"]),
                attributes=dict(data["attributes"]),
                created_at=str(data["created_at"]),
                updated_at=str(data.get("updated_at", data["created_at"])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{source}: malformed sim object ({exc})") from None


@dataclass(frozen=True)
class CallEntry:
    """One provider call as appended to calls.jsonl.

    `watched` (the watch file's text, or None when it is missing) is written only when
    `watching` is true, i.e. HYOPS_SIM_WATCH_FILE was set for a create or delete call.
    """

    op: str
    type: str
    name: str | None
    id: str | None
    fault: str | None = None
    time: str = field(default_factory=utc_now)
    pid: int = field(default_factory=os.getpid)
    watched: str | None = None
    watching: bool = False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["watching"]
        if not self.watching:
            del data["watched"]
        return data


def atomic_write_text(path: Path, text: str, mode: int = 0o600) -> None:
    """Write via temp file + fsync + os.replace so readers see the old or the new file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class SimStore:
    """Objects, call log and fault counters of one simulated cloud root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        self.objects_dir = self.root / "objects"
        self.calls_file = self.root / "calls.jsonl"
        self.fired_file = self.root / "faults.fired.json"
        self.lock_file = self.root / ".lock"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SimStore:
        """The store named by HYOPS_SIM_ROOT; SimRootError when unset."""
        env = os.environ if environ is None else environ
        value = env.get(SIM_ROOT_ENV, "").strip()
        if not value:
            raise SimRootError(
                f"{SIM_ROOT_ENV} is not set: the sim provider needs a directory for its objects "
                "(hyops sets it to <runtime-root>/sim/cloud)"
            )
        return cls(Path(value))

    def ensure(self) -> None:
        """Create the root (0700) on first use; SimRootError when that is impossible."""
        try:
            self.root.parent.mkdir(parents=True, exist_ok=True)
            self.root.mkdir(mode=0o700, exist_ok=True)
            self.objects_dir.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise SimRootError(f"cannot create sim root {self.root}: {exc.strerror}") from None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store lock: a per-root thread lock, then the inter-process file lock."""
        from filelock import FileLock

        self.ensure()
        key = str(self.lock_file)
        with _THREAD_LOCKS_GUARD:
            thread_lock = _THREAD_LOCKS.setdefault(key, threading.Lock())
        with thread_lock, FileLock(key, timeout=LOCK_TIMEOUT_SECONDS, mode=0o600):
            yield

    # ----- objects -----
    def _path(self, object_id: str) -> Path:
        if not object_id or "/" in object_id or object_id.startswith("."):
            raise StoreError(f'invalid object id "{object_id}"')
        return self.objects_dir / f"{object_id}.json"

    def get(self, object_id: str) -> SimObject | None:
        """The object with this id, or None when it does not exist (any more)."""
        path = self._path(object_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return SimObject.from_json(json.loads(text), path)
        except json.JSONDecodeError as exc:
            raise StoreError(f"{path}: invalid JSON ({exc.msg})") from None

    def list_objects(self, type_name: str | None = None) -> list[SimObject]:
        """Live objects sorted by type, name, id; optionally only one type."""
        if not self.objects_dir.is_dir():
            return []
        found = []
        for path in self.objects_dir.glob("*.json"):
            obj = self.get(path.stem)
            if obj is not None and (type_name is None or obj.type == type_name):
                found.append(obj)
        return sorted(found, key=lambda o: (o.type, o.name, o.id))

    def new_id(self, type_name: str) -> str:
        """A fresh `<prefix>-<8 hex>` id, not used by any stored object."""
        prefix = kind_of(type_name).prefix
        while True:
            candidate = f"{prefix}-{secrets.token_hex(4)}"
            if not self._path(candidate).exists():
                return candidate

    def _write(self, obj: SimObject) -> None:
        atomic_write_text(self._path(obj.id), json.dumps(obj.to_json(), indent=2, sort_keys=True))

    def create(
        self, type_name: str, name: str, attributes: dict[str, Any], object_id: str | None = None
    ) -> SimObject:
        """Store a new object after checking, under the lock, that its parent exists."""
        kind = kind_of(type_name)
        with self.locked():
            if kind.parent is not None:
                attr, parent_type = kind.parent
                parent_id = attributes.get(attr)
                parent = self.get(parent_id) if isinstance(parent_id, str) and parent_id else None
                if parent is None or parent.type != parent_type:
                    raise MissingParentError(
                        f'{type_name} "{name}": {attr} "{parent_id}" does not name an existing '
                        f"{parent_type}"
                    )
            now = utc_now()
            obj = SimObject(
                type_name, object_id or self.new_id(type_name), name, attributes, now, now
            )
            self._write(obj)
            return obj

    def update(self, object_id: str, name: str, attributes: dict[str, Any]) -> SimObject | None:
        """Replace name and attributes of an existing object; None when it is gone."""
        with self.locked():
            old = self.get(object_id)
            if old is None:
                return None
            obj = SimObject(old.type, old.id, name, attributes, old.created_at, utc_now())
            self._write(obj)
            return obj

    def delete(self, object_id: str) -> list[str]:
        """Delete an object and its cascading children (a vm's configs); ids removed."""
        with self.locked():
            obj = self.get(object_id)
            if obj is None:
                return []
            removed = []
            for child in self.list_objects():
                child_kind = KINDS.get(child.type)
                if (
                    child_kind is None
                    or child_kind.cascade_from != obj.type
                    or not child_kind.parent
                ):
                    continue
                if child.attributes.get(child_kind.parent[0]) == obj.id:
                    self._path(child.id).unlink(missing_ok=True)
                    removed.append(child.id)
            self._path(obj.id).unlink(missing_ok=True)
            return [obj.id, *removed]

    # ----- call log and fault counters -----
    def record_call(self, entry: CallEntry) -> None:
        """Append one line to calls.jsonl (under the lock, so lines never interleave)."""
        line = json.dumps(entry.to_json(), sort_keys=True) + "\n"
        with self.locked():
            fd = os.open(self.calls_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(line)

    def fired_counts(self) -> dict[str, int]:
        """How often each fault rule has fired in this root (keyed by sim.faults.run_key)."""
        try:
            data = json.loads(self.fired_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.fired_file}: invalid JSON ({exc.msg})") from None
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise StoreError(f"{self.fired_file}: unknown schema_version")
        return {str(k): int(v) for k, v in dict(data.get("fired", {})).items()}

    def try_fire(self, key: str, limit: int | None) -> bool:
        """Count one firing of a rule unless it already fired `limit` times (atomic)."""
        with self.locked():
            counts = self.fired_counts()
            if limit is not None and counts.get(key, 0) >= limit:
                return False
            counts[key] = counts.get(key, 0) + 1
            doc = {"schema_version": SCHEMA_VERSION, "fired": counts}
            atomic_write_text(self.fired_file, json.dumps(doc, indent=2, sort_keys=True))
            return True
