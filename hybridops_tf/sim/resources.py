"""tf Resource classes: translate engine calls into SimCloud calls and back.

All behaviour lives in `cloud.py`; this adapter only builds schemas, strips values the
engine does not know yet, and turns an Outcome into a state plus diagnostics. Any
unexpected exception becomes an error diagnostic: a Python traceback must never reach
the engine as an opaque gRPC failure.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from tf.iface import (
    CreateContext,
    DeleteContext,
    ImportContext,
    PlanContext,
    ReadContext,
    Resource,
    UpdateContext,
)
from tf.schema import Attribute, Schema
from tf.types import String, Unknown
from tf.utils import Diagnostics

from hybridops_tf.sim.cloud import Outcome, SimCloud
from hybridops_tf.sim.kinds import CONFIG, HEALTH_CHECK, NETWORK, VM, Kind


class CloudSource(Protocol):
    """What a resource needs of its provider (provider.py's SimProvider): the configured cloud."""

    def cloud(self, diags: Diagnostics) -> SimCloud | None: ...


def _id_and_name() -> list[Attribute]:
    return [
        Attribute("id", String(), description="Object id, `<prefix>-<8 hex>`.", computed=True),
        Attribute(
            "name", String(), description="Object name.", required=True, requires_replace=True
        ),
    ]


SCHEMAS: dict[str, Schema] = {
    NETWORK.type: Schema(
        version=0,
        attributes=[
            *_id_and_name(),
            Attribute("cidr", String(), optional=True, computed=True, default="10.0.0.0/16"),
        ],
    ),
    VM.type: Schema(
        version=0,
        attributes=[
            *_id_and_name(),
            Attribute("network_id", String(), required=True, requires_replace=True),
            Attribute("size", String(), optional=True, computed=True, default="small"),
            Attribute("ip", String(), description="Address inside the network.", computed=True),
        ],
    ),
    CONFIG.type: Schema(
        version=0,
        attributes=[
            *_id_and_name(),
            Attribute("vm_id", String(), required=True, requires_replace=True),
            Attribute("content", String(), optional=True),
            Attribute("secret", String(), optional=True, sensitive=True),
        ],
    ),
    HEALTH_CHECK.type: Schema(
        version=0,
        attributes=[
            *_id_and_name(),
            Attribute("target_id", String(), required=True),
            Attribute("status", String(), computed=True),
        ],
    ),
}


def _known(state: dict[str, Any]) -> dict[str, Any]:
    """Drop values the engine does not know yet: the cloud computes those."""
    return {k: v for k, v in state.items() if v is not Unknown}


class SimResource(Resource):
    """Shared lifecycle for every sim type; subclasses only name their Kind."""

    kind: ClassVar[Kind]

    def __init__(self, provider: CloudSource) -> None:
        self._provider = provider

    @classmethod
    def get_name(cls) -> str:
        return cls.kind.type.removeprefix("sim_")

    @classmethod
    def get_schema(cls) -> Schema:
        return SCHEMAS[cls.kind.type]

    def _run(
        self,
        diags: Diagnostics,
        call: Callable[[SimCloud], Outcome],
        fallback: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        cloud = self._provider.cloud(diags)
        if cloud is None:
            return fallback
        try:
            outcome = call(cloud)
        except Exception as exc:  # noqa: BLE001 - reported to the engine, never raised
            diags.add_error(
                f"sim provider internal error in {self.kind.type}",
                f"{type(exc).__name__}: {exc}",
            )
            return fallback
        if outcome.error:
            diags.add_error(outcome.error, outcome.detail)
        return outcome.state

    def create(self, ctx: CreateContext, planned: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(ctx.diagnostics, lambda c: c.create(self.kind.type, _known(planned)), None)

    def read(self, ctx: ReadContext, current: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(ctx.diagnostics, lambda c: c.read(self.kind.type, current), current)

    def plan(self, ctx: PlanContext, current: dict[str, Any] | None, planned: dict[str, Any]) -> dict[str, Any] | None:
        """The plan as asked, after the `plan` faults of an existing object (`current`). A cloud
        that cannot be used fails the calls that touch it, never a plan (as before this fault)."""
        if current is None:
            return planned
        cloud = self._provider.cloud(Diagnostics())
        outcome = cloud.plan(self.kind.type, planned) if cloud is not None else None
        if outcome is not None and outcome.error:
            ctx.diagnostics.add_error(outcome.error, outcome.detail)
        return planned

    def update(
        self, ctx: UpdateContext, current: dict[str, Any], planned: dict[str, Any]
    ) -> dict[str, Any] | None:
        return self._run(
            ctx.diagnostics,
            lambda c: c.update(self.kind.type, current, _known(planned)),
            current,
        )

    def delete(self, ctx: DeleteContext, current: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(ctx.diagnostics, lambda c: c.delete(self.kind.type, current), current)

    def import_(self, ctx: ImportContext, id: str) -> dict[str, Any] | None:
        return self._run(ctx.diagnostics, lambda c: c.import_(self.kind.type, id), None)


class NetworkResource(SimResource):
    kind = NETWORK

    def validate(self, diags: Diagnostics, type_name: str, config: dict[str, Any]) -> None:
        """Reject a malformed CIDR at plan time rather than at create time."""
        super().validate(diags, type_name, config)
        cidr = config.get("cidr")
        if isinstance(cidr, str):
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError as exc:
                diags.add_error(f"invalid cidr {cidr!r}", str(exc), path=["cidr"])


class VmResource(SimResource):
    kind = VM


class ConfigResource(SimResource):
    kind = CONFIG


class HealthCheckResource(SimResource):
    kind = HEALTH_CHECK


RESOURCES: list[type[SimResource]] = [
    NetworkResource,
    VmResource,
    ConfigResource,
    HealthCheckResource,
]
