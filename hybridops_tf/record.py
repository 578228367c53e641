"""The operation record (`latest.json`, schema_version 1) and its store (docs/contract.md:
Files under the runtime root, The record).

The record says what was attempted; provider state says what exists. This module only
reads and writes records: under a per-module lock held for the whole operation, always
atomically, never over a file it could not understand.
"""

from __future__ import annotations

import getpass
import json
import os
import re
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.errors import RefusedError, UsageError
from hybridops_tf.fsutil import (
    atomic_write_text,
    ensure_dir,
    refuse_symlinks,
    register_private_root,
)
from hybridops_tf.lifecycle import ResourceStatus, Status

if TYPE_CHECKING:
    from hybridops_tf.engine.binary import EngineInfo

SCHEMA_VERSION = 1
REQUIRED = ("schema_version", "module_ref", "status", "run_id", "updated_at")


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CorruptRecordError(UsageError):
    """A latest.json we cannot understand: never overwritten (exit 2)."""

    def __init__(self, path: Path, why: str, where: str | None = None) -> None:
        if where is None:
            message = (f"record {path} is unreadable ({why}); it was left untouched: inspect it "
                       f"(cat {path}), then move it aside to start over or restore it from a backup")
        else:  # a shared store: the record is a row, not a file
            message = (f"{where} is unreadable ({why}); it was left untouched: inspect it "
                       "(hyops store status), then restore it from a backup")
        super().__init__(message)
        self.path = path


class LockBusyError(RefusedError):
    """Another live process holds the module lock (exit 4)."""


@dataclass(slots=True)
class Owner:
    pid: int
    host: str
    user: str
    run_id: str

    @classmethod
    def current(cls, run_id: str) -> Owner:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = str(os.getuid())
        return cls(pid=os.getpid(), host=os.uname().nodename, user=user, run_id=run_id)


@dataclass(slots=True)
class ResourceEntry:
    """One resource in a record's "resources" map. A status given as text (a record read
    from disk) becomes a ResourceStatus; an unknown one is a ValueError."""

    status: ResourceStatus
    action: str
    id: str | None = None
    tainted: bool | None = None
    deposed: str | None = None  # the engine's deposed key: an old object a replace has not deleted

    def __post_init__(self) -> None:
        self.status = ResourceStatus(self.status)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"status": self.status.value, "action": self.action}
        if self.id is not None:
            doc["id"] = self.id
        if self.tainted:
            doc["tainted"] = True
        if self.deposed:
            doc["deposed"] = self.deposed
        return doc


def deposed_entry_key(address: str, deposed_key: str) -> str:
    """The `resources` key of a deposed object: its own entry beside the current object's."""
    return f"{address} (deposed {deposed_key})"


def entry_address(key: str) -> str:
    """The resource address a `resources` key names (a deposed entry's key carries its key)."""
    return key.partition(" (deposed ")[0]


@dataclass(slots=True)
class ReleasedObject:
    """An object the engine stopped managing on purpose (a `removed` block with destroy =
    false, `state rm` with its block gone): it lives on, unmanaged, and the record says so."""

    address: str
    id: str
    run_id: str
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "id": self.id, "run_id": self.run_id, "at": self.at}


@dataclass(slots=True)
class SuspectOrphan:
    address: str
    action: str
    run_id: str
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "action": self.action, "run_id": self.run_id, "at": self.at}


@dataclass(slots=True)
class LastAttempt:
    """A run the engine refused before any change started: kept beside the unchanged status."""

    run_id: str
    command: str
    at: str
    exit_code: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "command": self.command, "at": self.at,
                "exit_code": self.exit_code, "error": self.error}

    @classmethod
    def from_dict(cls, doc: Any) -> LastAttempt:
        return cls(str(doc["run_id"]), str(doc.get("command", "")), str(doc.get("at", "")),
                   int(doc.get("exit_code", 1)), str(doc.get("error", "")))


