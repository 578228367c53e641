"""`hyops completion SHELL`: Click's own completion script, for the prog `hyops`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_script_that_asks_hyops(shell: str) -> None:
    result = CliRunner().invoke(cli, ["completion", shell])

    assert result.exit_code == 0, result.output
    assert "_HYOPS_COMPLETE" in result.output
    assert "hyops" in result.output.replace("_HYOPS_COMPLETE", "")


def test_an_unknown_shell_is_exit_2() -> None:
    result = CliRunner().invoke(cli, ["completion", "tcsh"])

    assert result.exit_code == 2


def test_the_console_script_answers_a_completion_request(tmp_path: Path) -> None:
    """What the bash script asks at a TAB after `hyops out`: the command name comes back."""
    env = {**os.environ, "_HYOPS_COMPLETE": "bash_complete", "COMP_WORDS": "hyops out", "COMP_CWORD": "1"}
    result = subprocess.run([str(Path(sys.executable).with_name("hyops"))], capture_output=True, text=True,
                            env=env, cwd=tmp_path, check=False)

    assert result.returncode == 0, result.stderr
    assert "plain,outputs" in result.stdout.splitlines()  # Click's bash protocol: type,value
    assert not (tmp_path / ".hyops").exists()  # completing never makes a runtime root
