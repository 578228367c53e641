"""Hostile input through the real `hyops` and engine: refused before anything changes.

The pure fuzzing lives in tests/unit/test_fuzz_*.py; these are the cases whose harm only
shows end to end (a stale record, a machine out of memory).
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import HYOPS, Hyops
from tests.reliability.figures import FUZZ, note

pytestmark = pytest.mark.integration


def test_input_with_a_nul_byte_is_exit_2_and_leaves_the_record_untouched(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    before = hyops.record_path("network").read_bytes()
    inputs = hyops.workdir / "nul.yml"
    inputs.write_text('name: "demo\\0net"\n')

    result = hyops("apply", "modules/network", "--inputs", str(inputs))

    note(FUZZ, target="CLI apply, NUL in an input value")
    assert hyops.record_path("network").read_bytes() == before, "the record changed"
    assert "Traceback" not in result.stderr, result.stderr[-800:]
    assert result.returncode == 2


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.reliability
def test_yaml_alias_bomb_in_an_inputs_file_is_refused_with_exit_2(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    bomb = hyops.workdir / "bomb.yml"
    bomb.write_text(_alias_bomb(9))
    assert bomb.stat().st_size < 2048

    def cap_memory() -> None:  # a safety net for the CI machine, not a threshold
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    result = subprocess.run([HYOPS, "apply", "modules/network", "--inputs", str(bomb)],
                            cwd=hyops.workdir, env=hyops.env(), capture_output=True, text=True,
                            timeout=600, preexec_fn=cap_memory)  # noqa: PLW1509
    note(FUZZ, target="CLI apply, YAML alias bomb")
    assert "Traceback" not in result.stderr, result.stderr[-600:]
    assert result.returncode == 2
    assert not (hyops.runtime_root / "state").exists()
    assert os.path.exists(bomb)


@pytest.mark.reliability
def test_yaml_alias_bomb_in_a_stack_file_is_refused_with_exit_2(hyops: Hyops) -> None:
    stack_dir = hyops.workdir / "stack"
    (stack_dir / "net").mkdir(parents=True)
    (stack_dir / "net" / "main.tf").write_text('variable "name" {\n  type = any\n}\n')
    bomb = _alias_bomb(9).splitlines()
    (stack_dir / "stack.yml").write_text(
        "stack: s\nmodules:\n  - name: net\n    path: net\n    inputs:\n"
        + "\n".join(f"      {line}" for line in bomb) + "\n")

    def cap_memory() -> None:  # a safety net for the CI machine, not a threshold
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    result = subprocess.run([HYOPS, "stack", "graph", "stack/stack.yml"], cwd=hyops.workdir,
                            env=hyops.env(), capture_output=True, text=True, timeout=600,
                            preexec_fn=cap_memory)  # noqa: PLW1509
    note(FUZZ, target="CLI stack graph, YAML alias bomb")
    assert "Traceback" not in result.stderr, result.stderr[-600:]
    assert result.returncode == 2
