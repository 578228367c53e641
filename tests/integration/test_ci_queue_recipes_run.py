"""The queued-stack CI recipes (examples/ci/github-actions-queue.yml, gitlab-ci-queue.yml) run
as written, with the harness of tests/integration/ci_jobs.py: every job in a fresh checkout,
its shell steps as written, only the store and the cloud shared, plus what the CI system hands
on (GitHub: the queue job's output `run`; GitLab: its dotenv report).

A push to main plays: the queue job (`hyops stack apply "$STACK" --queue --supersede`, the run id handed
on) -> the N worker jobs of the matrix / `parallel: N`, AT ONCE, each a separate process tree
in its own checkout (`hyops stack work --until-idle --run "$RUN" --name ...`) -> the last job,
which runs whatever the workers' outcome and writes the status summary, the JUnit and the HTML
report. That the workers really run at the same time is not left to luck: the first member's
create is parked on a gate (tests/integration/gates.py) that the test opens only once all N
workers are registered in the queue at once (procrastinate's worker table).
"""

from __future__ import annotations

import json
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.ci_recipes import GITHUB_QUEUE, GITLAB_QUEUE, PLACEHOLDER
from tests.integration.ci_jobs import (
    MEMBERS,
    Job,
    Pipeline,
    Project,
    Recipe,
    assert_no_secret,
    played,
)
from tests.integration.gates import Gate
from tests.readers import parse_table, plain

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

STACK = "modules/stack.yml"  # the demo stack of the checkout, set as STACK at the top of the file
WORKERS = ("runner-1", "runner-2", "runner-3")
RECIPES = [Recipe("github", GITHUB_QUEUE), Recipe("gitlab", GITLAB_QUEUE)]
REPORT_CALLS = [(f"report {STACK} --html hyops-report.html", 0),
                (f"stack status {STACK} --junit hyops-junit.xml --format markdown", 0)]


def as_extracted(argv: list[str], run_id: str, recipe: Recipe) -> tuple[str, ...]:
    """argv as the unit test extracts the recipe's line ($VARS -> PLACEHOLDER); the worker's
    name is "$WORKER" on GitHub, "runner-$CI_NODE_INDEX" on GitLab."""
    worker = PLACEHOLDER if recipe.name == "github" else f"runner-{PLACEHOLDER}"
    return tuple(PLACEHOLDER if a in (STACK, run_id) else worker if a in WORKERS else a for a in argv)


def run_id_handed_on(recipe: Recipe, queue: Job) -> str:
    handed = queue.outputs.get("run") if recipe.name == "github" else queue.dotenv.get("RUN")
    assert handed, f"the queue job handed on no run id\n{queue.log()}"
    return handed


def member_rows(project: Project, run_id: str) -> dict[str, dict[str, Any]]:
    text = project.store.sql("SELECT row_to_json(m)::text FROM hyops.queue_members m "
                             f"WHERE run_id = '{run_id}' ORDER BY position")
    return {doc["name"]: doc for doc in map(json.loads, text.splitlines())}


def engine_runs(project: Project, key: str) -> int:
    """How many runs of the module the store journaled (each run opens with its meta)."""
    return int(project.store.sql(f"SELECT count(*) FROM hyops.journal WHERE key = '{key}' AND kind = 'meta'"))


def junit_cases(job: Job) -> dict[str, tuple[str, str | None, str | None]]:
    """member -> (pass|failure|skipped, its message, the worker property)."""
    found = {}
    for case in ET.fromstring(job.file("hyops-junit.xml")).iter("testcase"):
        marks = [e for e in case if e.tag in ("failure", "error", "skipped")]
        worker = next((p.get("value") for p in case.iter("property") if p.get("name") == "worker"), None)
        found[str(case.get("name"))] = (marks[0].tag if marks else "pass",
                                        marks[0].get("message") if marks else None, worker)
    return found


