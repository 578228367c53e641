"""The store's server closes connections, restarts, freezes (issue 56): weather for a fleet of
CI runners, never a bug. A worker's calls are tried again while the server is away
(stack/queue/outage.py); a module lock whose session the server ended is taken again on a
new connection only while the record is what the run last wrote (store/pglock.py: PgLock
`_retake`, the fence), and the journal lines the lost connection did not take are written
again. Every wait is on a row, a file or a process, never a fixed sleep."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridops_tf.store.pgconn import CONNECT_TIMEOUT
from tests.integration.hyops_cli import HYOPS, wait_for
from tests.integration.queue_rig import (
    NINE,
    checkout,
    member_rows,
    open_jobs,
    queue,
    queued_with_a1_held,
    worker,
)
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

# a worker that outlives a restart: the server may stay away for up to its lost-after time
STEADY = {"HYOPS_QUEUE_HEARTBEAT": "1", "HYOPS_QUEUE_LOST_AFTER": "120"}


def no_bug(out: str, runtime_root: Path) -> None:
    assert "Traceback" not in out and "internal error" not in out, out
    assert not list(runtime_root.rglob("*bug*")), out


def test_a_member_whose_lock_connection_the_server_closed_during_its_apply_settles_on_a_new_one(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)
    w0 = worker(hy, "w0", env=STEADY)
    try:
        gate.wait_started(w0)  # a1's lock is held on its session, its engine in the create
        assert pg_store.terminate_hyops() >= 3  # the lock's session among them: the lock is gone
    finally:
        gate.release()
    out = w0.communicate(timeout=600)[0]

    assert w0.returncode == 0, out
    no_bug(out, hy.runtime_root)
    assert "outcome uncertain" not in out, out
    rows = member_rows(pg_store, run_id)
    assert {r["status"] for r in rows.values()} == {"ok"}, rows  # the run went on past a1
    record = pg_store.record("nine/a1")
    assert record["status"] == "ok" and record["run_id"] == rows["a1"]["member_run_id"]
    kinds = [kind for kind, _ in pg_store.journal("nine/a1", record["run_id"])]
    assert "complete" in kinds, kinds  # the lines the lost connection did not take were written again


def test_a_lost_lock_is_not_taken_again_when_another_writer_changed_the_record_meanwhile(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    """The fence: the settle lands on a new connection only while the record is exactly what
    this run last wrote; otherwise the outcome is uncertain and the other writer's record stands."""
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)
    w0 = worker(hy, "w0", env=STEADY)
    try:
        gate.wait_started(w0)
        assert pg_store.terminate_hyops() >= 3
        forged = {**pg_store.record("nine/a1"), "run_id": "apply-another-writer"}
        pg_store.write_record("nine/a1", forged)
    finally:
        gate.release()
    out = w0.communicate(timeout=600)[0]

    assert w0.returncode == 1, out  # a1 could not be settled: the worker says so, no bug
    no_bug(out, hy.runtime_root)
    assert "no longer what this run wrote" in out and "outcome uncertain" in out, out
    assert pg_store.record("nine/a1")["run_id"] == "apply-another-writer"
    rows = member_rows(pg_store, run_id)
    assert rows["a1"]["status"] == "error" and rows["b1"]["status"] == "pending", rows


def test_a_worker_idling_through_a_server_restart_serves_the_next_run(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    first = queue(hy)
    said = tmp_path / "w0.out"
    with said.open("w") as out_file:
        w0 = subprocess.Popen([HYOPS, "stack", "work", "--name", "w0"], cwd=hy.workdir, env=hy.env(**STEADY),
                              stdout=out_file, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    finished = "SELECT finished_at IS NOT NULL FROM hyops.queue_runs WHERE run_id = '{}'"
    try:
        wait_for(lambda: w0.poll() is not None or pg_store.sql(finished.format(first)).strip() == "t",
                 timeout=600, what="the first run to finish")
        wait_for(lambda: w0.poll() is not None or open_jobs(pg_store) == 0, timeout=600,
                 what="the worker to end its last job (idle)")
        pg_store.cluster.stop_server()  # pg_ctl stop -m fast; started again once the worker met it
        try:
            wait_for(lambda: w0.poll() is not None or "did not answer" in said.read_text(), timeout=600,
                     what="the worker to find the server away (its heartbeat, its next fetch)")
            # the outage's length, not a race: past the pools' wait for a connection
            # (2 * CONNECT_TIMEOUT), every call the worker makes fails (its heartbeat and its
            # fetch poll each second, its look for lost workers) and is tried again
            time.sleep(3 * CONNECT_TIMEOUT)
        finally:
            pg_store.cluster.start_server()
        assert w0.poll() is None, said.read_text()
        second = hy("stack", "destroy", "stack.yml", "--queue")
        assert second.returncode == 0, second.stderr
        wait_for(lambda: w0.poll() is not None or pg_store.sql(finished.format(second.stdout.strip())).strip() == "t",
                 timeout=600, what="the second run to finish")
    finally:
        pg_store.cluster.start_server()  # a no-op unless the restart failed halfway
        w0.send_signal(signal.SIGTERM)
        w0.wait(timeout=120)
    out = said.read_text()

    assert w0.returncode == 143, out
    no_bug(out, hy.runtime_root)
    assert "answers again" in out, out  # one line when it went away, one when it came back
    rows = member_rows(pg_store, second.stdout.strip())
    assert {r["status"] for r in rows.values()} == {"destroyed"}, out
    assert set(rows) == set(NINE)
    status = hy("stack", "status", "stack.yml", "--json")
    assert {m["status"] for m in json.loads(status.stdout)["members"]} == {"destroyed"}, status.stdout
