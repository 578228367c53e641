"""An empty STACK_FILE, `--stack ""` or `--run ""` (a CI variable that was never set) is one line
naming the argument and what to pass, exit 2 (issue 45, item 5): before, an empty stack file
was read as the directory "." ("cannot read stack file .: Is a directory")."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli


@pytest.mark.parametrize(("argv", "named"), [
    (["stack", "status", ""], "STACK_FILE is empty"),
    (["stack", "graph", " "], "STACK_FILE is empty"),
    (["reconcile", "--stack", ""], "--stack is empty"),
    (["stack", "work", "--run", "", "--until-idle"], "--run is empty"),
])
def test_an_empty_argument_is_named_with_what_to_pass(argv: list[str], named: str, tmp_path: object) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path), *argv])

    assert result.exit_code == 2
    assert named in result.output and "Traceback" not in result.output
