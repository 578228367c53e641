"""The sim's resource schemas and identity schemas, as the plugin protocol describes them.

Every sim attribute is a string, so a schema is a list of flags per attribute; `default` is
what a plan shows for a computed attribute the configuration leaves unset (UNKNOWN: the cloud
decides at create). Each type's identity is its `id`: the provider's own key for an object,
which the engine keeps in state beside the attributes (Terraform/OpenTofu >= 1.12) and which
an `import` block may give instead of an id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hybridops_tf.sim.kinds import CONFIG, HEALTH_CHECK, NETWORK, VM
from hybridops_tf.sim.wire import UNKNOWN, pb

_STRING = json.dumps("string").encode()
IDENTITY_VERSION = 0


@dataclass(frozen=True, slots=True)
class Attribute:
    name: str
    description: str = ""
    required: bool = False
    optional: bool = False
    computed: bool = False
    sensitive: bool = False
    requires_replace: bool = False
    default: Any = UNKNOWN

    def to_pb(self) -> Any:
        m = pb()
        return m.Schema.Attribute(name=self.name, type=_STRING, description=self.description,
                                  required=self.required, optional=self.optional, computed=self.computed,
                                  sensitive=self.sensitive, description_kind=m.StringKind.MARKDOWN)


@dataclass(frozen=True, slots=True)
class Schema:
    attributes: tuple[Attribute, ...]
    version: int = 0

    def by_name(self) -> dict[str, Attribute]:
        return {a.name: a for a in self.attributes}

    def to_pb(self) -> Any:
        m = pb()
        return m.Schema(version=self.version, block=m.Schema.Block(
            version=self.version, attributes=[a.to_pb() for a in self.attributes], description_kind=m.StringKind.PLAIN))


def _id_and_name() -> tuple[Attribute, ...]:
    return (Attribute("id", "Object id, `<prefix>-<8 hex>`.", computed=True),
            Attribute("name", "Object name.", required=True, requires_replace=True))


SCHEMAS: dict[str, Schema] = {
    NETWORK.type: Schema((*_id_and_name(), Attribute("cidr", optional=True, computed=True, default="10.0.0.0/16"))),
    VM.type: Schema((
        *_id_and_name(),
        Attribute("network_id", required=True, requires_replace=True),
        Attribute("size", optional=True, computed=True, default="small"),
        Attribute("ip", "Address inside the network.", computed=True),
    )),
    CONFIG.type: Schema((
        *_id_and_name(),
        Attribute("vm_id", required=True, requires_replace=True),
        Attribute("content", optional=True),
        Attribute("secret", optional=True, sensitive=True),
    )),
    HEALTH_CHECK.type: Schema((
        *_id_and_name(),
        Attribute("target_id", required=True),
        Attribute("status", computed=True),
    )),
}


def identity_schema_pb() -> Any:
    """Every type's identity schema: `id`, required for an import by identity."""
    m = pb()
    return m.ResourceIdentitySchema(version=IDENTITY_VERSION, identity_attributes=[
        m.ResourceIdentitySchema.IdentityAttribute(name="id", type=_STRING, required_for_import=True,
                                                   description="The object's id in the simulated cloud.")])


def identity_of(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The identity of an object whose state is `state`: None while its id is not known."""
    if not state or not isinstance(state.get("id"), str):
        return None
    return {"id": state["id"]}
