"""A run's inputs around the engine (operation/run_inputs.py), each rule where it alone decides:
where the user gave an input (a file's line, an option), the engine's diagnostics placed there
instead of in hyops's var file, when a refusal is the inputs' alone, and the rerun.inputs.yml
and resolved.inputs.yml a run writes, puts back or shares."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hybridops_tf.base import notices
from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.cli.main import say
from hybridops_tf.engine.events import Diagnostic
from hybridops_tf.inputs.values import CliInput, MissingInputError, ResolvedInputs, StackInputs, VariableSpec
from hybridops_tf.operation import run_inputs
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.advice import give_inputs
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import RunFolder
from hybridops_tf.store import documents
from hybridops_tf.store.documents import RERUN_INPUTS


class SharedStore:
    """A store's Documents as the run sees them: each document it is given (every store: the
    local one's is the file itself, the others keep a copy and write the file)."""

    def __init__(self) -> None:
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


def test_rerun_inputs_yml_is_written_for_its_record_key_and_the_store_is_given_its_text(tmp_path: Path) -> None:
    rt = Runtime(tmp_path / "rt")
    target = ModuleTarget(tmp_path / "m", "demo/vm")
    store = SharedStore()

    rerun = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1), key="demo/vm@stg")
    run_inputs.commit_rerun(rerun, store, "demo/vm@stg")  # type: ignore[arg-type]

    assert rerun.path == layout.rerun_inputs(rt.root, "demo/vm@stg")
    text = rerun.path.read_text()
    assert text.startswith(f"# rerun.inputs.yml of demo/vm@stg ({target.directory})\n") and "n: 1\n" in text
    assert store.documents == [(RERUN_INPUTS, "demo/vm@stg", text)]
    plain = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1))
    assert plain.path == layout.rerun_inputs(rt.root, "demo/vm")  # no key: the module's ref


def test_a_refused_run_puts_rerun_inputs_yml_back_as_it_was_and_removes_one_it_made(tmp_path: Path) -> None:
    path = tmp_path / "rerun.inputs.yml"
    store = SharedStore()
    assert run_inputs.read_rerun(path) is None

    path.write_text("n: 2\n")
    run_inputs.restore_rerun(path, None, store, "m")  # type: ignore[arg-type]
    assert not path.exists() and store.documents == []

    path.write_text("n: 2\n")
    before = run_inputs.read_rerun(path)
    path.write_text("n: 3\n")
    run_inputs.restore_rerun(path, before, store, "m")  # type: ignore[arg-type]
    assert path.read_text() == "n: 2\n"
    assert store.documents == [(RERUN_INPUTS, "m", "n: 2\n")]


# --- resolve: one resolution of a module's inputs (the rules test_one_resolution.py does not reach) ---

MAIN_TF = """variable "cidr" {
  type = string
}
variable "pw" {
  type      = string
  sensitive = true
}
variable "note" {
  type    = string
  default = "d"
}
"""


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Runtime, ModuleTarget]]:
    """A module with the required `cidr` and secret `pw` and an optional `note`; notices are kept
    for notices.unheard() while it lives."""
    for name in ("TF_VAR_cidr", "TF_VAR_pw", "TF_VAR_note"):
        monkeypatch.delenv(name, raising=False)
    directory = tmp_path / "m"
    directory.mkdir()
    (directory / "main.tf").write_text(MAIN_TF)
    notices.listen(None)
    notices.unheard()
    yield Runtime(tmp_path / "rt"), ModuleTarget(directory, "m")
    notices.listen(say)


def _recorded(rt: Runtime, text: str) -> Path:
    path = layout.rerun_inputs(rt.root, "m")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_an_inputs_file_is_a_source_named_by_its_path_and_its_undeclared_names_a_warning(
        mod: tuple[Runtime, ModuleTarget], tmp_path: Path) -> None:
    rt, target = mod
    given = tmp_path / "in.yml"
    given.write_text("cidr: 10.0.0.0/16\npw: s\nsize: 2\n")

    resolved = run_inputs.resolve(rt, target, given, [], None)

    assert resolved.values["cidr"] == "10.0.0.0/16" and resolved.sources["cidr"] == f"--inputs {given}"
    assert notices.unheard() == [(notices.Level.WARNING, f"--inputs {given} sets 'size', which {target.directory} "
                                  "does not declare: ignored, as the engine does")]


