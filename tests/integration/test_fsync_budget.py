"""Durability that costs what it must, no more: the fsyncs one command makes, counted.

What must survive a machine crash is the record: `running` before the engine may mutate and
the settled record before hyops reports (each a file fsync and a directory fsync, see
test_durable_write_order.py), and the rerun inputs a later destroy reuses. A run folder is the
run's story: replaced atomically, never flushed file by file (runs.RunFolder). The event
relay fsyncs its events before it marks them complete; it is another process, not counted
here. The engine's own fsync of its state file is the engine's business and not counted either.

The count is taken in-process (os.fsync wrapped) around a real `hyops apply` and `hyops plan`
of a module with no provider on the bundled engine, so a new fsync on the path fails here.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """("file" | "dir", path) of every os.fsync this process makes while the test runs."""
    seen: list[tuple[str, str]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        seen.append((kind, os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def _what(kind: str, path: str, root: Path) -> str:
    """A path as the category of file it is: the record, the rerun inputs, a run folder, ..."""
    rel = Path(path).relative_to(root) if Path(path).is_relative_to(root) else Path(path)
    name = rel.name.lstrip(".")
    if kind == "dir":
        return f"dir {rel.parts[0] if rel.parts else rel}"
    if name.startswith("latest.json"):
        return "record"
    if name.startswith("rerun.inputs.yml"):
        return "rerun inputs"
    return f"file {rel}"


def test_an_apply_fsyncs_only_the_record_twice_and_the_rerun_inputs(
        tmp_path: Path, engine_path: str, fsyncs: list[tuple[str, str]]) -> None:
    module = tmp_path / "modules" / "m"
    module.mkdir(parents=True)
    (module / "main.tf").write_text('variable "size" {\n  default = "s"\n}\noutput "x" {\n  value = var.size\n}\n')
    root = tmp_path / ".hyops"
    args = ["--runtime-root", str(root), "--engine", engine_path]
    runner = CliRunner()
    first = runner.invoke(cli, [*args, "apply", str(module), "--ref", "m"])
    assert first.exit_code == 0, first.output
    fsyncs.clear()  # the first apply also initialises the module and makes the digest key

    again = runner.invoke(cli, [*args, "apply", str(module), "--ref", "m", "--var", "size=m"])
    assert again.exit_code == 0, again.output
    applied = Counter(_what(kind, path, root) for kind, path in fsyncs)
    fsyncs.clear()
    planned = runner.invoke(cli, [*args, "plan", str(module), "--ref", "m"])
    assert planned.exit_code == 0, planned.output

    assert applied == Counter({"record": 2, "dir state": 2, "rerun inputs": 1, "dir config": 1}), fsyncs
    assert fsyncs == [], "a plan changes no record: it needs no fsync"
