"""A stack member's inputs in reconcile's advice (reconcile/members.py `stack_args`): what the
stack file gives, as `--var`; what the engine gets on its own there (the module's tfvars, the
caller's TF_VAR_) is left to it, a secret too: a `<secret>` placeholder for a value the
pasted command would have had anyway made a command that is refused by design."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.reconcile.members import Member, stack_args
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.runtime.root import Runtime
from tests.unit.reconcile_builders import record as make_record

MODULE = ('variable "size" { type = string }\n'
          'variable "token" {\n  type = string\n  sensitive = true\n}\n')


@pytest.fixture
def module(tmp_path: Path) -> Path:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "main.tf").write_text(MODULE)
    return folder


def test_a_secret_the_callers_environment_gives_is_left_to_it_not_a_placeholder(
    module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TF_VAR_token", "hunter2")
    args = stack_args(Member(module, None, {"size": "large"}), make_record(Status.OK), Runtime(tmp_path / "rt"))

    assert args == ("--var", "size=large")


def test_a_secret_nothing_gives_is_a_placeholder_and_never_its_value(
    module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TF_VAR_token", raising=False)
    args = stack_args(Member(module, None, {"size": "large"}), make_record(Status.OK), Runtime(tmp_path / "rt"))

    assert args == ("--var", "size=large", "--var", "token=<secret>")


def test_a_secret_the_stack_file_gives_stays_a_placeholder_though_the_environment_has_one(
    module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stack's value outranks the caller's TF_VAR_: leaving it out would apply another."""
    monkeypatch.setenv("TF_VAR_token", "other")
    member = Member(module, None, {"size": "large", "token": "from-the-stack"})

    assert stack_args(member, make_record(Status.OK), Runtime(tmp_path / "rt")) == (
        "--var", "size=large", "--var", "token=<secret>")
