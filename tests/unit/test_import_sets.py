"""What `hyops status` loads (issue 58, item 2): a command loads only what it uses. Each probe is
a fresh interpreter running the real CLI, so nothing a test imported counts; the modules it
holds at the end are the command's import set. The no-op apply's set is held by
tests/integration/test_import_sets.py (it needs the engine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.import_probe import among, loaded_by

# Loaded by no read-only command: the simulated cloud (its hook is imported when the core first
# asks it about a module), the shared store's drivers, the parser of HCL, the queue, the
# pictures and the reports.
NEVER_READ_ONLY = ("hybridops_tf.sim", "psycopg", "procrastinate", "hcl2", "lark", "grpc", "pyvider",
                   "hybridops_tf.stack.queue", "hybridops_tf.picture", "hybridops_tf.stack.report",
                   "hybridops_tf.cli.markdown")
# shutil (and its compression modules, which tempfile loads too) is for atomic writes and a
# terminal's width: a status into a pipe writes nothing and wraps nothing.
NO_WRITES = ("shutil", "tempfile", "lzma", "bz2")

@pytest.fixture
def project(tmp_path: Path) -> Path:
    """modules/net with an `ok` record under ./.hyops."""
    from hybridops_tf.record.model import OperationRecord, Status
    from hybridops_tf.store.local import RecordStore

    (tmp_path / "modules" / "net").mkdir(parents=True)
    (tmp_path / "modules" / "net" / "main.tf").write_text("")
    RecordStore(tmp_path / ".hyops").write(OperationRecord(module_ref="net", status=Status("ok"), run_id="apply-1"))
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["--runtime-root", ".hyops", "status", "--all"], ["--runtime-root", ".hyops", "status", "modules/net"],
    ["--runtime-root", ".hyops", "status", "--all", "--json"], ["--runtime-root", "empty-root", "status", "--all"],
], ids=" ".join)
def test_status_loads_no_sim_no_store_driver_no_parser_no_report_and_nothing_to_write_with(
    project: Path, argv: list[str]
) -> None:
    report = loaded_by(project, argv)

    assert report["code"] in (0, None)
    assert among(report["loaded"], NEVER_READ_ONLY) == []
    assert among(report["loaded"], NO_WRITES) == []


def test_the_import_set_probe_does_see_a_module_the_command_loaded(project: Path) -> None:
    """Control for the test above: the probe is able to fail."""
    report = loaded_by(project, ["--runtime-root", ".hyops", "status", "--all"],
                       preload="import hybridops_tf.sim.install, tempfile")

    assert among(report["loaded"], NEVER_READ_ONLY) == ["hybridops_tf.sim", "hybridops_tf.sim.install",
                                                         "hybridops_tf.sim.names"]
    assert {"shutil", "tempfile"} <= set(among(report["loaded"], NO_WRITES))


def test_every_type_status_loads_from_hyops_is_built_lazily(project: Path) -> None:
    """The record's types compile no method at import (base/lazy_dataclass.py): each dataclass of a
    hyops module that `status` loads is built by that decorator, so none costs an exec per method."""
    import importlib

    report = loaded_by(project, ["--runtime-root", ".hyops", "status", "--all"])
    eager = []
    for name in among(report["loaded"], ("hybridops_tf",)):
        for value in vars(importlib.import_module(name)).values():
            if (isinstance(value, type) and value.__module__ == name and "__dataclass_fields__" in value.__dict__
                    and "__lazy_flags__" not in value.__dict__):
                eager.append(f"{name}.{value.__qualname__}")
    assert eager == []
