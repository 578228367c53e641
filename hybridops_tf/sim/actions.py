"""The sim's one action type, `sim_vm_restart` (config: `vm_id`), for Terraform 1.14+ actions.

An action is an operation the provider runs, not an object: the engine plans it
(PlanAction), then invokes it after the resource event that triggers it (`action_trigger` in a
resource's `lifecycle`) or on `apply -invoke=action.sim_vm_restart.NAME`; it never changes
state. Invoking restarts the vm in the simulated cloud (SimCloud.restart_vm: an `invoke` line
in calls.jsonl), unless a fault rule `{type: sim_vm_restart, op: invoke, mode: fail}` fails it.
The protocol calls that reach these functions are in servicer.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hybridops_tf.sim.kinds import ACTION_TYPES, VM_RESTART
from hybridops_tf.sim.resources import CloudSource
from hybridops_tf.sim.schema import Attribute, Schema
from hybridops_tf.sim.wire import Diagnostics

ACTION_SCHEMAS: dict[str, Schema] = {
    VM_RESTART: Schema((Attribute("vm_id", "Id of the vm to restart.", required=True),)),
}
RESTARTING = "restarting"


@dataclass(frozen=True, slots=True)
class Step:
    """One event of an invocation: a progress message, or the end with its diagnostics."""

    progress: str | None = None
    diagnostics: Diagnostics | None = None


def unknown_action(diags: Diagnostics, type_name: str) -> Diagnostics:
    return diags.add_error(f"sim provider has no action type {type_name!r}", "Known: " + ", ".join(ACTION_TYPES))


def validate(type_name: str, config: Any) -> Diagnostics:
    """An action type the sim has, with a `vm_id` that is a vm's id where it is known."""
    diags = Diagnostics()
    if type_name not in ACTION_SCHEMAS:
        return unknown_action(diags, type_name)
    vm_id = config.get("vm_id") if isinstance(config, dict) else None
    if isinstance(vm_id, str) and not vm_id.startswith("vm-"):
        diags.add_error(f"invalid vm_id {vm_id!r}", "A sim vm's id is `vm-<8 hex>`.", path=["vm_id"])
    return diags


def plan(type_name: str, config: Any) -> Diagnostics:
    """Nothing to decide before the invocation: the vm may not exist until its create."""
    return Diagnostics() if type_name in ACTION_SCHEMAS else unknown_action(Diagnostics(), type_name)


def invoke(provider: CloudSource, type_name: str, config: Any) -> Iterator[Step]:
    """Progress, then the end: the cloud's answer as diagnostics (empty when it restarted)."""
    diags = Diagnostics()
    vm_id = config.get("vm_id") if isinstance(config, dict) else None
    if type_name not in ACTION_SCHEMAS:
        yield Step(diagnostics=unknown_action(diags, type_name))
        return
    if not isinstance(vm_id, str):
        yield Step(diagnostics=diags.add_error("sim_vm_restart needs a known vm_id", path=["vm_id"]))
        return
    cloud = provider.cloud(diags)
    if cloud is None:
        yield Step(diagnostics=diags)
        return
    yield Step(progress=RESTARTING)
    try:
        outcome = cloud.restart_vm(type_name, vm_id)
    except Exception as exc:  # noqa: BLE001 - reported to the engine, never raised
        diags.add_error(f"sim provider internal error in {type_name}", f"{type(exc).__name__}: {exc}")
    else:
        if outcome.error:
            diags.add_error(outcome.error, outcome.detail)
    yield Step(diagnostics=diags)
