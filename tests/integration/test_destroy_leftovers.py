"""A destroy the engine calls a success while the state still holds objects (docs/contract.md: Statuses):
`destroyed` only once the state is confirmed empty. A `-target` destroy of one of two
independent networks exits 0 in the engine and leaves the other in state: the record says
`error` with what remains (not `state_missing`, the state is not empty), keeps the remaining
object with its id, and the next `stack destroy` does not skip the member but destroys it."""

from __future__ import annotations

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.stacks import StackEnv, members, statuses

# both stores: the stack reads the error record back from the store (and scripts/mutants.py's guard
# of this rule selects the local leg, `-k local`)
pytestmark = [pytest.mark.integration, pytest.mark.both_stores]

# Two networks, neither depending on the other: `-target=sim_network.x` destroys x alone.
TWO_NETWORKS_TF = SIM_HEADER + """
resource "sim_network" "x" {
  name = "net-x"
}
resource "sim_network" "y" {
  name = "net-y"
}
output "x_id" {
  value = sim_network.x.id
}
output "y_id" {
  value = sim_network.y.id
}
"""

STACK = """\
    stack: demo
    modules:
      - {name: network, path: network}
      - {name: two, path: two}
"""


def test_a_destroy_that_exits_0_with_objects_left_in_state_is_error_and_the_stack_destroys_it_later(
    stack_env: StackEnv,
) -> None:
    stack_env.module("two", text=TWO_NETWORKS_TF)
    stack_env.write(STACK)
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 0
    applied = stack_env.hyops.record("demo/two")
    assert applied is not None and applied["status"] == "ok"
    y_id = applied["outputs"]["y_id"]
    assert y_id.startswith("net-")

    partial = stack_env.hyops("destroy", "stack/two", "--ref", "demo/two", "--", "-target=sim_network.x")

    rec = stack_env.hyops.record("demo/two")
    assert rec is not None
    deleted = [c for c in stack_env.hyops.sim_calls() if c["op"] == "delete"]
    assert [c["name"] for c in deleted] == ["net-x"], "the engine destroyed exactly the target"
    assert partial.returncode == 1, partial.stdout + partial.stderr
    assert rec["status"] == "error", rec
    assert rec["failed_command"] == "destroy"
    assert rec["last_error"].startswith(
        "destroy reported success but 1 resources remain: sim_network.y"), rec["last_error"]
    assert "state_missing" not in rec["last_error"], rec["last_error"]
    assert "the state is empty" not in rec["last_error"]
    assert rec["resources"]["sim_network.y"]["id"] == y_id
    assert rec["resources"]["sim_network.y"]["status"] != "destroyed"
    assert [o["id"] for o in stack_env.hyops.sim_objects() if o["name"] == "net-y"] == [y_id]

    cleaned = stack_env.stack("destroy", "stack/stack.yml")

    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    report = members(stack_env.report())
    assert statuses(stack_env.report()) == {"network": "destroyed", "two": "destroyed"}
    after = stack_env.hyops.record("demo/two")
    assert after is not None and after["status"] == "destroyed"
    assert report["two"]["run_id"] == after["run_id"] != rec["run_id"]  # it ran, it was not skipped
    assert any(c["op"] == "delete" and c["id"] == y_id for c in stack_env.hyops.sim_calls())
    assert stack_env.hyops.sim_objects() == []
