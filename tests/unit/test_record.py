"""record.py: the operation record (docs/contract.md: The record) and its store (§3, §6 step 2).

Round trips, strict reading (refuse loudly, never overwrite what we cannot understand),
atomic writes with private modes, and a runtime root the lock cannot be taken in (the lock's
contract, within and across processes, is tests/unit/test_module_lock.py's).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from hybridops_tf.base import files
from hybridops_tf.base.errors import ExitCode, RefusedError
from hybridops_tf.record.address import module_id, record_key
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.model import (
    REQUIRED,
    SCHEMA_VERSION,
    CorruptRecordError,
    OperationRecord,
    RecordEngine,
)
from hybridops_tf.store.local import RecordStore
from tests.unit.serverless_stores import REF, full_record


def minimal_doc(**over: object) -> dict:
    doc = {
        "schema_version": 1,
        "module_ref": REF,
        "status": "ok",
        "run_id": "apply-1",
        "updated_at": "2025-01-01T00:00:00Z",
    }
    doc.update(over)
    return doc


@pytest.fixture
def store(tmp_path: Path) -> RecordStore:
    return RecordStore(tmp_path / "rt")


def write_raw(store: RecordStore, text: str | bytes, ref: str = REF) -> Path:
    path = store.record_path(ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- OperationRecord -----------------------------------------------------------------------


def test_full_record_round_trips_through_json() -> None:
    rec = full_record()

    doc = json.loads(json.dumps(rec.to_dict()))
    back = OperationRecord.from_dict(doc)

    assert back == rec
    assert back.to_dict() == doc


def test_to_dict_writes_the_documented_field_names() -> None:
    doc = full_record().to_dict()

    assert doc["status"] == "running"
    assert doc["owner"] == {
        "pid": 4242,
        "host": "ci-7",
        "user": "runner",
        "run_id": "apply-20250101T000000Z-deadbeef",
    }
    assert doc["resources"]["sim_network.a"] == {
        "status": "complete",
        "action": "create",
        "id": "net-1",
        "tainted": True,
    }
    assert doc["resources"]["sim_vm.b"] == {"status": "error", "action": "create"}
    assert doc["suspect_orphans"] == [
        {
            "address": "sim_vm.b",
            "action": "create",
            "run_id": "apply-1",
            "at": "2025-01-01T00:00:03Z",
        }
    ]


def test_a_minimal_record_writes_only_the_required_fields() -> None:
    rec = OperationRecord(module_ref=REF, status=Status.OK, run_id="apply-1")

    doc = rec.to_dict()

    assert set(doc) == set(REQUIRED)
    assert doc["schema_version"] == SCHEMA_VERSION == 1


def test_only_present_optional_fields_are_written() -> None:
    rec = OperationRecord(
        module_ref=REF,
        status=Status.ERROR,
        run_id="apply-1",
        failed_command="apply",
        last_error="boom",
        outputs={},
    )

    doc = rec.to_dict()

    assert set(doc) == {*REQUIRED, "failed_command", "last_error", "outputs"}
    assert doc["outputs"] == {}


def test_a_hand_written_record_with_only_required_fields_is_accepted() -> None:
    rec = OperationRecord.from_dict(minimal_doc())

    assert rec.status is Status.OK
    assert rec.outputs is None
    assert rec.owner is None
    assert rec.resources is None
    assert rec.suspect_orphans == []
    assert rec.extra == {}


def test_unknown_fields_from_newer_writers_are_preserved() -> None:
    doc = minimal_doc(future_field={"nested": [1, 2]}, drift_checked_at="2025-02-02T00:00:00Z")

    rec = OperationRecord.from_dict(doc)

    assert rec.extra == {
        "future_field": {"nested": [1, 2]},
        "drift_checked_at": "2025-02-02T00:00:00Z",
    }
    assert rec.to_dict() == doc


def test_unknown_fields_never_override_known_ones() -> None:
    rec = OperationRecord(
        module_ref=REF,
        status=Status.ERROR,
        run_id="apply-2",
        extra={"status": "ok", "run_id": "forged", "x": 1},
    )

    doc = rec.to_dict()

    assert doc["status"] == "error"
    assert doc["run_id"] == "apply-2"
    assert doc["x"] == 1


def test_the_engine_is_written_as_binary_and_version() -> None:
    doc = full_record().to_dict()

    assert json.dumps(doc["engine"]) == '{"binary": "/usr/bin/tofu", "version": "1.8.0"}'


@pytest.mark.parametrize("engine", [
    {}, {"version": "1.8.0"}, {"binary": 7, "version": None}, {"binary": "/b", "version": "1", "kind": "tofu"},
])
def test_an_engine_another_writer_left_is_read_and_rewritten_as_it_was(engine: dict) -> None:
    doc = minimal_doc(engine=engine)

    rec = OperationRecord.from_dict(doc)

    assert rec.to_dict() == doc


def test_a_missing_or_null_engine_reads_as_none() -> None:
    assert OperationRecord.from_dict(minimal_doc()).engine is None
    assert OperationRecord.from_dict(minimal_doc(engine=None)).engine is None
    assert OperationRecord.from_dict(minimal_doc(engine={"version": "1.8.0"})).engine == RecordEngine(version="1.8.0")


@pytest.mark.parametrize("missing", REQUIRED)
def test_each_required_field_is_enforced(missing: str) -> None:
    doc = minimal_doc()
    del doc[missing]

    with pytest.raises(ValueError, match=missing):
        OperationRecord.from_dict(doc)


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_a_schema_version_other_than_1_is_refused(version: object) -> None:
    with pytest.raises(ValueError, match="schema_version"):
        OperationRecord.from_dict(minimal_doc(schema_version=version))


@pytest.mark.parametrize("version", [True, 1.0], ids=["true", "1.0"])
def test_a_schema_version_that_is_not_the_integer_1_is_refused(version: object) -> None:
    with pytest.raises(ValueError, match="schema_version"):
        OperationRecord.from_dict(minimal_doc(schema_version=version))


@pytest.mark.parametrize(
    "doc",
    [
        [],
        "a string",
        minimal_doc(status="pending"),  # a stack-report word, never a module record status
        minimal_doc(status="OK"),
        minimal_doc(module_ref=7),
        minimal_doc(run_id=None),
        minimal_doc(last_error=["not", "a", "string"]),
        minimal_doc(outputs=["not", "an", "object"]),
        minimal_doc(owner={"pid": "not-a-pid", "host": "h", "user": "u", "run_id": "r"}),
        minimal_doc(owner={"pid": 1}),
        minimal_doc(resources=["sim_vm.a"]),
        minimal_doc(resources={"sim_vm.a": {"action": "create"}}),
        minimal_doc(resources={"sim_vm.a": {"status": "running", "action": "create"}}),
        minimal_doc(suspect_orphans="sim_vm.a"),
        minimal_doc(suspect_orphans=[{"action": "create"}]),
        minimal_doc(failed_command="launch"),
        minimal_doc(active_command="Apply"),
    ],
    ids=[
        "list",
        "string",
        "status-pending",
        "status-case",
        "ref-int",
        "run_id-null",
        "last_error-list",
        "outputs-list",
        "owner-pid",
        "owner-partial",
        "resources-list",
        "resource-no-status",
        "resource-unknown-status",
        "orphans-string",
        "orphan-no-address",
        "failed_command-unknown",
        "active_command-case",
    ],
)
def test_malformed_records_are_refused_with_value_error(doc: object) -> None:
    with pytest.raises(ValueError):
        OperationRecord.from_dict(doc)


def test_a_resource_status_read_as_text_is_the_resource_status_enum() -> None:
    doc = minimal_doc(resources={"sim_vm.a": {"status": "pending", "action": "create"}})
    entry = OperationRecord.from_dict(doc).resources["sim_vm.a"]
    assert entry.status is ResourceStatus.PENDING
    assert entry.to_dict() == {"status": "pending", "action": "create"}


def test_the_record_commands_read_as_text_are_the_command_enum_and_written_back_alike() -> None:
    doc = minimal_doc(status="error", failed_command="destroy", active_command="apply")
    rec = OperationRecord.from_dict(doc)

    assert (rec.failed_command, rec.active_command) == (Command.DESTROY, Command.APPLY)
    assert json.dumps(rec.to_dict(), sort_keys=True) == json.dumps(
        {**doc, "schema_version": rec.schema_version}, sort_keys=True)


def test_module_id_replaces_slashes() -> None:
    assert module_id("platform/network/core") == "platform__network__core"


# --- RecordStore.read ----------------------------------------------------------------------


def test_reading_a_missing_record_gives_none(store: RecordStore) -> None:
    assert store.read(REF) is None


def test_store_layout_matches_the_runtime_root_contract(store: RecordStore) -> None:
    assert (
        store.record_path(REF)
        == store.root / "state" / "modules" / "platform__network" / "latest.json"
    )
    assert store.lock_path(REF) == store.root / "state" / "modules" / "platform__network" / ".lock"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"",
        b'{"schema_version": 1, "module_ref": "platform/netw',  # torn write
        json.dumps(minimal_doc(schema_version=2)).encode(),
        json.dumps({"hello": "world"}).encode(),
        b"\xff\xfe\x00binary",
    ],
    ids=["bad-json", "empty", "truncated", "schema-2", "not-a-record", "not-utf8"],
)
def test_an_unreadable_record_raises_corrupt_and_is_left_byte_identical(
    store: RecordStore, content: bytes
) -> None:
    path = write_raw(store, content)
    before = path.stat()

    with pytest.raises(CorruptRecordError) as info:
        store.read(REF)

    assert info.value.exit_code == ExitCode.USAGE == 2
    assert str(path) in info.value.message
    assert path.read_bytes() == content
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_a_symlinked_record_is_refused_and_nothing_is_touched(
    store: RecordStore, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(minimal_doc()))
    path = store.record_path(REF)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)

    with pytest.raises(CorruptRecordError, match="symlink"):
        store.read(REF)

    assert path.is_symlink()
    assert target.read_text() == json.dumps(minimal_doc())


def test_writing_over_a_symlinked_record_is_refused(store: RecordStore, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("precious")
    path = store.record_path(REF)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)

    with pytest.raises(OSError):
        store.write(OperationRecord(module_ref=REF, status=Status.OK, run_id="apply-1"))

    assert path.is_symlink()
    assert target.read_text() == "precious"


def test_a_directory_in_place_of_the_record_is_corrupt(store: RecordStore) -> None:
    store.record_path(REF).mkdir(parents=True)

    with pytest.raises(CorruptRecordError):
        store.read(REF)


# --- RecordStore.write ---------------------------------------------------------------------


def test_write_then_read_round_trips_and_refreshes_updated_at(store: RecordStore) -> None:
    rec = full_record()
    rec.extra = {"future_field": 1}

    store.write(rec)
    back = store.read(record_key(REF, rec.workspace))  # a record outside the default workspace

    assert rec.workspace not in (None, "default")
    assert store.read(REF) is None  # ... is not the default workspace's record
    assert back is not None
    assert back.updated_at != "2025-01-01T00:00:05Z"
    assert back.updated_at.endswith("Z")
    rec.updated_at = back.updated_at
    assert back == rec


def test_write_is_private_and_leaves_no_temp_files(store: RecordStore) -> None:
    store.write(OperationRecord(module_ref=REF, status=Status.OK, run_id="apply-1"))
    store.write(OperationRecord(module_ref=REF, status=Status.ERROR, run_id="apply-2"))

    path = store.record_path(REF)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for directory in (
        store.root,
        store.root / "state",
        store.root / "state" / "modules",
        path.parent,
    ):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert sorted(os.listdir(path.parent)) == ["latest.json"]
    doc = json.loads(path.read_text())
    assert doc["run_id"] == "apply-2"
    assert path.read_text().endswith("\n")


def test_a_failed_replace_keeps_the_old_record_and_no_temp_file(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write(OperationRecord(module_ref=REF, status=Status.OK, run_id="apply-1"))
    path = store.record_path(REF)
    before = path.read_bytes()

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", refuse)
    with pytest.raises(OSError):
        store.write(OperationRecord(module_ref=REF, status=Status.RUNNING, run_id="apply-2"))

    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == ["latest.json"]


def test_module_dirs_lists_only_folders_holding_a_record(store: RecordStore) -> None:
    store.write(OperationRecord(module_ref="a/one", status=Status.OK, run_id="r"))
    store.write(OperationRecord(module_ref="b", status=Status.OK, run_id="r"))
    (store.root / "state" / "modules" / "lock_only").mkdir()

    assert [d.name for d in store.module_dirs()] == ["a__one", "b"]


def test_module_dirs_on_an_empty_root_is_empty(store: RecordStore) -> None:
    assert store.module_dirs() == []


# --- the module lock (its contract on every store without a server: test_module_lock.py) ---


def test_an_unwritable_runtime_root_is_refused_not_crashed(tmp_path: Path) -> None:
    blocker = tmp_path / "rt"
    blocker.write_text("a file where the runtime root should be")
    store = RecordStore(blocker)

    with (
        pytest.raises(RefusedError, match="runtime root is writable") as info,
        store.lock(REF, "r1"),
    ):
        pass

    assert info.value.exit_code == ExitCode.REFUSED