class AllWorkersAtOnce:
    """Opens the gate the first member's create is parked on once all N workers are alive in
    the queue together; remembers whether they were (else it opens it at the deadline and the
    test fails on `seen`, rather than hanging)."""

    def __init__(self, project: Project, gate: Gate, count: int, deadline: float = 300.0) -> None:
        self.seen = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(project, gate, count, deadline), daemon=True)
        self._thread.start()

    def _watch(self, project: Project, gate: Gate, count: int, deadline: float) -> None:
        end = time.monotonic() + deadline
        try:
            while time.monotonic() < end and not self._stop.is_set():
                if gate.started.exists():
                    alive = project.store.sql("SELECT count(*) FROM hyops_queue.procrastinate_workers").strip()
                    if int(alive or 0) >= count:
                        self.seen = True
                        return
                self._stop.wait(0.2)  # polling a condition, bounded by the deadline
        finally:
            gate.release()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def play(recipe: Recipe, project: Project, gate: Gate | None) -> Pipeline:
    watcher = AllWorkersAtOnce(project, gate, len(WORKERS)) if gate is not None else None
    try:
        return recipe.on_main(project, STACK=STACK)
    finally:
        if watcher is not None:
            watcher.close()
            assert watcher.seen, "the worker jobs never ran at the same time"


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_the_queue_recipe_runs_every_member_once_over_concurrent_worker_jobs(
    recipe: Recipe, new_project: Callable[[str], Project], faults_file: Callable[..., Path], tmp_path: Path,
) -> None:
    assert recipe.settings()["STACK"] == "stack.yml"
    project = new_project("queue")
    gate = Gate.at(tmp_path)
    project.faults = faults_file([gate.rule(type="sim_network", op="create", times=1)])

    pipeline = play(recipe, project, gate)

    queue, work, report = pipeline["queue"], pipeline["work"], pipeline["report"]
    logs = "\n".join(j.log() for j in [queue, *played(work), report])
    assert {n: j.status for n, j in pipeline.items()} == {"queue": "success", "work": "success",
                                                         "report": "success"}, logs
    assert queue.hyops_calls() == [(f"stack apply {STACK} --queue --supersede", 0)], queue.log()
    run_id = run_id_handed_on(recipe, queue)
    assert project.store.sql("SELECT run_id FROM hyops.queue_runs").split() == [run_id]
    instances = played(work)
    assert len(instances) == len(WORKERS) and len({i.repo for i in instances}) == len(WORKERS)
    assert sorted(c for i in instances for c in i.hyops_calls()) == [
        (f"stack work --until-idle --run {run_id} --name {w}", 0) for w in WORKERS]

    # every member ran exactly once, on one of the workers, in its own checkout
    rows = member_rows(project, run_id)
    assert {n: r["status"] for n, r in rows.items()} == dict.fromkeys(MEMBERS, "ok")
    assert {r["worker"] for r in rows.values()} <= set(WORKERS)
    for name in MEMBERS:
        assert engine_runs(project, f"demo/{name}") == 1, name
    by_worker = {i.calls[0]["argv"][-1]: i for i in instances}
    for name, row in rows.items():
        ran_there = by_worker[row["worker"]].repo / ".hyops" / "runs"  # type: ignore[operator]
        assert any(row["member_run_id"] in str(p) for p in ran_there.rglob("*")), (name, row)

    # the last job: summary, JUnit and HTML name each member's worker
    assert report.hyops_calls() == REPORT_CALLS, report.log()
    assert junit_cases(report) == {n: ("pass", None, rows[n]["worker"]) for n in MEMBERS}
    summary = recipe.markdown(report, "hyops-status.md")
    table = {plain(r["Member"]): r for r in parse_table(summary.splitlines())}
    assert {n: plain(r["Status"]) for n, r in table.items()} == dict.fromkeys(MEMBERS, "ok"), summary
    for name in MEMBERS:
        assert f"on {rows[name]['worker']} " in plain(table[name]["Why"]), table[name]
    html = report.file("hyops-report.html")
    assert all(f"on worker {rows[n]['worker']}" in html for n in MEMBERS)
    assert {"hyops-junit.xml", "hyops-report.html"} <= set(report.artifacts), report.artifacts
    assert all(".hyops/runs/" in i.artifacts for i in instances if i.calls and rows_of(rows, i))
    assert_no_secret(project, {n: j for n, j in pipeline.items() if n != "work"}
                     | {i.name: i for i in instances})

    # every hyops line of the recipe ran as written
    ran = {as_extracted(c["argv"], run_id, recipe) for j in [queue, *instances, report] for c in j.calls}
    assert ran == recipe.lines(), (ran, recipe.lines())


def rows_of(rows: dict[str, dict[str, Any]], instance: Job) -> list[str]:
    """The members this worker job ran."""
    return [n for n, r in rows.items() if r["worker"] == instance.calls[0]["argv"][-1]]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_when_a_member_fails_the_last_job_still_reports_the_failure_and_its_pending_dependants(
    recipe: Recipe, new_project: Callable[[str], Project], faults_file: Callable[..., Path],
) -> None:
    project = new_project("red")
    project.faults = faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])

    pipeline = play(recipe, project, None)

    queue, work, report = pipeline["queue"], pipeline["work"], pipeline["report"]
    logs = "\n".join(j.log() for j in [queue, *played(work), report])
    assert {n: j.status for n, j in pipeline.items()} == {"queue": "success", "work": "failure",
                                                         "report": "success"}, logs
    run_id = run_id_handed_on(recipe, queue)
    rows = member_rows(project, run_id)
    failed_on = rows["vm"]["worker"]
    codes = {i.calls[0]["argv"][-1]: i.calls[0]["rc"] for i in played(work)}
    assert codes == {w: 1 if w == failed_on else 0 for w in WORKERS}, logs  # only vm's worker fails
    assert {n: (r["status"], r["blocked_by"]) for n, r in rows.items()} == {
        "network": ("ok", None), "vm": ("error", None), "config": ("pending", "vm"), "health": ("pending", "vm")}

    assert report.hyops_calls() == REPORT_CALLS, report.log()
    cases = junit_cases(report)
    assert cases["network"] == ("pass", None, rows["network"]["worker"])
    assert cases["vm"][0] == "failure" and "fail_after_create" in str(cases["vm"][1]) and cases["vm"][2] == failed_on
    assert cases["config"] == ("skipped", "blocked by vm", None)
    assert cases["health"] == ("skipped", "blocked by vm", None)
    table = {plain(r["Member"]): plain(r["Status"])
             for r in parse_table(recipe.markdown(report, "hyops-status.md").splitlines())}
    assert table == {"network": "ok", "vm": "error", "config": "pending", "health": "pending"}, table
    assert 'data-member="vm" data-status="error"' in report.file("hyops-report.html")
    assert f"on worker {failed_on}" in report.file("hyops-report.html")
