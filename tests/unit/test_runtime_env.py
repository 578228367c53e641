"""The engine environment a run and a reconcile both build (Runtime.engine_env)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.reconcile import evidence
from hybridops_tf.runtime.root import Runtime

SIM_TF = 'resource "sim_network" "n" {\n  name = "n"\n}\n'


@pytest.fixture
def sim_module(tmp_path: Path) -> Path:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(SIM_TF)
    return module


def _symlinked_sim_root(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root.mkdir(mode=0o700)
    (root / "sim").symlink_to(elsewhere, target_is_directory=True)


def test_a_symlinked_sim_launcher_path_is_refused(sim_module: Path, tmp_path: Path) -> None:
    root = tmp_path / "rt"
    _symlinked_sim_root(root, tmp_path)

    with pytest.raises(RefusedError, match="nothing was run"):
        Runtime(root).engine_env(sim_module, None)


def test_the_workspace_and_the_sim_mirror_reach_the_engine(sim_module: Path, tmp_path: Path) -> None:
    env = Runtime(tmp_path / "rt").engine_env(sim_module, "blue")

    assert env["TF_WORKSPACE"] == "blue"
    assert any(key.startswith("TF_CLI_CONFIG_FILE") for key in env)


def test_a_read_only_reconcile_refuses_the_same_symlink_and_says_what_it_could_not_check(
    sim_module: Path, tmp_path: Path
) -> None:
    root = tmp_path / "rt"
    _symlinked_sim_root(root, tmp_path)
    opts = evidence.GatherOptions(runtime=Runtime(root), engine=EngineInfo(Path("/bin/false"), "1.0.3", "terraform"))

    found = evidence.engine_evidence(evidence.Target("t/mod", sim_module), None, opts)

    assert any("symlink" in why for why in found.unchecked), found


def test_a_rerun_inputs_path_in_the_root_names_its_record_key(tmp_path: Path) -> None:
    from hybridops_tf.runtime.root import Runtime

    rt = Runtime(tmp_path / ".hyops")

    assert rt.rerun_inputs_key(tmp_path / ".hyops" / "config" / "modules" / "demo__^vm@stg" / "rerun.inputs.yml") \
        == "demo/Vm@stg"
    assert rt.rerun_inputs_key(tmp_path / "elsewhere" / "rerun.inputs.yml") is None
    assert rt.rerun_inputs_key(tmp_path / ".hyops" / "config" / "modules" / "demo__vm" / "other.yml") is None