@dataclass(frozen=True, slots=True)
class RecordEngine:
    """The engine the last run used, as the record keeps it: `{"binary": ..., "version": ...}`.

    A record written elsewhere may hold other keys, or a non-string under these two: they are
    kept in `extra` as read, so that rewriting the record changes nothing of them.
    """

    binary: str | None = None
    version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, info: EngineInfo) -> RecordEngine:
        return cls(binary=str(info.binary), version=info.version)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.binary is not None:
            doc["binary"] = self.binary
        if self.version is not None:
            doc["version"] = self.version
        for key, value in self.extra.items():
            doc.setdefault(key, value)
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RecordEngine:
        binary, version = doc.get("binary"), doc.get("version")
        typed = {k for k, v in (("binary", binary), ("version", version)) if isinstance(v, str)}
        return cls(binary=binary if "binary" in typed else None,
                   version=version if "version" in typed else None,
                   extra={k: v for k, v in doc.items() if k not in typed})


@dataclass(slots=True)
class OperationRecord:
    module_ref: str
    status: Status
    run_id: str
    updated_at: str = field(default_factory=utc_now)
    schema_version: int = SCHEMA_VERSION
    module_dir: str | None = None
    active_command: str | None = None
    failed_command: str | None = None
    last_error: str | None = None
    started_at: str | None = None
    owner: Owner | None = None
    resolved_inputs_file: str | None = None
    rerun_inputs_file: str | None = None
    inputs_digest: str | None = None
    workspace: str | None = None
    outputs: dict[str, Any] | None = None
    resources: dict[str, ResourceEntry] | None = None
    suspect_orphans: list[SuspectOrphan] = field(default_factory=list)
    released: list[ReleasedObject] = field(default_factory=list)
    previous_outputs: dict[str, Any] | None = None
    engine: RecordEngine | None = None
    last_attempt: LastAttempt | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields from newer writers, kept as-is

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema_version": self.schema_version,
            "module_ref": self.module_ref,
            "status": self.status.value,
            "run_id": self.run_id,
            "updated_at": self.updated_at,
        }
        for name in (
            "module_dir", "active_command", "failed_command", "last_error", "started_at",
            "resolved_inputs_file", "rerun_inputs_file", "inputs_digest", "workspace",
            "outputs", "previous_outputs",
        ):
            value = getattr(self, name)
            if value is not None:
                doc[name] = value
        if self.engine is not None:
            doc["engine"] = self.engine.to_json()
        if self.owner is not None:
            doc["owner"] = {"pid": self.owner.pid, "host": self.owner.host,
                            "user": self.owner.user, "run_id": self.owner.run_id}
        if self.resources is not None:
            doc["resources"] = {addr: r.to_dict() for addr, r in sorted(self.resources.items())}
        if self.suspect_orphans:
            doc["suspect_orphans"] = [o.to_dict() for o in self.suspect_orphans]
        if self.released:
            doc["released"] = [o.to_dict() for o in self.released]
        if self.last_attempt is not None:
            doc["last_attempt"] = self.last_attempt.to_dict()
        for key, value in self.extra.items():
            doc.setdefault(key, value)
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> OperationRecord:
        """Parse a record; raise ValueError with the reason when it is not a v1 record."""
        if not isinstance(doc, dict):
            raise ValueError("top level is not a JSON object")
        missing = [k for k in REQUIRED if k not in doc]
        if missing:
            raise ValueError(f"missing required field(s): {', '.join(missing)}")
        if type(doc["schema_version"]) is not int or doc["schema_version"] != SCHEMA_VERSION:
            raise ValueError(f"schema_version {doc['schema_version']!r} is not {SCHEMA_VERSION}")
        try:
            status = Status(doc["status"])
        except ValueError:
            raise ValueError(f"unknown status {doc['status']!r}") from None
        for key in ("module_ref", "run_id", "updated_at"):
            if not isinstance(doc[key], str):
                raise ValueError(f"field {key} is not a string")
        known = {f.name for f in fields(cls)}
        rec = cls(module_ref=doc["module_ref"], status=status, run_id=doc["run_id"],
                  updated_at=doc["updated_at"])
        for name in (
            "module_dir", "active_command", "failed_command", "last_error", "started_at",
            "resolved_inputs_file", "rerun_inputs_file", "inputs_digest", "workspace",
        ):
            value = doc.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"field {name} is not a string")
            setattr(rec, name, value)
        for name in ("outputs", "previous_outputs", "engine"):
            value = doc.get(name)
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"field {name} is not an object")
        rec.outputs, rec.previous_outputs = doc.get("outputs"), doc.get("previous_outputs")
        if doc.get("engine") is not None:
            rec.engine = RecordEngine.from_json(doc["engine"])
        try:
            if doc.get("owner") is not None:
                o = doc["owner"]
                rec.owner = Owner(int(o["pid"]), str(o["host"]), str(o["user"]), str(o["run_id"]))
            if doc.get("resources") is not None:
                rec.resources = {
                    str(addr): ResourceEntry(ResourceStatus(str(r["status"])), str(r.get("action", "")),
                                             r.get("id"), r.get("tainted"), r.get("deposed"))
                    for addr, r in doc["resources"].items()
                }
            rec.released = [
                ReleasedObject(str(o["address"]), str(o["id"]), str(o.get("run_id", "")), str(o.get("at", "")))
                for o in doc.get("released") or []
            ]
            rec.suspect_orphans = [
                SuspectOrphan(str(o["address"]), str(o.get("action", "create")),
                              str(o.get("run_id", "")), str(o.get("at", "")))
                for o in doc.get("suspect_orphans") or []
            ]
            if doc.get("last_attempt") is not None:
                rec.last_attempt = LastAttempt.from_dict(doc["last_attempt"])
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise ValueError(f"malformed owner/resources/suspect_orphans/released/last_attempt: {err!r}") from None
        rec.extra = {k: v for k, v in doc.items() if k not in known}
        return rec


