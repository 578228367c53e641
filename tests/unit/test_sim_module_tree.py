"""Issue 10 case 9: sim detection follows the module tree (sim/install.module_uses_sim), so
a root that uses the sim provider only through a child module gets the sim mirror. No
engine; the real-engine sequence is tests/integration/test_sim_child_module.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.sim.install import module_uses_sim

SIM_TF = 'resource "sim_network" "n" {\n  name = "n"\n}\n'
PLAIN_TF = 'output "x" {\n  value = 1\n}\n'


def _module(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "main.tf").write_text(text)
    return directory


def test_a_local_child_module_two_levels_down_is_followed(tmp_path: Path) -> None:
    root = _module(tmp_path / "root", 'module "x" { source = "./a" }\n')
    _module(root / "a", 'module "y" {\n  source = "../../shared/b"\n}\n')
    _module(tmp_path / "shared" / "b", SIM_TF)

    assert module_uses_sim(root)


def test_a_tree_without_sim_is_not_sim(tmp_path: Path) -> None:
    root = _module(tmp_path / "root", 'module "x" {\n  source = "./a"\n}\n')
    _module(root / "a", PLAIN_TF)

    assert not module_uses_sim(root)


def test_cycles_missing_children_and_unreadable_files_do_not_stop_the_scan(tmp_path: Path) -> None:
    root = _module(tmp_path / "root", 'module "self" { source = "./" }\nmodule "gone" { source = "./nope" }\n'
                   'module "loop" { source = "./a" }\n')
    _module(root / "a", 'module "back" { source = "../" }\nmodule "next" { source = "../b" }\n')
    (root / "a" / "dir.tf").mkdir()  # a directory named *.tf cannot be read
    (root / "a" / "broken.tf").symlink_to(tmp_path / "missing.tf")
    (root / "a" / "latin1.tf").write_bytes(b"# caf\xe9\n")
    _module(root / "b", SIM_TF)

    assert module_uses_sim(root)
    (root / "b" / "main.tf").write_text(PLAIN_TF)
    assert not module_uses_sim(root)


def test_a_deep_chain_is_bounded(tmp_path: Path) -> None:
    directory = tmp_path / "root"
    for _ in range(300):
        _module(directory, 'module "next" { source = "./n" }\n')
        directory = directory / "n"
    _module(directory, SIM_TF)

    assert not module_uses_sim(tmp_path / "root")  # beyond the bound: no sim, no hang


def test_modules_the_engine_installed_are_read_from_modules_json(tmp_path: Path) -> None:
    root = _module(tmp_path / "root", 'module "x" {\n  source = "example.com/org/net/sim"\n}\n')
    _module(root / ".terraform" / "modules" / "x", SIM_TF)
    (root / ".terraform" / "modules" / "modules.json").write_text(json.dumps({"Modules": [
        {"Key": "", "Source": "", "Dir": "."},
        {"Key": "x", "Source": "example.com/org/net/sim", "Dir": ".terraform/modules/x"}]}))

    assert module_uses_sim(root)


@pytest.mark.parametrize("text", ["{not json", "[]", '{"Modules": [1, {"Dir": 5}, {"Dir": ""}]}'])
def test_a_damaged_modules_json_is_ignored(tmp_path: Path, text: str) -> None:
    root = _module(tmp_path / "root", PLAIN_TF)
    (root / ".terraform" / "modules").mkdir(parents=True)
    (root / ".terraform" / "modules" / "modules.json").write_text(text)

    assert not module_uses_sim(root)
