"""The module lock (store/local.ModuleLock, store/ports.Records) as every store without a
server keeps it, the local runtime root and the SQLite store (the `serverless` fixture,
tests/unit/serverless_stores.py): busy while held, in this process or another, naming a live
holder only; free once its holder is done, raised or killed; one per key. The PostgreSQL
store's leg is the integration tests marked both_stores."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time

import pytest
from filelock import FileLock

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.base.files import PreparedWrite
from hybridops_tf.record.model import LockBusyError
from hybridops_tf.store.local import OWNER_NOTE
from tests.unit.serverless_stores import REF, Serverless, hold_lock


def test_a_lock_never_taken_is_free(serverless: Serverless) -> None:
    assert serverless.open().lock_is_free(REF) is True


def test_a_second_lock_on_the_same_module_is_busy_and_names_the_holder(serverless: Serverless) -> None:
    store = serverless.open()
    with store.lock(REF, "apply-holder-run"):
        assert store.lock_is_free(REF) is False
        with pytest.raises(LockBusyError) as info, store.lock(REF, "apply-second-run"):
            pytest.fail("a second holder got the lock")

    err = info.value
    assert err.exit_code == ExitCode.REFUSED == 4
    assert f"pid {os.getpid()} on {socket.gethostname()}" in err.message
    assert "apply-holder-run" in err.message
    assert "since" in err.message
    assert "--lock-timeout" in err.message


def test_lock_timeout_is_mentioned_when_waiting_did_not_help(serverless: Serverless) -> None:
    store = serverless.open()
    with (
        store.lock(REF, "apply-holder-run"),
        pytest.raises(LockBusyError, match=r"after waiting 0\.1s"),
        store.lock(REF, "apply-second-run", timeout=0.1),
    ):
        pass


def test_locks_on_different_modules_are_independent(serverless: Serverless) -> None:
    store = serverless.open()
    with store.lock(REF, "r1"), store.lock("platform/vm", "r2"):
        assert store.lock_is_free(REF) is False
        assert store.lock_is_free("platform/vm") is False
        assert store.lock_is_free("platform/dns") is True


def test_the_holder_note_exists_while_held_and_is_removed_after_release(serverless: Serverless) -> None:
    store = serverless.open()
    note = store.module_dir(REF) / OWNER_NOTE
    with store.lock(REF, "apply-holder-run"):
        held = json.loads(note.read_text())
        assert held["pid"] == os.getpid()
        assert held["run_id"] == "apply-holder-run"
        assert stat.S_IMODE(note.stat().st_mode) == 0o600

    assert not note.exists()
    assert store.lock_is_free(REF) is True


def test_the_lock_is_released_when_the_operation_raises(serverless: Serverless) -> None:
    store = serverless.open()
    with pytest.raises(RuntimeError), store.lock(REF, "r1"):
        raise RuntimeError("operation failed")

    assert store.lock_is_free(REF) is True
    with store.lock(REF, "r2"):
        pass


def test_a_lock_held_by_another_process_is_busy_and_names_it(serverless: Serverless) -> None:
    store = serverless.open()
    child = hold_lock(serverless, REF)
    try:
        assert child.stdin is not None and child.stdout is not None
        assert store.lock_is_free(REF) is False
        with pytest.raises(LockBusyError) as info, store.lock(REF, "apply-parent-run"):
            pytest.fail("the parent got a lock the child holds")
        assert f"pid {child.pid} on {socket.gethostname()}" in info.value.message
        assert "apply-child-run" in info.value.message

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
        assert store.lock_is_free(REF) is False


def test_a_killed_holders_lock_is_free_and_the_next_holder_names_itself(serverless: Serverless) -> None:
    store = serverless.open()
    child = hold_lock(serverless, REF)
    child.kill()  # no cleanup: the holder's note stays behind, the kernel's lock does not
    child.wait()
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()
    child.stdout.close()

    assert store.lock_is_free(REF) is True
    with store.lock(REF, "apply-next-run"):
        note = json.loads((store.module_dir(REF) / OWNER_NOTE).read_text())
        assert note["run_id"] == "apply-next-run"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_busy_lock_never_names_a_dead_holder_from_a_note_left_by_a_kill(serverless: Serverless) -> None:
    store = serverless.open()
    note = store.module_dir(REF) / OWNER_NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    dead = _dead_pid()
    note.write_text(json.dumps({"pid": dead, "host": os.uname().nodename, "user": "u",
                                "run_id": "apply-killed-run", "since": "then"}))
    # A new holder has the flock but has not yet replaced the note.
    with FileLock(str(store.lock_path(REF)), timeout=0), pytest.raises(LockBusyError) as info, \
            store.lock(REF, "apply-loser-run"):
        pytest.fail("the loser got the lock")

    assert f"pid {dead} " not in info.value.message
    assert "apply-killed-run" not in info.value.message
    assert "locked by another process" in info.value.message


def test_a_note_from_another_host_is_trusted_as_is(serverless: Serverless) -> None:
    store = serverless.open()
    note = store.module_dir(REF) / OWNER_NOTE
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(json.dumps({"pid": 4242, "host": "build-agent-7", "user": "ci",
                                "run_id": "apply-remote-run", "since": "then"}))
    with FileLock(str(store.lock_path(REF)), timeout=0), pytest.raises(LockBusyError) as info, \
            store.lock(REF, "apply-loser-run"):
        pytest.fail("the loser got the lock")

    assert "pid 4242 on build-agent-7" in info.value.message


def test_taking_the_lock_sweeps_temp_files_left_by_a_killed_write(serverless: Serverless) -> None:
    store = serverless.open()
    folder = store.module_dir(REF)
    folder.mkdir(parents=True)
    stale = folder / ".latest.json.k1ll3d.tmp"
    stale.write_text('{"half": ')
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    kept = folder / "latest.json"
    kept.write_text("{}")

    with store.lock(REF, "apply-next-run"):
        assert not stale.exists()
        assert kept.read_text() == "{}"


def test_taking_the_lock_leaves_another_process_s_write_between_its_halves(serverless: Serverless) -> None:
    """A reconcile keeps what it saw in the record folder after it let the lock go: an apply
    that takes the lock meanwhile does not remove that write's temp file under it."""
    store = serverless.open()
    seen = store.module_dir(REF) / "drift-seen.json"
    half = PreparedWrite(seen, b'{"drift": []}\n')  # prepared: its temp file is in the folder

    with store.lock(REF, "apply-next-run"):
        pass
    half.commit()

    assert seen.read_bytes() == b'{"drift": []}\n'
