"""One resolution of a module's inputs for every command (operation/run_inputs.py: resolve).

plan, apply, destroy, init, `stack apply --resume` and reconcile (its plans are those of the
apply it advises, `--inputs rerun.inputs.yml`) all resolve through it, with the record key, so
a plan shows what the apply with the same environment and arguments does. What the caller
gives now wins, from every source; the last run's rerun.inputs.yml fills only a variable that
nothing gives and that has no default. Before, the last run's `name` passed as an explicit
input outranked the caller's TF_VAR_name in `hyops plan` (docs/inputs.md: One resolution for
every command)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hybridops_tf.inputs.values import CliInput, MissingInputError
from hybridops_tf.operation import run_inputs
from hybridops_tf.record import layout
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.runtime.root import Runtime

PACKAGE = Path(__file__).resolve().parents[2] / "hybridops_tf"
KEY = b"k" * 32
MAIN_TF = """variable "name" {
  type    = string
  default = "from-default"
}
variable "cidr" {
  type = string
}
"""
RECORDED = "name: from-last-run\ncidr: 10.9.0.0/16\n"


@pytest.fixture
def module(tmp_path: Path) -> tuple[Runtime, ModuleTarget]:
    """A module with `name` (default) and the required `cidr`, last run with both given."""
    directory = tmp_path / "m"
    directory.mkdir()
    (directory / "main.tf").write_text(MAIN_TF)
    rt = Runtime(tmp_path / "rt")
    rerun = layout.rerun_inputs(rt.root, "m")
    rerun.parent.mkdir(parents=True)
    rerun.write_text(RECORDED)
    return rt, ModuleTarget(directory, "m")


def _source(monkeypatch: pytest.MonkeyPatch, directory: Path, source: str) -> tuple[list[CliInput], dict | None]:
    """The caller gives name=from-caller through `source`: what a command then gets."""
    monkeypatch.delenv("TF_VAR_name", raising=False)
    if source == "TF_VAR_":
        monkeypatch.setenv("TF_VAR_name", "from-caller")
    elif source in ("terraform.tfvars", "x.auto.tfvars"):
        (directory / source).write_text('name = "from-caller"\n')
    elif source == "--var":
        return [CliInput("--var", "name=from-caller")], None
    elif source in ("--inputs", "--var-file"):
        given = directory.parent / ("in.yml" if source == "--inputs" else "in.tfvars")
        given.write_text("name: from-caller\n" if source == "--inputs" else 'name = "from-caller"\n')
        return [CliInput(source, str(given))], None
    elif source == "stack":
        return [], {"name": "from-caller"}
    return [], None


SOURCES = ["TF_VAR_", "terraform.tfvars", "x.auto.tfvars", "--var", "--inputs", "--var-file", "stack"]


@pytest.mark.parametrize("source", SOURCES)
def test_what_the_caller_gives_now_outranks_the_last_run_and_it_fills_only_the_required_rest(
        module: tuple[Runtime, ModuleTarget], monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    rt, target = module
    given, stack = _source(monkeypatch, target.directory, source)

    resolved = run_inputs.resolve(rt, target, None, given, stack, key="m", note=False)

    assert resolved.values["name"] == "from-caller"
    assert resolved.values["cidr"] == "10.9.0.0/16"
    assert run_inputs.recorded_names(resolved) == ["cidr"]


def test_a_variable_with_a_default_that_nothing_gives_takes_its_default_not_the_last_runs_value(
        module: tuple[Runtime, ModuleTarget], monkeypatch: pytest.MonkeyPatch) -> None:
    """`hyops apply M` without `--var name=...` applies the default, as the raw engine does:
    a plan must show that, not the last run's name."""
    monkeypatch.delenv("TF_VAR_name", raising=False)
    rt, target = module
    resolved = run_inputs.resolve(rt, target, None, [], None, key="m", note=False)
    assert resolved.values["name"] == "from-default" and resolved.source_of("name") == "default"


@pytest.mark.parametrize("source", SOURCES)
def test_every_command_given_the_same_environment_and_arguments_resolves_the_same_digest(
        module: tuple[Runtime, ModuleTarget], monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    """Each command's own call into the one resolution (read from its source below) passes
    the record key; the same key, environment and arguments give the same inputs digest."""
    rt, target = module
    given, stack = _source(monkeypatch, target.directory, source)
    digests = {run_inputs.resolve(rt, target, None, given, stack, key="m", note=False).digest(KEY)
               for _command in ("plan", "apply", "destroy")}
    assert len(digests) == 1


def test_a_required_input_nothing_gives_and_the_last_run_lacks_is_still_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_VAR_cidr", raising=False)
    directory = tmp_path / "m"
    directory.mkdir()
    (directory / "main.tf").write_text(MAIN_TF)
    rt = Runtime(tmp_path / "rt")
    with pytest.raises(MissingInputError):
        run_inputs.resolve(rt, ModuleTarget(directory, "m"), None, [], None, key="m", note=False)


COMMANDS = {  # each command's call into the one resolution
    "plan": "plan/planner.py",
    "apply, destroy, reconcile --write runs": "operation/steps.py",
    "reconcile's plans and lookups": "reconcile/evidence.py",
    "init": "operation/init.py",
    "stack apply --resume, reconcile --stack's config_changed": "operation/would_apply.py",
}


def test_every_command_resolves_its_inputs_through_the_one_resolution_with_the_record_key() -> None:
    """A second merge of the sources is how plan and apply came to disagree: only
    operation/run_inputs.py merges them for a command (inputs/values.py holds the merge itself),
    and every command's call names the record key, whose last run fills the same gaps."""
    merge = re.compile(r"\b(values|inputs_mod)\.resolve_inputs\("
                       r"|from hybridops_tf\.inputs\.values import (\([^)]*|[^\n]*)\bresolve_inputs\b")
    merging = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if merge.search(p.read_text(encoding="utf-8")))
    assert merging == ["operation/run_inputs.py", "stack/loader.py"]  # the loader checks a stack file, runs nothing
    for command, path in COMMANDS.items():
        calls = re.findall(r"run_inputs\.resolve\((.*?)\)(?:\.|\s*(?:#.*)?\n)", (PACKAGE / path).read_text(),
                           re.S)
        assert calls and all("key=" in call for call in calls), (command, path)
