"""Where records, locks and run journals live: the local runtime root, a shared PostgreSQL
store (`--store postgresql://...` / HYOPS_STORE), or a SQLite file shared by the processes of
one machine (`--store sqlite:///PATH`, store/sqlite.py).

Which one is in use is store/url.py's: the CLI calls `configure()` once, everything else asks `selected_url()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hybridops_tf.store.url import is_postgres_url, is_sqlite_url, redact_url, selected_url

if TYPE_CHECKING:
    from hybridops_tf.record.model import OperationRecord
    from hybridops_tf.store.local import JournalRead
    from hybridops_tf.store.postgres import PgStore


class Journal(Protocol):
    """A run's journal in the store, fed while the engine runs (never blocking it)."""

    def line(self, text: str, kind: str) -> None: ...
    def engine_started(self, pid: int, host: str) -> None: ...
    def complete(self) -> None: ...
    def close(self) -> str | None: ...


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
    Writes raise OSError when they fail."""

    root: Path
    shared: bool  # every runner reads the same records (a run elsewhere is seen here)

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
    """Each run's journal: the engine's lines as they come, read back by another runner."""

    def journal(self, key: str, run_id: str) -> Journal: ...
    def journal_doc(self, key: str, run_id: str, kind: str, doc: dict[str, Any]) -> None: ...
    def journal_lines(self, key: str, run_id: str) -> JournalRead | None: ...


class Documents(Protocol):
    """Named documents beside the records (stack reports, rerun inputs) and their lines."""

    def put_document(self, kind: str, name: str, text: str) -> None: ...
    def fetch_document(self, kind: str, name: str, path: Path) -> None: ...
    def append_document_line(self, kind: str, name: str, run_id: str, line: str) -> None: ...
    def document_lines(self, kind: str, name: str, run_id: str) -> list[str]: ...
    def drop_document_lines(self, kind: str, name: str) -> None: ...


class Store(Records, Journals, Documents, Protocol):
    """What the core needs of a record store, by capability; store.local.RecordStore (files
    under the runtime root) and store.postgres.PgStore implement it. A store that can also
    hold the stack queue says so with `queue()` (None: it cannot); code asks for the
    capability it needs, never for a class or a URL. store.sqlite.SqliteStore is the third."""

    def queue(self) -> QueueStore | None: ...


_open: dict[tuple[str, Path], PgStore] = {}
_open_lock = threading.Lock()


def open_store(runtime_root: Path) -> Store:
    """The record store in use: the local runtime root, a SQLite file, or the shared PostgreSQL
    store (one per URL and root in a process, so its connection is reused)."""
    url = selected_url()
    if url is None:
        from hybridops_tf.store.local import RecordStore

        return RecordStore(runtime_root)
    if is_sqlite_url(url):
        from hybridops_tf.store.sqlite import SqliteStore

        return SqliteStore(url, runtime_root)
    return shared_store(runtime_root)


def shared_store(runtime_root: Path) -> PgStore:
    """The shared PostgreSQL store selected by `--store`/HYOPS_STORE, for what only it has
    (the shared inputs digest key, `hyops store status`); UsageError when none is selected."""
    from hybridops_tf.base.errors import UsageError

    url = selected_url()
    if url is None:
        raise UsageError("no shared store selected: pass --store postgresql://USER@HOST:PORT/DB "
                         "or set HYOPS_STORE (the password through PGPASSWORD or PGPASSFILE)")
    if is_sqlite_url(url):
        raise UsageError(f"--store/HYOPS_STORE {url} is a SQLite store, and this command is the PostgreSQL "
                         "store's: pass --store postgresql://USER@HOST:PORT/DATABASE (docs/shared-store.md)")
    if not is_postgres_url(url):
        raise UsageError(f"--store/HYOPS_STORE {redact_url(url)!r} is not a PostgreSQL URL: use "
                         "postgresql://USER@HOST:PORT/DATABASE (the password through PGPASSWORD or PGPASSFILE)")
    from hybridops_tf.store.postgres import PgStore

    with _open_lock:
        store = _open.get((url, runtime_root))
        if store is None:
            store = _open[(url, runtime_root)] = PgStore(url, runtime_root)
        return store


def init_store(url: str) -> tuple[int, int]:
    """`hyops store init` of the store `url` names: its schema created or migrated; (version
    before, version after). A SQLite file is made when missing (store/sqlitedb.py)."""
    if is_sqlite_url(url):
        from hybridops_tf.store.sqlitedb import SCHEMA_VERSION, database_path, open_database

        return open_database(database_path(url)), SCHEMA_VERSION
    from hybridops_tf.store.pgconn import migrate

    return migrate(url)
