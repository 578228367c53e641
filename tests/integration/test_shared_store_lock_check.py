"""The shared store writes a record only while the server still shows this run holding the
module lock (store/pglock.py, PgLock.write): a runner whose session lost the advisory lock
must not overwrite what the next holder may already have written.

The lock is lost here the most direct way: `pg_advisory_unlock` on the lock's own
connection, so the session (and its connection) stays up and only the lock is gone. The
store under test runs in this process, on the suite's private PostgreSQL cluster; what the
database holds is read back with psql (SharedStore).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

KEY = "demo/network"


@pytest.fixture
def pg(pg_store: SharedStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A PgStore on this test's database (the password through PGPASSWORD, as for hyops)."""
    from hybridops_tf.store.postgres import PgStore

    for name, value in pg_store.env().items():
        monkeypatch.setenv(name, value)
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    return PgStore(pg_store.url, runtime)


def record(run_id: str, status: Status) -> OperationRecord:
    return OperationRecord(module_ref="demo/network", status=status, run_id=run_id)


def test_a_record_write_is_refused_once_the_session_no_longer_holds_the_module_lock(
    pg, pg_store: SharedStore
) -> None:
    from hybridops_tf.store.pgconn import StoreUnavailable, lock_id

    with pg.lock(KEY, "apply-1") as lock:
        pg.write(record("apply-1", Status.RUNNING))  # while held, the write goes through
        before = pg_store.record(KEY)
        assert before is not None and before["run_id"] == "apply-1"

        released = lock._conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id(KEY),)).fetchone()[0]
        assert released is True
        assert pg.lock_is_free(KEY)  # the server now shows nobody holding it

        with pytest.raises(StoreUnavailable):
            pg.write(record("apply-1", Status.OK))

        assert pg_store.record(KEY) == before  # the row is unchanged


def test_a_record_write_still_goes_through_while_the_lock_is_held(pg, pg_store: SharedStore) -> None:
    """The control for the test above: the same two writes, the lock kept."""
    with pg.lock(KEY, "apply-1"):
        pg.write(record("apply-1", Status.RUNNING))
        pg.write(record("apply-1", Status.OK))

    after = pg_store.record(KEY)
    assert after is not None and after["status"] == "ok"