def module_id(module_ref: str) -> str:
    """The folder name of a record key: `platform/network` -> `platform__network`,
    `platform/network@stg` -> `platform__network@stg`. A capital of the ref is written `^`
    and its small letter (`envs/Prod` -> `envs__^prod`): folder names stay distinct where the
    filesystem ignores case, and no lowercase ref can spell `^`."""
    ref, at, workspace = module_ref.partition("@")
    ref = "".join(f"^{c.lower()}" if "A" <= c <= "Z" else c for c in ref)
    return ref.replace("/", "__") + at + workspace


def key_of_module_id(name: str) -> str:
    """The record key a folder name encodes (module_id's inverse)."""
    ref, at, workspace = name.partition("@")
    out, caps = [], False
    for c in ref.replace("__", "/"):
        if c == "^":
            caps = True
            continue
        out.append(c.upper() if caps else c)
        caps = False
    return "".join(out) + at + workspace


DEFAULT_WORKSPACE = "default"
_WORKSPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,89}\Z")


def validate_workspace(name: str, source: str = "--workspace") -> str:
    """A workspace name hyops can put in a path; the engine's own rules are looser only in
    characters no one uses (UsageError, exit 2, otherwise)."""
    if not _WORKSPACE.match(name):
        raise UsageError(f"{source} {name!r} is not a workspace name hyops accepts: use letters, digits, "
                         "'_', '.' and '-' (at most 90, starting with a letter or digit)")
    return name


def record_key(module_ref: str, workspace: str | None = None) -> str:
    """What identifies a record, its lock and its run folders: the module ref, and the
    workspace unless it is the default one (whose paths are the ref's alone). `@` cannot
    appear in a module ref, so the key is unambiguous."""
    if not workspace or workspace == DEFAULT_WORKSPACE:
        return module_ref
    return f"{module_ref}@{workspace}"


def split_key(key: str) -> tuple[str, str | None]:
    """(module_ref, workspace or None) of a record key."""
    ref, at, workspace = key.partition("@")
    return ref, (workspace if at else None)


