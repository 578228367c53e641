"""An OpenTofu engine reads `.tofu` files beside the `.tf` ones (base/config_names.py): a
variable declared in one is a variable of the module for every command hyops runs on
OpenTofu (Runtime.reads_tofu feeds the one resolution), and unknown to Terraform, which never
reads them. The engines here are stand-ins that only answer `version -json`: OpenTofu cannot
be installed on this machine (docs/engines-and-roots.md says what was tested)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.operation import run_inputs
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.runtime.root import Runtime


def _engine(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\necho '{\"terraform_version\": \"1.10.0\", \"platform\": \"linux_amd64\"}'\n")
    os.chmod(path, 0o755)
    return path


@pytest.fixture
def module(tmp_path: Path) -> Path:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "main.tf").write_text('variable "a" { type = string }\n')
    (folder / "extra.tofu").write_text('variable "b" { type = string }\n')
    return folder


def test_opentofu_takes_a_variable_declared_in_a_tofu_file(tmp_path: Path, module: Path) -> None:
    runtime = Runtime(tmp_path / "rt", engine=str(_engine(tmp_path, "tofu")))

    resolved = run_inputs.resolve(runtime, ModuleTarget(module, "m"), None, ["a=1", "b=2"], None, note=False)

    assert runtime.reads_tofu() and resolved.values == {"a": "1", "b": "2"}


def test_terraform_never_reads_a_tofu_file(tmp_path: Path, module: Path) -> None:
    runtime = Runtime(tmp_path / "rt", engine=str(_engine(tmp_path, "terraform")))

    with pytest.raises(UsageError, match="'b'"):
        run_inputs.resolve(runtime, ModuleTarget(module, "m"), None, ["a=1", "b=2"], None, note=False)
    assert not runtime.reads_tofu()


def test_without_an_engine_the_files_are_terraforms(tmp_path: Path, module: Path) -> None:
    assert not Runtime(tmp_path / "rt", engine=str(tmp_path / "no-such-engine")).reads_tofu()
