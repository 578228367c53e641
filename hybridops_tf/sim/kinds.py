"""The four resource types of the simulated cloud, as plain data.

One table shared by the store (id prefixes, parent checks, cascades), the fault rules
(known type names) and the schemas (schema.py), so a new type is added in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Kind:
    """What the simulated cloud knows about one resource type."""

    type: str  # full resource type name, e.g. "sim_vm"
    prefix: str  # object ids are "<prefix>-<8 hex>"
    attrs: tuple[str, ...]  # attributes kept in the store besides id and name
    defaults: dict[str, str] = field(default_factory=dict)  # optional+computed defaults
    parent: tuple[str, str] | None = None  # (attribute, parent type) that must exist on create
    cascade_from: str | None = None  # parent type whose deletion deletes this object too
    secrets: tuple[str, ...] = ()  # sensitive attributes: only a sha256 is stored


NETWORK = Kind("sim_network", "net", ("cidr",), defaults={"cidr": "10.0.0.0/16"})
VM = Kind(
    "sim_vm",
    "vm",
    ("network_id", "size", "ip"),
    defaults={"size": "small"},
    parent=("network_id", "sim_network"),
)
CONFIG = Kind(
    "sim_config",
    "cfg",
    ("vm_id", "content"),
    parent=("vm_id", "sim_vm"),
    cascade_from="sim_vm",
    secrets=("secret",),
)
HEALTH_CHECK = Kind("sim_health_check", "hc", ("target_id", "status"))

KINDS: dict[str, Kind] = {k.type: k for k in (NETWORK, VM, CONFIG, HEALTH_CHECK)}
RESOURCE_TYPES: tuple[str, ...] = tuple(KINDS)
# Actions (Terraform 1.14+ `action` blocks): operations on an object, never objects themselves.
VM_RESTART = "sim_vm_restart"
ACTION_TYPES: tuple[str, ...] = (VM_RESTART,)


def kind_of(type_name: str) -> Kind:
    """The Kind for a resource type; KeyError names the type when it is not a sim type."""
    try:
        return KINDS[type_name]
    except KeyError:
        raise KeyError(f"unknown simulated resource type {type_name!r}") from None
