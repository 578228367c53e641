"""The `tfplugin6.Provider` service of the simulated cloud: one function per protocol call.

Built on the generated messages alone (wire.py), so the sim speaks the protocol the engines
of today speak: resource identity (GetResourceIdentitySchemas, identities in read, plan, apply
and import), list resources for every sim type (ListResource, for `terraform query`:
sim/listing.py) and one action, `sim_vm_restart` (PlanAction, InvokeAction: sim/actions.py).
The plan rules are the ones the
sim always had: a create plans the configuration with each unset computed attribute at its
default (UNKNOWN where the cloud decides), an update plans the proposed state, and a change of
a `requires_replace` attribute asks for a replace.

StopProvider is answered as a Go provider does (see sim/lifecycle.py): success, then later
resource calls get an error diagnostic (REFUSED_WHEN_STOPPING) while calls already running
finish; an apply or a read refused so echoes the state it was sent, so the engine keeps the
object as it was (an empty new state on a failed update would read as "object gone").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hybridops_tf.sim import actions, listing
from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.provider import SimProvider
from hybridops_tf.sim.schema import IDENTITY_VERSION, SCHEMAS, Schema, identity_of, identity_schema_pb
from hybridops_tf.sim.wire import UNKNOWN, Diagnostics, decode, encode, identity_data, pb

SERVICE = "tfplugin6.Provider"
REFUSED_WHEN_STOPPING = (
    "ReadResource", "PlanResourceChange", "ApplyResourceChange", "ImportResourceState",
    "MoveResourceState", "ReadDataSource",
)
STOPPING_SUMMARY = "The provider is stopping"
STOPPING_DETAIL = (
    "The engine asked the provider to stop (StopProvider, sent on an interrupt): it takes no "
    "new resource work. Calls already running finish."
)
_ECHOED_STATE = {"ApplyResourceChange": ("prior_state", "new_state"),
                 "ReadResource": ("current_state", "new_state")}

Handler = Callable[[Any, Any], Any]


def refusal(method: str, request: Any) -> Any:
    """The answer to a resource call that arrives after StopProvider: an error diagnostic
    (and, for an apply or a read, the state the engine sent, unchanged)."""
    fields: dict[str, Any] = {"diagnostics": Diagnostics().add_error(STOPPING_SUMMARY, STOPPING_DETAIL).to_pb()}
    if method in _ECHOED_STATE:
        given, answered = _ECHOED_STATE[method]
        if request.HasField(given):
            fields[answered] = getattr(request, given)
    return getattr(pb(), method).Response(**fields)


def _unknown_type(diags: Diagnostics, type_name: str) -> None:
    diags.add_error(f"sim provider has no resource type {type_name!r}", "Known: " + ", ".join(sorted(SCHEMAS)))


class SimServicer:
    """Each public method is one protocol call: (request, context) -> response."""

    def __init__(self, provider: SimProvider, lifecycle: PluginLifecycle) -> None:
        self.provider = provider
        self.lifecycle = lifecycle

    def handlers(self) -> dict[str, Handler]:
        """The implemented calls by method name; resource calls refuse once stopping."""
        out: dict[str, Handler] = {}
        for method in pb().DESCRIPTOR.services_by_name["Provider"].methods_by_name:
            call = getattr(self, method, None)
            if call is None:
                continue
            out[method] = self._refusing(method, call) if method in REFUSED_WHEN_STOPPING else call
        return out

    def _refusing(self, method: str, call: Handler) -> Handler:
        def guarded(request: Any, context: Any) -> Any:
            if self.lifecycle.stopping.is_set():
                return refusal(method, request)
            return call(request, context)

        return guarded

    # --- the provider ------------------------------------------------------------------------

    def GetMetadata(self, request: Any, context: Any) -> Any:  # noqa: N802 (the protocol's names)
        m = pb()
        return m.GetMetadata.Response(
            server_capabilities=m.ServerCapabilities(plan_destroy=True, get_provider_schema_optional=True),
            resources=[m.GetMetadata.ResourceMetadata(type_name=t) for t in SCHEMAS],
            actions=[m.GetMetadata.ActionMetadata(type_name=t) for t in actions.ACTION_SCHEMAS],
            list_resources=[m.GetMetadata.ListResourceMetadata(type_name=t) for t in listing.LIST_SCHEMAS])

    def GetProviderSchema(self, request: Any, context: Any) -> Any:  # noqa: N802
        m = pb()
        return m.GetProviderSchema.Response(
            provider=Schema(()).to_pb(), provider_meta=Schema(()).to_pb(),
            resource_schemas={t: s.to_pb() for t, s in SCHEMAS.items()},
            action_schemas={t: m.ActionSchema(schema=s.to_pb()) for t, s in actions.ACTION_SCHEMAS.items()},
            list_resource_schemas={t: s.to_pb() for t, s in listing.LIST_SCHEMAS.items()},
            server_capabilities=m.ServerCapabilities(plan_destroy=True, get_provider_schema_optional=True))

    def GetResourceIdentitySchemas(self, request: Any, context: Any) -> Any:  # noqa: N802
        return pb().GetResourceIdentitySchemas.Response(identity_schemas={t: identity_schema_pb() for t in SCHEMAS})

    def ValidateProviderConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        return pb().ValidateProviderConfig.Response()  # the provider block takes no arguments

    def ConfigureProvider(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        self.provider.cloud(diags)
        return pb().ConfigureProvider.Response(diagnostics=diags.to_pb())

    def StopProvider(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.lifecycle.request_stop()
        return pb().StopProvider.Response()

    # --- resources ---------------------------------------------------------------------------

    def ValidateResourceConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        resource = self.provider.resource(request.type_name)
        if resource is None:
            _unknown_type(diags, request.type_name)
        else:
            resource.validate(diags, decode(request.config) or {})
        return pb().ValidateResourceConfig.Response(diagnostics=diags.to_pb())

    def UpgradeResourceState(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        if request.raw_state.flatmap:
            diags.add_error("sim provider cannot upgrade a flatmap state", "Only JSON states exist for the sim.")
            return pb().UpgradeResourceState.Response(diagnostics=diags.to_pb())
        state = json.loads(request.raw_state.json) if request.raw_state.json else None
        return pb().UpgradeResourceState.Response(upgraded_state=encode(state))  # one schema version: as it is

    def UpgradeResourceIdentity(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        raw = json.loads(request.raw_identity.json) if request.raw_identity.json else None
        if request.version > IDENTITY_VERSION or not isinstance(raw, dict):
            diags.add_error(f"sim provider cannot upgrade identity version {request.version}",
                            f"It knows identity schema version {IDENTITY_VERSION}.")
            return pb().UpgradeResourceIdentity.Response(diagnostics=diags.to_pb())
        return pb().UpgradeResourceIdentity.Response(upgraded_identity=identity_data({"id": raw.get("id")}))

    def ReadResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        resource = self.provider.resource(request.type_name)
        current = decode(request.current_state)
        if resource is None or current is None:
            _unknown_type(diags, request.type_name) if resource is None else diags.add_error(
                f"ReadResource {request.type_name} called with no state")
            return pb().ReadResource.Response(diagnostics=diags.to_pb())
        new = resource.read(diags, current)
        return pb().ReadResource.Response(new_state=encode(new), diagnostics=diags.to_pb(),
                                          new_identity=identity_data(identity_of(new)))

    def PlanResourceChange(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        schema = SCHEMAS.get(request.type_name)
        if schema is None:
            _unknown_type(diags, request.type_name)
            return pb().PlanResourceChange.Response(diagnostics=diags.to_pb())
        prior, proposed = decode(request.prior_state), decode(request.proposed_new_state)
        if proposed is None:  # a delete: planned by the engine itself (plan_destroy)
            return pb().PlanResourceChange.Response(planned_state=encode(None))
        attributes = schema.by_name()
        if prior is None:
            planned = {k: (v if v is not None else (attributes[k].default if attributes[k].computed else None))
                       for k, v in proposed.items() if k in attributes}
            return pb().PlanResourceChange.Response(planned_state=encode(planned), diagnostics=diags.to_pb())
        resource = self.provider.resource(request.type_name)
        if resource is not None:  # an update: the cloud's `plan` faults may hold or fail it
            resource.plan(diags, prior, proposed)
        replace = [name for name, attr in attributes.items()
                   if attr.requires_replace and prior.get(name) != proposed.get(name)]
        m = pb()
        return m.PlanResourceChange.Response(
            planned_state=encode(proposed), diagnostics=diags.to_pb(),
            requires_replace=[m.AttributePath(steps=[m.AttributePath.Step(attribute_name=n)]) for n in replace],
            planned_identity=identity_data(identity_of(prior)))

    def ApplyResourceChange(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics()
        resource = self.provider.resource(request.type_name)
        if resource is None:
            _unknown_type(diags, request.type_name)
            return pb().ApplyResourceChange.Response(diagnostics=diags.to_pb())
        prior, planned = decode(request.prior_state), decode(request.planned_state)
        if prior is None and planned is not None:
            new = resource.create(diags, planned)
        elif planned is None and prior is not None:
            new = resource.delete(diags, prior)
        else:
            new = resource.update(diags, prior or {}, planned or {})
        if new is not None:
            new = {k: v for k, v in new.items() if k in SCHEMAS[request.type_name].by_name()}
        return pb().ApplyResourceChange.Response(new_state=encode(new), diagnostics=diags.to_pb(),
                                                 new_identity=identity_data(identity_of(new)))

    def ImportResourceState(self, request: Any, context: Any) -> Any:  # noqa: N802
        """By id (`import` command or block), or by identity (an `import` block's `identity`)."""
        diags = Diagnostics()
        resource = self.provider.resource(request.type_name)
        object_id = request.id
        if not object_id and request.HasField("identity"):
            given = decode(request.identity.identity_data)
            object_id = given.get("id") if isinstance(given, dict) and isinstance(given.get("id"), str) else ""
        if resource is None or not object_id:
            _unknown_type(diags, request.type_name) if resource is None else diags.add_error(
                f"sim: import of {request.type_name} needs an id", "Give `id`, or an identity with `id`.")
            return pb().ImportResourceState.Response(diagnostics=diags.to_pb())
        state = resource.import_(diags, object_id)
        m = pb()
        imported = [] if state is None else [m.ImportResourceState.ImportedResource(
            type_name=request.type_name, state=encode(state), identity=identity_data(identity_of(state)))]
        return m.ImportResourceState.Response(imported_resources=imported, diagnostics=diags.to_pb())

    # --- actions (sim/actions.py) ----------------------------------------------------------

    def ValidateActionConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = actions.validate(request.type_name, decode(request.config))
        return pb().ValidateActionConfig.Response(diagnostics=diags.to_pb())

    def PlanAction(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = actions.plan(request.action_type, decode(request.config))
        return pb().PlanAction.Response(diagnostics=diags.to_pb())

    def InvokeAction(self, request: Any, context: Any) -> Any:  # noqa: N802
        """Server-streaming: progress, then `completed` with the diagnostics of the cloud's answer."""
        event = pb().InvokeAction.Event
        for step in actions.invoke(self.provider, request.action_type, decode(request.config)):
            if step.diagnostics is None:
                yield event(progress=event.Progress(message=step.progress or ""))
            else:
                yield event(completed=event.Completed(diagnostics=step.diagnostics.to_pb()))

    # --- list resources (`terraform query`, engines >= 1.14: sim/listing.py) ---------------------

    def ValidateListResourceConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        return pb().ValidateListResourceConfig.Response(diagnostics=listing.validate(request.type_name).to_pb())

    def ListResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        """Server-streaming: an iterator of events, one per object listed."""
        return listing.events(self.provider, request)

    def MoveResourceState(self, request: Any, context: Any) -> Any:  # noqa: N802
        diags = Diagnostics().add_error("MoveResourceState is not implemented by the sim provider")
        return pb().MoveResourceState.Response(diagnostics=diags.to_pb())


__all__ = ["UNKNOWN", "SimServicer", "refusal"]
