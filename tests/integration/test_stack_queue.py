"""Queued stack runs (issue 36) with the real engine, the sim cloud and the private PostgreSQL
cluster: workers are separate checkouts with their own runtime roots, sharing only the store
and the cloud, as CI runners do. Heartbeats are short (HYOPS_QUEUE_HEARTBEAT /
HYOPS_QUEUE_LOST_AFTER) and every wait is on a condition, never a fixed sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.hyops_cli import HYOPS, wait_for
from tests.integration.queue_rig import (
    NINE,
    checkout,
    engine_runs,
    member_rows,
    open_jobs,
    queue,
    queued_with_a1_held,
    run_row,
    worker,
)
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

def test_three_workers_run_a_nine_member_stack_and_a_killed_ones_member_is_reported_never_rerun(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    runners = [checkout(tmp_path / f"runner-{i}", engine_path, sim_root, pg_store) for i in range(3)]
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create", name="b3", times=1)])
    run_id = queue(runners[0])

    jobs = {f"w{i}": worker(hy, f"w{i}") for i, hy in enumerate(runners)}
    try:
        provider = gate.wait_started()
        holder = wait_for(lambda: member_rows(pg_store, run_id)["b3"]["worker"], what="b3's worker")
        os.killpg(jobs[holder].pid, signal.SIGKILL)  # the runner vanishes mid-member
        jobs[holder].communicate()
        kill_engines(runners[int(holder[1:])].workdir / "m" / "b3", provider["pid"])
    finally:
        gate.release()
    outputs = {name: job.communicate(timeout=300)[0] for name, job in jobs.items() if name != holder}
    for name, job in jobs.items():
        if name != holder:
            assert job.returncode == 0, outputs[name]

    rows = member_rows(pg_store, run_id)
    assert rows["b3"]["status"] == "interrupted"
    assert f"worker {holder} lost" in rows["b3"]["error"]
    assert (rows["c2"]["status"], rows["c2"]["blocked_by"]) == ("pending", "b3")
    assert (rows["d"]["status"], rows["d"]["blocked_by"]) == ("pending", "c2")
    done = [n for n in NINE if n not in ("b3", "c2", "d")]
    assert {rows[n]["status"] for n in done} == {"ok"}  # the others finished all it did not hold
    for name in done:  # dependency order: a member started only after its upstreams ended
        assert all(rows[name]["started_at"] >= rows[up]["finished_at"] for up in NINE[name])
    assert {rows[n]["worker"] for n in done} <= {"w0", "w1", "w2"}
    # never on two workers, and the lost member never run again: one run of each in the store,
    # and no member was refused its module lock (a second taker would have been)
    for name in [*done, "b3"]:
        assert engine_runs(pg_store, f"nine/{name}") == 1, name
    assert not any("locked by" in (r["error"] or "") for r in rows.values())
    assert pg_store.record("nine/b3")["status"] == "running"  # stale, for reconcile to decide
    names = [o["name"] for o in runners[1].sim_objects() if o["type"] == "sim_network"]
    assert sorted(n for n in names if n != "b3") == sorted(done)  # one object per name

    # the merged view: the run finished, b3's record is a stale `running` of the run the report
    # named before its engine started, so it is uncertain and `stack status` exits 3
    status = runners[2]("stack", "status", "stack.yml", "--json")
    assert status.returncode == 3, status.stderr
    doc = json.loads(status.stdout)
    shown = {m["name"]: m for m in doc["members"]}
    assert doc["state"] == "finished" and doc["queue"] is True
    assert shown["b3"]["status"] == "interrupted" and shown["b3"]["worker"] == holder
    assert shown["b3"]["run_id"] == pg_store.record("nine/b3")["run_id"] and shown["b3"]["uncertain"]
    assert shown["a1"]["worker"] in {"w0", "w1", "w2"} and shown["a1"]["finished_at"]


def test_a_worker_given_an_unknown_run_says_so_in_one_line_and_takes_nothing(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    run_id = queue(hy)

    out = hy("stack", "work", "--until-idle", "--run", "apply-nope")

    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("hyops: error: no queued run apply-nope in ") and "Traceback" not in out.stderr
    assert {r["status"] for r in member_rows(pg_store, run_id).values()} <= {"queued", "waiting"}


def test_a_second_job_of_a_member_never_runs_it_again(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    run_id = queue(hy)
    # a duplicate delivery of a1's job, as a retry or a second queueing would make one
    pg_store.sql("SET search_path TO hyops_queue; INSERT INTO procrastinate_jobs (queue_name, task_name, args) "
                 "SELECT queue_name, task_name, args FROM hyops_queue.procrastinate_jobs "
                 "WHERE args->>'member' = 'a1'")
    job = worker(hy, "solo")
    out = job.communicate(timeout=600)[0]
    assert job.returncode == 0, out
    rows = member_rows(pg_store, run_id)
    assert {r["status"] for r in rows.values()} == {"ok"}
    assert engine_runs(pg_store, "nine/a1") == 1
    done = pg_store.sql("SELECT count(*) FROM hyops_queue.procrastinate_jobs WHERE args->>'member' = 'a1' "
                        "AND status = 'succeeded'")
    assert int(done) == 2  # both jobs ended; only the first ran the member


def test_a_queued_resume_skips_what_would_not_change_and_applies_a_changed_member(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    queue(hy)
    assert worker(hy, "w0").communicate(timeout=600)[0]
    main_tf = hy.workdir / "m" / "a1" / "main.tf"
    main_tf.write_text(main_tf.read_text() + "\n# a commit touched a1\n")

    resumed = queue(hy, "--resume")
    job = worker(hy, "w1")
    out = job.communicate(timeout=600)[0]

    assert job.returncode == 0, out
    rows = member_rows(pg_store, resumed)
    assert rows["a1"]["status"] == "ok" and engine_runs(pg_store, "nine/a1") == 2
    assert {rows[n]["status"] for n in NINE if n != "a1"} == {"skipped"}  # as `stack apply --resume` decides
    assert all(engine_runs(pg_store, f"nine/{n}") == 1 for n in NINE if n != "a1")
    assert "[a1] apply (its configuration changed)" in out


def test_signals_stop_the_waiting_and_the_worker_and_the_run_goes_on_without_them(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    gate = Gate.at(tmp_path)  # never released while w0 lives: only the signal ends a1's create
    faults_file([gate.rule(type="sim_network", op="create", name="a1")])
    waiter = hy.start("stack", "apply", "stack.yml", "--queue", "--wait")
    run_id = wait_for(lambda: pg_store.sql("SELECT run_id FROM hyops.queue_runs").strip(), what="the queued run")
    waiter.send_signal(signal.SIGINT)
    _, said = waiter.communicate(timeout=60)
    assert waiter.returncode == 130, said
    assert f"stopped waiting; run {run_id} goes on with its workers" in said

    w0 = worker(hy, "w0")
    try:
        gate.wait_started(w0)  # w0 took a1, the first ready member, and its engine creates
        w0.send_signal(signal.SIGTERM)
        out = w0.communicate(timeout=120)[0]
    finally:
        gate.release()
    assert w0.returncode == 143, out
    assert "hyops: interrupted by SIGTERM: worker w0 took nothing new" in out
    assert [r["worker"] for r in member_rows(pg_store, run_id).values() if r["worker"]] == ["w0"]

    w1 = worker(hy, "w1")
    assert w1.communicate(timeout=600)[0] is not None and w1.returncode == 0
    rows = member_rows(pg_store, run_id)
    assert (rows["a1"]["status"], rows["a1"]["worker"]) == ("interrupted", "w0")  # stopped, not lost
    assert "interrupted by SIGTERM" in rows["a1"]["error"]
    assert pg_store.record("nine/a1")["status"] == "error"  # settled from evidence by w0
    assert (rows["b1"]["status"], rows["b1"]["blocked_by"]) == ("pending", "a1")
    assert {rows[n]["status"] for n in ("a2", "a3", "b2", "b3", "c2")} == {"ok"}
    assert {rows[n]["worker"] for n in ("a2", "a3", "b2", "b3", "c2")} == {"w1"}


def test_a_worker_silent_past_its_heartbeat_is_given_up_and_its_late_end_is_said_not_counted(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)

    w0 = worker(hy, "w0")
    try:
        gate.wait_started(w0)  # w0 holds a1, its engine held at the create
        os.kill(w0.pid, signal.SIGSTOP)  # the worker falls silent (a frozen runner), its engine lives on
        w1 = worker(hy, "w1")
        out1 = w1.communicate(timeout=600)[0]
        assert w1.returncode == 0, out1
        rows = member_rows(pg_store, run_id)
        assert (rows["a1"]["status"], rows["a1"]["worker"]) == ("interrupted", "w0")
        assert (rows["b1"]["status"], rows["b1"]["blocked_by"]) == ("pending", "a1")
    finally:
        os.kill(w0.pid, signal.SIGCONT)
        gate.release()
    out0 = w0.communicate(timeout=300)[0]

    assert pg_store.record("nine/a1")["status"] == "ok"  # it did converge; the record says so
    rows = member_rows(pg_store, run_id)
    assert rows["a1"]["status"] == "interrupted" and rows["b1"]["status"] == "pending"  # the run's word stands
    assert w0.returncode == 1, out0  # never a green worker whose member the run does not count
    assert f"[a1] ended ok after run {run_id} gave it up (worker w0 was silent" in out0
    # frozen, not gone: its session held a1's module lock all along, and the run said so
    assert "worker w0 silent" in rows["a1"]["error"] and "still holding the module lock" in rows["a1"]["error"]
    assert "Traceback" not in out0  # procrastinate cannot end the job the run closed; it is no error


def test_a_waited_queued_run_writes_its_merged_junit_with_each_members_worker(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    """`--queue --wait --junit FILE`: the file is the merged run at its end, as `stack apply
    --junit` writes a local one: the failed member fails naming its worker, its dependants are
    skipped (blocked), and `stack status --junit` on another runner writes the same cases."""
    runners = [checkout(tmp_path / f"runner-{i}", engine_path, sim_root, pg_store) for i in range(2)]
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_after_create", "name": "b3", "times": 1}])
    waiter = runners[0].start("stack", "apply", "stack.yml", "--queue", "--wait", "--junit", "out/junit.xml")
    run_id = wait_for(lambda: pg_store.sql("SELECT run_id FROM hyops.queue_runs").strip(), what="the queued run")
    job = worker(runners[1], "w1", "-p", "2", "--run", run_id)
    out = job.communicate(timeout=600)[0]
    _, said = waiter.communicate(timeout=120)
    assert (waiter.returncode, job.returncode) == (1, 1), said + out

    def outcome(path: Path) -> dict[str, tuple[str, str | None, str | None]]:
        found = {}
        for case in ET.parse(path).getroot().iter("testcase"):
            marks = [e for e in case if e.tag in ("failure", "skipped")]
            worker_prop = next((p.get("value") for p in case.iter("property") if p.get("name") == "worker"), None)
            found[str(case.get("name"))] = (marks[0].tag if marks else "pass", marks[0].get("message") if marks
                                            else None, worker_prop)
        return found

    waited = outcome(runners[0].workdir / "out" / "junit.xml")
    assert waited["b3"][:1] == ("failure",) and waited["b3"][2] == "w1" and "fail_after_create" in waited["b3"][1]
    assert waited["c2"] == ("skipped", "blocked by b3", None)
    # d waits on c1 too: when b3's failure stopped the run before a worker took c1, d never
    # started because of b3 (as `stack apply` says it); when c1 had ended, because of c2
    assert waited["d"] in {("skipped", "blocked by c2", None), ("skipped", "blocked by b3", None)}
    assert {waited[n] for n in NINE if n not in ("b3", "c2", "d")} == {("pass", None, "w1")}
    props = {p.get("name"): p.get("value") for p in ET.parse(runners[0].workdir / "out" / "junit.xml")
             .getroot().find("testsuite").find("properties")}
    assert props["run_id"] == run_id

    status = runners[1]("stack", "status", "stack.yml", "--junit", "status-junit.xml")
    assert status.returncode == 0, status.stderr
    assert outcome(runners[1].workdir / "status-junit.xml") == waited


def test_a_worker_whose_idle_connections_the_server_closed_ends_its_member_and_goes_on(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    """A worker keeps its connections to the queue between jobs (stack/queue/jobs.py:
    Connections); the server (a restart, a proxy's idle timeout) may close them meanwhile. The
    member's end must still be recorded, on a connection checked before it is lent."""
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)

    w0 = worker(hy, "w0")
    try:
        gate.wait_started(w0)  # a1's claim and run id were written on the worker's kept connections
        closed = pg_store.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                              "WHERE application_name = 'hyops-queue'")
        assert int(closed) >= 1
    finally:
        gate.release()
    out = w0.communicate(timeout=600)[0]

    assert w0.returncode == 0, out
    rows = member_rows(pg_store, run_id)
    assert {r["status"] for r in rows.values()} == {"ok"}, rows
    assert rows["a1"]["worker"] == "w0" and pg_store.record("nine/a1")["status"] == "ok"


