"""What the core needs of a record store, by capability. Code asks for the capability it uses
(`Records`, `Journals`, `Documents`, `Admin`, the stack queue's `QueueStore`), never for a class
or a URL; each store (store/local.py, store/sqlite.py, store/postgres.py) implements them, and
store/__init__.py opens the one selected. The stores import this module, never store/__init__.py.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hybridops_tf.base.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from hybridops_tf.record.model import OperationRecord


class Journal(Protocol):
    """A run's journal in the store, fed while the engine runs (never blocking it)."""

    def line(self, text: str, kind: str) -> None: ...
    def engine_started(self, pid: int, host: str) -> None: ...
    def complete(self) -> None: ...
    def close(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class JournalRead:
    """What a store's journal holds of one run: the engine lines it kept, in order, whether
    the engine was spawned, and whether those lines are its whole stdout (events.complete)."""

    lines: tuple[str, ...]
    engine_started: bool
    complete: bool


class QueueStore(Protocol):
    """What the stack queue (stack/queue) needs of a store that can hold it: the database it
    lives in (`url`, never printed unredacted), reads on the store's own connection, that
    connection checked after an idle spell, and the store's documents written in the queue's
    own transaction."""

    url: str

    def read_with(self, read: Callable[[Any], Any]) -> Any: ...
    def check_idle_connection(self) -> None: ...
    def put_document_on(self, conn: Any, kind: str, name: str, text: str) -> None: ...
    def describe(self) -> str: ...


class Records(Protocol):
    """Records and their locks: one record per key, written whole, under the key's lock.
    Writes raise OSError when they fail. `root`: the runtime root whose run folders go with
    these records. `spans_roots`: every runtime root and folder reads and writes these same
    records (a store outside the root), so no root can hold another record of a module, and
    nothing kept in one root (a cache of checks) sees every writer."""

    root: Path
    spans_roots: bool

    def read(self, key: str) -> OperationRecord | None: ...
    def read_raw(self, key: str) -> dict[str, Any] | None: ...
    def write(self, record: OperationRecord, *, stamp: bool = True) -> None: ...
    def delete(self, key: str) -> None: ...
    def keys(self) -> list[str]: ...
    def where(self, key: str) -> str: ...
    def describe(self) -> str: ...
    def digest_key(self, create: bool) -> bytes | None: ...
    def lock(self, key: str, run_id: str, timeout: float = 0) -> AbstractContextManager[Any]: ...
    def lock_is_free(self, key: str) -> bool: ...
    def read_lock_needs_files(self, key: str) -> bool: ...


class Journals(Protocol):
    """Each run's journal: the engine lines as they come, read back by another runner."""

    def journal(self, key: str, run_id: str) -> Journal: ...
    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None: ...
    def journal_lines(self, key: str, run_id: str) -> JournalRead | None: ...


class Documents(Protocol):
    """Named documents beside the records (rerun inputs, stack reports, what reconcile saw:
    store/documents.py names the kinds) and their appended lines. Each has a local file under
    the runtime root that readers use: `put_document` leaves it holding the text (the local
    store: it is the document; others keep their copy and then this one), `fetch_document`
    returns it, brought up to date from the store's copy. OSError when a write fails."""

    def put_document(self, kind: str, name: str, text: str) -> None: ...
    def fetch_document(self, kind: str, name: str) -> Path: ...
    def append_document_line(self, kind: str, name: str, run_id: str, line: str) -> None: ...
    def document_lines(self, kind: str, name: str, run_id: str) -> list[str]: ...
    def drop_document_lines(self, kind: str, name: str) -> None: ...


class RunRecords(Records, Journals, Protocol):
    """Records with their runs' journals: what reads an earlier run back (its folder under
    `root` on this machine, else the store's journal of it)."""


class RunStore(Records, Journals, Documents, Protocol):
    """What one module's run writes: its record under the lock, its journal, its rerun inputs
    (operation/steps.py)."""


class Admin(Records, Documents, Protocol):
    """A store outside the runtime root, administered as one: `hyops store status` prints its
    `summary()` (`store`, `server`, `schema_version`, `records`, `locks_held`: each with its
    `key` and `holder`), and `hyops store import-local` copies a local root's records and
    documents into it."""

    def summary(self) -> dict[str, Any]: ...


class Store(RunStore, Protocol):
    """Every capability of a store, for the one place that holds the store (runtime/root.py);
    a room annotates what it uses. A store that can hold the stack queue says so with
    `queue()`, one that can be administered with `admin()` (None: it cannot)."""

    def queue(self) -> QueueStore | None: ...
    def admin(self) -> Admin | None: ...