class ModuleLock:
    """The per-module lock, held for a whole operation; names its holder when busy."""

    def __init__(self, store: RecordStore, module_ref: str, run_id: str, timeout: float) -> None:
        from filelock import FileLock

        self.store = store
        self.module_ref = module_ref
        self.run_id = run_id
        self.timeout = timeout
        self.owner_path = store.module_dir(module_ref) / ".lock.owner.json"
        self._lock = FileLock(str(store.lock_path(module_ref)), timeout=timeout, mode=0o600)

    def __enter__(self) -> ModuleLock:
        from filelock import Timeout

        try:
            ensure_dir(self.owner_path.parent)
            self._lock.acquire()
        except Timeout:
            raise LockBusyError(self._busy_message()) from None
        except OSError as err:
            raise RefusedError(
                f"cannot take the lock {self.store.lock_path(self.module_ref)}: {err.strerror or err}; "
                "check that the runtime root is writable"
            ) from None
        _sweep_temp_files(self.owner_path.parent)
        try:
            owner = Owner.current(self.run_id)
            atomic_write_text(self.owner_path, json.dumps(
                {"pid": owner.pid, "host": owner.host, "user": owner.user,
                 "run_id": owner.run_id, "since": utc_now()}), durable=False)  # dies with its holder
        except OSError:
            pass  # the holder note is a courtesy; the lock itself is what protects
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.owner_path.unlink()
        except OSError:
            pass
        self._lock.release()

    def _busy_message(self) -> str:
        import time

        # The holder writes its note right after the flock, so a missing note or one left by a
        # killed holder (SIGKILL skips __exit__) is only trusted once it names a live process.
        deadline = time.monotonic() + 2.0
        while True:
            who = _live_holder(self.owner_path)
            if who is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        holder = f"module {self.module_ref} is locked by {who or 'another process'}"
        if self.timeout > 0:  # --lock-timeout was given: advise raising it, not passing it again
            return f"{holder} after waiting {self.timeout:g}s; wait for it to finish or raise --lock-timeout"
        return f"{holder}; wait for it to finish or pass --lock-timeout SECONDS"


def _sweep_temp_files(module_dir: Path) -> None:
    """Remove temp files an atomic write left when its process was killed mid-write.

    Only a lock holder writes in a module's record folder, and we hold the lock, so any
    `.<name>.<random>.tmp` here is an orphan (never a record: those are renamed into place).
    """
    try:
        for stale in module_dir.glob(".*.tmp"):
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # tidiness only: a leftover temp file is never read


def _live_holder(owner_path: Path) -> str | None:
    """The holder named by the note, or None when there is no note or it names a dead process."""
    try:
        h = json.loads(owner_path.read_text())
        pid, host = int(h["pid"]), str(h.get("host"))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if host == os.uname().nodename:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # left behind by a holder that was killed
        except PermissionError:
            pass  # alive, owned by another user
        except (OSError, OverflowError):
            return None
    return (f"pid {pid} on {host} (user {h.get('user')}, run {h.get('run_id')}, "
            f"since {h.get('since')})")


@dataclass(frozen=True, slots=True)
class JournalRead:
    """What a store's journal holds of one run: the engine lines it kept, in order, whether
    the engine was spawned, and whether those lines are its whole stdout (events.complete)."""

    lines: tuple[str, ...]
    engine_started: bool
    complete: bool


class NullJournal:
    """The journal of a store that needs none beyond the run folder (the local root)."""

    def line(self, text: str, kind: str) -> None:
        return None

    def engine_started(self, pid: int, host: str) -> None:
        return None

    def complete(self) -> None:
        return None

    def close(self) -> str | None:
        """Flush what is queued; a message when something could not be journaled."""
        return None


