"""A state hyops cannot read here is "not compared", one judgement in every command (issue 54
case 5 and item 3, docs/recovery.md: Another writer).

On a fresh checkout whose members keep their state in the engine's `pg` backend, before
`init` had run, `stack status` said `state_written_outside` (another lineage, none, serial 0),
exit 3, and every `--resume` re-applied every member "because its state was written outside
hyops"; after `init` the same command said "not compared". The verdict depended on whether
`.terraform/` existed yet. And a member applied in another checkout with a local state file
(kept there, not here) was judged against this checkout's missing file.

Real engine (the bundled 1.0.3 and the modern one), the sim cloud, the engine's real `pg`
backend on the test's private PostgreSQL cluster, and hyops's records in the same database
(the shared store), so checkout B sees what checkout A recorded.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.integration.hyops_cli import Hyops
from tests.integration.shared_store import SharedStore
from tests.integration.stacks import StackEnv, members
from tests.stackfiles import NETWORK_VM

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

WRITTEN = "state_written_outside"


def _pg_backend(store: SharedStore, schema: str) -> str:
    """The engine's own `pg` backend on the store's database (the password via PGPASSWORD; under
    a shared store hyops's init gives each ref its schema: store/backend.py)."""
    return ('terraform {\n  backend "pg" {\n'
            f'    conn_str    = "{store.url}"\n    schema_name = "{schema}"\n  }}\n}}\n')


@pytest.fixture(params=["bundled", "modern"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("engine_path" if request.param == "bundled" else "modern_engine"))


def _checkout(tmp_path: Path, name: str, engine: str, sim_root: Path, store: SharedStore) -> StackEnv:
    """A checkout of its own (its folder and runtime root), sharing the store and the cloud."""
    work = tmp_path / name
    root = work / "runtime"
    root.mkdir(parents=True, mode=0o700)
    return StackEnv(Hyops(work, root, engine, sim_root, store.env(), store=store), work / "stack")


@pytest.fixture
def checkout_a(tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> StackEnv:
    """Checkout A: network and vm, each keeping its state in the pg backend (a schema each),
    applied by hyops."""
    a = _checkout(tmp_path, "a", engine, sim_root, pg_store)
    a.directory.mkdir()
    for name in ("network", "vm"):
        (a.module(name) / "backend.tf").write_text(_pg_backend(pg_store, f"tfstate_{name}"))
    a.write(NETWORK_VM)
    out = a.stack("apply", "stack/stack.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    return a


def _fresh_copy(a: StackEnv, b: StackEnv) -> None:
    """What a fresh clone holds: the configuration, no `.terraform/`, no state file."""
    shutil.copytree(a.directory, b.directory, ignore=shutil.ignore_patterns(".terraform", "*.tfstate*"))


def _cloud_changes(h: Hyops) -> int:
    """Creates, updates and deletes the sim cloud has served so far."""
    return sum(1 for c in h.sim_calls() if c["op"] in ("create", "update", "delete"))


def _run_members(b: StackEnv) -> dict[str, dict[str, Any]]:
    """The last run's members as `stack status` shows them (the report is in the shared store)."""
    out = b.stack("status", "stack/stack.yml", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    return members(json.loads(out.stdout))


def _judgements(b: StackEnv) -> dict[str, Any]:
    """What `stack status` and `hyops status` of each member say of its state, in checkout B."""
    stack = b.stack("status", "stack/stack.yml", "--json")
    assert stack.returncode == 0, stack.stdout + stack.stderr
    by_name = members(json.loads(stack.stdout))
    seen: dict[str, Any] = {}
    for name in ("network", "vm"):
        assert WRITTEN not in by_name[name], by_name[name]
        one = b.hyops("status", f"stack/{name}", "--ref", f"demo/{name}", "--json")
        assert one.returncode == 0, one.stdout + one.stderr
        doc = json.loads(one.stdout)
        assert WRITTEN not in doc, doc
        seen[name] = (by_name[name].get("state_not_read"), doc.get("state_not_read"))
    return seen


def test_a_pg_backend_state_on_a_fresh_checkout_is_not_compared_before_init_as_after(
        checkout_a: StackEnv, tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    b = _checkout(tmp_path, "b", engine, sim_root, pg_store)
    _fresh_copy(checkout_a, b)
    changes = _cloud_changes(b.hyops)

    before_init = _judgements(b)
    assert all(stack and one and "not compared" in stack and stack == one for stack, one in before_init.values()), \
        before_init

    resumed = b.stack("apply", "stack/stack.yml", "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "written outside" not in resumed.stderr, resumed.stderr
    skipped = _run_members(b)
    assert {m["status"] for m in skipped.values()} == {"skipped"}, skipped
    assert all("not compared: its state" in m["compared"] for m in skipped.values()), skipped
    assert _cloud_changes(b.hyops) == changes, "the resume changed an object"

    # the command stack status prints to compare, run as printed, reads each state through the
    # engine (after its init): the true comparison
    text = b.stack("status", "stack/stack.yml")
    [line] = [line for line in text.stdout.splitlines() if line.startswith("to compare: `")]
    printed = shlex.split(line.split("`")[1])
    assert printed[:3] == ["hyops", "reconcile", "--stack"], line
    reconciled = b.hyops(*printed[1:], "--json")
    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    report = json.loads(reconciled.stdout)
    assert report["consistent"] is True, report
    assert all(f["code"] != WRITTEN for m in report["modules"] for f in m["findings"]), report
    assert (b.directory / "network" / ".terraform").is_dir(), "reconcile ran no init"

    assert _judgements(b) == before_init, "the verdict depends on whether .terraform/ exists"
    page = tmp_path / "report.html"
    written = b.hyops("report", "stack/stack.yml", "--html", str(page))
    assert written.returncode == 0, written.stdout + written.stderr
    html = page.read_text()
    assert f'data-finding="{WRITTEN}"' not in html and "data-state-not-read" in html, html
    again = b.stack("apply", "stack/stack.yml", "--resume")
    assert again.returncode == 0 and "written outside" not in again.stderr, again.stderr
    assert _cloud_changes(b.hyops) == changes, "the resume changed an object"


def test_a_pg_backend_state_in_a_fresh_checkout_at_the_same_path_is_not_compared(
        checkout_a: StackEnv, tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    """A CI runner that clones to the same build path: no `.terraform/` where the record's
    module_dir is, a runtime root of its own."""
    for name in ("network", "vm"):
        shutil.rmtree(checkout_a.directory / name / ".terraform")
    b = StackEnv(Hyops(checkout_a.hyops.workdir, tmp_path / "runner-root", engine, sim_root, pg_store.env(),
                       store=pg_store), checkout_a.directory)
    b.hyops.runtime_root.mkdir(mode=0o700)
    changes = _cloud_changes(b.hyops)

    seen = _judgements(b)

    assert all(stack and "not compared" in stack and stack == one for stack, one in seen.values()), seen
    resumed = b.stack("apply", "stack/stack.yml", "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert {m["status"] for m in _run_members(b).values()} == {"skipped"}, resumed.stderr
    assert _cloud_changes(b.hyops) == changes, "the resume changed an object"


def _local_a(tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore, backend: str = "") -> StackEnv:
    """Checkout A: network and vm with local state files (`backend`: a backend.tf for each),
    applied by hyops (records in the store)."""
    a = _checkout(tmp_path, "a", engine, sim_root, pg_store)
    a.directory.mkdir()
    for name in ("network", "vm"):
        module = a.module(name)
        if backend:
            (module / "backend.tf").write_text(backend)
    a.write(NETWORK_VM)
    out = a.stack("apply", "stack/stack.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    return a


@pytest.fixture
def local_a(tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> StackEnv:
    return _local_a(tmp_path, engine, sim_root, pg_store)


def test_reconcile_of_a_member_whose_local_state_another_checkout_keeps_says_not_compared(
        local_a: StackEnv, tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    b = _checkout(tmp_path, "b", engine, sim_root, pg_store)
    _fresh_copy(local_a, b)
    changes = _cloud_changes(b.hyops)

    reconciled = b.hyops("reconcile", "--stack", "stack/stack.yml", "--json")
    text = b.hyops("reconcile", "--stack", "stack/stack.yml")

    assert reconciled.returncode == 1 and text.returncode == 1, reconciled.stdout + reconciled.stderr
    report = json.loads(reconciled.stdout)
    for module in report["modules"]:
        assert module["findings"] == [] and "actions" not in module, module  # nothing said of B's missing file
        [why] = module["could_not_check"]
        assert "not compared" in why and str(local_a.directory) in why, why
    assert "next actions" not in text.stdout and "hyops " not in text.stdout, text.stdout  # nothing to run here
    assert not (b.directory / "network" / ".terraform").exists(), "reconcile ran init in this checkout"
    for name, member in _run_members(b).items():
        assert WRITTEN not in member and "not compared" in member["state_not_read"], (name, member)
    resumed = b.stack("apply", "stack/stack.yml", "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert {m["status"] for m in _run_members(b).values()} == {"skipped"}, resumed.stderr
    assert _cloud_changes(b.hyops) == changes, "the resume changed an object"


def test_a_queued_resume_on_a_fresh_runner_applies_no_pg_backend_member(
        checkout_a: StackEnv, tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    """The queued run's worker in a fresh clone (no `.terraform/`): every member skipped, as
    `stack apply --resume` decides, none re-applied for a writer nobody saw."""
    b = _checkout(tmp_path, "b", engine, sim_root, pg_store)
    _fresh_copy(checkout_a, b)
    changes = _cloud_changes(b.hyops)

    queued = b.stack("apply", "stack/stack.yml", "--queue", "--resume")
    assert queued.returncode == 0, queued.stdout + queued.stderr
    worked = b.stack("work", "--until-idle", "--name", "fresh-runner")

    assert worked.returncode == 0, worked.stdout + worked.stderr
    assert "written outside" not in worked.stdout + worked.stderr, worked.stdout + worked.stderr
    rows = pg_store.sql("SELECT name || ' ' || status FROM hyops.queue_members "
                        f"WHERE run_id = '{queued.stdout.strip()}' ORDER BY position")
    by_name = dict(line.split() for line in rows.splitlines() if line.strip())
    assert by_name == {"network": "skipped", "vm": "skipped"}, rows
    assert _cloud_changes(b.hyops) == changes, "the queued resume changed an object"


def test_a_module_apply_in_a_checkout_without_its_local_state_refuses_and_names_the_other_checkout(
        local_a: StackEnv, tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    """The engine here would act on this checkout's (empty) state, without the objects the
    record holds: the apply refuses (state_missing, exit 4), and says the state is not compared
    here because another checkout keeps it, not that the objects are gone."""
    b = _checkout(tmp_path, "b", engine, sim_root, pg_store)
    _fresh_copy(local_a, b)
    changes = _cloud_changes(b.hyops)

    out = b.hyops("apply", "stack/network", "--ref", "demo/network")

    assert out.returncode == 4, out.stdout + out.stderr
    assert "state_missing" in out.stderr and "not compared here" in out.stderr, out.stderr
    assert str(local_a.directory / "network") in out.stderr, out.stderr
    assert _cloud_changes(b.hyops) == changes, "the refused apply changed an object"


def test_a_local_backend_block_that_names_no_file_is_not_compared_in_another_checkout_after_init(
        tmp_path: Path, engine: str, sim_root: Path, pg_store: SharedStore) -> None:
    """`backend "local" {}` keeps the state in the module's folder as no block does; after
    `init` in checkout B (`.terraform/` now says "a backend"), reconcile compared B's empty
    state through the engine: state_missing for everything, and an --import into B."""
    a = _local_a(tmp_path, engine, sim_root, pg_store, 'terraform {\n  backend "local" {}\n}\n')
    b = _checkout(tmp_path, "b", engine, sim_root, pg_store)
    _fresh_copy(a, b)
    assert (init := b.hyops("init", "stack/network")).returncode == 0, init.stdout + init.stderr

    reconciled = b.hyops("reconcile", "--stack", "stack/stack.yml", "--json")

    assert reconciled.returncode == 1, reconciled.stdout + reconciled.stderr
    for module in json.loads(reconciled.stdout)["modules"]:
        assert module["findings"] == [] and "actions" not in module, module
        [why] = module["could_not_check"]
        assert "not compared" in why and str(a.directory) in why, why
