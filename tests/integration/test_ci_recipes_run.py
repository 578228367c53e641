"""The CI recipes (examples/ci/github-actions.yml, examples/ci/gitlab-ci.yml) run as written.

tests/unit/test_ci_examples.py parses every `hyops` line of the recipes; this test RUNS them,
with the harness of tests/integration/ci_jobs.py (each job in a fresh checkout, shell steps
as written, only the store and the cloud shared). The jobs are played in pipeline order:

  pull request / merge request   the plan job
  push to main / default branch  the apply job, then the reconcile job when (and only when)
                                 the apply job failed

No HYOPS_RUNTIME_ROOT is set: the recipes' artifact paths (`.hyops/runs/`) rely on the
default `./.hyops`, and that is checked. GitLab hands the artifacts of a job in `needs` to the
job that needs it; that is done too.

Each job's hyops calls are asserted exactly, and every `hyops` line the unit test extracts from
a recipe must have run at least once (MODULE in the first test, STACK set at the top of the
file in test_the_stack_variant). Last, a person runs the next command the reconcile summary
names, in a checkout of their own: for the module, and for a stack member, whose
`--inputs .hyops/config/modules/.../rerun.inputs.yml` is brought from the store there.
"""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ci_recipes import GITHUB, GITLAB, PLACEHOLDER
from tests.integration.ci_jobs import (
    MEMBERS,
    Project,
    Recipe,
    assert_no_secret,
    assert_repository_relative,
    assert_run_folders_kept,
    markdown_commands,
    module_ref,
)
from tests.readers import parse_table, plain

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

MODULE = "modules/network"  # what both recipes ship with (checked below)
STACK = "modules/stack.yml"  # the demo stack of the checkout, for the STACK variant

RECIPES = [Recipe("github", GITHUB), Recipe("gitlab", GITLAB)]

# --- the tests -------------------------------------------------------------------------------

# The hyops calls of the STACK variant's jobs, as the recipes' lines are extracted by the unit
# test ($VARS -> PLACEHOLDER); test_the_stack_variant asserts each job makes exactly these.
STACK_APPLY_CALLS = [(f"stack apply {STACK} --junit hyops-junit.xml", 1),
                     (f"report {STACK} --html hyops-report.html", 0), (f"stack status {STACK} --format markdown", 0)]
REPORT = (f"report {MODULE} --html hyops-report.html", 0)
STACK_RECONCILE_CALLS = [(f"reconcile --stack {STACK} --format markdown", 3)]


def as_extracted(argv: list[str]) -> tuple[str, ...]:
    return tuple(PLACEHOLDER if a in (MODULE, STACK) else a for a in argv)


