"""The simulated cloud answers reconcile's lookups for its own types (`hyops sim lookup`).

A lookup command gets one JSON request on stdin (its `type`, the `planned` attributes, ...)
and prints `{"candidates": [{"id", "attributes"}]}`: here, every live object of that type,
with its name and attributes (never a secret's digest). It lists them all, so a lookups
file may call it `complete`; hyops drops those a state or record holds and those whose
`match` attributes differ from the planned ones (docs/sim.md: Lookups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridops_tf.sim.kinds import KINDS
from hybridops_tf.sim.store import SimStore


class LookupRequestError(ValueError):
    """The request is not one this lookup can answer: one line saying why."""


def answer(request: Any, store: SimStore) -> dict[str, Any]:
    """The answer document for one request (LookupRequestError for a bad one)."""
    if not isinstance(request, Mapping):
        raise LookupRequestError("the request on stdin is not a JSON object")
    type_name = request.get("type")
    if type_name not in KINDS:
        raise LookupRequestError(f"type {type_name!r} is not a simulated cloud type ({', '.join(KINDS)})")
    candidates = [
        {"id": obj.id, "attributes": {"name": obj.name, **{k: v for k, v in obj.attributes.items()
                                                          if not k.endswith("_sha256")}}}
        for obj in store.list_objects(type_name)
    ]
    return {"candidates": candidates}
