"""Which engine command takes the run's var file, by engine version (issue 47, item 5): the
exact argv hyops builds (engine/features.py, engine/runner.py Engine.argv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.engine import commands
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.runner import VAR_FILE_ARG, Engine

DIR = Path("/m")
TF = "/bin/terraform"


def _engine(version: str, kind: str = "terraform") -> Engine:
    return Engine(EngineInfo(Path(TF), version, kind), DIR, inputs='where = "child"\n')


def test_terraform_1_15_passes_the_inputs_to_init_show_and_state_pull() -> None:
    engine = _engine("1.15.5")

    assert engine.argv(commands.init) == [TF, "-chdir=/m", "init", VAR_FILE_ARG, "-input=false", "-no-color"]
    assert engine.argv(commands.show_state) == [TF, "-chdir=/m", "show", VAR_FILE_ARG, "-json", "-no-color"]
    assert engine.argv(commands.show_plan, "p.bin") == [TF, "-chdir=/m", "show", VAR_FILE_ARG, "-json",
                                                         "-no-color", "p.bin"]
    assert engine.argv(commands.state_pull) == [TF, "-chdir=/m", "state", "pull", VAR_FILE_ARG]


def test_output_takes_no_var_file_on_any_engine() -> None:
    """Terraform 1.15.5 refuses `output -var-file` ("flag provided but not defined")."""
    assert engine_argv("1.15.5", commands.output) == [TF, "-chdir=/m", "output", "-json", "-no-color"]


@pytest.mark.parametrize("version", ["1.0.3", "1.12.2", "1.14.9"])
def test_engines_before_1_15_get_no_var_file_on_init_show_or_state_pull(version: str) -> None:
    """They refuse the flag on these commands: it would break every read."""
    for builder in (commands.init, commands.show_state, commands.state_pull):
        assert VAR_FILE_ARG not in engine_argv(version, builder), (version, builder.__name__)
    assert VAR_FILE_ARG in engine_argv(version, commands.plan)


def test_opentofu_passes_the_inputs_to_init_from_1_8() -> None:
    assert VAR_FILE_ARG in _engine("1.8.0", "tofu").argv(commands.init)
    assert VAR_FILE_ARG not in _engine("1.7.3", "tofu").argv(commands.init)
    assert VAR_FILE_ARG not in _engine("1.10.0", "tofu").argv(commands.show_state)


def test_no_inputs_no_var_file() -> None:
    engine = Engine(EngineInfo(Path(TF), "1.15.5", "terraform"), DIR)

    assert VAR_FILE_ARG not in engine.argv(commands.init)


def engine_argv(version: str, builder, *args) -> list[str]:  # type: ignore[no-untyped-def]
    return _engine(version).argv(builder, *args)
