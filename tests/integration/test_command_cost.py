"""What one command costs, counted: its fsyncs and its engine runs.

Durability that costs what it must, no more.
What must survive a machine crash is the record: `running` before the engine may mutate and
the settled record before hyops reports (each a file fsync and a directory fsync, see
test_durable_write_order.py), and the rerun inputs a later destroy reuses. A run folder is the
run's story: replaced atomically, never flushed file by file (runs.RunFolder). The event
relay fsyncs its events before it marks them complete; it is another process, not counted
here. The engine's own fsync of its state file is the engine's business and not counted either.

The count is taken in-process (os.fsync wrapped) around a real `hyops apply` and `hyops plan`
of a module with no provider on the bundled engine, so a new fsync on the path fails here.

No engine run hyops does not need: a plan the engine reports without change and without a
planned change (a move, import or forget is one) is one engine run; `show -json` reads the
plan back only when there is something to show. Counted with a wrapper that logs each engine
run's subcommand before it execs the real engine.
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


def _logging_engine(tmp_path: Path, engine_path: str) -> tuple[Path, Path]:
    """A `terraform` that appends its subcommand (its first non-option word) to a log, then
    execs the real engine."""
    log = tmp_path / "engine-runs.log"
    wrapper = tmp_path / "bin" / "terraform"
    wrapper.parent.mkdir()
    wrapper.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do case \"$a\" in -*) ;; *) echo \"$a\" >> " + str(log) + "; break;; esac; done\n"
        f'exec {engine_path} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def test_a_plan_without_changes_runs_the_engine_once_and_a_plan_with_changes_twice(
        tmp_path: Path, engine_path: str) -> None:
    module = tmp_path / "modules" / "m"
    module.mkdir(parents=True)
    (module / "main.tf").write_text('variable "size" {\n  default = "s"\n}\noutput "x" {\n  value = var.size\n}\n')
    engine, log = _logging_engine(tmp_path, engine_path)
    args = ["--runtime-root", str(tmp_path / ".hyops"), "--engine", str(engine)]
    runner = CliRunner()
    assert runner.invoke(cli, [*args, "apply", str(module), "--ref", "m"]).exit_code == 0

    def runs(*command: str) -> list[str]:
        log.write_text("")
        result = runner.invoke(cli, [*args, *command, str(module), "--ref", "m"])
        assert result.exit_code == 0, result.output
        return log.read_text().split()

    quiet, changing = runs("plan"), runs("plan", "--var", "size=m")

    assert quiet == ["plan"]
    assert changing == ["plan", "show"]
