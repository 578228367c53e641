"""Storage faults: an unusable runtime root refuses before any mutation; a failed settle
write leaves `running` and says so loudly.

Faults are real (a file where a folder should be, chattr +i, a read-only bind mount, a
full or inode-starved tmpfs), never simulated in Python.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import pytest
import yaml

from hybridops_tf.base.files import ensure_dir
from tests.integration.gates import Gate
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.checks import (
    assert_lock_free,
    assert_no_unaccounted_objects,
    check_record,
)
from tests.reliability.figures import FAULT, note
from tests.reliability.modules import PAIR_ADDRESSES
from tests.reliability.storage import exhaust_inodes, fill, immutable, read_only_bind, tmpfs

pytestmark = pytest.mark.integration

MODULE = "modules/pair"
REF = "pair"


def _state_dir(h: Hyops) -> Path:
    return h.record_path(REF).parent


def _replace_with_file(path: Path) -> AbstractContextManager[None]:
    @contextmanager
    def swap() -> Iterator[None]:
        aside = path.with_name(path.name + ".aside")
        path.rename(aside)
        path.write_text("not a directory\n")
        try:
            yield
        finally:
            path.unlink()
            aside.rename(path)
    return swap()


def _replace_lock(h: Hyops, kind: str) -> AbstractContextManager[None]:
    @contextmanager
    def swap() -> Iterator[None]:
        lock = _state_dir(h) / ".lock"
        victim = h.workdir / "victim.txt"
        victim.write_text("must stay intact\n")
        lock.unlink()
        if kind == "directory":
            lock.mkdir()
        else:
            lock.symlink_to(victim)
        try:
            yield
        finally:
            if lock.is_dir() and not lock.is_symlink():
                lock.rmdir()
            else:
                lock.unlink()
            assert victim.read_text() == "must stay intact\n", "the lock symlink's target was written"
    return swap()


@contextmanager
def _full_disk(h: Hyops) -> Iterator[None]:
    filler = fill(h.runtime_root)
    try:
        yield
    finally:
        filler.unlink()


@contextmanager
def _no_inodes(h: Hyops) -> Iterator[None]:
    exhaust_inodes(h.runtime_root)
    try:
        yield
    finally:
        import shutil

        shutil.rmtree(h.runtime_root / "inodes")


# fault name -> (needs a tmpfs runtime root, context factory)
FAULTS: dict[str, tuple[bool, Callable[[Hyops], AbstractContextManager[None]]]] = {
    "state_dir_is_a_file": (False, lambda h: _replace_with_file(h.runtime_root / "state")),
    "module_state_dir_is_a_file": (False, lambda h: _replace_with_file(_state_dir(h))),
    "runs_dir_is_a_file": (False, lambda h: _replace_with_file(h.runtime_root / "runs")),
    "config_dir_is_a_file": (False, lambda h: _replace_with_file(h.runtime_root / "config")),
    "lock_path_is_a_directory": (False, lambda h: _replace_lock(h, "directory")),
    "lock_path_is_a_symlink": (False, lambda h: _replace_lock(h, "symlink")),
    "module_state_dir_immutable": (False, lambda h: immutable(_state_dir(h))),
    "runs_dir_immutable": (False, lambda h: immutable(h.runtime_root / "runs" / REF)),
    "runtime_root_read_only_bind": (False, lambda h: read_only_bind(h.runtime_root)),
    "runtime_root_disk_full": (True, _full_disk),
    "runtime_root_out_of_inodes": (True, _no_inodes),
}
HEAVY = pytest.mark.reliability  # more of the same kind: `make reliability` runs them
CASES = [pytest.param(f, "apply", id=f"apply-{f}") for f in FAULTS] + [
    pytest.param(f, "destroy", id=f"destroy-{f}", marks=() if f == "module_state_dir_immutable" else HEAVY)
    for f in ("module_state_dir_immutable", "runtime_root_read_only_bind", "runtime_root_disk_full",
              "lock_path_is_a_directory")
]


@contextmanager
def _runtime_root_on(h: Hyops, small: bool) -> Iterator[None]:
    if not small:
        yield
        return
    with tmpfs(h.runtime_root, size="6m", inodes=400):
        yield


def _snapshot(h: Hyops) -> tuple[bytes | None, int, list[str]]:
    path = h.record_path(REF)
    record = path.read_bytes() if path.exists() else None
    return record, len(h.sim_calls()), sorted(o["id"] for o in h.sim_objects())


@pytest.mark.parametrize(("fault", "command"), CASES)
def test_unusable_runtime_root_refuses_with_exit_4_and_never_calls_the_provider(
    hyops: Hyops, pair: Path, fault: str, command: str
) -> None:
    small, make_fault = FAULTS[fault]
    with _runtime_root_on(hyops, small):
        assert hyops("apply", MODULE).returncode == 0
        if command == "apply":
            assert hyops("destroy", MODULE).returncode == 0
        record, calls, objects = _snapshot(hyops)

        with make_fault(hyops):
            result = hyops(command, MODULE)
        after_fault = _snapshot(hyops)

        note(FAULT, fault=fault, command=command, exit_code=result.returncode,
             provider_called=after_fault[1] != calls)
        assert result.returncode == 4, result.stdout + result.stderr
        assert result.stderr.startswith("hyops: error:") and "Traceback" not in result.stderr
        assert after_fault == (record, calls, objects), "something changed although hyops refused"
        assert_lock_free(hyops, REF)
        assert check_record(hyops, REF, f"after fault {fault}") is not None

        # once the fault is gone, the same command runs: nothing was left half-done
        again = hyops(command, MODULE)
        assert again.returncode == 0, again.stdout + again.stderr


def _start_hanging(h: Hyops, tmp_path: Path, command: str) -> tuple[object, Gate]:
    """`command` parked in its vm create/delete until the caller releases the gate (once the
    fault is in place: a window of seconds could close before a slow setup finished)."""
    op = "create" if command == "apply" else "delete"
    faults = tmp_path / "hang.yml"
    gate = Gate.at(tmp_path)
    faults.write_text(yaml.safe_dump({"rules": [gate.rule(type="sim_vm", op=op)]}))
    proc = h.start(command, MODULE, env={"HYOPS_SIM_FAULTS": str(faults)})
    try:
        gate.wait_started(proc, procs.GENEROUS)
        rec = json.loads(h.record_path(REF).read_text())
        assert rec["status"] == "running", rec
    except BaseException:
        gate.release()
        raise
    return proc, gate


# An output of 6000 characters: the record an apply settles then takes a page more than the
# `running` record it replaces (tmpfs counts whole pages).
PADDING_TF = 'output "padding" {\n  value = join("", [for i in range(600) : "0123456789"])\n}\n'


@contextmanager
def _record_dir_on_its_own_filesystem(h: Hyops) -> Iterator[None]:
    """The record folder is a small filesystem of its own from before the first run, so the
    record the settle write replaces lives on the filesystem that fills up, in plain sight (a
    filesystem mounted over the folder mid-run would hide it: a write in place would then look
    as harmless as an atomic one). Events and run folders stay elsewhere, writable.

    With the padding output, a write in place on the full filesystem would truncate the record
    and run out of room halfway (a torn record); the atomic write fails on its temp file and
    never touches the record."""
    (h.workdir / MODULE / "padding.tf").write_text(PADDING_TF)
    folder = _state_dir(h)
    ensure_dir(folder)  # 0700 at every level, as hyops makes it
    with tmpfs(folder, size="64k", inodes=64):
        yield


@contextmanager
def _record_fs_full(h: Hyops) -> Iterator[None]:
    """The record's filesystem is full: no byte left for a new file beside the record."""
    filler = fill(_state_dir(h))
    try:
        yield
    finally:
        filler.unlink()


