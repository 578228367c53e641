"""What a no-op `hyops apply` of a plain module loads, and `hyops status` after it (issue 58,
item 2): a command loads only what it uses. Each probe is a fresh interpreter running the real
CLI with the real engine; the modules it holds at the end are the command's import set.
(tests/unit/test_import_sets.py holds `status` without an engine run; test_startup.py what
loads before the engine is spawned.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.import_probe import among, loaded_by

pytestmark = pytest.mark.integration

# A plain module's apply asks the sim's hook whether the module uses the sim (sim/install.py's
# text scan) and loads none of its provider, store or CLI-config code; nor the shared store's
# drivers, the queue, the pictures, the reports; nor, with the module's parse cached by the
# first apply, the HCL parser; nor filelock and the `logging` it loads.
NEVER_PLAIN_APPLY = ("hybridops_tf.sim.store", "hybridops_tf.sim.cliconfig", "hybridops_tf.sim.serve",
                     "hybridops_tf.sim.wire", "grpc", "pyvider", "msgpack", "cryptography",
                     "psycopg", "psycopg_pool", "procrastinate", "hcl2", "lark",
                     "hybridops_tf.stack", "hybridops_tf.picture", "hybridops_tf.cli.markdown",
                     "hybridops_tf.reconcile", "hybridops_tf.plan",
                     "filelock", "logging")  # the module lock is base/flock.py's
# `status` reads records and a state file's stamp: no sim at all, no engine runner, nothing to
# write with (tempfile and shutil, with their compression modules)
NEVER_STATUS = ("hybridops_tf.sim", "hybridops_tf.engine.binary", "hybridops_tf.engine.process",
                "hybridops_tf.engine.events", "hybridops_tf.operation", "shutil", "tempfile", "lzma",
                "bz2", *NEVER_PLAIN_APPLY)

def _loaded_by(tmp_path: Path, engine_path: str, argv: list[str], preload: str = "") -> dict[str, Any]:
    env = dict(os.environ, HYOPS_ENGINE=engine_path, HYOPS_RUNTIME_ROOT=str(tmp_path / "rt"))
    return loaded_by(tmp_path, argv, preload, env)


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A module of no provider, applied once (init, the engine version and the parse cached)."""
    module = tmp_path / "plain"
    module.mkdir()
    (module / "main.tf").write_text('variable "answer" {\n  default = 42\n}\n\n'
                                    'output "answer" {\n  value = var.answer\n}\n')
    return module


def test_a_no_op_apply_of_a_plain_module_loads_no_sim_provider_no_store_driver_no_parser_and_no_report(
    tmp_path: Path, engine_path: str, plain: Path
) -> None:
    first = _loaded_by(tmp_path, engine_path, ["apply", str(plain)])
    assert first["code"] in (0, None)
    assert "hcl2" in first["loaded"]  # the first apply parses the module: the cache is made here

    report = _loaded_by(tmp_path, engine_path, ["apply", str(plain)])

    assert report["code"] in (0, None)
    assert among(report["loaded"], NEVER_PLAIN_APPLY) == []


def test_status_after_an_apply_reads_the_state_stamp_without_the_engine_runner_or_the_sim(
    tmp_path: Path, engine_path: str, plain: Path
) -> None:
    assert _loaded_by(tmp_path, engine_path, ["apply", str(plain)])["code"] in (0, None)
    assert (plain / "terraform.tfstate").is_file()  # status compares this state with the record's stamp

    for argv in (["status", "--all"], ["status", str(plain)]):
        report = _loaded_by(tmp_path, engine_path, argv)

        assert report["code"] in (0, None)
        assert "hybridops_tf.runtime.state_look" in report["loaded"]
        assert among(report["loaded"], NEVER_STATUS) == []


def test_the_apply_import_set_probe_does_see_a_module_loaded_on_the_way(
    tmp_path: Path, engine_path: str, plain: Path
) -> None:
    """Control for the tests above: the probe is able to fail."""
    assert _loaded_by(tmp_path, engine_path, ["apply", str(plain)])["code"] in (0, None)  # the parse cached
    report = _loaded_by(tmp_path, engine_path, ["apply", str(plain)], preload="import hybridops_tf.sim.store")

    assert among(report["loaded"], NEVER_PLAIN_APPLY) == ["hybridops_tf.sim.store"]
