"""render.py: tables that wrap whole words and keep a multi-line value on its row, and
ASCII output where the locale is not UTF-8 (the real console script, LC_ALL=C)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hybridops_tf.cli import render
from hybridops_tf.cli.render import ProgressPrinter, format_table, wants_ascii
from hybridops_tf.engine.events import parse_event
from hybridops_tf.record.model import OperationRecord, Status
from hybridops_tf.store.local import RecordStore

REPO = Path(__file__).resolve().parents[2]
HYOPS = Path(sys.executable).with_name("hyops")
FIXTURE = REPO / "tests" / "fixtures" / "terraform-1.0.3" / "apply_ok.jsonl"
WORDS = "the engine reported an error while creating sim_vm.web: quota exceeded for project"


def c_locale_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_CTYPE", "PYTHONUTF8")}
    env["LC_ALL"] = "C"
    return env


def test_the_last_column_wraps_on_whole_words_under_its_start() -> None:
    lines = format_table([("MODULE", "NOTE"), ("sim/vm", WORDS)], width=40)

    start = lines[0].index("NOTE")
    assert len(lines) > 2
    assert all(len(line) <= 40 for line in lines)
    body = [line[start:] for line in lines[1:]]
    assert " ".join(body) == WORDS  # no word cut: rejoined on spaces it is the text
    assert all(line[:start].strip() == "" for line in lines[2:])


def test_a_word_longer_than_the_room_is_kept_whole() -> None:
    long = "x" * 60
    lines = format_table([("A", "B"), ("a", f"short {long} end")], width=30)

    assert any(long in line for line in lines)


def test_without_a_width_each_row_is_one_line() -> None:
    lines = format_table([("MODULE", "NOTE"), ("sim/vm", WORDS)])

    assert len(lines) == 2
    assert lines[1].endswith(WORDS)


def test_a_multi_line_cell_stays_on_its_row_with_a_visible_marker() -> None:
    lines = format_table([("TYPE", "NAME", "ATTRIBUTES"), ("sim_vm", "a\nb", "user_data=line1\nline2\tx")])

    assert len(lines) == 2
    assert "a\\nb" in lines[1]
    assert "user_data=line1\\nline2\\tx" in lines[1]


def test_columns_line_up_after_escaping() -> None:
    lines = format_table([("A", "B"), ("x\ny", "1"), ("long-cell", "2")])

    assert len({line.index(val) for line, val in zip(lines, ("B", "1", "2"), strict=True)}) == 1


def test_glyphs_become_ascii_and_other_characters_escapes() -> None:
    shown = "  ✓ a: created… — ‘x’ é".encode("ascii", render.ASCII_ERRORS).decode("ascii")

    assert shown == "  ok a: created... - 'x' \\xe9"


@pytest.mark.parametrize(("env", "encoding", "ascii_"), [
    ({"LC_ALL": "C"}, "utf-8", True),
    ({"LANG": "POSIX"}, "utf-8", True),
    ({}, "utf-8", True),
    ({"LC_ALL": "C", "PYTHONIOENCODING": "utf-8"}, "utf-8", False),
    ({"LANG": "en_US.UTF-8"}, "utf-8", False),
    ({"LC_ALL": "C.utf8", "LANG": "C"}, "utf-8", False),
    ({"LC_CTYPE": "UTF-8"}, "utf-8", False),
    ({"LANG": "en_US.UTF-8"}, "ascii", True),
    ({"LANG": "en_US.UTF-8"}, None, True),
])
def test_ascii_unless_the_locale_and_stream_are_utf8(env: dict[str, str], encoding: str | None,
                                                     ascii_: bool) -> None:
    assert wants_ascii(env, encoding) is ascii_


def test_status_table_under_lc_all_c_is_ascii(tmp_path: Path) -> None:
    """The real console script: an engine error with typographic quotes and an ellipsis."""
    RecordStore(tmp_path / ".hyops").write(OperationRecord(
        module_ref="sim/vm", status=Status("error"), run_id="apply-1",
        last_error="Error: quota “vm” exceeded… see ‘docs’\nsecond line"))

    result = subprocess.run([str(HYOPS), "--runtime-root", str(tmp_path / ".hyops"), "status", "--all"],
                            capture_output=True, env=c_locale_env(), cwd=tmp_path, check=False)

    assert result.returncode == 0, result.stderr
    assert b"sim/vm" in result.stdout
    assert b'"vm" exceeded...' in result.stdout
    assert all(b < 128 for b in result.stdout + result.stderr)


PROGRESS = f"""
from hybridops_tf.cli.main import main
from hybridops_tf.cli.render import ascii_streams, ProgressPrinter
from hybridops_tf.engine.events import parse_event
ascii_streams()
printer = ProgressPrinter()
for line in open({str(FIXTURE)!r}, encoding="utf-8"):
    printer(parse_event(line))
"""


def test_progress_lines_under_lc_all_c_are_ascii() -> None:
    """Progress as the console entry prints it (main() calls ascii_streams first)."""
    result = subprocess.run([sys.executable, "-c", PROGRESS], capture_output=True, env=c_locale_env(),
                            check=False)

    assert result.returncode == 0, result.stderr
    assert b"  ok " in result.stderr and b"..." in result.stderr
    assert all(b < 128 for b in result.stderr)


def test_progress_lines_under_a_utf8_locale_keep_the_glyphs() -> None:
    """Control for the two above: the same lines are UTF-8 where the locale says so."""
    env = {**c_locale_env(), "LC_ALL": "C.UTF-8"}
    result = subprocess.run([sys.executable, "-c", PROGRESS], capture_output=True, env=env, check=False)

    assert result.returncode == 0, result.stderr
    assert "✓".encode() in result.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "still"), [(io.StringIO(), False), (_Tty(), True)])
def test_still_running_lines_only_on_a_terminal(stream: io.StringIO, still: bool) -> None:
    printer = ProgressPrinter(stream)
    fixture = REPO / "tests" / "fixtures" / "opentofu" / "apply_partial.jsonl"
    for line in fixture.read_text(encoding="utf-8").splitlines():
        printer(parse_event(line))

    lines = stream.getvalue().splitlines()
    assert any(": creating" in ln for ln in lines)  # the start line, terminal or not
    assert any(": still " in ln for ln in lines) is still


def test_the_status_note_keeps_the_whole_error_on_the_row(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hybridops_tf.cli.main import cli

    RecordStore(tmp_path).write(OperationRecord(module_ref="sim/vm", status=Status("error"), run_id="apply-1",
                                                last_error=WORDS + "\nsecond line"))

    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path), "status", "--all"])

    row = next(line for line in result.stdout.splitlines() if line.startswith("sim/vm"))
    assert row.endswith(WORDS + "\\nsecond line")