# fault name -> (where the record folder lives for the whole test, or None; the fault)
SETTLE_FAULTS: dict[str, tuple[Callable[[Hyops], AbstractContextManager[None]] | None,
                               Callable[[Hyops], AbstractContextManager[None]]]] = {
    "module_state_dir_immutable": (None, lambda h: immutable(_state_dir(h))),
    "module_state_dir_read_only_bind": (None, lambda h: read_only_bind(_state_dir(h))),
    "record_filesystem_full": (_record_dir_on_its_own_filesystem, _record_fs_full),
}
SETTLE_CASES = [pytest.param(f, c, id=f"{c}-{f}",
                             marks=HEAVY if c == "destroy" and f != "module_state_dir_immutable" else ())
                for f in SETTLE_FAULTS for c in ("apply", "destroy")]


@pytest.mark.parametrize(("fault", "command"), SETTLE_CASES)
def test_failed_settle_write_leaves_running_and_says_so_loudly(
    hyops: Hyops, pair: Path, tmp_path: Path, fault: str, command: str
) -> None:
    record_home, make_fault = SETTLE_FAULTS[fault]
    with record_home(hyops) if record_home is not None else nullcontext():
        if command == "destroy":
            assert hyops("apply", MODULE).returncode == 0
        proc, gate = _start_hanging(hyops, tmp_path, command)
        running = hyops.record_path(REF).read_bytes()
        try:
            with make_fault(hyops):
                gate.release()
                stdout, stderr = proc.communicate(timeout=procs.GENEROUS)  # type: ignore[attr-defined]
                during = hyops.record_path(REF).read_bytes()  # while the fault still holds
                leftovers = sorted(p.name for p in _state_dir(hyops).glob(".latest.json.*"))
        finally:
            gate.release()
        kept = hyops.record_path(REF).read_bytes()
        code = proc.returncode  # type: ignore[attr-defined]
        note(FAULT, fault=f"settle write: {fault}", command=command, exit_code=code, provider_called=True)

        assert code == 1, stdout + stderr
        assert "Traceback" not in stderr, stderr
        assert "could not write the settled record" in stderr and "running" in stderr, stderr
        assert during == running, "the settle write that failed changed the record it was replacing"
        assert leftovers == [], f"the failed settle write left its temp file behind: {leftovers}"
        assert kept == running, "the running record must stay as it was when the settle write failed"
        assert_lock_free(hyops, REF)
        doc = check_record(hyops, REF, f"after failed settle write ({fault})")
        assert doc is not None and doc["status"] == "running"
        status = hyops("status", MODULE)
        assert status.returncode == 3 and "running (stale)" in status.stdout, status.stdout
        procs.wait_until(lambda: not procs.engine_pids(pair), "the engine to end")

        # as the stale record says: reconcile settles it from evidence first (a destroy's deletes
        # are in its run's events), then the destroy cleans up what may be left
        settled = hyops("reconcile", MODULE, "--write")
        assert settled.returncode in (0, 3), settled.stdout + settled.stderr
        cleaned = hyops("destroy", MODULE)
        assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
        after = check_record(hyops, REF, "after recovery destroy")
        assert after is not None and after["status"] == "destroyed"
        assert_no_unaccounted_objects(hyops, after, PAIR_ADDRESSES, "after a failed settle write")


