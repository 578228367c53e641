"""The SQLite store (`--store sqlite:///PATH`, hybridops_tf/store/sqlite.py) on its own: the
record round trip, documents, the journal, and the URL and file it refuses. Its module lock
is the one contract of every store without a server (tests/unit/test_module_lock.py); the
store contract itself runs on it in the integration tests marked both_stores (`-k sqlite`)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, HyopsError, RefusedError, UsageError
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.store import init_store, open_store
from hybridops_tf.store.sqlite import SqliteStore
from hybridops_tf.store.url import configure
from tests.unit.serverless_stores import REF, full_record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "records.db"


@pytest.fixture
def store(tmp_path: Path, db: Path) -> SqliteStore:
    db.parent.mkdir()
    return SqliteStore(f"sqlite:///{db}", tmp_path / "runtime")


def test_a_record_written_is_read_back_whole_and_as_stored(store: SqliteStore) -> None:
    record = full_record()
    store.write(record, stamp=False)

    again = store.read("platform/network@blue")

    assert again is not None and again.to_dict() == record.to_dict()
    assert store.read_raw("platform/network@blue") == record.to_dict()
    assert store.keys() == ["platform/network@blue"]
    assert store.read(REF) is None
    record.status = Status.OK
    store.write(record)  # replaced whole
    assert store.read_raw("platform/network@blue") == record.to_dict()
    store.delete("platform/network@blue")
    assert store.keys() == [] and store.read("platform/network@blue") is None


def test_a_second_store_object_sees_the_same_records_from_another_root(store: SqliteStore, tmp_path: Path) -> None:
    store.write(full_record())
    other = SqliteStore(f"sqlite:///{store.path}", tmp_path / "elsewhere")

    assert other.keys() == ["platform/network@blue"] and other.spans_roots is True


def test_the_database_file_is_private_and_in_wal_mode(store: SqliteStore) -> None:
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.locks.stat().st_mode) == 0o700
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_wider_database_file_is_narrowed_to_0600(store: SqliteStore, tmp_path: Path) -> None:
    os.chmod(store.path, 0o644)
    SqliteStore(f"sqlite:///{store.path}", tmp_path / "runtime")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_documents_and_their_lines_round_trip(store: SqliteStore, tmp_path: Path) -> None:
    other = SqliteStore(store.url, tmp_path / "other")  # another runtime root on the same file
    local = other.fetch_document("stack_report", "demo")
    assert local == tmp_path / "other" / "stacks" / "demo" / "latest.json"
    assert not local.exists()  # none kept: nothing brought

    store.put_document("stack_report", "demo", "first\n")
    store.put_document("stack_report", "demo", "second\n")
    assert other.fetch_document("stack_report", "demo").read_text() == "second\n"

    store.append_document_line("stack_report", "demo", "run-1", "a")
    store.append_document_line("stack_report", "demo", "run-2", "x")
    store.append_document_line("stack_report", "demo", "run-1", "b")
    assert store.document_lines("stack_report", "demo", "run-1") == ["a", "b"]
    store.drop_document_lines("stack_report", "demo")
    assert store.document_lines("stack_report", "demo", "run-1") == []


def test_the_digest_key_is_made_once_and_shared(store: SqliteStore, tmp_path: Path) -> None:
    assert store.digest_key(create=False) is None
    key = store.digest_key(create=True)
    assert key is not None and len(key) == 32
    assert SqliteStore(store.url, tmp_path / "other").digest_key(create=False) == key


def test_a_runs_journal_is_read_back_complete_in_order(store: SqliteStore) -> None:
    journal = store.journal(REF, "apply-1")
    store.journal_doc(REF, "apply-1", "meta", {"command": "apply"})
    journal.engine_started(1234, "host")
    for n in range(50):
        journal.line(f'{{"n": {n}}}', "event")
    journal.complete()
    assert journal.close() is None

    read = store.journal_lines(REF, "apply-1")

    assert read is not None and read.engine_started and read.complete
    assert read.lines == tuple(f'{{"n": {n}}}' for n in range(50))
    assert store.journal_lines(REF, "apply-2") is None


def test_open_store_opens_the_sqlite_url(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db.parent.mkdir()
    monkeypatch.chdir(db.parent)
    configure("sqlite:///records.db")  # relative: to the current folder
    try:
        store = open_store(tmp_path / "runtime")
    finally:
        configure(None)
    assert isinstance(store, SqliteStore) and store.path == db and store.queue() is None


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite://host/records.db", "sqlite:///:memory:"])
def test_a_url_that_names_no_database_file_is_a_usage_error(url: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="sqlite:///PATH"):
        SqliteStore(url, tmp_path / "runtime")


def _refusal(url: str, tmp_path: Path) -> HyopsError:
    with pytest.raises(HyopsError) as info:
        SqliteStore(url, tmp_path / "runtime")
    assert "\n" not in info.value.message
    return info.value


def test_a_folder_that_does_not_exist_is_named_and_nothing_is_made(db: Path, tmp_path: Path) -> None:
    err = _refusal(f"sqlite:///{db}", tmp_path)
    assert err.exit_code == ExitCode.USAGE and str(db.parent) in err.message
    assert not db.parent.exists()


def test_a_file_that_is_not_a_database_is_refused_untouched(db: Path, tmp_path: Path) -> None:
    db.parent.mkdir()
    db.write_text("not a database at all, but longer than its header\n")
    err = _refusal(f"sqlite:///{db}", tmp_path)
    assert err.exit_code == ExitCode.USAGE and str(db) in err.message and "not a SQLite database" in err.message
    assert db.read_text() == "not a database at all, but longer than its header\n"


def test_another_programs_database_is_refused(db: Path, tmp_path: Path) -> None:
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE mine (x integer)")
    err = _refusal(f"sqlite:///{db}", tmp_path)
    assert err.exit_code == ExitCode.USAGE and "another program's" in err.message


def test_a_newer_schema_is_refused(store: SqliteStore, tmp_path: Path) -> None:
    with sqlite3.connect(store.path) as conn:
        conn.execute("PRAGMA user_version = 99")
    err = _refusal(store.url, tmp_path)
    assert err.exit_code == ExitCode.USAGE and "schema version 99" in err.message


def test_a_folder_where_the_file_should_be_is_refused(db: Path, tmp_path: Path) -> None:
    db.mkdir(parents=True)
    assert _refusal(f"sqlite:///{db}", tmp_path).exit_code == ExitCode.USAGE


def test_store_init_makes_the_file_once(db: Path) -> None:
    db.parent.mkdir()
    assert init_store(f"sqlite:///{db}") == (0, 1)
    assert init_store(f"sqlite:///{db}") == (1, 1)


def test_a_write_another_writer_holds_off_past_the_busy_timeout_is_an_oserror(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybridops_tf.store import sqlitedb

    monkeypatch.setattr(sqlitedb, "BUSY_SECONDS", 0.05)
    other = sqlite3.connect(store.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process mid-write
        with pytest.raises(OSError, match="could not be written"):
            store.write(full_record())
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert store.keys() == []


def test_a_read_the_database_cannot_answer_is_refused(store: SqliteStore) -> None:
    store.path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(RefusedError):
        store.keys()


def test_the_engines_pg_backend_is_given_no_sqlite_url(tmp_path: Path) -> None:
    from hybridops_tf.store import backend

    module = tmp_path / "module"
    module.mkdir()
    (module / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')
    configure("sqlite:///records.db")
    try:
        assert backend.init_args(module, "net") == []
        assert backend.state_lock_wait_env(module, {}) == {}
    finally:
        configure(None)


OPEN_AND_WRITE = """
import sys
from pathlib import Path
from hybridops_tf.store.sqlite import SqliteStore
store = SqliteStore(sys.argv[1], Path(sys.argv[2]))
store.put_document("kind", sys.argv[3], "x")
"""


def test_processes_that_open_a_new_file_at_once_all_get_the_one_store(db: Path, tmp_path: Path) -> None:
    db.parent.mkdir()
    children = [subprocess.Popen([sys.executable, "-c", OPEN_AND_WRITE, f"sqlite:///{db}", str(tmp_path / "rt"),
                                  f"doc-{n}"], stderr=subprocess.PIPE, text=True) for n in range(4)]
    errors = [child.communicate(timeout=120)[1] for child in children]

    assert [child.returncode for child in children] == [0, 0, 0, 0], errors
    with sqlite3.connect(db) as conn:
        assert sorted(r[0] for r in conn.execute("SELECT name FROM documents")) == [f"doc-{n}" for n in range(4)]


def test_a_first_opener_that_commits_between_the_other_s_two_reads_is_not_taken_for_another_program(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybridops_tf.store import sqlitedb

    db.parent.mkdir()
    real_connect = sqlitedb.connect

    class Racing:  # the other opener makes the schema right after this one read application_id
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn, self.raced = conn, False

        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
            cursor = self.conn.execute(sql, *args)
            if sql == "PRAGMA application_id" and not self.raced:
                self.raced = True
                monkeypatch.setattr(sqlitedb, "connect", real_connect)
                assert sqlitedb.open_database(db) == 0  # made now, committed
            return cursor

        def close(self) -> None:
            self.conn.close()

    monkeypatch.setattr(sqlitedb, "connect", lambda path: Racing(real_connect(path)))

    assert sqlitedb.open_database(db) == sqlitedb.SCHEMA_VERSION  # found made, never "another program's"


def test_the_queue_is_refused_on_a_sqlite_store_naming_the_postgresql_store(store: SqliteStore) -> None:
    from hybridops_tf.stack.queue.jobs import queue_store

    with pytest.raises(UsageError) as info:
        queue_store(store, "--queue")

    assert info.value.exit_code == ExitCode.USAGE and "\n" not in info.value.message
    assert "SQLite store" in info.value.message and "--store postgresql://" in info.value.message
