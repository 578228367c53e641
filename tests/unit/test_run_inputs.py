"""A run's inputs around the engine (operation/run_inputs.py), each rule where it alone decides:
where the user gave an input (a file's line, an option), the engine's diagnostics placed there
instead of in hyops's var file, when a refusal is the inputs' alone, and the rerun.inputs.yml
and resolved.inputs.yml a run writes, puts back or shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.engine.events import Diagnostic
from hybridops_tf.inputs.values import ResolvedInputs
from hybridops_tf.operation import run_inputs
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.runtime.root import RERUN_INPUTS, Runtime
from hybridops_tf.runtime.run_folder import RunFolder


class SharedStore:
    """A store that keeps a copy of each document (as the PostgreSQL store does)."""

    def __init__(self, shared: bool) -> None:
        self.shared = shared
        self.documents: list[tuple[str, str, str]] = []

    def put_document(self, kind: str, key: str, text: str) -> None:
        self.documents.append((kind, key, text))


def _resolved(sources: dict[str, str], **explicit: Any) -> ResolvedInputs:
    return ResolvedInputs(values=dict(explicit), explicit=dict(explicit), sensitive_names=frozenset({"pw"}),
                          sources=sources)


def _error(filename: str | None, line: int | None = None, summary: str = "Invalid expression") -> Diagnostic:
    return Diagnostic(severity="error", summary=summary, filename=filename, start_line=line)


def test_an_input_from_a_file_is_placed_at_the_first_line_that_sets_it_and_an_option_by_its_name(
        tmp_path: Path) -> None:
    given = tmp_path / "prod.yml"
    given.write_text("# prod\nsize_x: 1\n  'size' : 2\nsize: 3\n")
    tfvars = tmp_path / "prod.tfvars"
    tfvars.write_text('other = 1\n"size" = 2\n')

    assert run_inputs.given_at("size", f"--inputs {given}") == (str(given), 3)
    assert run_inputs.given_at("size", f"--var-file {tfvars}") == (str(tfvars), 2)
    assert run_inputs.given_at("absent", f"--inputs {given}") == (str(given), None)
    assert run_inputs.given_at("size", f"--inputs {tmp_path / 'gone.yml'}") == (str(tmp_path / "gone.yml"), None)
    assert run_inputs.given_at("size", "--var") == ("--var size", None)
    assert run_inputs.given_at("size", "stack") == ("stack input size", None)
    assert run_inputs.given_at("size", "inputs_from network.id") == ("inputs_from network.id input size", None)


def test_the_engines_diagnostic_in_hyops_var_file_is_placed_where_the_user_gave_that_input(tmp_path: Path) -> None:
    given = tmp_path / "in.yml"
    given.write_text("a: 1\nb: 2\n")
    resolved = _resolved({"a": "--var", "b": f"--inputs {given}"}, a=1, b=2)
    first, second = _error("/dev/fd/0", 1), _error("/dev/fd/0", 2)
    elsewhere, beyond = _error("main.tf", 2), _error("/dev/fd/0", 3)

    cited = run_inputs.cite_sources([first, second, elsewhere, beyond, _error("/dev/fd/0", 0)], resolved)

    assert [(d.filename, d.start_line) for d in cited] == [
        ("--var a", None), (str(given), 2), ("main.tf", 2), ("/dev/fd/0", 3), ("/dev/fd/0", 0)]
    only_b = run_inputs.cite_sources([first], resolved, only=frozenset({"b"}))  # the var file held b alone
    assert [(d.filename, d.start_line) for d in only_b] == [(str(given), 2)]
    assert run_inputs.cite_sources([first], None) == [first]


def test_a_refusal_is_the_inputs_alone_when_every_error_is_in_a_var_file_or_refuses_an_inputs_value(
        tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text("a = 1\n")
    refused_value = _error("main.tf", 1, summary=" Invalid value for input variable ")

    assert run_inputs.input_error([_error("/dev/fd/0", 1), _error("terraform.tfvars", 1), refused_value], tmp_path)
    assert not run_inputs.input_error([_error("/dev/fd/0", 1), _error("main.tf", 3)], tmp_path)
    assert not run_inputs.input_error([_error("x.auto.tfvars", 1)], tmp_path)  # no such file in the module
    assert not run_inputs.input_error([], tmp_path)


def test_a_path_is_shown_relative_to_the_current_directory_only_below_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    assert run_inputs.shown(tmp_path / "m" / "rerun.inputs.yml") == str(Path("m") / "rerun.inputs.yml")
    assert run_inputs.shown(Path("/elsewhere/x.yml")) == "/elsewhere/x.yml"


def test_resolved_inputs_yml_names_its_run_and_redacts_secrets(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", "apply-7")
    folder.path.mkdir()

    path = run_inputs.write_resolved(folder, _resolved({"pw": "--var", "n": "--var"}, pw="hunter2", n=1))

    assert path == folder.resolved_inputs_path
    text = path.read_text()
    assert text.startswith("# resolved.inputs.yml of run apply-7\n")
    assert "hunter2" not in text and "<redacted>" in text


@pytest.mark.parametrize("shared", [False, True])
def test_rerun_inputs_yml_is_written_for_its_record_key_and_a_shared_store_keeps_its_copy(
        tmp_path: Path, shared: bool) -> None:
    rt = Runtime(tmp_path / "rt")
    target = ModuleTarget(tmp_path / "m", "demo/vm")
    store = SharedStore(shared)

    rerun = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1), key="demo/vm@stg")
    run_inputs.commit_rerun(rerun, store, "demo/vm@stg")  # type: ignore[arg-type]

    assert rerun.path == layout.rerun_inputs(rt.root, "demo/vm@stg")
    text = rerun.path.read_text()
    assert text.startswith(f"# rerun.inputs.yml of demo/vm@stg ({target.directory})\n") and "n: 1\n" in text
    assert store.documents == ([(RERUN_INPUTS, "demo/vm@stg", text)] if shared else [])
    plain = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1))
    assert plain.path == layout.rerun_inputs(rt.root, "demo/vm")  # no key: the module's ref


@pytest.mark.parametrize("shared", [False, True])
def test_a_refused_run_puts_rerun_inputs_yml_back_as_it_was_and_removes_one_it_made(tmp_path: Path,
                                                                                   shared: bool) -> None:
    path = tmp_path / "rerun.inputs.yml"
    store = SharedStore(shared)
    assert run_inputs.read_rerun(path) is None

    path.write_text("n: 2\n")
    run_inputs.restore_rerun(path, None, store, "m")  # type: ignore[arg-type]
    assert not path.exists() and store.documents == []

    path.write_text("n: 2\n")
    before = run_inputs.read_rerun(path)
    path.write_text("n: 3\n")
    run_inputs.restore_rerun(path, before, store, "m")  # type: ignore[arg-type]
    assert path.read_text() == "n: 2\n"
    assert store.documents == ([(RERUN_INPUTS, "m", "n: 2\n")] if shared else [])