class NextCommandFails(AssertionError):
    """A command a summary names failed where a person would run it."""


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_the_recipe_runs_as_written_plan_apply_and_reconcile_after_a_failed_apply(
    recipe: Recipe, new_project: Callable[[str], Project], faults_file: Callable[..., Path],
) -> None:
    assert recipe.settings()["MODULE"] == MODULE and recipe.settings()["STACK"] == ""
    ran: list[list[str]] = []

    # 1. A pull/merge request: the plan job only; its Markdown plan names the module's change.
    healthy = new_project("healthy")
    change = recipe.on_change_request(healthy)
    assert {n: j.status for n, j in change.items()} == {"plan": "success", "apply": "skipped",
                                                       "reconcile": "skipped"}, change["plan"].log()
    plan = change["plan"]
    assert plan.hyops_calls() == [(f"plan {MODULE} --format markdown", 0)], plan.log()
    plan_md = recipe.markdown(plan, "hyops-plan.md")
    assert re.search(r"^\| `sim_network\.this` \| create \|", plan_md, re.M), plan_md
    assert_run_folders_kept(plan)

    # 2. Merged: the apply job applies and posts the status; the reconcile job does not run.
    main = recipe.on_main(healthy)
    assert {n: j.status for n, j in main.items()} == {"plan": "skipped", "apply": "success",
                                                     "reconcile": "skipped"}, main["apply"].log()
    apply = main["apply"]
    assert apply.hyops_calls() == [(f"apply {MODULE}", 0), REPORT, (f"status {MODULE} --format markdown", 0)
                                   ], apply.log()
    ref = module_ref(healthy.store)
    assert plan_md.startswith(f"### Plan: {ref}\n"), plan_md  # the plan summary names the module
    assert healthy.store.record(ref)["status"] == "ok", healthy.store.record(ref)  # type: ignore[index]
    status_rows = parse_table(recipe.markdown(apply, "hyops-status.md").splitlines())
    assert [(plain(r["Module"]), plain(r["Status"])) for r in status_rows] == [(ref, "ok")], status_rows
    assert_run_folders_kept(apply)
    # the engine's state went to the store too (backend "pg"), in the module's own schema
    assert int(healthy.store.sql(f"SELECT count(*) FROM hyops_{ref}.states")) == 1
    assert_no_secret(healthy, change | main)
    ran += [c["argv"] for job in (plan, apply) for c in job.calls]

    # 3. Another repository, whose apply fails half way: the network is made, the provider
    # errors. The status is still posted; the reconcile job, on another runner, sees the
    # apply's record through the store, exits 3 (findings: the job stays red, as the recipe
    # says) and names the next commands with the module's path in the repository.
    broken = new_project("broken")
    broken.faults = faults_file([{"type": "sim_network", "op": "create", "mode": "fail_after_create", "times": 1}])
    main = recipe.on_main(broken)
    apply, reconcile = main["apply"], main["reconcile"]
    assert {n: j.status for n, j in main.items()} == {"plan": "skipped", "apply": "failure",
                                                     "reconcile": "failure"}, apply.log() + reconcile.log()
    assert apply.hyops_calls() == [(f"apply {MODULE}", 1), REPORT, (f"status {MODULE} --format markdown", 0)
                                   ], apply.log()
    assert "hyops-report.html" in apply.artifacts, apply.artifacts
    ref = module_ref(broken.store)
    assert broken.store.record(ref)["status"] == "error", broken.store.record(ref)  # type: ignore[index]
    status_md = recipe.markdown(apply, "hyops-status.md")
    (row,) = parse_table(status_md.splitlines())
    assert (plain(row["Module"]), plain(row["Status"])) == (ref, "error") and "fail_after_create" in plain(row["Why"])
    assert reconcile.hyops_calls() == [(f"reconcile {MODULE} --format markdown", 3)], reconcile.log()
    reconcile_md = recipe.markdown(reconcile, "hyops-reconcile.md")
    assert {plain(r["Module"]) for r in parse_table(reconcile_md.splitlines())} == {ref}, reconcile_md
    assert_repository_relative(reconcile_md, reconcile, naming=MODULE)
    assert_repository_relative(status_md, apply, naming=MODULE)
    assert_run_folders_kept(apply)
    # reconcile is read-only and makes no run folder: its artifact step keeps nothing, which
    # both recipes tolerate (if-no-files-found: ignore; GitLab only warns)
    assert_no_secret(broken, main)
    ran += [c["argv"] for job in (apply, reconcile) for c in job.calls]

    # 4. A person acts on it from a checkout of their own, the cause fixed (no fault).
    broken.faults = None
    (redo,) = {c for c in markdown_commands(reconcile_md) if c.startswith(f"hyops apply {MODULE} ")}
    done = broken.elsewhere(redo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert broken.store.record(ref)["status"] == "ok"  # type: ignore[index]

    # Every hyops line of the recipe runs: here, or in test_the_stack_variant (STACK set).
    stack_lines = {tuple(shlex.split(line)) for line, _ in STACK_APPLY_CALLS + STACK_RECONCILE_CALLS}
    executed = {as_extracted(argv) for argv in ran} | {as_extracted(list(t)) for t in stack_lines}
    assert recipe.lines() <= executed, recipe.lines() - executed
    assert {as_extracted(argv) for argv in ran} <= recipe.lines()


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_the_stack_variant(
    recipe: Recipe, new_project: Callable[[str], Project], faults_file: Callable[..., Path],
) -> None:
    """STACK set at the top of the file (the recipe's other mode): the stack apply fails at the
    vm; the JUnit report, `stack status` and, on the next runner, `reconcile --stack` tell the
    story; a person then runs the summary's module command in their own checkout: it carries
    the member's inputs as the stack file gives them now (as `--var`), wired from the
    upstream records the store holds, never a rerun.inputs.yml that may be stale."""
    project = new_project("stack")
    project.faults = faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])
    main = recipe.on_main(project, STACK=STACK)
    apply, reconcile = main["apply"], main["reconcile"]
    assert {n: j.status for n, j in main.items()} == {"plan": "skipped", "apply": "failure",
                                                     "reconcile": "failure"}, apply.log() + reconcile.log()
    assert apply.hyops_calls() == STACK_APPLY_CALLS, apply.log()
    junit = ET.fromstring(apply.file("hyops-junit.xml"))
    outcome = {c.get("name"): [e.tag for e in c if e.tag in ("failure", "error", "skipped")]
               for c in junit.iter("testcase")}
    assert outcome == {"network": [], "vm": ["failure"], "config": ["skipped"], "health": ["skipped"]}, outcome
    assert {m: (project.store.record(f"demo/{m}") or {}).get("status") for m in MEMBERS} == {
        "network": "ok", "vm": "error", "config": None, "health": None}
    rows = {plain(r["Member"]): plain(r["Status"])
            for r in parse_table(recipe.markdown(apply, "hyops-status.md").splitlines())}
    assert rows == {"network": "ok", "vm": "error", "config": "pending", "health": "pending"}, rows
    summary = recipe.markdown(apply, "hyops-status.md")
    assert "```mermaid\nflowchart LR\n" in summary and "  class m_vm error" in summary, summary
    assert 'data-member="vm" data-status="error"' in apply.file("hyops-report.html")
    assert_run_folders_kept(apply)
    assert reconcile.hyops_calls() == STACK_RECONCILE_CALLS, reconcile.log()
    reconcile_md = recipe.markdown(reconcile, "hyops-reconcile.md")
    assert {plain(r["Module"]) for r in parse_table(reconcile_md.splitlines())} == {f"demo/{m}" for m in MEMBERS}
    assert_repository_relative(reconcile_md, reconcile, naming="modules/vm")
    assert_no_secret(project, main)

    project.faults = None
    (redo,) = {c for c in markdown_commands(reconcile_md) if c.startswith("hyops apply modules/vm ")}
    done = project.elsewhere(redo)
    if done.returncode != 0:
        raise NextCommandFails(f"`{redo}` exited {done.returncode} in another checkout: {done.stderr}")
    assert project.store.record("demo/vm")["status"] == "ok"  # type: ignore[index]
