"""`hyops reconcile` options, exit codes and documents where no engine needs to run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.main import cli
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.reconcile.orphans import parse_import


@pytest.fixture(autouse=True)
def no_engine_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine discovery would run `version -json`; these tests never reach the engine."""
    monkeypatch.setattr("hybridops_tf.engine.binary.resolve",
                        lambda *_, **__: EngineInfo(Path("/usr/bin/tofu"), "1.8.0", "tofu"))


def write_record(root: Path, ref: str, doc: dict | str) -> Path:
    path = root / "state" / "modules" / ref.replace("/", "__") / "latest.json"
    path.parent.mkdir(parents=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def run(root: Path, *args: str):
    return CliRunner().invoke(cli, ["--runtime-root", str(root), "reconcile", *args])


@pytest.mark.parametrize(("args", "fragment"), [
    (["--all", "--import", "a.b=1"], "--import"),
    (["--all", "--forget-orphan", "a.b"], "--forget-orphan"),
    (["--all", "--stack", "stack.yml"], "one of MODULE_DIR"),
    (["--all", "--var", "x=1"], "--var"),
])
def test_options_that_name_one_module_are_refused_with_all_or_stack(tmp_path: Path, args: list[str],
                                                                    fragment: str) -> None:
    result = run(tmp_path / "rt", *args)

    assert result.exit_code == 2, result.output
    assert fragment in result.output


def test_an_import_without_an_id_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text("")

    result = run(tmp_path / "rt", str(module), "--ref", "m", "--import", "sim_network.this")

    assert result.exit_code == 2 and "ADDRESS=ID" in result.output
    assert not (tmp_path / "rt").exists()


def test_import_splits_at_the_first_equals_outside_brackets() -> None:
    assert parse_import("sim_vm.vm[0]=vm-1") == ("sim_vm.vm[0]", "vm-1")
    assert parse_import('a.b["k=v"]=id=with=equals') == ('a.b["k=v"]', "id=with=equals")
    with pytest.raises(UsageError):
        parse_import("=id")


def test_all_with_no_records_is_not_consistent_and_names_the_root(tmp_path: Path) -> None:
    """A CI gate (`reconcile --all`) run against the wrong folder must not pass (issue 11 item 7)."""
    result = run(tmp_path / "rt", "--all", "--json")

    assert result.exit_code == 3, result.output
    doc = json.loads(result.stdout)
    assert (doc["consistent"], doc["modules"]) == (False, [])
    assert doc["errors"] == [f"no records under {tmp_path / 'rt'}: nothing to reconcile, so nothing is known "
                             "to be consistent (wrong folder? pass --runtime-root)"]


def test_a_corrupt_record_under_all_is_reported_left_untouched_and_could_not_be_checked(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    path = write_record(root, "demo/net", '{"schema_version": 1, trunc')

    result = run(root, "--all", "--json")

    doc = json.loads(result.stdout)
    assert result.exit_code == 1  # the module's state could not be read: its directory is unknown
    module = doc["modules"][0]
    assert (module["module_ref"], module["status"], module["checked"]) == ("demo/net", "corrupt", False)
    assert [f["code"] for f in module["findings"]] == ["corrupt_record"]
    assert module["findings"][0]["next_actions"][:2] == [f"cat {path}", f"mv {path} {path}.corrupt"]
    assert path.read_text() == '{"schema_version": 1, trunc'


def test_a_stale_record_whose_module_directory_is_gone_still_gets_its_record_findings(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    write_record(root, "demo/vm", {
        "schema_version": 1, "module_ref": "demo/vm", "status": "running", "run_id": "apply-1",
        "updated_at": "2026-01-01T00:00:00Z", "module_dir": str(tmp_path / "gone"), "active_command": "apply",
        "suspect_orphans": [{"address": "sim_vm.this", "action": "create", "run_id": "apply-0", "at": "x"}],
    })

    result = run(root, "--all", "--json")

    assert result.exit_code == 1, result.output
    [module] = json.loads(result.stdout)["modules"]
    found = {f["code"]: f for f in module["findings"]}
    assert set(found) == {"stale_running", "suspect_orphan"}
    assert any("does not exist" in why for why in module["could_not_check"])
    # global options carried over (asserted on JSON: human text wraps a long temp path)
    assert found["stale_running"]["next_actions"][0].startswith(f"hyops --runtime-root {root} reconcile ")
