"""modules.py: module_ref validation and directory -> ref resolution (docs/contract.md: Commands and options)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.record.address import (
    ModuleTarget,
    RefChoice,
    choose_ref,
    key_of_module_id,
    module_id,
    resolve_module,
    validate_ref,
)


def make_module(path: Path, filename: str = "main.tf") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / filename).write_text('variable "x" {\n  default = 1\n}\n')
    return path


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- validate_ref --------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["platform/network", "a", "demo/vm-1", "x_y.z/a-b/c9", "0/1"])
def test_valid_refs_are_returned_unchanged(ref: str) -> None:
    assert validate_ref(ref) == ref


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("", "empty"),
        ("/platform/network", "starts with '/'"),
        ("..", "only dots"),
        ("platform/../secrets", "only dots"),
        ("platform/..", "only dots"),
        (".", "only dots"),
        ("a/./b", "only dots"),
        ("platform//network", "empty segment"),
        ("platform/network/", "empty segment"),
        ("plat form", "only ASCII letters"),
        ("plat\\form", "only ASCII letters"),
        ("réseau", "only ASCII letters"),
        ("platform/network\n", "only ASCII letters"),  # a regex "$" would let one trailing newline through
    ],
)
def test_invalid_refs_are_usage_errors_that_say_why(ref: str, why: str) -> None:
    with pytest.raises(UsageError) as info:
        validate_ref(ref)

    assert info.value.exit_code == ExitCode.USAGE == 2
    assert why in info.value.message
    assert "--ref" in info.value.message
    assert "platform/network" in info.value.message  # an example of a valid one


def test_validate_ref_names_where_the_ref_came_from() -> None:
    with pytest.raises(UsageError, match=r"stack\.yml member web"):
        validate_ref("We b", source="stack.yml member web")


# --- resolve_module ------------------------------------------------------------------------


def test_a_missing_module_directory_is_a_usage_error(in_tmp: Path) -> None:
    with pytest.raises(UsageError, match="does not exist") as info:
        resolve_module("modules/nope", None, None)

    assert info.value.exit_code == 2


def test_a_file_is_not_a_module_directory(in_tmp: Path) -> None:
    (in_tmp / "main.tf").write_text("")

    with pytest.raises(UsageError, match="does not exist"):
        resolve_module("main.tf", "x", None)


def test_a_directory_without_tf_files_is_a_usage_error(in_tmp: Path) -> None:
    d = in_tmp / "modules" / "empty"
    d.mkdir(parents=True)
    (d / "README.md").write_text("no code")
    (d / "sub.tf").mkdir()  # a directory named like a .tf file does not count

    with pytest.raises(UsageError, match=r"holds no \.tf files") as info:
        resolve_module(d, "empty", None)

    assert info.value.exit_code == 2


def test_an_explicit_ref_wins_and_is_validated(in_tmp: Path) -> None:
    d = make_module(in_tmp / "anywhere" / "net")

    assert resolve_module(d, "demo/network", None) == ModuleTarget(d, "demo/network")
    with pytest.raises(UsageError, match="invalid module ref"):
        resolve_module(d, "Demo Network", None)


def test_ref_is_derived_relative_to_the_default_modules_root(in_tmp: Path) -> None:
    make_module(in_tmp / "modules" / "sim" / "network")

    target = resolve_module("modules/sim/network", None, None)

    assert target.ref == "sim/network"
    assert target.directory == in_tmp / "modules" / "sim" / "network"
    assert target.directory.is_absolute()
    assert module_id(target.ref) == "sim__network"


def test_an_absolute_module_path_derives_the_same_ref(in_tmp: Path) -> None:
    d = make_module(in_tmp / "modules" / "sim" / "network")

    assert resolve_module(d, None, None).ref == "sim/network"
    assert resolve_module("./modules/sim/../sim/network", None, None).ref == "sim/network"


def test_ref_is_derived_relative_to_the_cwd_outside_the_modules_dir(in_tmp: Path) -> None:
    make_module(in_tmp / "infra" / "platform" / "network")

    assert resolve_module("infra/platform/network", None, None).ref == "infra/platform/network"


def test_modules_root_option_sets_the_base_of_derived_refs(in_tmp: Path, tmp_path_factory) -> None:
    make_module(in_tmp / "infra" / "platform" / "network")

    assert resolve_module("infra/platform/network", None, Path("infra")).ref == "platform/network"
    assert (
        resolve_module("infra/platform/network", None, in_tmp / "infra").ref == "platform/network"
    )


def test_modules_root_outside_the_cwd(in_tmp: Path, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    d = make_module(elsewhere / "platform" / "network")

    assert resolve_module(d, None, elsewhere).ref == "platform/network"


def test_a_module_outside_both_roots_needs_ref(in_tmp: Path, tmp_path_factory) -> None:
    outside = make_module(tmp_path_factory.mktemp("outside") / "net")

    with pytest.raises(UsageError) as info:
        resolve_module(outside, None, None)

    assert info.value.exit_code == ExitCode.USAGE
    assert "--ref" in info.value.message
    assert resolve_module(outside, "demo/net", None).ref == "demo/net"


def test_inside_the_module_folder_the_ref_is_its_path_from_the_project_top(in_tmp: Path) -> None:
    d = make_module(in_tmp / "modules" / "sim" / "network")
    os.chdir(d)

    assert choose_ref(".", None, None, project_top=in_tmp) == RefChoice(ModuleTarget(d, "sim/network"), "project")
    assert resolve_module(".", "demo/here", None, project_top=in_tmp).ref == "demo/here"


def test_the_current_folder_outside_any_project_is_named_by_its_folder_name(in_tmp: Path) -> None:
    d = make_module(in_tmp / "infra")
    os.chdir(d)

    assert choose_ref(".", None, None, project_top=d) == RefChoice(ModuleTarget(d, "infra"), "folder name")


def test_a_module_outside_every_root_needs_ref(in_tmp: Path) -> None:
    d = make_module(in_tmp / "elsewhere" / "net")
    os.chdir(make_module(in_tmp / "work"))

    with pytest.raises(UsageError, match="--ref"):
        resolve_module(d, None, None, project_top=in_tmp / "work")


def test_folder_names_with_capitals_are_refs_whose_record_folders_never_collide(in_tmp: Path) -> None:
    make_module(in_tmp / "envs" / "Prod")

    assert resolve_module("envs/Prod", None, None).ref == "envs/Prod"
    assert module_id("envs/Prod") != module_id("envs/prod")
    assert module_id("envs/Prod").lower() != module_id("envs/prod")  # distinct where case is ignored
    for key in ("envs/Prod", "envs/prod", "A/bC@Stg", "platform/network@stg"):
        assert key_of_module_id(module_id(key)) == key


def test_a_derived_ref_that_is_invalid_says_where_it_came_from(in_tmp: Path) -> None:
    make_module(in_tmp / "modules" / "Sim" / "Net work")

    with pytest.raises(UsageError) as info:
        resolve_module("modules/Sim/Net work", None, None)

    assert "derived from modules/Sim/Net work" in info.value.message
    assert info.value.exit_code == 2


@pytest.mark.parametrize("ref", ["a..b/c", "a/b__c", "x__y"])
def test_refs_with_double_dots_or_the_id_separator_are_refused(ref: str) -> None:
    """`a/b` and `a__b` would share one record folder; `..` is refused anywhere."""
    with pytest.raises(UsageError):
        validate_ref(ref)
