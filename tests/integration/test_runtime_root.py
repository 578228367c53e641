"""One runtime root per project (issue 11 item 7, docs/contract.md: Commands and options), on the real engine.

Without --runtime-root / HYOPS_RUNTIME_ROOT, hyops uses the nearest `.hyops/` walking up
from the current directory, else creates `./.hyops` and says so. These tests unset
HYOPS_RUNTIME_ROOT and set HYOPS_CEILING_DIRECTORIES to tmp_path, so no `.hyops` outside
the test's own tree (a stray /tmp/.hyops) can be found.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.helpers import PAIR_TF
from tests.integration.hyops_cli import HYOPS

STACK = """\
stack: proj
modules:
  - name: net
    path: net
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp/proj/stk/{stack.yml, net/main.tf}: a project whose stack lives in a subfolder."""
    stk = tmp_path / "proj" / "stk"
    (stk / "net").mkdir(parents=True)
    (stk / "net" / "main.tf").write_text(PAIR_TF)
    (stk / "stack.yml").write_text(STACK)
    return tmp_path / "proj"


@pytest.fixture
def run(tmp_path: Path, engine_path: str, sim_root: Path):
    """`run(cwd, *args)`: the real hyops with no runtime root given, searching below tmp_path only."""

    def go(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "HYOPS_RUNTIME_ROOT"}
        env.update(HYOPS_ENGINE=engine_path, HYOPS_SIM_ROOT=str(sim_root),
                   HYOPS_CEILING_DIRECTORIES=str(tmp_path))
        return subprocess.run([HYOPS, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)

    return go


def test_a_stack_applied_from_its_folder_is_seen_from_the_project_folder(project: Path, run) -> None:
    """Sequence: `stack apply stk/stack.yml` from the project folder (makes proj/.hyops), then
    `cd stk && stack apply stack.yml`, then `stack status` / `status --all` from the project
    folder. Before the fix the second apply wrote a second root, stk/.hyops, and the project
    folder still showed the first run."""
    first = run(project, "stack", "apply", "stk/stack.yml")
    assert first.returncode == 0, first.stderr
    assert "created runtime root" in first.stderr
    assert (project / ".hyops").is_dir()

    again = run(project / "stk", "stack", "apply", "stack.yml")
    assert again.returncode == 0, again.stderr
    assert "created runtime root" not in again.stderr
    assert not (project / "stk" / ".hyops").exists()
    record = json.loads((project / ".hyops" / "state" / "modules" / "proj__net" / "latest.json").read_text())

    stack_status = run(project, "stack", "status", "stk/stack.yml", "--json")
    assert stack_status.returncode == 0, stack_status.stderr
    doc = json.loads(stack_status.stdout)
    assert [(m["name"], m["status"], m["run_id"]) for m in doc["members"]] == [("net", "ok", record["run_id"])]
    assert str(project / ".hyops") in stack_status.stderr  # it names the root it read

    listed = run(project, "status", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(r["module_ref"], r["status"], r["run_id"]) for r in json.loads(listed.stdout)] == [
        ("proj/net", "ok", record["run_id"])]
    assert str(project / ".hyops") in listed.stderr


def test_reconcile_all_where_no_records_exist_up_the_tree_is_not_consistent(project: Path, run) -> None:
    """Sequence: `reconcile --all` in a folder with no `.hyops` anywhere above it (a CI gate run
    in the wrong folder). Before the fix: exit 0, "0 module(s) checked"."""
    result = run(project / "stk", "reconcile", "--all", "--json")

    assert result.returncode == 3, result.stderr
    doc = json.loads(result.stdout)
    assert doc["consistent"] is False and doc["modules"] == []
    assert any("no records under" in e for e in doc["errors"])
    assert not (project / "stk" / ".hyops").exists()  # a question creates no root


def test_reconcile_all_over_an_empty_root_found_above_is_not_consistent(project: Path, run) -> None:
    """Sequence: `mkdir proj/.hyops`, then `reconcile --all` from proj/stk: the root is found,
    holds no records, and says so (before the fix: exit 0)."""
    (project / ".hyops").mkdir(mode=0o700)

    result = run(project / "stk", "reconcile", "--all")

    assert result.returncode == 3, result.stderr
    assert f"no records under {project / '.hyops'}" in result.stderr
    assert "holds no records" in result.stderr


def test_every_module_command_works_inside_the_module_folder_with_the_ref_from_the_top(
        tmp_path: Path, run) -> None:
    """`cd modules/pair && hyops apply` is what `cd infra && terraform apply` was: the ref is the
    module's path from the project's top (where .hyops is), as a run from the top gives it."""
    top = tmp_path / "proj"
    module = top / "modules" / "pair"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(PAIR_TF)
    (top / ".hyops").mkdir(mode=0o700)

    applied = run(module, "apply")
    assert applied.returncode == 0, applied.stderr
    assert "hyops: module ref pair (its path from the project's top" in applied.stderr
    for args in (["status"], ["outputs", "network_id"], ["plan"], ["reconcile"]):
        out = run(module, *args)
        assert out.returncode == 0, f"{args}: {out.stdout}{out.stderr}"
    from_top = run(top, "status", "modules/pair", "--json")
    assert json.loads(from_top.stdout)["module_ref"] == "pair"
    assert sorted(p.name for p in (top / ".hyops" / "state" / "modules").iterdir()) == ["pair"]


def test_a_module_folder_outside_any_project_is_named_by_its_folder_and_capitals_are_kept(
        tmp_path: Path, run) -> None:
    module = tmp_path / "envs" / "Prod"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(PAIR_TF)

    applied = run(module, "apply")

    assert applied.returncode == 0, applied.stderr
    record = json.loads((module / ".hyops" / "state" / "modules" / "^prod" / "latest.json").read_text())
    assert record["module_ref"] == "Prod" and record["status"] == "ok"
    assert run(module, "status").returncode == 0


READ_ONLY_COMMANDS = [["plan", "proj/stk/net"], ["init", "proj/stk/net"], ["apply", "proj/stk/net"],
                      ["destroy", "proj/stk/net"], ["reconcile", "proj/stk/net"], ["reconcile", "--all"],
                      ["stack", "apply", "proj/stk/stack.yml"], ["status", "--all"], ["outputs", "proj/stk/net"]]


def test_a_read_only_runtime_root_is_one_line_on_every_command_never_a_traceback(
        project: Path, run, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    from tests.reliability.storage import read_only_bind

    root = tmp_path / "proj" / ".hyops"
    root.mkdir(mode=0o700)
    (project / "stk" / "stack.yml").write_text(STACK + "    ref: proj/stk/net\n")  # the member is that record
    assert run(tmp_path, "--runtime-root", str(root), "apply", "proj/stk/net").returncode == 0
    with read_only_bind(root):
        for args in READ_ONLY_COMMANDS:
            out = run(tmp_path, "--runtime-root", str(root), *args)
            assert "Traceback" not in out.stderr, f"{args}: {out.stderr}"
            assert out.returncode in (0, 1, 3, 4), f"{args}: exit {out.returncode}: {out.stderr}"
            assert out.returncode == 0 or "Read-only file system" in out.stderr, f"{args}: {out.stderr}"


def test_an_apply_from_a_folder_without_the_modules_root_is_refused_naming_the_other_root(
        project: Path, tmp_path: Path, run) -> None:
    """Sequence: `cd stk/net && hyops apply` (makes stk/net/.hyops, ref net), then `hyops apply
    stk/net` from the project folder, then from a folder outside the project. Each quietly made a
    second runtime root with a second ref on the same engine state: the two-refs refusal works
    only within one root."""
    module = project / "stk" / "net"
    first = run(module, "apply")
    assert first.returncode == 0, first.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    from_top = run(project, "apply", "stk/net")
    from_outside = run(elsewhere, "apply", str(module), "--ref", "net")

    for refused in (from_top, from_outside):
        assert refused.returncode == 2, refused.stderr
        assert str(module / ".hyops") in refused.stderr and "--runtime-root" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert not (project / ".hyops").exists() and not (elsewhere / ".hyops").exists()
    assert sorted(p.name for p in (module / ".hyops" / "state" / "modules").iterdir()) == ["net"]
    given = run(project, "--runtime-root", str(module / ".hyops"), "apply", "stk/net", "--ref", "net")
    assert given.returncode == 0, given.stderr


README_FIRST_COMMANDS = (  # the README's "use it where you used the engine", as written there
    "hyops apply infra/network",
    "cd infra/network && hyops apply",
    "hyops status && hyops outputs",
)


def test_the_readme_first_commands_work_as_written_from_the_folders_it_names(tmp_path: Path, run) -> None:
    """The README said `cd infra/network && hyops apply`, then `hyops status && hyops outputs`
    "from the project's top": the apply made infra/network/.hyops, and at the top both
    commands failed (`module directory . holds no .tf files`)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for line in README_FIRST_COMMANDS:
        assert f"\n{line}" in readme, f"README.md no longer starts a line with {line!r}: update this test"
    project = tmp_path / "project"
    module = project / "infra" / "network"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(PAIR_TF)

    first = run(project, "apply", "infra/network")
    again = run(module, "apply")
    status, outputs = run(module, "status"), run(module, "outputs")
    from_top = run(project, "status")

    for result in (first, again, status, outputs):
        assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (project / ".hyops" / "state" / "modules").iterdir()) == ["infra__network"]
    assert not (module / ".hyops").exists()
    assert "network_id" in outputs.stdout
    assert from_top.returncode == 2 and "hyops status --all" in from_top.stderr, from_top.stderr
