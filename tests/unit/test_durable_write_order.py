"""The order of a durable write (engine/files.py, docs/contract.md: Commands and options): the
temp file's data is fsynced, then it is renamed over the target, then the directory holding the
new name is fsynced.

A crash-consistency property no ordinary assertion sees (the bytes on disk are the same
either way until the machine loses power), so these tests record the system calls the
write makes: os.fsync (noting whether the descriptor is a file or a directory, and its
path) and os.replace.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hybridops_tf.base.files import atomic_write_bytes
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.store.local import RecordStore

Call = tuple[str, ...]


@pytest.fixture
def syscalls(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """Every os.fsync and os.replace made while the test runs, in order:
    ("fsync", "file" | "dir", path) and ("replace", src, dst)."""
    calls: list[Call] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        calls.append(("fsync", kind, os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: object) -> None:
        calls.append(("replace", os.fspath(src), os.fspath(dst)))
        real_replace(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return calls


def assert_durable_order(calls: list[Call], target: Path) -> None:
    """Exactly: fsync of the temp file beside target, its rename onto target, fsync of the dir."""
    temp = next((call[1] for call in calls if call[0] == "replace"), None)
    assert temp is not None, f"no rename onto {target}: {calls}"
    assert Path(temp).parent == target.parent and temp != str(target), calls
    assert calls == [
        ("fsync", "file", temp),
        ("replace", temp, str(target)),
        ("fsync", "dir", str(target.parent)),
    ]


def test_an_atomic_write_fsyncs_the_temp_file_then_renames_then_fsyncs_the_directory(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    target = tmp_path / "state" / "latest.json"
    target.parent.mkdir()
    target.write_bytes(b"old")

    atomic_write_bytes(target, b"new")

    assert_durable_order(syscalls, target)
    assert target.read_bytes() == b"new"


def test_a_first_atomic_write_in_a_new_directory_keeps_the_same_order(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    target = tmp_path / "rt" / "runs" / "meta.json"

    atomic_write_bytes(target, b"{}")

    assert_durable_order(syscalls, target)


def test_a_local_record_write_is_durable_in_the_same_order(tmp_path: Path, syscalls: list[Call]) -> None:
    store = RecordStore(tmp_path / "rt")
    store.write(OperationRecord(module_ref="demo/network", status=Status.OK, run_id="apply-1"))
    syscalls.clear()  # the second write replaces an existing record: the case a crash can tear

    store.write(OperationRecord(module_ref="demo/network", status=Status.ERROR, run_id="apply-2"))

    assert_durable_order(syscalls, store.record_path("demo/network"))
    rec = store.read("demo/network")
    assert rec is not None and rec.run_id == "apply-2"


def test_a_kept_write_of_what_the_file_already_holds_flushes_and_renames_nothing(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    """rerun.inputs.yml of a rerun with the same inputs (operation/run_inputs.py): every write of it
    is durable, so the bytes it holds are on disk already; writing them again would only add
    two disk flushes before the engine may start."""
    from hybridops_tf.base.files import PreparedWrite

    target = tmp_path / "rerun.inputs.yml"
    atomic_write_bytes(target, b"region: eu\n")
    syscalls.clear()

    same = PreparedWrite(target, b"region: eu\n", keep_same=True)
    same.commit()

    assert syscalls == []
    assert target.read_bytes() == b"region: eu\n" and sorted(tmp_path.iterdir()) == [target]
    changed = PreparedWrite(target, b"region: us\n", keep_same=True)  # control: new bytes are written durably
    changed.commit()
    assert_durable_order(syscalls, target)
    assert target.read_bytes() == b"region: us\n"


def test_a_kept_write_rewrites_a_file_whose_mode_is_not_private(tmp_path: Path, syscalls: list[Call]) -> None:
    from hybridops_tf.base.files import PreparedWrite

    target = tmp_path / "rerun.inputs.yml"
    target.write_bytes(b"region: eu\n")
    target.chmod(0o644)

    PreparedWrite(target, b"region: eu\n", keep_same=True).commit()

    assert_durable_order(syscalls, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
