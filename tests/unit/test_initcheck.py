"""When a module needs init again (hybridops_tf.engine.initcheck), without an engine."""

from __future__ import annotations

import os
from pathlib import Path

from hybridops_tf.engine import initcheck

ROOT_TF = 'resource "sim_network" "n" {\n  name = "a"\n}\n'


def _module(tmp_path: Path) -> tuple[Path, Path]:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(ROOT_TF)
    return module, tmp_path / "markers"


def _touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_module_never_initialised_needs_init(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    assert initcheck.init_reason(module, markers) == initcheck.NOT_INITIALISED


def test_a_dot_terraform_no_stamp_covers_needs_one_init(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    (module / ".terraform").mkdir()
    assert initcheck.init_reason(module, markers) == initcheck.NOT_BY_HYOPS


def test_after_a_stamped_init_nothing_is_needed_until_requirements_change(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    initcheck.remember_init(module, markers)
    assert initcheck.init_reason(module, markers) is None

    (module / "main.tf").write_text(ROOT_TF.replace('"a"', '"b"'))  # no requirement changed
    _touch_later(module / "main.tf")
    assert initcheck.init_reason(module, markers) is None

    (module / "calls.tf").write_text('module "sub" {\n  source = "./sub"\n}\n')
    assert "child-module sources or provider requirements" in (initcheck.init_reason(module, markers) or "")


def test_a_provider_requirement_change_needs_init(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    (module / "versions.tf").write_text(
        'terraform {\n  required_providers {\n    sim = { source = "hybridops.dev/hybridops/sim" }\n  }\n}\n')
    initcheck.remember_init(module, markers)
    (module / "versions.tf").write_text(
        'terraform {\n  required_providers {\n    sim = { source = "hybridops.dev/hybridops/sim"\n'
        '      version = ">= 2.0" }\n  }\n}\n')
    _touch_later(module / "versions.tf")
    assert initcheck.init_reason(module, markers) is not None


def test_a_nested_call_inside_a_local_child_module_counts(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    (module / "sub").mkdir()
    (module / "sub" / "main.tf").write_text(ROOT_TF)
    (module / "calls.tf").write_text('module "sub" {\n  source = "./sub"\n}\n')
    initcheck.remember_init(module, markers)
    (module / "sub" / "deeper.tf").write_text('module "deep" {\n  source = "../deep"\n}\n')
    assert initcheck.init_reason(module, markers) is not None


def test_a_lost_dot_terraform_needs_init_again(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    (module / ".terraform").mkdir()
    initcheck.remember_init(module, markers)
    (module / ".terraform").rmdir()
    assert initcheck.init_reason(module, markers) == "the module's .terraform directory is gone"


def test_an_unparsable_file_triggers_init_so_the_engine_reports_it(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    initcheck.remember_init(module, markers)
    (module / "broken.tf").write_text('resource "x" {\n')
    assert initcheck.init_reason(module, markers) is not None


def test_a_local_source_cycle_is_walked_once(tmp_path: Path) -> None:
    module, markers = _module(tmp_path)
    (module / "loop.tf").write_text('module "self" {\n  source = "./"\n}\n')
    initcheck.remember_init(module, markers)
    assert initcheck.init_reason(module, markers) is None
