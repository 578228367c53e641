"""`times` counts per run of a faults file, through the real CLI and engine.

A run of the file lasts from one write of it to the next: the commands that use it unchanged
share one count (a `times: 1` fault fires once, the recovery after it sees none), and
writing it again re-arms every rule. `hyops sim check-faults` reads a relative path from the
current directory, as hyops hands it to the engine, and names the absolute file it checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.integration.hyops_cli import Hyops

FAIL_DELETE_ONCE = [{"type": "sim_network", "op": "delete", "mode": "fail_delete", "times": 1}]
FAIL_CREATE_ONCE = "- {type: sim_network, op: create, mode: fail_before_create, times: 1}\n"


def write_again(path: Path) -> None:
    """The same text written again: a new run (the mtime moves on a coarse clock too)."""
    before = path.stat().st_mtime_ns
    path.write_text(path.read_text())
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def faulted_deletes(hyops: Hyops) -> int:
    return sum(1 for c in hyops.sim_calls() if c["op"] == "delete" and c["fault"] == "fail_delete")


def test_an_unchanged_faults_file_fires_once_across_commands_and_writing_it_again_rearms_it(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    path = faults_file(FAIL_DELETE_ONCE)

    assert hyops("destroy", "modules/network").returncode == 1  # the fault fires
    assert len(hyops.sim_objects()) == 1
    checked = hyops("sim", "check-faults")
    assert "fired 1, spent until the file is written again" in checked.stdout, checked.stdout
    second = hyops("destroy", "modules/network")  # same file, unchanged: spent
    assert second.returncode == 0, second.stdout + second.stderr
    assert hyops.sim_objects() == [] and faulted_deletes(hyops) == 1

    assert hyops("apply", "modules/network").returncode == 0
    write_again(path)
    assert "times=1: fired 0" in hyops("sim", "check-faults").stdout
    assert hyops("destroy", "modules/network").returncode == 1  # a new run: fires again
    assert faulted_deletes(hyops) == 2 and len(hyops.sim_objects()) == 1
    assert hyops("destroy", "modules/network").returncode == 0
    assert hyops.sim_objects() == []


def test_check_faults_reads_a_relative_path_from_the_current_directory_and_names_it(
    hyops: Hyops,
) -> None:
    (hyops.workdir / "faults.yml").write_text(FAIL_CREATE_ONCE)

    ok = hyops("sim", "check-faults", "faults.yml")
    from_env = hyops("sim", "check-faults", env={"HYOPS_SIM_FAULTS": "faults.yml"})
    missing = hyops("sim", "check-faults", "missing.yml")

    absolute = hyops.workdir / "faults.yml"
    assert ok.returncode == 0 and ok.stdout.splitlines()[0] == f"{absolute}: 1 rule(s) OK"
    assert from_env.returncode == 0 and from_env.stdout == ok.stdout
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert f"{hyops.workdir / 'missing.yml'}: cannot read faults file" in missing.stderr


def test_a_relative_faults_path_reaches_the_provider_as_the_file_check_faults_names(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    (hyops.workdir / "faults.yml").write_text(FAIL_CREATE_ONCE)

    result = hyops("apply", "modules/network", env={"HYOPS_SIM_FAULTS": "faults.yml"})

    output = result.stdout + result.stderr
    assert result.returncode == 1 and "injected fault fail_before_create" in output, output
    assert str(hyops.workdir / "faults.yml") in output
