"""The shared PostgreSQL store with the real engine, the sim cloud and a real server (#12).

Two runners are two checkouts, two runtime roots and two processes that share only what CI
runners share: the store (records, locks, journals; the engine's `pg` backend for state in
the same database) and the cloud.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gates import Gate, kill_engines
from tests.integration.helpers import MODULE_COPY_IGNORE, SIM_MODULES
from tests.integration.hyops_cli import HYOPS, Hyops, wait_for
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

PG_BACKEND = 'terraform {\n  backend "pg" {}\n}\n'


def checkout(base: Path, *, pg_backend: bool) -> Path:
    """A runner's clone of the demo stack (modules/stack.yml), state in the store when asked."""
    modules = base / "modules"
    shutil.copytree(SIM_MODULES, modules, ignore=MODULE_COPY_IGNORE)
    if pg_backend:
        for member in ("network", "vm", "config", "health"):
            (modules / member / "backend.tf").write_text(PG_BACKEND)
    return base


def runner(base: Path, engine: str, sim_root: Path, store: SharedStore, *, pg_backend: bool = True) -> Hyops:
    root = checkout(base, pg_backend=pg_backend)
    runtime = root / ".hyops"
    runtime.mkdir(mode=0o700)
    return Hyops(root, runtime, engine, sim_root, store.env(), store=store)


