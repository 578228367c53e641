"""Argv builders: the exact lists hyops hands to the engine (STYLE habit 2).

`-chdir=DIR` must come right after the binary (a global option, as `tofu -chdir=DIR apply`
is typed), and passthrough arguments go after hyops' own flags so `-target`/`-replace`
reach the engine unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.engine import commands

ENGINE = Path("/opt/bin/tofu")
MOD = Path("/work/modules/sim/network")
CHDIR = f"-chdir={MOD}"


def test_version_has_no_chdir_and_asks_for_json() -> None:
    assert commands.version(ENGINE) == ["/opt/bin/tofu", "version", "-json"]


def test_init_runs_in_the_module_dir_without_prompts_or_colour() -> None:
    assert commands.init(ENGINE, MOD) == [
        "/opt/bin/tofu",
        CHDIR,
        "init",
        "-input=false",
        "-no-color",
    ]


def test_apply_is_auto_approved_non_interactive_and_json() -> None:
    assert commands.apply(ENGINE, MOD) == [
        "/opt/bin/tofu",
        CHDIR,
        "apply",
        "-auto-approve",
        "-input=false",
        "-json",
    ]


def test_apply_passthrough_goes_after_hyops_flags_unchanged() -> None:
    extra = ["-target=sim_vm.a", "-replace", "sim_network.n", "-parallelism=2"]
    assert commands.apply(ENGINE, MOD, extra) == [
        "/opt/bin/tofu",
        CHDIR,
        "apply",
        "-auto-approve",
        "-input=false",
        "-json",
        "-target=sim_vm.a",
        "-replace",
        "sim_network.n",
        "-parallelism=2",
    ]


def test_destroy_mirrors_apply_flags_with_passthrough_last() -> None:
    assert commands.destroy(ENGINE, MOD, ["-target=sim_vm.a"]) == [
        "/opt/bin/tofu",
        CHDIR,
        "destroy",
        "-auto-approve",
        "-input=false",
        "-json",
        "-target=sim_vm.a",
    ]


def test_plan_default_has_no_out_refresh_or_destroy_flags() -> None:
    assert commands.plan(ENGINE, MOD) == ["/opt/bin/tofu", CHDIR, "plan", "-input=false", "-json"]


def test_plan_refresh_only_with_out_file_and_passthrough_last() -> None:
    assert commands.plan(
        ENGINE, MOD, "/runs/r1/plan.bin", refresh_only=True, extra=["-lock=false"]
    ) == [
        "/opt/bin/tofu",
        CHDIR,
        "plan",
        "-input=false",
        "-json",
        "-refresh-only",
        "-out=/runs/r1/plan.bin",
        "-lock=false",
    ]


def test_plan_destroy_flag() -> None:
    assert commands.plan(ENGINE, MOD, destroy=True) == [
        "/opt/bin/tofu",
        CHDIR,
        "plan",
        "-input=false",
        "-json",
        "-destroy",
    ]


def test_show_state_and_show_plan() -> None:
    assert commands.show_state(ENGINE, MOD) == [
        "/opt/bin/tofu",
        CHDIR,
        "show",
        "-json",
        "-no-color",
    ]
    assert commands.show_plan(ENGINE, MOD, Path("/runs/r1/plan.bin")) == [
        "/opt/bin/tofu",
        CHDIR,
        "show",
        "-json",
        "-no-color",
        "/runs/r1/plan.bin",
    ]


def test_output() -> None:
    assert commands.output(ENGINE, MOD) == ["/opt/bin/tofu", CHDIR, "output", "-json", "-no-color"]


def test_import_puts_options_before_the_address_and_id() -> None:
    # The engine parses flags only before positional arguments.
    assert commands.import_(ENGINE, MOD, "sim_vm.a", "vm-123", ["-var-file=x.tfvars"]) == [
        "/opt/bin/tofu",
        CHDIR,
        "import",
        "-input=false",
        "-no-color",
        "-var-file=x.tfvars",
        "sim_vm.a",
        "vm-123",
    ]


@pytest.mark.parametrize(
    "build",
    [
        lambda e, m: commands.init(e, m),
        lambda e, m: commands.apply(e, m),
        lambda e, m: commands.destroy(e, m),
        lambda e, m: commands.plan(e, m),
        lambda e, m: commands.show_state(e, m),
        lambda e, m: commands.show_plan(e, m, "p"),
        lambda e, m: commands.output(e, m),
        lambda e, m: commands.import_(e, m, "a.b", "id"),
    ],
    ids=[
        "init",
        "apply",
        "destroy",
        "plan",
        "show_state",
        "show_plan",
        "output",
        "import",
    ],
)
def test_every_module_command_puts_chdir_right_after_the_binary(build) -> None:
    argv = build("terraform", "rel/dir with space")
    assert argv[:2] == ["terraform", "-chdir=rel/dir with space"]
    assert all(isinstance(a, str) for a in argv)


def test_builders_do_not_share_or_mutate_the_passthrough_list() -> None:
    extra = ["-target=a.b"]
    first = commands.apply(ENGINE, MOD, extra)
    first.append("-oops")
    assert extra == ["-target=a.b"]
    assert commands.apply(ENGINE, MOD, extra)[-1] == "-target=a.b"


@pytest.mark.parametrize(("arg", "name"), [
    ("-state=x.tfstate", "-state"), ("--state-out=x", "-state-out"), ("-target", "-target"),
    ("--refresh-only", "-refresh-only"), ("-var=a=-state", "-var"),
    ("-", None), ("--", None), ("-=x", None), ("x.tfstate", None), ("note=-state", None), ("", None),
])
def test_flag_name_is_the_dashed_name_of_a_flag_and_none_for_anything_else(arg: str, name: str | None) -> None:
    assert commands.flag_name(arg) == name


def test_a_saved_plan_keeps_only_the_flags_apply_planfile_accepts() -> None:
    extra = ["-parallelism=2", "--lock-timeout=5s", "-var=a=1", "-target=x.y", "-no-color", "value"]
    assert commands.saved_plan_extra(extra) == ["-parallelism=2", "--lock-timeout=5s", "-no-color"]
