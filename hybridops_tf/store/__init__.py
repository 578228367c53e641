"""Where records, locks and run journals live: the local runtime root, a shared PostgreSQL
store (`--store postgresql://...` / HYOPS_STORE), or a SQLite file shared by the processes of
one machine (`--store sqlite:///PATH`, store/sqlite.py).

Which one is in use is store/url.py's: the CLI calls `configure()` once, everything else asks `selected_url()`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from hybridops_tf.store.ports import (
    Admin,
    Documents,
    Journal,
    JournalRead,
    Journals,
    QueueStore,
    Records,
    RunRecords,
    RunStore,
    Store,
)
from hybridops_tf.store.url import is_postgres_url, is_sqlite_url, redact_url, selected_url

__all__ = ["Admin", "Documents", "Journal", "JournalRead", "Journals", "QueueStore", "Records", "RunRecords",
           "RunStore", "Store", "init_store", "local_root", "open_store"]

_open: dict[tuple[str, Path], Store] = {}
_open_lock = threading.Lock()


def open_store(runtime_root: Path) -> Store:
    """The record store in use: the local runtime root, a SQLite file, or the shared PostgreSQL
    store (one per URL and root in a process, so its connection is reused)."""
    url = selected_url()
    if url is None:
        return local_root(runtime_root)
    if is_sqlite_url(url):
        from hybridops_tf.store.sqlite import SqliteStore

        return SqliteStore(url, runtime_root)
    return _postgres_store(runtime_root, url)


def local_root(runtime_root: Path) -> Store:
    """A local runtime root as a store, whatever store is selected: what `hyops store
    import-local` copies from (runtime/transfer.py)."""
    from hybridops_tf.store.local import RecordStore

    return RecordStore(runtime_root)


def _postgres_store(runtime_root: Path, url: str) -> Store:
    """The PostgreSQL store `url` names (one per URL and root in a process); UsageError when
    `url` is no PostgreSQL URL."""
    from hybridops_tf.base.errors import UsageError

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
