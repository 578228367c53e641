"""An unexpected exception is a bug in hyops: one line on stderr, the trace in a file, exit 70
(base/bugs.py, cli/main.py; docs/contract.md: Exit codes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.base import bugs
from hybridops_tf.cli import main as cli_main

pytestmark = pytest.mark.hyops_bug_expected


def crash(*_args: object, **_kwargs: object) -> int:
    raise RuntimeError("secret-free boom")


def test_an_unexpected_exception_is_one_line_naming_its_trace_file_and_exit_70(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bugs, "_places", {"root": tmp_path / "runtime"})
    monkeypatch.setattr(cli_main.cli, "main", crash)

    with pytest.raises(SystemExit) as exited:
        cli_main.main()

    assert exited.value.code == bugs.BUG_EXIT == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    (trace,) = (tmp_path / "runtime" / "bugs").iterdir()
    assert str(trace) in err
    assert "RuntimeError: secret-free boom" in trace.read_text()
    assert trace.stat().st_mode & 0o777 == 0o600


def test_a_bug_during_a_run_leaves_its_trace_in_that_run_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bugs, "_places", {"root": tmp_path / "runtime"})
    bugs.remember_run_folder(tmp_path / "run")

    path = bugs.write_trace(RuntimeError("x"))

    assert path == tmp_path / "run" / bugs.BUG_FILE


def test_an_unwritable_root_still_gets_a_trace_file_somewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(bugs, "_places", {"root": blocked})  # bugs/ cannot be made below a file
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)

    path = bugs.write_trace(RuntimeError("x"))

    assert path is not None and path.parent == tmp_path and path.name.startswith("hyops-bug-")