def test_an_unfinished_queued_runs_report_is_read_from_its_rows_and_written_whole_only_at_its_ends(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    """A member's claim, start and end leave the stack's report document as the queueing wrote
    it (rewritten whole, each was O(N) in an N-member run, under the run's lock); `stack status`
    reads the unfinished run from its rows, and the run's end writes the document whole."""
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)
    document = "SELECT body FROM hyops.documents WHERE kind = 'stack_report' AND name = 'nine'"
    as_queued = pg_store.sql(document)

    w0 = worker(hy, "w0")
    try:
        gate.wait_started(w0)  # a1 claimed, its run named, its engine in its create
        assert pg_store.sql(document) == as_queued
        status = hy("stack", "status", "stack.yml", "--json")
        members = {m["name"]: m for m in json.loads(status.stdout)["members"]}
        assert (members["a1"]["status"], members["a1"].get("worker")) == ("running", "w0"), status.stdout
        assert members["a1"].get("run_id") == member_rows(pg_store, run_id)["a1"]["member_run_id"]
    finally:
        gate.release()
    out = w0.communicate(timeout=600)[0]

    assert w0.returncode == 0, out
    final = json.loads(pg_store.sql(document))
    assert final["run_id"] == run_id and final["finished_at"]
    assert {m["status"] for m in final["members"]} == {"ok"} and {m["worker"] for m in final["members"]} == {"w0"}


