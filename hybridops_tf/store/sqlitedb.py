"""The SQLite store's database file (`--store sqlite:///PATH`, store/sqlite.py): the URL read,
the file made (0600) and checked, its schema created, and a connection for one operation.

One machine, several processes: WAL lets readers go on while one writer writes; a writer
waits for another up to BUSY_SECONDS (busy_timeout); every write is one statement, so one
transaction. A connection is opened for each operation and closed after it (opening one is
cheaper than a record's fsync), so no connection crosses a thread or a fork.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from hybridops_tf.base.errors import RefusedError, UsageError

SCHEME = "sqlite:///"
SCHEMA_VERSION = 1
APPLICATION_ID = 0x68796F70  # "hyop": this file is a hyops store (PRAGMA application_id)
BUSY_SECONDS = 60.0  # a writer waits this long for another one (a record write takes milliseconds)
FILE_MODE = 0o600
_HEADER = b"SQLite format 3\x00"

_TABLES = """
    CREATE TABLE IF NOT EXISTS records (
        key text PRIMARY KEY,
        doc text NOT NULL,
        updated_at text NOT NULL
    );
    CREATE TABLE IF NOT EXISTS journal (
        id integer PRIMARY KEY AUTOINCREMENT,
        key text NOT NULL,
        run_id text NOT NULL,
        kind text NOT NULL,
        body text NOT NULL,
        at text NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE INDEX IF NOT EXISTS journal_run ON journal (key, run_id, id);
    CREATE TABLE IF NOT EXISTS documents (
        kind text NOT NULL,
        name text NOT NULL,
        body text NOT NULL,
        updated_at text NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        PRIMARY KEY (kind, name)
    );
"""


class SqliteUnavailable(OSError):
    """The database could not be written (a writer held it past BUSY_SECONDS, a full disk)."""


def database_path(url: str) -> Path:
    """The database file a `sqlite:///PATH` URL names, absolute: `sqlite:///PATH` with PATH
    relative to the current folder, `sqlite:////abs/path.db` absolute (SQLAlchemy's form).
    UsageError for any other shape (a host, no path, an in-memory database)."""
    if not url.startswith(SCHEME) or url[len(SCHEME):] in ("", ":memory:") or url.endswith("/"):
        raise UsageError(f"--store/HYOPS_STORE {url!r} is not a SQLite store URL: use sqlite:///PATH "
                         "(relative to the current folder) or sqlite:////ABSOLUTE/PATH, naming a database file")
    return Path(os.path.abspath(url[len(SCHEME):]))


def connect(path: Path) -> sqlite3.Connection:
    """A connection for one operation: autocommit (each statement its own transaction unless
    a BEGIN says otherwise), writers waiting for each other, every commit on disk (FULL: a
    record must survive the machine's power loss, as the local store's fsync'd file does)."""
    conn = sqlite3.connect(str(path), timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def connection(path: Path) -> Iterator[sqlite3.Connection]:
    with closing(connect(path)) as conn:
        yield conn


def open_database(path: Path) -> int:
    """Make sure `path` is a hyops store: created (0600) with its schema when missing, checked
    when present; the schema version it had (0: it was made now). UsageError (exit 2, one line
    naming the path) for a folder that does not exist, a folder where the file should be, a
    file that is not a SQLite database, another program's database or a newer schema;
    RefusedError (exit 4) when it cannot be made or read."""
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"the SQLite store's folder {folder} does not exist: create it (mkdir -p {folder}) "
                         f"or give --store/HYOPS_STORE another sqlite:///PATH; nothing was changed")
    if path.is_dir():
        raise UsageError(f"the SQLite store {path} is a folder: give --store/HYOPS_STORE the path of a database "
                         "file (sqlite:///PATH/records.db); nothing was changed")
    _make_private(path)
    try:
        with connection(path) as conn:
            return _check_and_create(conn, path)
    except sqlite3.DatabaseError as err:
        if "not a database" in str(err):
            raise UsageError(_not_a_store(path, "it is not a SQLite database")) from None
        if "malformed" in str(err):
            raise UsageError(_not_a_store(path, f"it is damaged ({err})")) from None
        raise RefusedError(f"the SQLite store {path} could not be opened: {err}; nothing was changed") from None


def _make_private(path: Path) -> None:
    """The file created 0600 when missing (before SQLite makes it with the umask's mode; its
    -wal and -shm files take the database's mode), narrowed to 0600 when it is wider. A file
    that does not start as a database does is refused before SQLite touches it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    except OSError as err:
        raise RefusedError(f"the SQLite store {path} could not be opened: {err.strerror or err}; "
                           "check that its folder is writable; nothing was changed") from None
    try:
        head = os.read(fd, len(_HEADER))
        if head and head != _HEADER:
            raise UsageError(_not_a_store(path, "it is not a SQLite database"))
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def _not_a_store(path: Path, why: str) -> str:
    return (f"the SQLite store {path} cannot be used: {why}; give --store/HYOPS_STORE the path of a store "
            "made by hyops, or of a file that does not exist yet (it is then made); nothing was changed")


def _check_and_create(conn: sqlite3.Connection, path: Path) -> int:
    """WAL on, then the schema checked, or created in one transaction (two first openers: the
    second waits, then finds it made); the version it had."""
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        _to_wal(conn)
    conn.execute("BEGIN")  # one snapshot for both of _version's reads: between two autocommit reads
    try:  # another first opener may commit the schema, which then looks like another program's tables
        version = _version(conn, path)
    finally:
        conn.execute("COMMIT")
    if version == SCHEMA_VERSION:
        return version
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _version(conn, path)
        if version == 0:
            for statement in filter(str.strip, _TABLES.split(";")):  # executescript would COMMIT first
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return version


def _to_wal(conn: sqlite3.Connection) -> None:
    """WAL on. Switching needs the file alone, and SQLite answers "database is locked" at once,
    without its busy wait, while another first opener reads it: tried again up to BUSY_SECONDS."""
    import time

    deadline, pause = time.monotonic() + BUSY_SECONDS, 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(0.5, pause * 2)


def _version(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of a hyops store (0: an empty database, to be made one); UsageError
    for another program's database or a schema newer than this hyops knows."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if app != APPLICATION_ID:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables:
            raise UsageError(_not_a_store(path, "it is another program's SQLite database"))
        return 0
    if version > SCHEMA_VERSION:
        raise UsageError(f"the SQLite store {path} has schema version {version}, newer than this hyops knows "
                         f"({SCHEMA_VERSION}): upgrade hyops; nothing was changed")
    return version