def test_event_log_write_failure_mid_run_exits_1_loudly_and_claims_no_success(
    hyops: Hyops, pair: Path, tmp_path: Path
) -> None:
    """The same disk-full a runtime root hits mid-run, made deterministic: the run's
    events.jsonl turns immutable (EPERM on its next append) while the provider hangs."""
    from tests.reliability.crash import CrashRig

    rig = CrashRig(hyops, pair, REF)
    before = rig.run_dirs()
    proc, gate = _start_hanging(hyops, tmp_path, "apply")
    events = next(iter(rig.run_dirs() - before)) / "events.jsonl"
    try:
        with immutable(events):
            gate.release()
            stdout, stderr = proc.communicate(timeout=procs.GENEROUS)  # type: ignore[attr-defined]
    finally:
        gate.release()
    note(FAULT, fault="event log append fails mid-run", command="apply",
         exit_code=proc.returncode, provider_called=True)  # type: ignore[attr-defined]
    doc = check_record(hyops, REF, "after the event log failed mid-run")
    assert doc is not None and doc["status"] in ("running", "error"), doc
    assert_lock_free(hyops, REF)
    assert "Traceback" not in stderr, stderr[-1500:]
    assert proc.returncode == 1, stdout + stderr  # type: ignore[attr-defined]
    assert "events.jsonl" in stderr


def test_runtime_root_fault_capabilities_fail_loudly_when_missing(tmp_path: Path) -> None:
    """The fault helpers really change the filesystem (a helper doing nothing would let
    every storage test pass): prove each makes a write fail as root."""
    target = tmp_path / "d"
    target.mkdir()
    with immutable(target), pytest.raises(PermissionError):
        (target / "x").write_text("x")
    with read_only_bind(target), pytest.raises(OSError):
        (target / "y").write_text("y")
    with tmpfs(target, size="1m"):
        filler = fill(target)
        with pytest.raises(OSError):
            with open(target / "z", "wb") as fh:
                fh.write(b"z" * 65536)
                fh.flush()
                os.fsync(fh.fileno())
        filler.unlink()
