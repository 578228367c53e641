"""The pure parts of the shared store (no server): selection, redaction, lock ids, the pg
backend's arguments, and a journal that cannot reach its server."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from hybridops_tf import store
from hybridops_tf.base.errors import UsageError
from hybridops_tf.store import backend
from hybridops_tf.store import url as store_url
from hybridops_tf.store.local import RecordStore
from hybridops_tf.store.pgconn import _lock_parts, lock_id
from hybridops_tf.store.pgjournal import PgJournal
from hybridops_tf.store.url import redact_url


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYOPS_STORE", raising=False)
    store_url.configure(None)
    yield
    store_url.configure(None)


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://ci:s3cret@db:5432/platform", "postgresql://ci:***@db:5432/platform"),
    ("postgresql://ci@db/platform?password=s3cret&sslmode=require", "postgresql://ci@db/platform?password=***&sslmode=require"),
    ("postgres://ci:p%40ss@db/x", "postgres://ci:***@db/x"),
    ("postgresql://ci@db:5432/platform", "postgresql://ci@db:5432/platform"),
])
def test_a_url_is_printed_without_its_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_no_setting_is_the_local_root_and_the_option_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(store.open_store(tmp_path), RecordStore)
    monkeypatch.setenv("HYOPS_STORE", "postgresql://env@db/x")
    assert store_url.selected_url() == "postgresql://env@db/x"
    store_url.configure("postgresql://opt@db/x")
    assert store_url.selected_url() == "postgresql://opt@db/x"


def test_a_store_url_that_is_not_postgresql_is_a_usage_error_naming_the_fix(tmp_path: Path) -> None:
    store_url.configure("mysql://u:pw@db/x")
    with pytest.raises(UsageError) as err:
        store.open_store(tmp_path)
    assert "postgresql://USER@HOST:PORT/DATABASE" in err.value.message
    assert "pw" not in err.value.message


def test_lock_ids_are_stable_distinct_and_match_what_pg_locks_shows() -> None:
    assert lock_id("demo/vm") == lock_id("demo/vm")
    assert len({lock_id(k) for k in ("demo/vm", "demo/vm@stg", "demo/network", "vm")}) == 4
    for key in ("demo/vm", "a", "x/y@z"):
        high, low = _lock_parts(key)
        assert ((high << 32) | low) == lock_id(key) & 0xFFFFFFFFFFFFFFFF
        assert 0 <= high < 2**32 and 0 <= low < 2**32


def test_schema_names_are_valid_identifiers_and_distinct_for_long_refs() -> None:
    assert backend.schema_name("platform/Network-1") == "hyops_platform_network_1"
    long_a, long_b = "team/" + "a" * 80, "team/" + "a" * 79 + "b"
    assert len(backend.schema_name(long_a)) <= 63 and backend.schema_name(long_a) != backend.schema_name(long_b)


def test_the_pg_backend_gets_the_store_url_and_a_schema_only_for_a_pg_backend(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "main.tf").write_text('terraform {\n  backend "local" {}\n}\n')
    assert backend.init_args(tmp_path, "demo/vm") == []  # no store: nothing to configure
    store_url.configure("postgresql://ci@db:5432/platform?sslmode=require")
    assert backend.init_args(tmp_path, "demo/vm") == [
        "-backend-config=conn_str=postgresql://ci@db:5432/platform?sslmode=require",
        "-backend-config=schema_name=hyops_demo_vm"]
    assert backend.init_args(plain, "demo/vm") == []


def test_a_module_whose_schema_is_another_recorded_modules_is_refused_before_init(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')
    store_url.configure("postgresql://ci@db:5432/platform")
    recorded = ("net/a_b", "demo/vm")

    with pytest.raises(UsageError) as err:
        backend.init_args(tmp_path, "net/A-b", lambda: recorded)

    assert "hyops_net_a_b" in err.value.message and "net/a_b" in err.value.message
    assert backend.init_args(tmp_path, "net/a_b", lambda: recorded)[-1] == "-backend-config=schema_name=hyops_net_a_b"
    assert backend.init_args(tmp_path, "net/a-c", lambda: recorded)[-1] == "-backend-config=schema_name=hyops_net_a_c"


def test_record_refs_are_the_refs_of_every_record_in_any_workspace(tmp_path: Path) -> None:
    from hybridops_tf.record.lifecycle import Status
    from hybridops_tf.record.model import OperationRecord
    from hybridops_tf.runtime.root import Runtime

    runtime = Runtime(tmp_path)
    for key in ("net/a", "net/a@blue", "demo/vm"):
        ref, _, workspace = key.partition("@")
        runtime.store.write(OperationRecord(module_ref=ref, status=Status.OK, run_id="apply-1",
                                            workspace=workspace or None))

    assert runtime.record_refs() == {"net/a", "demo/vm"}


@pytest.mark.parametrize("url", ["postgresql://ci:s3cret@db/x", "postgresql://ci@db/x?password=s3cret"])
def test_a_password_in_the_url_is_never_handed_to_the_engine(tmp_path: Path, url: str) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "pg" {}\n}\n')
    store_url.configure(url)
    with pytest.raises(UsageError) as err:
        backend.init_args(tmp_path, "demo/vm")
    assert "s3cret" not in err.value.message and "PGPASSWORD" in err.value.message


def test_a_journal_that_cannot_reach_its_server_drops_lines_and_says_so_never_blocking() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    journal = PgJournal(f"postgresql://ci:pw@127.0.0.1:{port}/x?connect_timeout=1", "demo/vm", "apply-1")
    for i in range(3):
        journal.line(f'{{"n": {i}}}', "event")
    journal.complete()

    problem = journal.close()

    assert problem is not None and "did not reach the store's journal" in problem
    assert "pw" not in problem.replace("postgresql://ci:***", "")


def test_a_full_journal_queue_drops_lines_never_blocks_the_engine_and_is_never_marked_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    from hybridops_tf.store import pgjournal

    entered, release = threading.Event(), threading.Event()
    written: list[tuple[str, str]] = []

    class SlowServer:  # the first insert waits until the test lets the store catch up
        closed = False

        def execute(self, sql: str, params: tuple[str, str, str, str]) -> None:
            written.append((params[2], params[3]))

        def close(self) -> None:
            pass

    def connect(url: str) -> SlowServer:
        entered.set()
        assert release.wait(10), "the test never released the store"
        return SlowServer()

    monkeypatch.setattr(pgjournal, "JOURNAL_QUEUE", 2)
    monkeypatch.setattr(pgjournal, "connect", connect)
    journal = PgJournal("postgresql://ci@db/x", "demo/vm", "apply-1")
    journal.line("1")
    assert entered.wait(10)  # the writer holds line 1, stuck in the store
    for text in ("2", "3", "4", "5"):
        journal.line(text)  # 2 and 3 fill the queue; 4 and 5 find it full: returns at once
    journal.complete()  # lines were dropped: the journal must not claim completeness
    release.set()

    problem = journal.close()

    assert written == [("event", "1"), ("event", "2"), ("event", "3")]
    assert problem is not None and problem.startswith("2 engine lines of apply-1") and "too slow" in problem


def test_pg_backend_modules_wait_for_the_engines_state_lock_and_keep_the_users_own_args(tmp_path: Path) -> None:
    (tmp_path / "backend.tf.json").write_text('{"terraform": {"backend": {"pg": {}}}}')
    env = {"TF_CLI_ARGS_apply": "-parallelism=2"}
    assert backend.state_lock_wait_env(tmp_path, env) == {}  # the local store: the engine's own rules
    store_url.configure("postgresql://ci@db/x")

    args = backend.state_lock_wait_env(tmp_path, env)

    assert args["TF_CLI_ARGS_apply"] == f"-lock-timeout={backend.STATE_LOCK_WAIT} -parallelism=2"
    assert args["TF_CLI_ARGS_plan"] == f"-lock-timeout={backend.STATE_LOCK_WAIT}"
    other = tmp_path / "local"
    other.mkdir()
    (other / "main.tf").write_text('resource "sim_network" "this" {}\n')
    assert backend.state_lock_wait_env(other, env) == {}


def test_a_driver_error_that_quotes_the_url_never_shows_its_password() -> None:
    from hybridops_tf.store.pgconn import _first_line

    store_url.configure("postgresql://ci:hunter2@db/x")
    shown = _first_line(ValueError('invalid dsn: "postgresql://ci:hunter2@db/x" near hunter2\nmore'))

    assert "hunter2" not in shown and shown.startswith("invalid dsn")


@pytest.mark.parametrize(("said", "hint"), [
    ('connection failed: connection to server at "db", port 5432 failed: fe_sendauth: no password supplied',
     "PGPASSWORD"),
    ('connection failed: FATAL:  password authentication failed for user "ci"', "PGPASSWORD or PGPASSFILE"),
    ("connection failed: Connection refused", None),
])
def test_a_login_the_server_refuses_names_where_the_password_goes(
        monkeypatch: pytest.MonkeyPatch, said: str, hint: str | None) -> None:
    import psycopg

    from hybridops_tf.store import postgres

    def refuse(*_: object, **__: object) -> None:
        raise psycopg.OperationalError(said)

    monkeypatch.setattr(psycopg, "connect", refuse)

    with pytest.raises(postgres.StoreUnavailable) as caught:
        postgres.connect("postgresql://ci@db:5432/platform")

    message = str(caught.value)
    assert message.startswith("cannot reach the store postgresql://ci@db:5432/platform: ") and "\n" not in message
    if hint is None:
        assert "PGPASSWORD" not in message
    else:
        assert hint in message and "PGPASSFILE" in message
