"""Declarations read as the engine reads them: `.tf.json` files (JSON syntax) beside `.tf` ones,
and OpenTofu's `.tofu`/`.tofu.json` taking the place of the `.tf` file of the same name
(inputs/declarations.py, base/config_names.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.base.config_names import engine_reads, holds_configuration
from hybridops_tf.base.errors import UsageError
from hybridops_tf.inputs.declarations import read_outputs, read_variables


def _write(folder: Path, files: dict[str, str | dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text if isinstance(text, str) else json.dumps(text))
    return folder


def test_a_tf_json_variable_has_its_type_default_and_sensitivity(tmp_path: Path) -> None:
    module = _write(tmp_path / "m", {"main.tf.json": {
        "//": "a comment",
        "variable": {"tags": {"type": "map(string)", "default": {"a": "b"}},
                     "token": [{"type": "string", "sensitive": True}],
                     "maybe": {"default": None, "nullable": False}},
        "output": [{"id": {"value": "${var.token}", "sensitive": True}}],
    }})

    specs = read_variables(module)

    assert sorted(specs) == ["maybe", "tags", "token"]
    tags = specs["tags"]
    assert (tags.type_expr, tags.default, tags.required) == ("map(string)", {"a": "b"}, False)
    assert specs["token"].sensitive and specs["token"].required
    assert not specs["maybe"].required and specs["maybe"].default is None
    assert not specs["maybe"].nullable and specs["tags"].nullable
    assert read_outputs(module)["id"].sensitive


@pytest.mark.parametrize(("written", "nullable"), [("false", False), ("true", True), (None, True)])
def test_nullable_is_read_from_hcl_as_written_and_true_when_absent(tmp_path: Path, written: str | None,
                                                                   nullable: bool) -> None:
    line = "" if written is None else f"  nullable = {written}\n"
    module = _write(tmp_path / "m", {"main.tf": f'variable "size" {{\n  type = number\n{line}}}\n'})

    assert read_variables(module)["size"].nullable is nullable


def test_a_variable_declared_in_a_tf_and_a_tf_json_file_is_declared_twice(tmp_path: Path) -> None:
    module = _write(tmp_path / "m", {"a.tf": 'variable "x" {}\n', "b.tf.json": {"variable": {"x": {}}}})

    with pytest.raises(UsageError):
        read_variables(module)


def test_a_tf_json_override_file_overrides(tmp_path: Path) -> None:
    module = _write(tmp_path / "m", {"a.tf": 'variable "x" {\n  default = "one"\n}\n',
                                     "x_override.tf.json": {"variable": {"x": {"default": "two"}}}})

    assert read_variables(module)["x"].default == "two"


def test_opentofu_reads_a_tofu_file_in_place_of_the_tf_file_of_its_name_and_terraform_never_reads_it(
    tmp_path: Path
) -> None:
    module = _write(tmp_path / "m", {"vars.tf": 'variable "tf_only" {}\n', "vars.tofu": 'variable "tofu_only" {}\n',
                                     "more.tofu.json": {"variable": {"extra": {}}}})

    assert sorted(read_variables(module)) == ["tf_only"]
    assert sorted(read_variables(module, tofu=True)) == ["extra", "tofu_only"]
    assert engine_reads(["a.tf", "a.tofu", "b.tf.json", "b.tofu.json", "c.tf", ".d.tf"], tofu=True) == [
        "a.tofu", "b.tofu.json", "c.tf"]


def test_a_folder_of_tf_json_files_only_holds_configuration(tmp_path: Path) -> None:
    assert holds_configuration(_write(tmp_path / "j", {"main.tf.json": {}}))
    assert not holds_configuration(_write(tmp_path / "n", {"main.json": {}, ".x.tf": ""}))


def test_a_tf_json_file_that_is_not_json_is_refused_naming_its_line(tmp_path: Path) -> None:
    module = _write(tmp_path / "m", {"main.tf.json": '{\n "variable": \n}'})

    with pytest.raises(UsageError) as err:
        read_variables(module)
    assert "main.tf.json line 3" in str(err.value)