def start_in_own_group(hy: Hyops, *args: str) -> subprocess.Popen[str]:
    """A CI job: hyops in its own process group, so the runner can kill the whole group."""
    return subprocess.Popen([HYOPS, *args], cwd=hy.workdir, env=hy.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def journaled_start(store: SharedStore, key: str, address: str) -> Callable[[], bool]:
    def seen() -> bool:
        rec = store.record(key)
        if rec is None or rec["status"] != "running":
            return False
        return any(e.get("type") == "apply_start" and e["hook"]["resource"]["addr"] == address
                   for e in store.journal_events(key, rec["run_id"]))
    return seen


def findings(report: dict[str, Any], ref: str) -> dict[str, Any]:
    return next(m for m in report["modules"] if m["module_ref"] == ref)


def test_a_runner_killed_mid_create_is_recovered_by_another_from_the_store(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    a = runner(tmp_path / "runner-a", engine_path, sim_root, pg_store)
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="create", at="after", times=1)])

    job = start_in_own_group(a, "stack", "apply", "modules/stack.yml")
    try:
        provider = gate.wait_started(job)
        wait_for(journaled_start(pg_store, "demo/vm", "sim_vm.this"), what="the vm's create in the journal")
        os.killpg(job.pid, signal.SIGKILL)  # the runner dies with its whole job
        job.communicate()
        kill_engines(a.workdir / "modules" / "vm", provider["pid"])
    finally:
        gate.release()
    killed_run = pg_store.record("demo/vm")["run_id"]
    shutil.rmtree(a.workdir)  # the runner, its checkout and its .hyops are gone

    b = runner(tmp_path / "runner-b", engine_path, sim_root, pg_store)
    seen = b("reconcile", "--stack", "modules/stack.yml", "--json")
    assert seen.returncode == 3, seen.stderr
    vm = {f["code"]: f for f in findings(json.loads(seen.stdout), "demo/vm")["findings"]}
    assert killed_run in vm["stale_running"]["detail"]
    assert vm["suspect_orphan"]["addresses"] == ["sim_vm.this"] and vm["suspect_orphan"]["evidence"] == "started"
    assert findings(json.loads(seen.stdout), "demo/network")["findings"] == []  # its state is in the store

    live_vm = [o for o in b.sim_objects() if o["type"] == "sim_vm"]
    assert len(live_vm) == 1  # the killed create did make it
    suggested = next(a["command"] for a in vm["suspect_orphan"]["alternatives"] if "--import" in a["command"])
    adopt = b(*shlex.split(suggested.replace("<id>", live_vm[0]["id"]))[1:])
    assert adopt.returncode == 0, adopt.stderr
    settled = b(*shlex.split(vm["stale_running"]["next_actions"][0])[1:])
    assert settled.returncode == 0, settled.stderr
    resumed = b("stack", "apply", "modules/stack.yml", "--resume", "--json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    members = {m["name"]: m["status"] for m in json.loads(resumed.stdout)["members"]}
    assert members["network"] == "skipped"  # one digest key in the store: A's ok run counts for B

    assert [o["id"] for o in b.sim_objects() if o["type"] == "sim_vm"] == [live_vm[0]["id"]]  # never created twice
    assert {pg_store.record(f"demo/{m}")["status"] for m in ("network", "vm", "config", "health")} == {"ok"}
    assert b("reconcile", "--stack", "modules/stack.yml").returncode == 0


def test_two_runners_applying_one_module_at_once_the_second_is_refused_naming_the_first(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
    faults_file: Callable[..., Path],
) -> None:
    a = runner(tmp_path / "runner-a", engine_path, sim_root, pg_store)
    b = runner(tmp_path / "runner-b", engine_path, sim_root, pg_store)
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create", times=1)])
    first = a.start("apply", "modules/network", "--ref", "demo/network")
    try:
        gate.wait_started(first)
        holder = pg_store.record("demo/network")
        second = b("apply", "modules/network", "--ref", "demo/network")
        held = b("store", "status", "--json")
    finally:
        gate.release()
    out, err = first.communicate(timeout=300)

    assert second.returncode == 4, second.stderr
    owner = holder["owner"]
    assert f"pid {first.pid} on {owner['host']}" in second.stderr and holder["run_id"] in second.stderr
    assert json.loads(held.stdout)["locks_held"] == [
        {"key": "demo/network", "holder": json.loads(held.stdout)["locks_held"][0]["holder"]}]
    assert holder["run_id"] in json.loads(held.stdout)["locks_held"][0]["holder"]
    assert first.returncode == 0, err
    assert len([o for o in a.sim_objects() if o["type"] == "sim_network"]) == 1


def test_running_is_in_the_store_before_the_provider_creates(
    hyops_pg: Hyops, pg_store: SharedStore, module_copy: Callable[[str], Path],
    faults_file: Callable[..., Path], tmp_path: Path,
) -> None:
    module_copy("network")
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create", at="before", times=1)])
    job = hyops_pg.start("apply", "modules/network")
    try:
        gate.wait_started(job)
        during = pg_store.record("network")
        journal_kinds = [kind for kind, _ in pg_store.journal("network", during["run_id"])]
        live_during = hyops_pg.sim_objects()
    finally:
        gate.release()
    job.communicate(timeout=300)

    assert during["status"] == "running" and during["active_command"] == "apply"
    assert live_during == []  # the create is parked before the provider made anything
    assert job.returncode == 0
    assert journal_kinds[0] == "meta" and "engine" in journal_kinds
    assert pg_store.record("network")["status"] == "ok"
    assert not (hyops_pg.runtime_root / "state").exists()  # records live in the store only


def test_a_store_that_is_down_before_a_run_refuses_it_and_the_provider_is_untouched(
    hyops_pg: Hyops, pg_store: SharedStore, module_copy: Callable[[str], Path],
) -> None:
    module_copy("network")
    pg_store.cluster.stop_server()
    try:
        refused = hyops_pg("apply", "modules/network")
    finally:
        pg_store.cluster.start_server()

    assert refused.returncode == 4, refused.stderr
    assert "cannot reach the store" in refused.stderr and "Traceback" not in refused.stderr
    assert pg_store.cluster.password not in refused.stderr
    assert hyops_pg.sim_calls() == []
    assert not (hyops_pg.runtime_root / "state").exists()  # nothing local claims otherwise
    assert pg_store.record("network") is None


def test_a_store_lost_mid_run_fails_the_settle_loudly_and_the_journal_tells_reconcile_later(
    hyops_pg: Hyops, pg_store: SharedStore, module_copy: Callable[[str], Path],
    faults_file: Callable[..., Path], tmp_path: Path,
) -> None:
    module_copy("network")  # state in terraform.tfstate: the engine does not need the server
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create", at="before", times=1)])
    job = hyops_pg.start("apply", "modules/network")
    try:
        gate.wait_started(job)
        wait_for(journaled_start(pg_store, "network", "sim_network.this"), what="the create in the journal")
        run_id = pg_store.record("network")["run_id"]
        pg_store.cluster.stop_server()
        gate.release()
        out, err = job.communicate(timeout=300)
    finally:
        gate.release()
        pg_store.cluster.start_server()

    assert job.returncode == 1, err
    assert "could not write the settled record" in err and "reconcile" in err
    assert [o["type"] for o in hyops_pg.sim_objects()] == ["sim_network"]  # the engine finished
    assert pg_store.record("network")["status"] == "running"

    later = hyops_pg("reconcile", "modules/network", "--json")
    assert later.returncode == 3, later.stderr
    finding = json.loads(later.stdout)["modules"][0]["findings"][0]
    assert finding["code"] == "stale_running" and run_id in finding["detail"]
    assert hyops_pg("reconcile", "modules/network", "--write").returncode == 0
    assert pg_store.record("network")["status"] == "ok"


def test_a_store_schema_newer_than_hyops_is_refused_with_exit_2(hyops_pg: Hyops, pg_store: SharedStore) -> None:
    pg_store.sql("INSERT INTO hyops.schema_version (version) VALUES (999)")

    for args in (["status", "--all"], ["store", "init"], ["store", "status"]):
        out = hyops_pg(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert "newer than this hyops knows" in out.stderr


def test_import_local_moves_records_into_the_store_once_and_keeps_the_local_copy(
    hyops: Hyops, pg_store: SharedStore, module_copy: Callable[[str], Path],
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0  # a local record
    local = hyops.record("network")
    shared = Hyops(hyops.workdir, hyops.runtime_root, hyops.engine, hyops.sim_root, pg_store.env(), store=pg_store)

    first = shared("store", "import-local", str(hyops.runtime_root))
    again = shared("store", "import-local", str(hyops.runtime_root))

    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    assert "1 records" in first.stdout and "0 records (1 kept" in again.stdout
    assert pg_store.record("network") == local
    assert hyops.record("network") == local  # the local copy stays
    assert shared("status", "modules/network").returncode == 0
    destroyed = shared("destroy", "modules/network")  # the store's rerun inputs serve the destroy
    assert destroyed.returncode == 0, destroyed.stderr
    assert pg_store.record("network")["status"] == "destroyed"


def test_a_store_url_with_a_password_is_never_printed_nor_given_to_the_engine(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    a = runner(tmp_path / "runner-a", engine_path, sim_root, pg_store)
    password = pg_store.cluster.password
    with_password = pg_store.url.replace("hyops_admin@", f"hyops_admin:{password}@")
    out = a("apply", "modules/network", "--ref", "demo/network", env={"HYOPS_STORE": with_password})

    assert out.returncode == 2, out.stderr
    assert password not in out.stdout + out.stderr
    assert "PGPASSWORD" in out.stderr
    assert a.sim_calls() == []


def test_a_second_module_whose_ref_differs_only_in_punctuation_is_refused_its_first_schema(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    """Both refs name the pg backend schema hyops_net_a_b: the second module would keep its
    state in the first one's, and each apply would claim (or destroy) the other's objects."""
    hy = runner(tmp_path / "runner", engine_path, sim_root, pg_store)
    shutil.copytree(hy.workdir / "modules" / "network", hy.workdir / "modules" / "network2",
                    ignore=MODULE_COPY_IGNORE)
    first = hy("apply", "modules/network", "--ref", "net/a_b")
    assert first.returncode == 0, first.stderr
    recorded = pg_store.record("net/a_b")

    second = hy("apply", "modules/network2", "--ref", "net/A-b", "--var", "name=other-net")

    assert second.returncode == 2, second.stderr
    assert "schema hyops_net_a_b" in second.stderr and "module net/a_b" in second.stderr
    assert pg_store.record("net/A-b") is None  # refused before its first init: no record
    assert pg_store.record("net/a_b") == recorded
    assert [o["name"] for o in hy.sim_objects() if o["type"] == "sim_network"] == ["demo-net"]


def test_a_second_ref_of_a_pg_backend_module_directory_is_refused_like_any_other_backend(
    tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore,
) -> None:
    """The directory's `.terraform/` keeps the schema of the ref whose init configured it
    (hyops_net_a), so a second ref there would use that very state: without the check, its
    apply replaced net/a's network and net/a's record still said ok."""
    hy = runner(tmp_path / "runner", engine_path, sim_root, pg_store)
    assert hy("apply", "modules/network", "--ref", "net/a").returncode == 0
    recorded = pg_store.record("net/a")

    second = hy("apply", "modules/network", "--ref", "net/b", "--var", "name=other-net")

    assert second.returncode == 2, second.stderr
    assert "module net/a's" in second.stderr
    assert pg_store.record("net/b") is None and pg_store.record("net/a") == recorded
    assert [o["name"] for o in hy.sim_objects() if o["type"] == "sim_network"] == ["demo-net"]


def test_import_local_brings_a_killed_stack_runs_journaled_members_into_the_stores_report(
    hyops: Hyops, pg_store: SharedStore,
) -> None:
    """A local run killed mid-way left its report (every member pending) and its journal (one
    member ok, one running): the store's copy must say what the journal says."""
    from hybridops_tf.record.lifecycle import MemberStatus
    from hybridops_tf.runtime.root import Runtime
    from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport

    hyops.runtime_root.mkdir(exist_ok=True)
    live = LiveReport(Runtime(hyops.runtime_root), StackReport(
        "demo", "stack.yml", "stack-apply-20240101T000000Z-00000000", "apply", "2024-01-01T00:00:00Z", None,
        [MemberEntry(n, f"demo/{n}", "pending") for n in ("network", "vm", "config")]))
    live.start()
    live.member("network", MemberStatus.OK, "apply-1")
    live.member("vm", MemberStatus.RUNNING, "apply-2")  # killed here: no finish
    shared = Hyops(hyops.workdir, hyops.runtime_root, hyops.engine, hyops.sim_root, pg_store.env(), store=pg_store)

    imported = shared("store", "import-local", str(hyops.runtime_root))

    assert imported.returncode == 0, imported.stderr
    body = json.loads(pg_store.sql("SELECT body FROM hyops.documents WHERE kind = 'stack_report' AND name = 'demo'"))
    assert {m["name"]: (m["status"], m.get("run_id")) for m in body["members"]} == {
        "network": ("ok", "apply-1"), "vm": ("running", "apply-2"), "config": ("pending", None)}


LIVE_RUN = """
import json, sys
from pathlib import Path
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport, read_report, write_report

root, action, run_id = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
root.mkdir(exist_ok=True)
runtime = Runtime(root)
if action == "read":
    print(json.dumps(read_report(runtime, "demo")))
    sys.exit(0)
report = StackReport("demo", "stack.yml", run_id, "apply", "2024-01-01T00:00:00Z", None,
                     [MemberEntry(n, f"demo/{n}", "pending") for n in ("network", "vm", "config")])
live = LiveReport(runtime, report)
live.start()
live.member("network", MemberStatus.RUNNING, "apply-1")
live.member("network", MemberStatus.OK, "apply-1")
live.member("vm", MemberStatus.RUNNING, "apply-2")
if action == "finish":
    live.member("vm", MemberStatus.OK, "apply-2")
    live.member("config", MemberStatus.OK, "apply-3")
    report.finished_at = "2024-01-01T00:01:00Z"
    write_report(runtime, report)
    live.finish(True)
if action == "unwritten":  # its finished report could not be written: its lines are its last word
    live.finish(False)
"""  # action "killed": the runner stops after vm's start, without its finish


def test_a_stack_run_on_the_shared_store_journals_member_updates_there_and_another_runner_reads_them(
    tmp_path: Path, pg_store: SharedStore,
) -> None:
    """Each member update is one line in the store, never the whole report rewritten (a
    500-member run rewrote a report of 500 members 1,000 times); a reader on another runner
    folds a killed run's lines into its report, and a run's finish drops them."""
    def live(root: str, action: str, run_id: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-c", LIVE_RUN, str(tmp_path / root), action, run_id],
                              env={**os.environ, **pg_store.env()}, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    def document() -> dict[str, Any]:
        return json.loads(pg_store.sql("SELECT body FROM hyops.documents "
                                       "WHERE kind = 'stack_report' AND name = 'demo'"))

    def lines() -> int:
        return int(pg_store.sql("SELECT count(*) FROM hyops.journal WHERE key = 'stack_report:demo'"))

    live("runner-a", "killed", "stack-apply-1")

    assert {m["status"] for m in document()["members"]} == {"pending"}  # as the run's start wrote it, whole
    assert lines() == 3
    seen = json.loads(live("runner-b", "read", "-").stdout)
    assert {m["name"]: (m["status"], m.get("run_id")) for m in seen["members"]} == {
        "network": ("ok", "apply-1"), "vm": ("running", "apply-2"), "config": ("pending", None)}

    live("runner-a", "finish", "stack-apply-2")  # the next run: the killed run's lines go at its start

    assert lines() == 0
    finished = json.loads(live("runner-b", "read", "-").stdout)
    assert finished["run_id"] == "stack-apply-2" and {m["status"] for m in finished["members"]} == {"ok"}


def test_a_stack_runs_start_drops_the_lines_a_killed_run_left_in_the_stores_journal(
    tmp_path: Path, pg_store: SharedStore,
) -> None:
    """The next run is killed too, so no finish drops anything: its start alone must have
    taken the first killed run's lines out of the store's journal."""
    def killed(run_id: str) -> None:
        done = subprocess.run([sys.executable, "-c", LIVE_RUN, str(tmp_path / "runner"), "killed", run_id],
                              env={**os.environ, **pg_store.env()}, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr

    def runs_in_journal() -> list[str]:
        return pg_store.sql("SELECT run_id FROM hyops.journal WHERE key = 'stack_report:demo' ORDER BY id").split()

    killed("stack-apply-1")
    assert runs_in_journal() == ["stack-apply-1"] * 3

    killed("stack-apply-2")

    assert runs_in_journal() == ["stack-apply-2"] * 3


def test_a_stack_runs_finish_keeps_its_lines_in_the_store_when_its_finished_report_was_not_written(
    tmp_path: Path, pg_store: SharedStore,
) -> None:
    done = subprocess.run([sys.executable, "-c", LIVE_RUN, str(tmp_path / "runner"), "unwritten", "stack-apply-1"],
                          env={**os.environ, **pg_store.env()}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    assert pg_store.sql("SELECT count(*) FROM hyops.journal WHERE key = 'stack_report:demo'").strip() == "3"