class RecordStore:
    """Records under `<runtime_root>/state/modules/<module_id>/` (the local store)."""

    shared = False

    def __init__(self, runtime_root: Path) -> None:
        self.root = runtime_root
        register_private_root(runtime_root)

    def module_dir(self, module_ref: str) -> Path:
        return self.root / "state" / "modules" / module_id(module_ref)

    def record_path(self, module_ref: str) -> Path:
        return self.module_dir(module_ref) / "latest.json"

    def lock_path(self, module_ref: str) -> Path:
        return self.module_dir(module_ref) / ".lock"

    def lock(self, module_ref: str, run_id: str, timeout: float = 0) -> ModuleLock:
        return ModuleLock(self, module_ref, run_id, timeout)

    def lock_is_free(self, module_ref: str) -> bool:
        """True when no live process holds the module lock (a probe, released at once)."""
        from filelock import FileLock, Timeout

        path = self.lock_path(module_ref)
        if not path.exists():
            return True
        probe = FileLock(str(path), timeout=0, mode=0o600)
        try:
            probe.acquire()
        except Timeout:
            return False
        except OSError:
            return False
        probe.release()
        return True

    def read(self, module_ref: str) -> OperationRecord | None:
        """The record, None when there is none; CorruptRecordError when unreadable."""
        path = self.record_path(module_ref)
        try:
            refuse_symlinks(path)
        except OSError as err:
            raise CorruptRecordError(path, str(err)) from None
        if path.is_symlink():
            raise CorruptRecordError(path, "it is a symlink, which hyops refuses to follow")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as err:
            raise CorruptRecordError(path, str(err)) from None
        try:
            return OperationRecord.from_dict(json.loads(text))
        except (ValueError, RecursionError) as err:
            raise CorruptRecordError(path, str(err)) from None

    def write(self, record: OperationRecord) -> None:
        record.updated_at = utc_now()
        text = json.dumps(record.to_dict(), indent=2, sort_keys=False) + "\n"
        atomic_write_text(self.record_path(record_key(record.module_ref, record.workspace)), text)

    def delete(self, key: str) -> None:
        """Remove the record (a run the engine refused before it had one); OSError on failure."""
        self.record_path(key).unlink(missing_ok=True)

    def read_raw(self, key: str) -> dict[str, Any] | None:
        """The record exactly as stored (after read() accepted it)."""
        try:
            doc = json.loads(self.record_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def where(self, key: str) -> str:
        """Where the record of `key` lives, for messages."""
        return str(self.record_path(key))

    def keys(self) -> list[str]:
        """The record key of every record folder (corrupt ones too, from the folder name)."""
        return [self.ref_of(folder) for folder in self.module_dirs()]

    def read_lock_needs_files(self, key: str) -> bool:
        """Whether taking the lock for a read would create files (no record folder yet)."""
        return not self.lock_path(key).exists()

    # The local root keeps each run's journal in its run folder (events.jsonl, written by the
    # event relay; meta.json; result.json), and documents (rerun inputs, stack reports) as
    # files: nothing more to write or read here. A shared store (store/postgres.py) keeps them
    # too, so that a runner that never saw the run folder can recover.
    def journal(self, key: str, run_id: str) -> NullJournal:
        return NullJournal()

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        return None

    def journal_lines(self, key: str, run_id: str) -> JournalRead | None:
        return None

    def put_document(self, kind: str, name: str, text: str) -> None:
        return None

    def fetch_document(self, kind: str, name: str, path: Path) -> None:
        return None

    def describe(self) -> str:
        return f"local runtime root {self.root}"

    @staticmethod
    def ref_of(folder: Path) -> str:
        """The record key (ref, plus `@workspace` outside the default one) a record folder's
        latest.json states about itself, when it matches the folder; else the key the folder
        name encodes (a corrupt record is still reported)."""
        try:
            doc = json.loads((folder / "latest.json").read_text(encoding="utf-8"))
            ref = doc.get("module_ref") if isinstance(doc, dict) else None
            workspace = doc.get("workspace") if isinstance(doc, dict) else None
            key = record_key(ref, workspace if isinstance(workspace, str) else None) if isinstance(ref, str) else None
            if key is not None and module_id(key) == folder.name:
                return key
        except (OSError, ValueError, RecursionError):
            pass
        return key_of_module_id(folder.name)

    def module_dirs(self) -> list[Path]:
        """Folders under state/modules/ that hold a latest.json."""
        base = self.root / "state" / "modules"
        if not base.is_dir():
            return []
        return sorted(d for d in base.iterdir() if (d / "latest.json").exists() or (d / "latest.json").is_symlink())
