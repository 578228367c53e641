"""The operation record (`latest.json`, schema_version 1) and its store (docs/contract.md:
Files under the runtime root, The record).

The record says what was attempted; provider state says what exists. This module only
reads and writes records: under a per-module lock held for the whole operation, always
atomically, never over a file it could not understand.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.actions import ActionRow, rows_from
from hybridops_tf.record.advice import ADVISE
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.stamp import StateStamp

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
                       f"({ADVISE.store('status')}), then restore it from a backup")
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
    outside: bool | None = None  # not made by hyops: another writer's apply or import put it in the state
    # The provider's own key for the object beside its id, as the state gives it (Terraform and
    # OpenTofu >= 1.12, with a provider that declares an identity schema); its schema version.
    identity: dict[str, Any] | None = None
    identity_schema_version: int | None = None

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
        if self.outside:
            doc["outside"] = True
        if self.identity is not None:
            doc["identity"] = dict(self.identity)
            if self.identity_schema_version is not None:
                doc["identity_schema_version"] = self.identity_schema_version
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> ResourceEntry:
        """One entry as a record on disk holds it; an identity that is not an object is none."""
        identity, version = doc.get("identity"), doc.get("identity_schema_version")
        return cls(ResourceStatus(str(doc["status"])), str(doc.get("action", "")), doc.get("id"),
                   doc.get("tainted"), doc.get("deposed"), True if doc.get("outside") is True else None,
                   dict(identity) if isinstance(identity, dict) and identity else None,
                   version if isinstance(version, int) and not isinstance(version, bool)
                   and isinstance(identity, dict) and identity else None)


def deposed_entry_key(address: str, deposed_key: str) -> str:
    """The `resources` key of a deposed object: its own entry beside the current object's."""
    return f"{address} (deposed {deposed_key})"


def missing_entry_key(address: str, object_id: str) -> str:
    """The `resources` key of an object the record keeps while its address holds another one
    and no proof of its deletion exists (record/gate.py): `state_missing` until settled."""
    return f"{address} (missing {object_id})"


def entry_address(key: str) -> str:
    """The resource address a `resources` key names (a deposed or a kept missing entry's key
    carries more than the address)."""
    return key.partition(" (deposed ")[0].partition(" (missing ")[0]


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
    active_command: Command | None = None
    failed_command: Command | None = None
    last_error: str | None = None
    started_at: str | None = None
    owner: Owner | None = None
    resolved_inputs_file: str | None = None
    rerun_inputs_file: str | None = None
    inputs_digest: str | None = None
    config_digest: str | None = None  # the configuration an apply applied (operation/config_digest.py)
    workspace: str | None = None
    outputs: dict[str, Any] | None = None
    resources: dict[str, ResourceEntry] | None = None
    suspect_orphans: list[SuspectOrphan] = field(default_factory=list)
    released: list[ReleasedObject] = field(default_factory=list)
    previous_outputs: dict[str, Any] | None = None
    engine: RecordEngine | None = None
    last_attempt: LastAttempt | None = None
    # The state as hyops left it (lineage, serial, objects) after its last apply, destroy,
    # import or reconcile --write: a state that moved since was written by someone else.
    state_seen: StateStamp | None = None
    # The action invocations of the last apply or destroy (Terraform 1.14+; record/actions.py).
    actions: list[ActionRow] = field(default_factory=list)
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
            "resolved_inputs_file", "rerun_inputs_file", "inputs_digest", "config_digest", "workspace",
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
        if self.state_seen is not None:
            doc["state_seen"] = self.state_seen.to_json()
        if self.actions:
            doc["actions"] = [row.to_dict() for row in self.actions]
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
            "resolved_inputs_file", "rerun_inputs_file", "inputs_digest", "config_digest", "workspace",
        ):
            value = doc.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"field {name} is not a string")
            setattr(rec, name, value)
        for name in ("active_command", "failed_command"):
            value = getattr(rec, name)
            try:
                setattr(rec, name, None if value is None else Command(value))
            except ValueError:
                raise ValueError(f"unknown {name} {value!r}") from None
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
                rec.resources = {str(addr): ResourceEntry.from_dict(r) for addr, r in doc["resources"].items()}
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
            if doc.get("state_seen") is not None:
                rec.state_seen = StateStamp.from_json(doc["state_seen"])
            rec.actions = rows_from(doc.get("actions"))
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise ValueError(f"malformed owner/resources/suspect_orphans/released/last_attempt/state_seen/actions: "
                             f"{err!r}") from None
        rec.extra = {k: v for k, v in doc.items() if k not in known}
        return rec
