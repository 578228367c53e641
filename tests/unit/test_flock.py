"""hyops's one file lock (base/flock.py): flock(2), private, never through a symlink, freed by
the kernel when its holder dies, and one lock per name even when the file is replaced."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridops_tf.base.flock import LockFile

HOLD = """
import sys, time
from hybridops_tf.base.flock import LockFile
lock = LockFile(sys.argv[1])
assert lock.take(shared=sys.argv[2] == "shared")
open(sys.argv[3], "w").close()  # held: the test may go on
time.sleep(600)
"""


def _held_by_another_process(path: Path, tmp_path: Path, shared: bool = False) -> subprocess.Popen[bytes]:
    ready = tmp_path / f"ready-{os.urandom(4).hex()}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "shared" if shared else "alone", str(ready)])
    for _ in range(60000):  # gated on the file the holder writes once it holds the lock
        if ready.exists() or holder.poll() is not None:
            break
        time.sleep(0.01)
    assert ready.exists(), "the holder never took the lock"
    return holder


def test_a_lock_another_process_holds_is_not_taken_and_is_free_once_it_is_killed(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held_by_another_process(path, tmp_path)
    try:
        with LockFile(path) as lock:
            assert not lock.take()
            assert not lock.take(shared=True)
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=60)
            assert lock.take()
    finally:
        holder.kill()
        holder.wait(timeout=60)


def test_shared_holders_share_and_keep_an_exclusive_one_out(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held_by_another_process(path, tmp_path, shared=True)
    try:
        with LockFile(path) as reader, LockFile(path) as writer:
            assert reader.take(shared=True)
            assert not writer.take()
    finally:
        holder.kill()
        holder.wait(timeout=60)


def test_a_lock_file_replaced_while_one_waited_is_not_held_twice(tmp_path: Path) -> None:
    """The waiter opened the old file; it was removed and made anew, and another holds the new
    one: a flock on the old file would be a second holder of the same name."""
    path = tmp_path / ".lock"
    waiter = LockFile(path)
    path.unlink()
    holder = _held_by_another_process(path, tmp_path)
    try:
        assert not waiter.take()
        holder.kill()
        holder.wait(timeout=60)
        assert waiter.take()
        assert os.stat(path).st_ino == os.fstat(waiter._fd).st_ino  # type: ignore[arg-type]
    finally:
        waiter.close()
        holder.kill()
        holder.wait(timeout=60)


def test_a_lock_file_is_private_and_never_opened_through_a_symlink(tmp_path: Path) -> None:
    kept = os.umask(0)  # a permissive umask: the mode asked for alone makes it private
    try:
        with LockFile(tmp_path / ".lock"):
            pass
    finally:
        os.umask(kept)
    assert stat.S_IMODE((tmp_path / ".lock").stat().st_mode) == 0o600

    (tmp_path / "elsewhere").write_text("not a lock")
    (tmp_path / ".link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        LockFile(tmp_path / ".link")


def test_a_closed_lock_is_released_and_closing_again_does_nothing(tmp_path: Path) -> None:
    first, second = LockFile(tmp_path / ".lock"), LockFile(tmp_path / ".lock")
    assert first.take()
    assert not second.take()
    first.close()
    first.close()
    assert second.take()
    second.close()
    with pytest.raises(ValueError, match="closed"):
        second.take()


def test_a_wait_asks_stop_before_each_try_and_takes_the_lock_once_its_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held_by_another_process(path, tmp_path)
    asked = []

    def stop() -> bool:  # the third time it is asked, the holder is gone
        asked.append(holder.poll())
        if len(asked) == 3:
            holder.kill()
            holder.wait(timeout=60)
        return False

    try:
        with LockFile(path) as lock:
            assert lock.wait(30, shared=True, stop=stop, pause=0.001)  # it is free at the third try
            assert len(asked) == 3
            with LockFile(path) as other:
                assert not other.take()  # held (shared): an exclusive one stays out
    finally:
        holder.kill()
        holder.wait(timeout=60)


def test_a_wait_stopped_takes_nothing_even_a_free_lock(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with LockFile(path) as lock:
        assert not lock.wait(600, stop=lambda: True)
        with LockFile(path) as other:
            assert other.take()


def test_a_wait_whose_stop_raises_lets_the_error_through_untaken(tmp_path: Path) -> None:
    class Signalled(Exception):
        pass

    def stop() -> bool:
        raise Signalled

    path = tmp_path / ".lock"
    with LockFile(path) as lock:
        with pytest.raises(Signalled):
            lock.wait(600, stop=stop)
        with LockFile(path) as other:
            assert other.take()


def test_a_wait_for_a_lock_still_busy_at_its_bound_tries_again_and_then_gives_up(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held_by_another_process(path, tmp_path)
    tries = []
    try:
        with LockFile(path) as lock:
            assert not lock.wait(0.2, stop=lambda: bool(tries.append(1)), pause=0.01)
            assert len(tries) > 1
            before = len(tries)
            assert not lock.wait(0, stop=lambda: bool(tries.append(1)))  # no time: one try
            assert len(tries) == before + 1
    finally:
        holder.kill()
        holder.wait(timeout=60)
