"""The local store: records as files under the runtime root, each under its lock."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Protocol

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import RefusedError
from hybridops_tf.base.files import atomic_write_text, ensure_dir, refuse_symlinks, register_private_root
from hybridops_tf.base.flock import LockFile
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.record import layout
from hybridops_tf.record.address import key_of_module_id, module_id, record_key
from hybridops_tf.record.model import CorruptRecordError, LockBusyError, OperationRecord, Owner, utc_now
from hybridops_tf.store.localdocs import LocalDocuments
from hybridops_tf.store.ports import JournalRead

LOCK_POLL_SECONDS = 0.1  # a wait for a busy lock looks for a signal this often
STALE_TEMP_SECONDS = 600.0  # a temp file in a record folder this old is a killed write's (_sweep_temp_files)
OWNER_NOTE = ".lock.owner.json"  # the lock holder's note, beside its lock file


class LockPlace(Protocol):
    """Where a key's lock file and its holder's note live (a folder of their own per key: the
    holder sweeps that folder's temp files): the runtime root's record folder, or the SQLite
    store's lock folder beside its database (store/sqlite.py)."""

    def module_dir(self, module_ref: str) -> Path: ...
    def lock_path(self, module_ref: str) -> Path: ...


class ModuleLock:
    """The per-module lock, held for a whole operation; names its holder when busy. A file
    lock (flock): the kernel frees it when its holder dies, however it dies."""

    def __init__(self, store: LockPlace, module_ref: str, run_id: str, timeout: float) -> None:
        self.store = store
        self.module_ref = module_ref
        self.run_id = run_id
        self.timeout = timeout
        self.owner_path = store.module_dir(module_ref) / OWNER_NOTE
        self._lock: LockFile | None = None

    def __enter__(self) -> ModuleLock:
        try:
            ensure_dir(self.owner_path.parent)
            taken = self._acquire()
        except OSError as err:
            raise RefusedError(
                f"cannot take the lock {self.store.lock_path(self.module_ref)}: {err.strerror or err}; "
                "check that the runtime root is writable"
            ) from None
        if not taken:
            raise LockBusyError(self._busy_message())
        _sweep_temp_files(self.owner_path.parent)
        try:
            owner = Owner.current(self.run_id)
            atomic_write_text(self.owner_path, json.dumps(
                {"pid": owner.pid, "host": owner.host, "user": owner.user,
                 "run_id": owner.run_id, "since": utc_now()}), durable=False)  # dies with its holder
        except OSError:
            pass  # the holder note is a courtesy; the lock itself is what protects
        return self

    def _acquire(self) -> bool:
        """Wait for the lock up to `timeout`, a little at a time (False: still busy then):
        nothing new starts after a signal, so one that comes while waiting (or as the lock is
        taken) ends the wait."""
        def interrupted() -> bool:  # raises Interrupted once a signal came
            INTERRUPTS.check(f"before the lock of {self.module_ref} was taken; nothing was changed")
            return False

        lock = LockFile(self.store.lock_path(self.module_ref))
        try:
            if not lock.wait(self.timeout, stop=interrupted, longest=LOCK_POLL_SECONDS):
                lock.close()
                return False
            INTERRUPTS.check(f"as the lock of {self.module_ref} was taken; nothing was changed")
        except BaseException:
            lock.close()
            raise
        self._lock = lock
        return True

    def __exit__(self, *exc: object) -> None:
        try:
            self.owner_path.unlink()
        except OSError:
            pass
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _busy_message(self) -> str:
        # The holder writes its note right after the flock, so a missing note or one left by a
        # killed holder (SIGKILL skips __exit__) is only trusted once it names a live process.
        deadline = time.monotonic() + 2.0
        while True:
            who = live_holder(self.owner_path)
            if who is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        holder = f"module {self.module_ref} is locked by {who or 'another process'}"
        if self.timeout > 0:  # --lock-timeout was given: advise raising it, not passing it again
            return f"{holder} after waiting {self.timeout:g}s; wait for it to finish or raise --lock-timeout"
        return f"{holder}; wait for it to finish or pass --lock-timeout SECONDS"


def _sweep_temp_files(module_dir: Path) -> None:
    """Remove temp files an atomic write left when its process was killed mid-write: each
    `.<name>.<random>.tmp` here older than STALE_TEMP_SECONDS (never a record: those are
    renamed into place).

    Not every writer here holds the lock: a reconcile keeps what it saw (drift_seen,
    outside_seen) after it let the lock go, so a young temp file may be another process's write
    between its two halves, which removing it would fail."""
    old = time.time() - STALE_TEMP_SECONDS
    try:
        for found in module_dir.glob(".*.tmp"):
            try:
                if found.lstat().st_mtime < old:
                    found.unlink()
            except FileNotFoundError:
                continue
    except OSError:
        pass  # tidiness only: a leftover temp file is never read


def live_holder(owner_path: Path) -> str | None:
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


def lock_file_is_free(path: Path) -> bool:
    """True when no live process holds the lock file (a probe, released at once)."""
    if not path.exists():
        return True
    try:
        with LockFile(path) as probe:
            return probe.take()
    except OSError:
        return False


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


class RecordStore(LocalDocuments):
    """Records under `<runtime_root>/state/modules/<module_id>/` (the local store), documents
    as files beside them."""

    spans_roots = False  # each runtime root keeps its own records

    def __init__(self, runtime_root: Path) -> None:
        self.root = runtime_root
        register_private_root(runtime_root)

    def module_dir(self, module_ref: str) -> Path:
        return layout.record_dir(self.root, module_ref)

    def record_path(self, module_ref: str) -> Path:
        return self.module_dir(module_ref) / "latest.json"

    def lock_path(self, module_ref: str) -> Path:
        return self.module_dir(module_ref) / ".lock"

    def lock(self, module_ref: str, run_id: str, timeout: float = 0) -> ModuleLock:
        return ModuleLock(self, module_ref, run_id, timeout)

    def lock_is_free(self, module_ref: str) -> bool:
        return lock_file_is_free(self.lock_path(module_ref))

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
            return OperationRecord.from_dict(numbers.loads(text))
        except (ValueError, RecursionError) as err:
            raise CorruptRecordError(path, str(err)) from None

    def write(self, record: OperationRecord, *, stamp: bool = True) -> None:
        """Replace the record atomically; `updated_at` set to now unless `stamp` is False (a
        record put back as it was: an import, a run the engine refused)."""
        if stamp:
            record.updated_at = utc_now()
        text = numbers.dumps(record.to_dict(), indent=2, sort_keys=False) + "\n"
        atomic_write_text(self.record_path(record_key(record.module_ref, record.workspace)), text)

    def delete(self, key: str) -> None:
        """Remove the record (a run the engine refused before it had one); OSError on failure."""
        self.record_path(key).unlink(missing_ok=True)

    def read_raw(self, key: str) -> dict[str, Any] | None:
        """The record exactly as stored (after read() accepted it)."""
        try:
            doc = numbers.loads(self.record_path(key).read_text(encoding="utf-8"))
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
    # event relay; meta.json; result.json): nothing more to write or read here. A store outside
    # the root (store/postgres.py) keeps them too, so that a runner that never saw the run
    # folder can recover. Its documents are files (store/localdocs.py).
    def journal(self, key: str, run_id: str) -> NullJournal:
        return NullJournal()

    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None:
        return None

    def journal_lines(self, key: str, run_id: str) -> JournalRead | None:
        return None

    def describe(self) -> str:
        return f"local runtime root {self.root}"

    def queue(self) -> None:
        """A local root holds no stack queue: `--queue` needs the shared store."""
        return None

    def admin(self) -> None:
        """Nothing to administer: `hyops store status` and `import-local` need a store outside
        the root (whose import source this store is)."""
        return None

    def digest_key(self, create: bool) -> bytes | None:
        """The root's key for `inputs_digest` (store/keyfile.py); None when there is none and
        not `create`."""
        from hybridops_tf.store import keyfile

        return keyfile.digest_key(layout.digest_key(self.root), create)

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
        base = layout.records_dir(self.root)
        if not base.is_dir():
            return []
        return sorted(d for d in base.iterdir() if (d / "latest.json").exists() or (d / "latest.json").is_symlink())
