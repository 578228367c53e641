"""Habits from raw tofu typed before `--` (habits.py): each works as hyops's spelling, goes to the
engine, or is refused with a one-line hint and exit 2. Values are never rewritten."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.cli import habits
from hybridops_tf.cli.habits import (
    CommandShape,
    duration_seconds,
    hoist_globals,
    rewrite_argv,
    shape_of,
    translate,
)
from hybridops_tf.cli.main import cli
from hybridops_tf.record.model import LockBusyError
from hybridops_tf.store.local import RecordStore

_MODULE = {"--ref", "--workspace", "-h", "--help"}
_INPUTS = {"--var", "--inputs", "--var-file"}
APPLY = CommandShape("apply", frozenset(_MODULE | _INPUTS | {"--lock-timeout", "--allow-uncertain", "--auto-approve"}),
                     frozenset(_INPUTS | {"--ref", "--workspace", "--lock-timeout"}), passthrough=True)
PLAN = CommandShape("plan", frozenset(_MODULE | _INPUTS | {"--detailed-exitcode", "--out"}),
                    frozenset(_INPUTS | {"--ref", "--workspace", "--out"}), passthrough=True)
STATUS = CommandShape("status", frozenset(_MODULE | {"--all", "--json"}), frozenset({"--ref", "--workspace"}))
OUTPUTS = CommandShape("outputs", frozenset(_MODULE | {"--raw", "--json"}), frozenset({"--ref", "--workspace"}))
RECONCILE = CommandShape("reconcile", frozenset(_MODULE | {"--inputs", "--var", "--lock-timeout", "--json"}),
                         frozenset({"--ref", "--workspace", "--inputs", "--var", "--lock-timeout"}))
STACK_APPLY = CommandShape("stack apply", frozenset({"--parallelism", "--lock-timeout", "-h", "--help"}),
                           frozenset({"--parallelism", "--lock-timeout"}))


# --- each habit that works ------------------------------------------------------------------

WORKS = [
    (APPLY, ["mod", "-var", "env=dev"], ["mod", "--var", "env=dev"]),
    (APPLY, ["mod", "-var=env=dev"], ["mod", "--var", "env=dev"]),
    (APPLY, ["mod", "-var-file", "dev.tfvars"], ["mod", "--var-file", "dev.tfvars"]),
    (RECONCILE, ["mod", "-var-file=dev.tfvars"], ["mod", "--inputs", "dev.tfvars"]),
    (APPLY, ["mod", "-auto-approve"], ["mod", "--auto-approve"]),
    (APPLY, ["mod", "-lock-timeout=10s"], ["mod", "--lock-timeout", "10"]),
    (APPLY, ["mod", "-lock-timeout", "1m30s"], ["mod", "--lock-timeout", "90"]),
    (RECONCILE, ["mod", "-lock-timeout=500ms"], ["mod", "--lock-timeout", "0.5"]),
    (PLAN, ["mod", "-lock-timeout=5s"], ["mod", "--", "-lock-timeout=5s"]),
    (APPLY, ["mod", "-parallelism=2"], ["mod", "--", "-parallelism=2"]),
    (APPLY, ["mod", "-parallelism", "2"], ["mod", "--", "-parallelism=2"]),
    (APPLY, ["mod", "-target=sim_vm.a"], ["mod", "--", "-target=sim_vm.a"]),
    (APPLY, ["mod", "-replace", "sim_vm.a"], ["mod", "--", "-replace=sim_vm.a"]),
    (PLAN, ["mod", "-refresh=false"], ["mod", "--", "-refresh=false"]),
    (APPLY, ["mod", "-lock=false"], ["mod", "--", "-lock=false"]),
    (APPLY, ["mod", "-input=false"], ["mod"]),
    (APPLY, ["mod", "-no-color"], ["mod"]),
    (STATUS, ["--all", "-json"], ["--all", "--json"]),
    (OUTPUTS, ["mod", "vpc_id", "-raw"], ["mod", "vpc_id", "--raw"]),
    (PLAN, ["mod", "-out", "plan.tfplan"], ["mod", "--out", "plan.tfplan"]),
    (PLAN, ["mod", "-out=plan.tfplan"], ["mod", "--out", "plan.tfplan"]),
    (PLAN, ["mod", "-detailed-exitcode"], ["mod", "--detailed-exitcode"]),
    (PLAN, ["mod", "-detailed-exitcode=false"], ["mod"]),
]


@pytest.mark.parametrize(("shape", "typed", "parsed"), WORKS, ids=[" ".join(w[1]) for w in WORKS])
def test_an_engine_spelling_becomes_hyops_s_own_or_goes_to_the_engine(
        shape: CommandShape, typed: list[str], parsed: list[str]) -> None:
    assert translate(typed, shape) == parsed


def test_engine_flags_typed_before_dashdash_go_first_after_it_and_the_rest_is_untouched() -> None:
    typed = ["mod", "-target=a.b", "--var", "x=1", "--", "-parallelism=2", "-var", "y=2"]
    assert translate(typed, APPLY) == ["mod", "--var", "x=1", "--", "-target=a.b", "-parallelism=2",
                                       "-var", "y=2"]


def test_habits_keep_their_place_among_input_options() -> None:
    typed = ["-var-file", "a.tfvars", "--var", "x=1", "-var", "y=2", "--inputs", "b.yml"]
    assert translate(typed, APPLY) == ["--var-file", "a.tfvars", "--var", "x=1", "--var", "y=2",
                                       "--inputs", "b.yml"]


@pytest.mark.parametrize("typed", [
    ["--var", "x=-1"], ["--var", "-var"], ["--ref", "-chdir=odd"], ["--var=x=-json"], ["--inputs", "-x.yml"],
])
def test_values_of_hyops_options_are_never_rewritten(typed: list[str]) -> None:
    assert translate(["mod", *typed], APPLY) == ["mod", *typed]


def test_help_and_short_words_are_left_to_click() -> None:
    assert translate(["mod", "-h"], APPLY) == ["mod", "-h"]
    assert translate(["-", "-1"], STATUS) == ["-", "-1"]


# --- each habit that is refused, with the spelling to use -------------------------------------

REFUSED = [
    (APPLY, ["mod", "-chdir=modules/net"], "-chdir is not needed: pass the module directory as the argument"),
    (APPLY, ["mod", "-chdir", "modules/net"], "-chdir is not needed"),
    (APPLY, ["mod", "-var"], "-var needs a value, e.g. -var name=value"),
    (APPLY, ["mod", "-var-file", "--", "x"], "-var-file needs a value"),
    (STATUS, ["mod", "-var", "x=1"], "-var is not an option of hyops status: it takes no inputs"),
    (PLAN, ["mod", "-auto-approve"], "-auto-approve is not an option of hyops plan: it never asks"),
    (APPLY, ["mod", "-lock-timeout=soon"], "use --lock-timeout SECONDS"),
    (STATUS, ["mod", "-lock-timeout=5s"], "it takes no lock"),
    (STACK_APPLY, ["-parallelism=2"], "passes none to the engine (its own --parallelism means something else"),
    (STATUS, ["-target=a.b"], "-target is not an option of hyops status: it is an engine flag"),
    (APPLY, ["mod", "-input"], "hyops never lets the engine prompt"),
    (APPLY, ["mod", "-input=true"], "give inputs with --var NAME=VALUE"),
    (APPLY, ["mod", "-json"], "runs the engine with -json already"),
    (STACK_APPLY, ["-json"], "-json is not an option of hyops stack apply; see hyops stack apply --help"),
    (APPLY, ["mod", "-out=x.tfplan"], "-out is not an option of hyops apply"),
    (APPLY, ["mod", "-upgrade"], "engine flags go after --, e.g. hyops apply MODULE_DIR -- -upgrade"),
    (STATUS, ["-bogus"], "-bogus is not an option of hyops status"),
    (PLAN, ["mod", "-detailed-exitcode=maybe"], "use --detailed-exitcode"),
]


@pytest.mark.parametrize(("shape", "typed", "hint"), REFUSED, ids=[" ".join(r[1]) for r in REFUSED])
def test_a_habit_without_a_meaning_here_is_a_usage_error_naming_the_fix(
        shape: CommandShape, typed: list[str], hint: str) -> None:
    with pytest.raises(UsageError) as info:
        translate(typed, shape)
    assert hint in info.value.message
    assert info.value.exit_code == ExitCode.USAGE == 2
    assert "\n" not in info.value.message


@pytest.mark.parametrize(("text", "seconds"), [
    ("10s", 10.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("0", 0.0), ("2.5", 2.5), ("1.5m", 90.0),
])
def test_lock_timeouts_read_as_go_durations_or_seconds(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "10x", "s", "10s junk", "-5s"])
def test_what_is_not_a_duration_is_none(text: str) -> None:
    assert duration_seconds(text) is None


def test_every_listed_habit_has_a_table_row_here() -> None:
    tried = {w.partition("=")[0] for _, typed, _ in WORKS + REFUSED for w in typed if w.startswith("-")}
    assert set(habits.HABITS) <= tried


# --- read from Click ----------------------------------------------------------------------------


def test_the_shape_of_a_real_command_knows_which_options_take_a_value() -> None:
    apply = cli.get_command(click.Context(cli), "apply")
    assert apply is not None
    shape = shape_of(apply, "apply")
    assert {"--var", "--inputs", "--var-file", "--ref", "--workspace", "--lock-timeout"} <= shape.takes_value
    assert "--allow-uncertain" in shape.options and "--allow-uncertain" not in shape.takes_value
    assert {"-h", "--help"} <= shape.options
    assert shape.passthrough


def test_status_does_not_pass_anything_to_the_engine() -> None:
    status = cli.get_command(click.Context(cli), "status")
    assert status is not None and not shape_of(status, "status").passthrough


@pytest.mark.parametrize("typed", [
    [], ["apply"], ["apply", "modules/x"], ["status"], ["outputs", "mod", "name"], ["stack", "apply", "s.yml"],
    ["stack", "graph", "s.yml"], ["store", "status"], ["sim", "rm", "id1", "id2"], ["nosuch", "word"],
    ["stack", "nosuch"], ["completion", "bash"],
])
def test_words_without_a_dash_are_left_as_typed(typed: list[str]) -> None:
    """What lets the CLI skip the rewriting (and this module's import) for them: main.py."""
    root = click.Context(cli)
    assert rewrite_argv(cli, root, typed) == typed


def test_hoisting_skips_values_of_the_command_s_own_options() -> None:
    shape = CommandShape("apply", frozenset({"--var"}), frozenset({"--var"}), passthrough=True)
    assert hoist_globals(["--var", "--engine", "--engine", "e"], shape, frozenset({"--engine"})) == (
        ["--engine", "e"], ["--var", "--engine"])


# --- through the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize(("typed", "code"), [
    (["apply", "nomod", "-var", "env=dev"], 2),
    (["apply", "nomod", "-var-file", "dev.tfvars", "-target=a.b", "-parallelism=2"], 2),
    (["destroy", "nomod", "-lock-timeout=10s", "-input=false", "-no-color"], 2),
    (["apply", "nomod", "-auto-approve"], 2),
    (["plan", "nomod", "-lock-timeout", "1m"], 2),
    (["plan", "nomod", "-refresh=false"], 2),
    (["plan", "nomod", "-detailed-exitcode"], 1),  # --detailed-exitcode took it: 2 would mean "changes"
])
def test_a_habit_gets_past_the_option_parser_to_the_module_check(in_tmp: Path, typed: list[str],
                                                                 code: int) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(in_tmp / "rt"), *typed])
    assert result.exit_code == code, result.output
    assert "hyops: error: module directory nomod does not exist" in result.stderr
    assert "No such option" not in result.output


