"""engine/files.py (the core reads it as fsutil): durable, private writes (docs/contract.md: Commands and options: dirs
0700, files 0600) that refuse symlinks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hybridops_tf.base import files
from hybridops_tf.base.files import atomic_write_bytes, atomic_write_text, ensure_dir, open_append


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def loose_umask():
    """A permissive umask must not loosen what hyops creates."""
    old = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(old)


# --- ensure_dir ----------------------------------------------------------------------------


def test_every_created_directory_level_is_0700(tmp_path: Path, loose_umask: None) -> None:
    leaf = tmp_path / "rt" / "state" / "modules" / "a__b"

    assert ensure_dir(leaf) == leaf

    for level in (
        tmp_path / "rt",
        tmp_path / "rt" / "state",
        tmp_path / "rt" / "state" / "modules",
        leaf,
    ):
        assert mode(level) == 0o700, level


def test_ensure_dir_leaves_existing_directories_alone(tmp_path: Path) -> None:
    existing = tmp_path / "shared"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)

    ensure_dir(existing / "mine")

    assert mode(existing) == 0o755
    assert mode(existing / "mine") == 0o700


def test_ensure_dir_refuses_a_symlink_to_a_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)

    with pytest.raises(OSError, match="symlink"):
        ensure_dir(link)


def test_ensure_dir_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")

    with pytest.raises(OSError, match="symlink"):
        ensure_dir(link)
    assert not (tmp_path / "nowhere").exists()


def test_ensure_dir_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")

    with pytest.raises(OSError):
        ensure_dir(tmp_path / "file")
    with pytest.raises(OSError):
        ensure_dir(tmp_path / "file" / "below")


# --- atomic writes -------------------------------------------------------------------------


def test_atomic_write_creates_a_0600_file_in_0700_dirs(tmp_path: Path, loose_umask: None) -> None:
    path = tmp_path / "rt" / "runs" / "meta.json"

    atomic_write_text(path, '{"schema_version": 1}\n')

    assert path.read_text() == '{"schema_version": 1}\n'
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(path.parent.parent) == 0o700


def test_atomic_write_replaces_a_looser_file_with_a_0600_one(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text("old")
    os.chmod(path, 0o644)

    atomic_write_bytes(path, b"new")

    assert path.read_bytes() == b"new"
    assert mode(path) == 0o600


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    for i in range(3):
        atomic_write_text(tmp_path / "f.json", str(i))

    assert os.listdir(tmp_path) == ["f.json"]
    assert (tmp_path / "f.json").read_text() == "2"


def test_atomic_write_text_encodes_utf8(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "f.txt", "réseau ✓")

    assert (tmp_path / "f.txt").read_bytes() == "réseau ✓".encode()


def test_a_failure_before_replace_keeps_the_old_file_and_removes_the_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "latest.json"
    path.write_text("old and whole")

    def crash(src: str, dst: str) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "replace", crash)
    with pytest.raises(OSError, match="Input/output"):
        atomic_write_text(path, "new")

    assert path.read_text() == "old and whole"
    assert os.listdir(tmp_path) == ["latest.json"]


def test_an_interrupt_during_the_write_removes_the_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(tmp_path / "f.json", "x")

    assert os.listdir(tmp_path) == []


def test_atomic_write_refuses_to_replace_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("precious")
    link = tmp_path / "latest.json"
    link.symlink_to(target)

    with pytest.raises(OSError, match="symlink"):
        atomic_write_text(link, "new")

    assert link.is_symlink()
    assert target.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["latest.json", "target"]


def test_atomic_write_refuses_a_symlinked_parent_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)

    with pytest.raises(OSError, match="symlink"):
        atomic_write_text(tmp_path / "link" / "f.json", "x")

    assert os.listdir(real) == []


# --- open_append ---------------------------------------------------------------------------


def test_open_append_creates_a_0600_log_and_appends(tmp_path: Path, loose_umask: None) -> None:
    log = tmp_path / "run" / "events.jsonl"

    with open_append(log) as fh:
        fh.write(b'{"a":1}\n')
    with open_append(log) as fh:
        fh.write(b'{"b":2}\n')

    assert log.read_bytes() == b'{"a":1}\n{"b":2}\n'
    assert mode(log) == 0o600
    assert mode(log.parent) == 0o700


def test_open_append_refuses_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"precious")
    link = tmp_path / "engine.stderr.log"
    link.symlink_to(target)

    with pytest.raises(OSError):
        open_append(link)

    assert target.read_bytes() == b"precious"