def test_stack_inputs_are_named_stack_or_by_the_wiring_that_gave_them(mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    wired = StackInputs({"cidr": "10.0.0.0/16", "pw": "s"}, {"cidr": "inputs_from network.cidr"})

    assert run_inputs.resolve(rt, target, None, [], wired).sources == {
        "cidr": "inputs_from network.cidr", "pw": "stack"}
    assert run_inputs.resolve(rt, target, None, [], dict(wired), stack_sources={"pw": "inputs_from db.pw"}
                              ).sources == {"cidr": "stack", "pw": "inputs_from db.pw"}


@pytest.mark.parametrize("names", [["cidr"], ["cidr", "pw"]])
def test_a_missing_required_input_is_refused_naming_each_and_how_to_give_it_secrets_never_on_a_command_line(
        mod: tuple[Runtime, ModuleTarget], names: list[str]) -> None:
    rt, target = mod
    given = [CliInput("--var", f"{n}=x") for n in ("cidr", "pw") if n not in names]

    with pytest.raises(MissingInputError) as refused:
        run_inputs.resolve(rt, target, None, given, None, extra_sensitive=frozenset({"cidr"}))

    listed = ", ".join(map(repr, names))
    assert refused.value.message == (f"missing required input{'s' if len(names) > 1 else ''} {listed} for "
                                     f"{target.directory}: {give_inputs(names, frozenset(names))}")
    assert refused.value.names == tuple(names)


def test_an_engine_var_after_the_double_dash_keeps_its_quotes_as_the_engine_reads_them(
        mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    given = [CliInput("--var", "cidr=10.0.0.0/16"), CliInput("--var", "pw=s"),
             CliInput("--var", 'note="a b"', engine_syntax=True)]

    assert run_inputs.resolve(rt, target, None, given, None).values["note"] == '"a b"'


def test_a_missing_inputs_file_is_refused_naming_it_wherever_it_is(mod: tuple[Runtime, ModuleTarget],
                                                                  tmp_path: Path) -> None:
    rt, target = mod
    for missing in (tmp_path / "gone.yml", layout.rerun_inputs(rt.root, "gone")):
        with pytest.raises(UsageError) as refused:
            run_inputs.resolve(rt, target, None, [CliInput("--inputs", str(missing))], None)
        assert refused.value.message.startswith(f"cannot read inputs file {missing}: ")


def test_the_last_run_fills_only_what_no_source_sets_never_a_withheld_secret_and_says_so(
        mod: tuple[Runtime, ModuleTarget], monkeypatch: pytest.MonkeyPatch) -> None:
    rt, target = mod
    path = _recorded(rt, "cidr: 10.9.0.0/16\npw: <redacted>\n")
    monkeypatch.setenv("TF_VAR_cidr", "10.1.0.0/16")
    given = [CliInput("--var", "pw=s")]

    resolved = run_inputs.resolve(rt, target, None, given, {}, key="m")
    assert (resolved.values["cidr"], resolved.sources["cidr"]) == ("10.1.0.0/16", "env")  # the caller's TF_VAR_
    assert run_inputs.recorded_names(resolved) == [] and notices.unheard() == []

    monkeypatch.delenv("TF_VAR_cidr")
    resolved = run_inputs.resolve(rt, target, None, given, None, key="m")
    assert run_inputs.recorded_names(resolved) == ["cidr"] and resolved.values["cidr"] == "10.9.0.0/16"
    assert notices.unheard() == [(notices.Level.NOTE, f"the last run's cidr ({run_inputs.shown(path)}): it sets "
                                  "what no input given here sets, and the module has no default; inputs given win")]
    run_inputs.resolve(rt, target, None, given, None, key="m", note=False)
    assert notices.unheard() == []

    with pytest.raises(MissingInputError) as refused:  # its pw is a placeholder: never a value
        run_inputs.resolve(rt, target, None, [CliInput("--var", "cidr=c")], None, key="m")
    assert refused.value.names == ("pw",)

    _recorded(rt, "cidr: 10.9.0.0/16\npw: s\n")
    run_inputs.resolve(rt, target, None, [], None, key="m")
    assert notices.unheard() == [(notices.Level.NOTE, f"the last run's cidr, pw ({run_inputs.shown(path)}): they "
                                  "set what no input given here sets, and the module has no default; inputs given win")]


def test_an_unreadable_last_run_file_fills_nothing_and_says_why(mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    path = _recorded(rt, "cidr: [\n")

    with pytest.raises(MissingInputError):
        run_inputs.resolve(rt, target, None, [CliInput("--var", "pw=s")], None, key="m")

    [(level, text)] = notices.unheard()
    assert level is notices.Level.WARNING and text.startswith(f"{path} is not used: inputs file {path} is not valid")


class _NoKey:
    """A store whose digest key cannot be read."""

    def __init__(self, err: OSError) -> None:
        self.err = err

    def describe(self) -> str:
        return "the runtime root /rt"

    def digest_key(self, create: bool) -> bytes | None:
        raise self.err


@pytest.mark.parametrize(("err", "said"), [(PermissionError(13, "Permission denied"), "Permission denied"),
                                           (OSError("no space"), "no space")])
def test_a_digest_key_that_cannot_be_read_refuses_the_run_saying_why_and_that_nothing_ran(err: OSError,
                                                                                       said: str) -> None:
    rt = SimpleNamespace(store=_NoKey(err))

    with pytest.raises(RefusedError) as refused:
        run_inputs.digest_key(rt)  # type: ignore[arg-type]

    assert refused.value.message == f"cannot use the inputs digest key in the runtime root /rt: {said}; nothing was run"


def test_the_names_the_command_lines_inputs_set_are_read_from_each_var_and_file(tmp_path: Path) -> None:
    given = tmp_path / "in.yml"
    given.write_text("b: 1\nc: 2\n")
    rt, target = Runtime(tmp_path / "rt"), ModuleTarget(tmp_path, "m")
    specs = {n: VariableSpec(n, required=True) for n in "abc"}

    assert run_inputs.given_names(rt, target, [CliInput("--var", "a=1"), CliInput("--inputs", str(given))],
                                  specs) == {"a", "b", "c"}


def test_a_file_is_placed_whatever_its_path_or_its_other_bytes_and_other_events_pass_as_they_are(
        tmp_path: Path) -> None:
    folder = tmp_path / "my inputs"
    folder.mkdir()
    given = folder / "in.yml"
    given.write_bytes(b"# caf\xe9 (latin-1)\nsize: 1\n")

    assert run_inputs.given_at("size", f"--inputs {given}") == (str(given), 2)
    other = SimpleNamespace(type="log")
    resolved = _resolved({"size": f"--inputs {given}"}, size=1)
    assert run_inputs.cite_sources([other], resolved) == [other]


def test_rerun_inputs_yml_with_the_same_inputs_is_left_as_it_is(tmp_path: Path) -> None:
    rt = Runtime(tmp_path / "rt")
    target = ModuleTarget(tmp_path / "m", "m")
    first = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1))
    first.commit()
    before = first.path.stat().st_ino

    again = run_inputs.prepare_rerun(rt, target, _resolved({"n": "--var"}, n=1))
    again.commit()

    assert again.path.stat().st_ino == before  # not even rewritten: no disk flush before the engine starts


def test_putting_back_no_rerun_inputs_yml_where_there_is_none_is_no_error(tmp_path: Path) -> None:
    run_inputs.restore_rerun(tmp_path / "rerun.inputs.yml", None, SharedStore(), "m")  # type: ignore[arg-type]

    assert not (tmp_path / "rerun.inputs.yml").exists()


class FetchingStore(SharedStore):
    """A shared store holding rerun.inputs.yml of record m, which this runner does not have yet."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def fetch_document(self, kind: str, name: str) -> Path:
        path = documents.local_path(self.root, kind, name)
        if (kind, name) == (RERUN_INPUTS, "m"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("cidr: 10.7.0.0/16\npw: s\n")
        return path


def test_a_summarys_inputs_file_of_another_runner_is_brought_from_the_shared_store(
        mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    rt._store = FetchingStore(rt.root)  # type: ignore[assignment]
    given = layout.rerun_inputs(rt.root, "m")

    resolved = run_inputs.resolve(rt, target, None, [CliInput("--inputs", str(given))], None)

    assert resolved.values["cidr"] == "10.7.0.0/16"


def test_reconciles_read_only_resolution_writes_nothing_in_the_runtime_root_and_a_commands_keeps_its_parse(
        mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    given = [CliInput("--var", "cidr=c"), CliInput("--var", "pw=s")]

    run_inputs.resolve(rt, target, None, given, None, read_only=True)
    assert not rt.root.exists()

    run_inputs.resolve(rt, target, None, given, None)
    assert list(rt.hcl_cache().iterdir())  # the next command reads the module's variables from here


def test_the_names_of_a_missing_inputs_file_are_refused_naming_it(tmp_path: Path) -> None:
    rt, target = Runtime(tmp_path / "rt"), ModuleTarget(tmp_path, "m")

    with pytest.raises(UsageError) as refused:
        run_inputs.given_names(rt, target, [CliInput("--inputs", str(tmp_path / "gone.yml"))], {})

    assert refused.value.message.startswith(f"cannot read inputs file {tmp_path / 'gone.yml'}: ")


def test_a_value_wired_from_a_secret_is_withheld_like_a_secret_though_its_variable_is_not_sensitive(
        mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    given = [CliInput("--var", "cidr=10.0.0.0/16"), CliInput("--var", "pw=s"), CliInput("--var", "note=n")]

    resolved = run_inputs.resolve(rt, target, None, given, None, extra_sensitive=frozenset({"cidr"}))

    assert resolved.sensitive_names == frozenset({"pw", "cidr"})
    assert resolved.rerun_inputs() == {"cidr": "<redacted>", "note": "n", "pw": "<redacted>"}


SIZED = {"size": VariableSpec("size", required=True, type_expr="number"),
         "zones": VariableSpec("zones", required=True, type_expr="list(string)")}
_NOT_VALID = 'Invalid value for input variable: The given value is not valid for variable'


def _wrong_types_refused(rt: Runtime, target: ModuleTarget, resolved: ResolvedInputs, key: str | None = "m") -> str:
    with pytest.raises(UsageError) as refused:
        run_inputs.refuse_wrong_types(rt, target, SIZED, resolved, key)
    return refused.value.message


@pytest.mark.parametrize(("source", "where"), [
    ("env", "TF_VAR_size"),
    ("--var", "--var size"),
    ("stack", "stack input size"),
])
def test_a_wrong_typed_input_is_refused_at_the_option_or_variable_that_gave_it(
        mod: tuple[Runtime, ModuleTarget], source: str, where: str) -> None:
    rt, target = mod
    resolved = ResolvedInputs(values={"size": "large"}, explicit={"size": "large"}, sensitive_names=frozenset(),
                              sources={"size": source})

    assert _wrong_types_refused(rt, target, resolved) == (
        f'{where}: {_NOT_VALID} "size": a number is required; nothing was run')


def test_a_wrong_typed_input_from_a_file_is_refused_at_its_line_in_that_file(
        mod: tuple[Runtime, ModuleTarget], tmp_path: Path) -> None:
    rt, target = mod
    mine = tmp_path / "mine.tfvars"
    mine.write_text('# mine\nsize = "large"\n')
    (target.directory / "terraform.tfvars").write_text('\n\nsize = "large"\n')
    recorded = _recorded(rt, "# last run\n\n\n\nsize: large\n")

    def place(source: str, key: str | None = "m") -> str:
        resolved = ResolvedInputs(values={"size": "large"}, explicit={"size": "large"},
                                  sensitive_names=frozenset(), sources={"size": source})
        return _wrong_types_refused(rt, target, resolved, key).split(": Invalid value", 1)[0]

    assert place(f"--var-file {mine}") == f"{run_inputs.shown(mine)} line 2"
    assert place("terraform.tfvars") == f"{run_inputs.shown(target.directory / 'terraform.tfvars')} line 3"
    assert place(f"{run_inputs.RECORDED} {recorded}") == f"{run_inputs.shown(recorded)} line 5"
    assert place(f"{run_inputs.RECORDED} {recorded}", key=None) == f"{run_inputs.RECORDED} {recorded} input size"


def test_every_wrong_typed_input_is_counted_and_named_after_the_first(mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    values = {"size": "large", "zones": {"a": "b"}, "zz": "many"}
    resolved = ResolvedInputs(values=values, explicit=dict(values), sensitive_names=frozenset(),
                              sources=dict.fromkeys(values, "--var"))
    specs = {**SIZED, "zz": VariableSpec("zz", required=True, type_expr="number")}

    with pytest.raises(UsageError) as refused:
        run_inputs.refuse_wrong_types(rt, target, specs, resolved, "m")
    assert refused.value.message == (
        f'--var size: {_NOT_VALID} "size": a number is required (and 2 more: zones, zz); nothing was run')
    two = ResolvedInputs(values={"size": "large", "zz": "many"}, explicit={"size": "large", "zz": "many"},
                         sensitive_names=frozenset(), sources={"size": "--var", "zz": "--var"})
    with pytest.raises(UsageError) as refused:
        run_inputs.refuse_wrong_types(rt, target, specs, two, "m")
    assert refused.value.message.endswith('a number is required (and 1 more: zz); nothing was run')


def test_a_wrong_typed_value_the_last_run_fills_is_refused_by_resolve_at_its_line_there(
        mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    (target.directory / "size.tf").write_text('variable "size" {\n  type = number\n}\n')
    path = _recorded(rt, "# the last run\ncidr: c\npw: s\nsize: large\n")

    with pytest.raises(UsageError) as refused:
        run_inputs.resolve(rt, target, None, [], None, key="m")
    assert refused.value.message == (
        f'{run_inputs.shown(path)} line 4: {_NOT_VALID} "size": a number is required; nothing was run')
    tfvars = target.directory / "terraform.tfvars"
    tfvars.write_text('\nsize = "big"\n')
    with pytest.raises(UsageError) as refused:
        run_inputs.resolve(rt, target, None, [], None, key="m")
    assert refused.value.message == (
        f'{run_inputs.shown(tfvars)} line 2: {_NOT_VALID} "size": a number is required; nothing was run')


def test_inputs_that_fit_are_not_refused(mod: tuple[Runtime, ModuleTarget]) -> None:
    rt, target = mod
    resolved = ResolvedInputs(values={"size": "5"}, explicit={"size": "5"}, sensitive_names=frozenset(),
                              sources={"size": "--var"})

    run_inputs.refuse_wrong_types(rt, target, SIZED, resolved, "m")  # no UsageError