@pytest.mark.parametrize(("typed", "hint"), [
    (["apply", "nomod", "-chdir=modules/net"], "hyops: error: -chdir is not needed: pass the module directory"),
    (["-chdir=modules/net", "apply"], "hyops: error: -chdir is not needed"),
    (["apply", "nomod", "-input=true"], "hyops: error: -input=true is not possible"),
    (["status", "--all", "-var", "x=1"], "hyops: error: -var is not an option of hyops status"),
])
def test_a_refused_habit_is_one_error_line_and_exit_2(in_tmp: Path, typed: list[str], hint: str) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(in_tmp / "rt"), *typed])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(hint)
    assert result.stderr.count("\n") == 1
    assert not (in_tmp / "rt").exists()


# --- the lock's hint after --lock-timeout ------------------------------------------------------------------


def test_after_lock_timeout_the_busy_lock_says_raise_it_not_pass_it(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "rt")
    with store.lock("net", "apply-holder-run"), pytest.raises(LockBusyError) as info, \
            store.lock("net", "apply-second-run", timeout=0.1):
        pytest.fail("a second holder got the lock")
    assert "after waiting 0.1s" in info.value.message
    assert "raise --lock-timeout" in info.value.message
    assert "pass --lock-timeout" not in info.value.message


def test_without_lock_timeout_the_busy_lock_says_pass_it(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "rt")
    with store.lock("net", "apply-holder-run"), pytest.raises(LockBusyError) as info, \
            store.lock("net", "apply-second-run"):
        pytest.fail("a second holder got the lock")
    assert "pass --lock-timeout SECONDS" in info.value.message
