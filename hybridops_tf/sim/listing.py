"""The sim's list resources: `terraform query` lists the simulated cloud's objects (engines >= 1.14).

Every sim resource type is also a list resource of the same name. A `list` block's `config`
takes one optional attribute, `name`: only the objects of that name are listed. Each object
found is one event of the ListResource stream: its identity (`{id}`, as schema.py declares
it), a display name (`<name> (<id>)`), and, when the block says `include_resource = true`,
the object as the engine's state would hold it (a secret is never given back: null).

A cloud that cannot be used (HYOPS_SIM_ROOT unset, a bad faults file) answers one event
holding the error diagnostic, as a provider built on the plugin framework does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hybridops_tf.sim.kinds import KINDS
from hybridops_tf.sim.resources import CloudSource
from hybridops_tf.sim.schema import SCHEMAS, Attribute, Schema, identity_of
from hybridops_tf.sim.wire import Diagnostics, decode, encode, identity_data, pb

NAME_FILTER = "name"

LIST_SCHEMAS: dict[str, Schema] = {
    type_name: Schema((Attribute(NAME_FILTER, "Only the objects of this name (all when unset).", optional=True),))
    for type_name in SCHEMAS
}


def validate(type_name: str) -> Diagnostics:
    """A list block's check: the type must be one the sim lists (the engine checks the schema)."""
    diags = Diagnostics()
    if type_name not in LIST_SCHEMAS:
        diags.add_error(f"sim provider has no list resource {type_name!r}", "Known: " + ", ".join(sorted(LIST_SCHEMAS)))
    return diags


def objects(provider: CloudSource, type_name: str, name: str | None, diags: Diagnostics) -> list[dict[str, Any]]:
    """The state of every live object of `type_name` (of `name` when given), by name then id."""
    cloud = provider.cloud(diags)
    if cloud is None:
        return []
    kind = KINDS[type_name]
    found = []
    for obj in cloud.store.list_objects(type_name):
        if name is not None and obj.name != name:
            continue
        state: dict[str, Any] = {"id": obj.id, "name": obj.name}
        state.update({attr: obj.attributes.get(attr) for attr in kind.attrs})
        state.update({attr: None for attr in kind.secrets})  # only a digest is stored: never listed
        found.append(state)
    return found


def events(provider: CloudSource, request: Any) -> Iterator[Any]:
    """The ListResource stream for one request (the engine's `list` block)."""
    m = pb()
    diags = validate(request.type_name)
    config = decode(request.config) if request.HasField("config") else None
    name = config.get(NAME_FILTER) if isinstance(config, dict) else None
    found = [] if diags.has_errors() else objects(provider, request.type_name, name, diags)
    if diags.has_errors():
        yield m.ListResource.Event(diagnostic=diags.to_pb())
        return
    limit = request.limit if request.limit > 0 else len(found)
    for state in found[:limit]:
        fields: dict[str, Any] = {"identity": identity_data(identity_of(state)),
                                  "display_name": f"{state['name']} ({state['id']})"}
        if request.include_resource_object:
            fields["resource_object"] = encode(state)
        yield m.ListResource.Event(**fields)
