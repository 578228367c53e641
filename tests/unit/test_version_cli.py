"""`hyops version` / `--version` and the default runtime root, at the CLI (no real engine)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.engine import binary
from tests.unit.fake_engine import TF_VERSION_JSON, TOFU_VERSION_JSON, fake_engine


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No HYOPS_* settings, an empty PATH dir to fill, no bundled engine; cwd = tmp/work."""
    for name in ("HYOPS_ENGINE", "HYOPS_RUNTIME_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(binary, "_bundled_terraform", lambda: None)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("HYOPS_CEILING_DIRECTORIES", str(tmp_path))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return bindir


def version_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, [*args, "version", "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_version_json_names_hyops_the_engine_and_the_rule(bare: Path) -> None:
    fake_engine(bare, "terraform", TF_VERSION_JSON)
    tofu = fake_engine(bare, "tofu", TOFU_VERSION_JSON)

    code, doc = version_json()

    assert code == 0
    assert doc["engine"] == {"binary": str(tofu), "version": "1.8.2", "kind": "tofu", "chosen_by": "tofu on PATH"}
    assert doc["engine_order"] == list(binary.RULES)
    assert doc["hyops_version"]


def test_version_says_whether_the_engine_came_from_the_option_or_the_environment(
    bare: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = fake_engine(tmp_path / "pinned", "terraform", TF_VERSION_JSON)

    assert version_json("--engine", str(pinned))[1]["engine"]["chosen_by"] == "--engine"
    monkeypatch.setenv("HYOPS_ENGINE", str(pinned))
    assert version_json()[1]["engine"]["chosen_by"] == "HYOPS_ENGINE"


def test_no_engine_is_exit_2_with_the_order_tried_and_hyops_still_says_its_version(bare: Path) -> None:
    result = CliRunner().invoke(cli, ["version"])

    assert result.exit_code == 2
    assert result.stdout.startswith("hyops ")
    assert "tofu on PATH, terraform on PATH" in result.stderr
    code, doc = version_json()
    assert code == 2 and doc["engine"] is None and "no engine found" in doc["engine_error"]


def test_dash_dash_version_prints_the_same_as_the_command(bare: Path) -> None:
    fake_engine(bare, "terraform", TF_VERSION_JSON)

    flag = CliRunner().invoke(cli, ["--version"])
    command = CliRunner().invoke(cli, ["version"])

    assert flag.exit_code == 0 and flag.stdout == command.stdout
    assert "terraform on PATH" in flag.stdout and "1.0.3" in flag.stdout


def test_version_creates_no_runtime_root(bare: Path) -> None:
    fake_engine(bare, "terraform", TF_VERSION_JSON)

    code, doc = version_json()

    assert doc["runtime_root"] == {"path": str(Path.cwd() / ".hyops"), "how": "new", "exists": False}
    assert not (Path.cwd() / ".hyops").exists()


def test_the_first_command_that_writes_the_default_root_announces_it_once(bare: Path) -> None:
    first = CliRunner().invoke(cli, ["sim", "install"])
    second = CliRunner().invoke(cli, ["sim", "install"])

    assert first.exit_code == 0, first.output
    assert (Path.cwd() / ".hyops").is_dir()
    assert "hyops: created runtime root ./.hyops" in first.stderr
    assert second.exit_code == 0 and "created runtime root" not in second.stderr


def test_a_subfolder_uses_the_root_found_above_it(bare: Path) -> None:
    (Path.cwd() / ".hyops").mkdir(mode=0o700)
    sub = Path.cwd() / "stk" / "deep"
    sub.mkdir(parents=True)
    os.chdir(sub)

    result = CliRunner().invoke(cli, ["sim", "install"])

    assert result.exit_code == 0, result.output
    assert not (sub / ".hyops").exists()
    assert (sub.parent.parent / ".hyops" / "sim").is_dir()
    assert "created runtime root" not in result.stderr


def test_status_all_names_the_root_and_warns_when_it_is_missing(bare: Path) -> None:
    result = CliRunner().invoke(cli, ["status", "--all", "--json"])

    assert result.exit_code == 0
    assert json.loads(result.stdout) == []  # the documented array, unchanged
    assert f"runtime root {Path.cwd() / '.hyops'}" in result.stderr
    assert "does not exist" in result.stderr
    assert not (Path.cwd() / ".hyops").exists()


def test_a_stray_symlinked_hyops_above_is_skipped_with_a_warning(bare: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sub = Path.cwd() / "sub"
    sub.mkdir()
    (Path.cwd() / ".hyops").symlink_to(elsewhere)
    os.chdir(sub)

    _, doc = version_json()
    result = CliRunner().invoke(cli, ["status", "--all"])

    assert doc["runtime_root"]["path"] == str(sub / ".hyops")
    assert "ignoring" in result.stderr and "symlink" in result.stderr
