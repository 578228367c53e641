"""Options of queued runs that are refused before anything is read or written: each one line,
exit 2, naming what to do instead (no store, no engine: nothing here may reach either)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli


@pytest.fixture
def stack_file(tmp_path: Path) -> Path:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "main.tf").write_text("")
    path = tmp_path / "stack.yml"
    path.write_text("stack: s\nmodules:\n  - {name: m, path: m}\n")
    return path


def hyops(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path / "rt"), "--engine", "/nonexistent/tofu", *args],
                                env={"HYOPS_STORE": ""})
    return result.exit_code, result.stderr


def test_parallelism_with_queue_is_refused_naming_the_workers_option(tmp_path: Path, stack_file: Path) -> None:
    code, said = hyops(tmp_path, "stack", "apply", str(stack_file), "--queue", "--parallelism", "8", "--auto-approve")
    assert code == 2 and "-p N" in said and said.count("\n") == 1
    assert not (tmp_path / "rt").exists()


def test_supersede_without_queue_is_refused(tmp_path: Path, stack_file: Path) -> None:
    code, said = hyops(tmp_path, "stack", "apply", str(stack_file), "--supersede", "--auto-approve")
    assert code == 2 and "--supersede" in said and "--queue" in said


@pytest.mark.parametrize("args", [("stack", "cancel", "stack-apply-1"), ("stack", "work", "--until-idle")])
def test_queue_commands_without_a_shared_store_say_how_to_select_one(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, said = hyops(tmp_path, *args)
    assert code == 2 and "--store postgresql://" in said and said.count("\n") == 1
