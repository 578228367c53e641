"""The core tells, the CLI speaks: notices reach the sink the CLI installs, in its words,
and no module outside cli/ (and the sim's own processes) prints."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybridops_tf.base import notices
from hybridops_tf.cli.main import say

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "hybridops_tf"


@pytest.fixture
def no_sink() -> Iterator[None]:
    notices.listen(None)
    notices.unheard()
    yield
    notices.listen(say)


def test_without_a_sink_the_notices_are_kept_in_order_and_taken_once(no_sink: None) -> None:
    notices.warning("w")
    notices.note("n")
    notices.engine_stderr("Error: x")

    assert notices.unheard() == [(notices.Level.WARNING, "w"), (notices.Level.NOTE, "n"),
                                 (notices.Level.ENGINE, "Error: x")]
    assert notices.unheard() == []


def test_a_sink_hears_each_notice_as_it_is_told(no_sink: None) -> None:
    heard: list[tuple[notices.Level, str]] = []
    notices.listen(lambda level, text: heard.append((level, text)))

    notices.error("e")
    notices.plain("p")

    assert heard == [(notices.Level.ERROR, "e"), (notices.Level.PLAIN, "p")]
    assert notices.unheard() == []


def test_the_cli_writes_each_level_in_its_words_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    for level in notices.Level:
        say(level, "text")

    assert capsys.readouterr().err.splitlines() == [
        "hyops: text", "hyops: note: text", "hyops: warning: text", "hyops: ERROR: text", "text"]


def _prints(path: Path) -> Iterator[int]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            yield node.lineno
        elif (isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute)
              and func.value.attr in ("stdout", "stderr")):
            yield node.lineno


def test_no_module_outside_the_cli_and_the_sim_prints() -> None:
    core = [path for path in sorted(PACKAGE_DIR.rglob("*.py"))
            if path.relative_to(PACKAGE_DIR).parts[0] not in ("cli", "sim")]

    found = [f"{path.relative_to(PACKAGE_DIR.parent)}:{line}" for path in core for line in _prints(path)]
    assert len(core) > 50 and found == []


def test_the_print_finder_sees_both_spellings(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("import sys\nprint('x')\nsys.stderr.write('y')\nlog.write('z')\n")

    assert list(_prints(path)) == [2, 3]
