"""No shell anywhere: every process hyops (and its scripts) starts gets an argv list.

A shell would re-read input values, refs and paths as shell syntax. The check is on the
syntax tree (any `shell=` keyword that is not the literal False, any os.system/os.popen/
subprocess.getoutput-style call) plus a plain text grep, so neither a comment-dodging
spelling nor a new file escapes it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.reliability.figures import SECURITY, note

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("hybridops_tf", "scripts")
SHELL_CALLS = {("os", "system"), ("os", "popen"), ("os", "spawnlp"), ("os", "spawnvp"),
               ("subprocess", "getoutput"), ("subprocess", "getstatusoutput"), ("pty", "spawn"),
               ("os", "execlp"), ("commands", "getoutput")}
SHELL_TEXT = re.compile(r"shell\s*=\s*True")


def _python_files() -> list[Path]:
    files = [p for d in SCANNED for p in (REPO / d).rglob("*.py")]
    assert len(files) > 20, f"scanned too few files ({len(files)}): is the layout still {SCANNED}?"
    return sorted(files)


def _problems(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [f"{path}:{text[:m.start()].count(chr(10)) + 1}: `{m.group(0)}`"
             for m in SHELL_TEXT.finditer(text)]
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{path}:{node.lineno}: shell={ast.unparse(kw.value)}")
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if (func.value.id, func.attr) in SHELL_CALLS:
                found.append(f"{path}:{node.lineno}: {func.value.id}.{func.attr}(...) runs a shell")
    return found


def test_no_shell_is_ever_started_by_hyops_or_its_scripts() -> None:
    problems = [p for f in _python_files() for p in _problems(f)]
    note(SECURITY, check="no shell=True / os.system in hybridops_tf and scripts",
         files=len(_python_files()))
    assert problems == []


@pytest.mark.parametrize("snippet", [
    "import subprocess\nsubprocess.run('ls', shell=True)\n",
    "import subprocess\nflag = True\nsubprocess.Popen(['ls'], shell=flag)\n",
    "import os\nos.system('ls')\n",
    "import subprocess\nsubprocess.getoutput('ls')\n",
])
def test_the_shell_check_catches_each_spelling(tmp_path: Path, snippet: str) -> None:
    path = tmp_path / "bad.py"
    path.write_text(snippet)
    assert _problems(path), f"not caught: {snippet!r}"


def test_the_shell_check_lets_argv_lists_pass(tmp_path: Path) -> None:
    path = tmp_path / "good.py"
    path.write_text("import subprocess\nsubprocess.run(['ls'], shell=False)\nsubprocess.run(['ls'])\n")
    assert _problems(path) == []
