"""The three callers of what a member's apply would apply now (operation/would_apply.py) agree
(issue 57, item 5): the apply records it, `stack apply --resume` skips by it and `reconcile
--stack` reports `config_changed` by it. One stack, a vm member given an input by the stack
file and one wired from the network's output, the network given its cidr by the caller's
TF_VAR_; real engine, sim cloud. After each change the two comparisons name the same members
for the same reasons, and after the apply they made neither finds anything to apply."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.integration.stacks import StackEnv, statuses

pytestmark = pytest.mark.integration

STACK = """\
stack: demo
modules:
  - {name: network, path: network}
  - name: vm
    path: vm
    depends_on: [network]
    inputs: {size: small}
    inputs_from: {network_id: network.network_id}
"""

REFS = {"demo/network": "network", "demo/vm": "vm"}
SINCE = re.compile(r"since that apply (.*): the stack has not applied")
APPLY = re.compile(r"^\[(\w+)\] apply \((.*)\)(?:…|\.\.\.)?\s*$", re.M)  # "…": the step goes on


def reconcile_says(env: StackEnv, cidr: str) -> dict[str, tuple[str, ...]]:
    """`reconcile --stack`: each member it finds config_changed, with its reasons."""
    done = env.hyops("reconcile", "--stack", "stack/stack.yml", "--json", env={"TF_VAR_cidr": cidr})
    assert done.returncode in (0, 3), done.stdout + done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    said: dict[str, tuple[str, ...]] = {}
    for module in doc["modules"]:
        for finding in module["findings"]:
            assert finding["code"] == "config_changed", finding  # nothing else differs here
            found = SINCE.search(finding["detail"])
            assert found is not None, finding["detail"]
            said[REFS[module["module_ref"]]] = tuple(found.group(1).split("; "))
    return said


def resume_says(env: StackEnv, cidr: str) -> dict[str, tuple[str, ...]]:
    """`stack apply --resume`: each member it applies rather than skips, with its reasons."""
    done = env.hyops("stack", "apply", "stack/stack.yml", "--resume", env={"TF_VAR_cidr": cidr})
    assert done.returncode == 0, done.stdout + done.stderr
    applied = {name: tuple(why.split("; ")) for name, why in APPLY.findall(done.stderr)}
    skipped = {name for name, status in statuses(env.report()).items() if status == "skipped"}
    assert set(applied) | skipped == {"network", "vm"} and not set(applied) & skipped, done.stderr
    return applied


def test_resume_and_reconcile_stack_conclude_alike_and_the_apply_records_what_both_compare(
        stack_env: StackEnv) -> None:
    stack_env.write(STACK)
    first = stack_env.hyops("stack", "apply", "stack/stack.yml", env={"TF_VAR_cidr": "10.1.0.0/16"})
    assert first.returncode == 0, first.stdout + first.stderr

    # nothing changed since the apply: both vouch for every member
    assert reconcile_says(stack_env, "10.1.0.0/16") == {}
    assert resume_says(stack_env, "10.1.0.0/16") == {}

    # the caller's TF_VAR_ changes the network's configuration, the stack file the vm's inputs
    stack_file = stack_env.directory / "stack.yml"
    stack_file.write_text(stack_file.read_text().replace("inputs: {size: small}", "inputs: {size: large}"))
    expected = {"network": ("its configuration changed",), "vm": ("its inputs changed",)}
    assert reconcile_says(stack_env, "10.2.0.0/16") == expected
    assert resume_says(stack_env, "10.2.0.0/16") == expected

    # the apply recorded what both compare: nothing is left to apply, by either
    assert reconcile_says(stack_env, "10.2.0.0/16") == {}
    assert resume_says(stack_env, "10.2.0.0/16") == {}