def test_a_worker_idle_between_runs_whose_connections_the_server_closed_serves_the_next_run(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    """A worker without --until-idle lives on between runs; its store and queue connections
    sit idle, and the server may close them (a restart, a proxy's idle timeout). The next
    run's members must run, not fail on a dead connection: each connection is checked before
    it is lent, and a query the closing cut short is tried again (stack/queue/outage.py), so
    whichever connection the worker takes first, it never leaves with a bug (exit 70)."""
    hy = checkout(tmp_path / "runner", engine_path, sim_root, pg_store)
    first = queue(hy)
    w0 = subprocess.Popen([HYOPS, "stack", "work", "--name", "w0"], cwd=hy.workdir, env=hy.env(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        finished = "SELECT finished_at IS NOT NULL FROM hyops.queue_runs WHERE run_id = '{}'"
        wait_for(lambda: w0.poll() is not None or pg_store.sql(finished.format(first)).strip() == "t",
                 timeout=600, what="the first run to finish")
        wait_for(lambda: w0.poll() is not None or open_jobs(pg_store) == 0, timeout=600,
                 what="the worker to end its last job (idle)")
        assert w0.poll() is None
        # the store's connection, the queue's pool and procrastinate's pool and LISTEN: all a restart ends
        assert pg_store.terminate_hyops() >= 3
        second = hy("stack", "destroy", "stack.yml", "--queue")
        assert second.returncode == 0, second.stderr
        wait_for(lambda: w0.poll() is not None or pg_store.sql(finished.format(second.stdout.strip())).strip() == "t",
                 timeout=600, what="the second run to finish")
    finally:
        w0.send_signal(signal.SIGTERM)
        out = w0.communicate(timeout=120)[0]

    assert w0.returncode == 143, out  # the signal ended it, nothing else: no bug (exit 70)
    assert "Traceback" not in out and not list(hy.runtime_root.rglob("*bug*")), out
    rows = member_rows(pg_store, second.stdout.strip())
    assert {r["status"] for r in rows.values()} == {"destroyed"}, out
    assert not [o for o in hy.sim_objects() if o["type"] == "sim_network"]


def test_a_cancelled_run_withdraws_what_no_worker_took_and_its_running_member_settles_as_usual(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    hy, gate, run_id = queued_with_a1_held(tmp_path, engine_path, sim_root, pg_store, faults_file)
    w0 = worker(hy, "w0")  # one member at a time: it holds a1 while the rest wait in the queue
    try:
        gate.wait_started(w0)
        cancelled = hy("stack", "cancel", run_id)
        assert cancelled.returncode == 0, cancelled.stderr
        rows = member_rows(pg_store, run_id)
        assert rows["a1"]["status"] == "running"
        assert {rows[n]["status"] for n in NINE if n != "a1"} == {"cancelled"}
        assert run_row(pg_store, run_id)["finished_at"] is None  # a1 still runs
    finally:
        gate.release()
    out = w0.communicate(timeout=600)[0]

    assert w0.returncode == 0, out  # it ran a1, which converged; nothing else was its to run
    rows = member_rows(pg_store, run_id)
    assert rows["a1"]["status"] == "ok" and run_row(pg_store, run_id)["finished_at"] is not None
    for name in NINE:  # a cancelled member never started: no run of it, no record
        if name != "a1":
            assert engine_runs(pg_store, f"nine/{name}") == 0 and pg_store.record(f"nine/{name}") is None, name
    assert [o["name"] for o in hy.sim_objects() if o["type"] == "sim_network"] == ["a1"]
    status = hy("stack", "status", "stack.yml", "--json")
    assert {m["name"]: m["status"] for m in json.loads(status.stdout)["members"]} == {
        n: "ok" if n == "a1" else "cancelled" for n in NINE}
    again = hy("stack", "cancel", run_id)  # it finished: nothing left, and that is no error
    assert again.returncode == 0, again.stderr
    unknown = hy("stack", "cancel", "stack-apply-nope")
    assert unknown.returncode == 2 and unknown.stderr.startswith("hyops: error: no queued run stack-apply-nope")


def test_queueing_beside_an_unfinished_run_is_refused_and_supersede_cancels_it_first(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    """A pipeline cancelled after `--queue` left its run queued; the next commit's pipeline
    queues from another checkout. Beside it, the old run's members would run too (older
    configuration after newer): refused, exit 4, naming the run and the way out."""
    old = checkout(tmp_path / "old", engine_path, sim_root, pg_store)
    new = checkout(tmp_path / "new", engine_path, sim_root, pg_store)
    main_tf = new.workdir / "m" / "a1" / "main.tf"
    main_tf.write_text(main_tf.read_text() + "\n# the next commit touched a1\n")
    old_run = queue(old)

    refused = new("stack", "apply", "stack.yml", "--queue")
    assert refused.returncode == 4, refused.stderr
    assert old_run in refused.stderr and f"hyops stack cancel {old_run}" in refused.stderr
    assert pg_store.sql("SELECT count(*) FROM hyops.queue_runs").strip() == "1"  # nothing was queued

    new_run = queue(new, "--supersede")
    assert {r["status"] for r in member_rows(pg_store, old_run).values()} == {"cancelled"}
    assert run_row(pg_store, old_run)["finished_at"] is not None
    job = worker(new, "w-new")
    out = job.communicate(timeout=600)[0]
    assert job.returncode == 0, out
    assert {r["status"] for r in member_rows(pg_store, new_run).values()} == {"ok"}
    assert all(engine_runs(pg_store, f"nine/{n}") == 1 for n in NINE)  # only the new run's
    assert all(pg_store.journal(f"nine/{n}", old_run) == [] for n in NINE)


def test_a_worker_counts_only_the_members_it_ran_not_those_its_checkout_handed_back(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    """A worker on another commit takes a run's members and cannot serve them: that is the
    run's trouble (its members say why), not a failure of the members this worker ran."""
    old = checkout(tmp_path / "old", engine_path, sim_root, pg_store)
    new = checkout(tmp_path / "new", engine_path, sim_root, pg_store)
    (new.workdir / "stack.yml").write_text((new.workdir / "stack.yml").read_text() + "# the next commit\n")
    run_id = queue(old)

    job = worker(new, "w-new", "--run", run_id)
    out = job.communicate(timeout=600)[0]

    assert job.returncode == 0, out
    rows = member_rows(pg_store, run_id)
    assert all("differs from the one queued" in rows[n]["error"] for n in ("a1", "a2", "a3"))
    assert all(engine_runs(pg_store, f"nine/{n}") == 0 for n in NINE)
    assert "worker w-new: 0 member(s) run" in out
