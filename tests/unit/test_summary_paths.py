"""Commands a summary prints run on any runner: the module is named by its path in this
checkout, never by the absolute path of the runner that wrote the record.

A shared store hands the next CI job records whose `module_dir` is the dead runner's
(`/builds/runner-a/0/group/infra/modules/network`); the same repository is checked out here
under another root. The displayed directory is relative to the current directory when the
module is under it, else relative to the project top (the folder holding the runtime root),
and the recorded path only when neither applies.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.engine.binary import EngineInfo
from tests.readers import code_spans, parse_table, plain

DEAD = "/builds/runner-a/0/group/infra"  # where the apply runner had checked the repository out


@pytest.fixture(autouse=True)
def no_engine_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hybridops_tf.engine.binary.resolve",
                        lambda *_, **__: EngineInfo(Path("/usr/bin/tofu"), "1.8.0", "tofu"))
    for name in ("HYOPS_RUNTIME_ROOT", "HYOPS_STORE", "HYOPS_MODULES_ROOT", "HYOPS_CEILING_DIRECTORIES"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This runner's checkout of the same repository, with its `.hyops`; the current directory."""
    top = tmp_path / "runner-b" / "builds" / "infra"
    for name in ("network", "vm"):
        (top / "modules" / name).mkdir(parents=True)
        (top / "modules" / name / "main.tf").write_text('resource "sim_network" "n" {}\n')
    (top / ".hyops").mkdir(mode=0o700)
    monkeypatch.chdir(top)
    return top


def write_record(root: Path, ref: str, module_dir: str, **fields: object) -> None:
    doc = {"schema_version": 1, "module_ref": ref, "run_id": "apply-1", "updated_at": "2026-01-01T00:00:00Z",
           "module_dir": module_dir, **fields}
    path = root / "state" / "modules" / ref.replace("/", "__") / "latest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))


def status_next(checkout: Path) -> dict[str, list[str]]:
    result = CliRunner().invoke(cli, ["status", "--all", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    return {plain(r["Module"]): code_spans(r["Next action"]) for r in parse_table(result.stdout.splitlines())}


def test_status_of_a_record_from_another_checkout_names_the_module_relative_to_here(checkout: Path) -> None:
    write_record(checkout / ".hyops", "network", f"{DEAD}/modules/network", status="error",
                 failed_command="apply", last_error="boom")

    shown = status_next(checkout)

    assert shown["network"] == ["hyops reconcile modules/network --ref network"]


def test_reconcile_all_of_a_record_from_another_checkout_prints_relative_commands(checkout: Path) -> None:
    write_record(checkout / ".hyops", "network", f"{DEAD}/modules/network", status="running",
                 active_command="apply", suspect_orphans=[
                     {"address": "sim_network.n", "action": "create", "run_id": "apply-1", "at": "x"}])

    result = CliRunner().invoke(cli, ["reconcile", "--all", "--format", "markdown"])

    assert result.exit_code in (1, 3), result.output
    commands = [c for r in parse_table(result.stdout.splitlines()) for c in code_spans(r["Next action"])]
    assert commands, result.stdout
    assert not [c for c in commands if DEAD in c], commands
    dirs = {shlex.split(c)[2] for c in commands if c.startswith("hyops reconcile ")}
    assert dirs == {"modules/network"}, commands


def test_from_a_folder_inside_the_project_the_path_is_relative_to_it(checkout: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write_record(checkout / ".hyops", "vm", f"{DEAD}/modules/vm", status="error")
    write_record(checkout / ".hyops", "network", str(checkout / "modules" / "network"), status="error")
    monkeypatch.chdir(checkout / "modules" / "network")  # the project's .hyops is found above

    shown = status_next(checkout)

    assert shown["vm"] == ["hyops reconcile ../vm --ref vm"]
    assert shown["network"] == ["hyops reconcile . --ref network"]


def test_the_recorded_path_is_kept_when_the_module_is_nowhere_here(checkout: Path, tmp_path: Path) -> None:
    from hybridops_tf.reconcile.evidence import display_dir

    elsewhere = tmp_path / "elsewhere" / "db"
    elsewhere.mkdir(parents=True)
    (elsewhere / "main.tf").write_text("")

    assert display_dir(f"{DEAD}/modules/gone", checkout) == f"{DEAD}/modules/gone"
    assert display_dir(str(elsewhere), checkout) == str(elsewhere)  # it exists as recorded
    assert display_dir(f"{DEAD}/modules/network", checkout) == "modules/network"
    assert display_dir(f"{DEAD}/modules/network", None) == "modules/network"  # found from here


def test_the_longest_matching_tail_wins(checkout: Path) -> None:
    """`network` at the top would match the last part alone: the module is the deeper one."""
    from hybridops_tf.reconcile.evidence import display_dir

    (checkout / "network").mkdir()
    (checkout / "network" / "main.tf").write_text("")

    assert display_dir(f"{DEAD}/modules/network", checkout) == "modules/network"
    assert display_dir(f"{DEAD}/network", checkout) == "network"
