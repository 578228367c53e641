"""A retained member keeps its failure (issue 10, case 7), on the real engine and sim cloud."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, members
from tests.stackfiles import NETWORK_VM

pytestmark = pytest.mark.integration


def test_a_retained_member_whose_apply_failed_keeps_its_error_and_needs_attention(
    stack_env: StackEnv, faults_file: Callable[..., Path]
) -> None:
    """Sequence: a retain_on_destroy vm whose apply failed, then `stack destroy`. The member
    was settled a clean `retained` (failed_command and last_error dropped) and `status`
    exited 0, as if the half-made vm were fine."""
    stack_env.write(NETWORK_VM + "    retain_on_destroy: true\n")
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 1
    failure = stack_env.hyops.record("demo/vm")["last_error"]

    stack_env.stack("destroy", "stack/stack.yml")

    record = stack_env.hyops.record("demo/vm")
    assert record["status"] == "retained"
    assert (record["failed_command"], record["last_error"]) == ("apply", failure)
    vm = members(stack_env.report())["vm"]
    assert vm["status"] == "retained"
    assert failure in vm["error"]
    status = stack_env.hyops("status", "--all")
    assert status.returncode == 3, status.stdout
