"""Resource types: translate engine calls into SimCloud calls and back.

All behaviour lives in `cloud.py`; this adapter only strips values the engine does not know
yet and turns an Outcome into a state plus diagnostics. Any unexpected exception becomes an
error diagnostic: a Python traceback must never reach the engine as an opaque gRPC failure.
Schemas are in schema.py; the protocol calls that reach these methods in servicer.py.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from hybridops_tf.sim.cloud import Outcome, SimCloud
from hybridops_tf.sim.kinds import CONFIG, HEALTH_CHECK, NETWORK, VM, Kind
from hybridops_tf.sim.schema import SCHEMAS, Schema
from hybridops_tf.sim.wire import UNKNOWN, Diagnostics


class CloudSource(Protocol):
    """What a resource needs of its provider (provider.py's SimProvider): the configured cloud."""

    def cloud(self, diags: Diagnostics) -> SimCloud | None: ...


def _known(state: dict[str, Any]) -> dict[str, Any]:
    """Drop values the engine does not know yet: the cloud computes those."""
    return {k: v for k, v in state.items() if v is not UNKNOWN}


class SimResource:
    """Shared lifecycle for every sim type; subclasses only name their Kind."""

    kind: ClassVar[Kind]

    def __init__(self, provider: CloudSource) -> None:
        self._provider = provider

    @classmethod
    def schema(cls) -> Schema:
        return SCHEMAS[cls.kind.type]

    def validate(self, diags: Diagnostics, config: dict[str, Any]) -> None:
        """Nothing beyond the schema, which the engine checks."""

    def _run(self, diags: Diagnostics, call: Callable[[SimCloud], Outcome],
             fallback: dict[str, Any] | None) -> dict[str, Any] | None:
        cloud = self._provider.cloud(diags)
        if cloud is None:
            return fallback
        try:
            outcome = call(cloud)
        except Exception as exc:  # noqa: BLE001 - reported to the engine, never raised
            diags.add_error(f"sim provider internal error in {self.kind.type}", f"{type(exc).__name__}: {exc}")
            return fallback
        if outcome.error:
            diags.add_error(outcome.error, outcome.detail)
        return outcome.state

    def create(self, diags: Diagnostics, planned: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(diags, lambda c: c.create(self.kind.type, _known(planned)), None)

    def read(self, diags: Diagnostics, current: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(diags, lambda c: c.read(self.kind.type, current), current)

    def plan(self, diags: Diagnostics, current: dict[str, Any], planned: dict[str, Any]) -> None:
        """The `plan` faults of an existing object (`current`), as its update is planned. A cloud
        that cannot be used fails the calls that touch it, never a plan (as before this fault)."""
        cloud = self._provider.cloud(Diagnostics())
        outcome = cloud.plan(self.kind.type, planned) if cloud is not None else None
        if outcome is not None and outcome.error:
            diags.add_error(outcome.error, outcome.detail)

    def update(self, diags: Diagnostics, current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(diags, lambda c: c.update(self.kind.type, current, _known(planned)), current)

    def delete(self, diags: Diagnostics, current: dict[str, Any]) -> dict[str, Any] | None:
        return self._run(diags, lambda c: c.delete(self.kind.type, current), current)

    def import_(self, diags: Diagnostics, object_id: str) -> dict[str, Any] | None:
        return self._run(diags, lambda c: c.import_(self.kind.type, object_id), None)


class NetworkResource(SimResource):
    kind = NETWORK

    def validate(self, diags: Diagnostics, config: dict[str, Any]) -> None:
        """Reject a malformed CIDR at plan time rather than at create time."""
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


RESOURCES: dict[str, type[SimResource]] = {
    cls.kind.type: cls for cls in (NetworkResource, VmResource, ConfigResource, HealthCheckResource)
}
