"""record.py: the operation record (docs/contract.md: The record) and its store (§3, §6 step 2).

Round trips, strict reading (refuse loudly, never overwrite what we cannot understand),
atomic writes with private modes, and the per-module lock within and across processes.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
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
    LockBusyError,
    OperationRecord,
    Owner,
    RecordEngine,
    ResourceEntry,
    SuspectOrphan,
)
from hybridops_tf.store.local import RecordStore

REF = "platform/network"


def full_record() -> OperationRecord:
    return OperationRecord(
        module_ref=REF,
        status=Status.RUNNING,
        run_id="apply-20250101T000000Z-deadbeef",
        updated_at="2025-01-01T00:00:05Z",
        module_dir="/work/modules/platform/network",
        active_command="apply",
        started_at="2025-01-01T00:00:00Z",
        owner=Owner(pid=4242, host="ci-7", user="runner", run_id="apply-20250101T000000Z-deadbeef"),
        resolved_inputs_file="/rt/runs/platform__network/r/resolved.inputs.yml",
        rerun_inputs_file="/rt/config/modules/platform__network/rerun.inputs.yml",
        inputs_digest="sha256:abc",
        config_digest="hmac-sha256:config-v1:abc",
        workspace="blue",
        outputs={"network_id": "net-1", "token": {"sensitive": True}},
        resources={
            "sim_vm.b": ResourceEntry(status="error", action="create"),
            "sim_network.a": ResourceEntry(
                status="complete", action="create", id="net-1", tainted=True
            ),
        },
        suspect_orphans=[SuspectOrphan("sim_vm.b", "create", "apply-1", "2025-01-01T00:00:03Z")],
        previous_outputs={"network_id": "net-0"},
        engine=RecordEngine("/usr/bin/tofu", "1.8.0"),
    )


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


# --- the module lock -----------------------------------------------------------------------


def test_lock_is_free_when_no_lock_file_exists(store: RecordStore) -> None:
    assert store.lock_is_free(REF) is True


def test_a_second_lock_on_the_same_module_is_busy_and_names_the_holder(store: RecordStore) -> None:
    with store.lock(REF, "apply-holder-run"):
        assert store.lock_is_free(REF) is False
        with pytest.raises(LockBusyError) as info, store.lock(REF, "apply-second-run"):
            pytest.fail("a second holder got the lock")

    err = info.value
    assert err.exit_code == ExitCode.REFUSED == 4
    assert f"pid {os.getpid()}" in err.message
    assert socket.gethostname() in err.message
    assert "apply-holder-run" in err.message
    assert "since" in err.message
    assert "--lock-timeout" in err.message


def test_lock_timeout_is_mentioned_when_waiting_did_not_help(store: RecordStore) -> None:
    with (
        store.lock(REF, "apply-holder-run"),
        pytest.raises(LockBusyError, match=r"after waiting 0\.1s"),
        store.lock(REF, "apply-second-run", timeout=0.1),
    ):
        pass


def test_locks_on_different_modules_are_independent(store: RecordStore) -> None:
    with store.lock("a", "r1"), store.lock("b", "r2"):
        assert store.lock_is_free("a") is False
        assert store.lock_is_free("b") is False
        assert store.lock_is_free("c") is True


def test_the_holder_note_exists_while_held_and_is_removed_after_release(store: RecordStore) -> None:
    note = store.module_dir(REF) / ".lock.owner.json"
    with store.lock(REF, "apply-holder-run"):
        held = json.loads(note.read_text())
        assert held["pid"] == os.getpid()
        assert held["run_id"] == "apply-holder-run"
        assert stat.S_IMODE(note.stat().st_mode) == 0o600

    assert not note.exists()
    assert store.lock_is_free(REF) is True


def test_the_lock_is_released_when_the_operation_raises(store: RecordStore) -> None:
    with pytest.raises(RuntimeError), store.lock(REF, "r1"):
        raise RuntimeError("operation failed")

    assert store.lock_is_free(REF) is True
    with store.lock(REF, "r2"):
        pass


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


HOLD_LOCK = """
import sys
from pathlib import Path
from hybridops_tf.store.local import RecordStore
store = RecordStore(Path(sys.argv[1]))
with store.lock(sys.argv[2], "apply-child-run"):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def test_a_lock_held_by_another_process_is_seen_as_busy(store: RecordStore) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(store.root), REF],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "locked"

        assert store.lock_is_free(REF) is False
        with pytest.raises(LockBusyError) as info, store.lock(REF, "apply-parent-run"):
            pytest.fail("the parent got a lock the child holds")
        assert f"pid {child.pid}" in info.value.message
        assert "apply-child-run" in info.value.message
        assert socket.gethostname() in info.value.message

        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "released"
        assert child.wait() == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

    assert store.lock_is_free(REF) is True
    with store.lock(REF, "apply-parent-run"):
        pass


def test_a_lock_whose_holder_died_is_free(store: RecordStore) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(store.root), REF],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    child.kill()  # no cleanup: the holder note stays behind, the OS lock does not
    child.wait()
    child.stdin.close()
    child.stdout.close()

    assert store.lock_is_free(REF) is True
    with store.lock(REF, "apply-next-run"):
        note = json.loads((store.module_dir(REF) / ".lock.owner.json").read_text())
        assert note["run_id"] == "apply-next-run"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_busy_lock_never_names_a_dead_holder_from_a_note_left_by_a_kill(store: RecordStore) -> None:
    from filelock import FileLock

    note = store.module_dir(REF) / ".lock.owner.json"
    note.parent.mkdir(parents=True, exist_ok=True)
    dead = _dead_pid()
    note.write_text(json.dumps({"pid": dead, "host": os.uname().nodename, "user": "u",
                                "run_id": "apply-killed-run", "since": "then"}))
    # A new holder has the flock but has not yet replaced the note.
    holder = FileLock(str(store.lock_path(REF)), timeout=0)
    with holder, pytest.raises(LockBusyError) as info, store.lock(REF, "apply-loser-run"):
        pytest.fail("the loser got the lock")

    assert f"pid {dead} " not in info.value.message
    assert "apply-killed-run" not in info.value.message
    assert "locked by another process" in info.value.message


def test_a_note_from_another_host_is_trusted_as_is(store: RecordStore) -> None:
    from filelock import FileLock

    note = store.module_dir(REF) / ".lock.owner.json"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(json.dumps({"pid": 4242, "host": "build-agent-7", "user": "ci",
                                "run_id": "apply-remote-run", "since": "then"}))
    with FileLock(str(store.lock_path(REF)), timeout=0), pytest.raises(LockBusyError) as info, \
            store.lock(REF, "apply-loser-run"):
        pytest.fail("the loser got the lock")

    assert "pid 4242 on build-agent-7" in info.value.message


def test_taking_the_lock_sweeps_temp_files_left_by_a_killed_write(store: RecordStore) -> None:
    folder = store.module_dir(REF)
    folder.mkdir(parents=True)
    stale = folder / ".latest.json.k1ll3d.tmp"
    stale.write_text('{"half": ')
    record = folder / "latest.json"
    record.write_text("{}")

    with store.lock(REF, "apply-next-run"):
        assert not stale.exists()
        assert record.read_text() == "{}"
