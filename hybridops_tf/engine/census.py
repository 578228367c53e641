"""What an engine's stream said beyond hyops's vocabulary: counted, never acted on.

Why: engines grow their machine-readable UI without bumping any version (Terraform 1.14's
actions, 1.15's `ui: "1.3"`, OpenTofu's own names). hyops reads what it knows and ignores the
rest (events.py: an unknown type is an `UnknownEvent` the fold skips, an unknown field is
never read), never crashing or refusing over it. So that ignoring is not silent, a run counts
what it ignored: message types it has no reader for, and fields of the types it reads that
are not in the documented vocabulary below (top level, and the first level of the payload).
The run folder gets the counts (`stream.unknown.json`, written only when there are some:
docs/contract.md: Files under the runtime root). Pure; one set difference per line.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.vocabulary import ACTION_TYPES, EPHEMERAL_OP_TYPES

CENSUS_FILE = "stream.unknown.json"

_COMMON = frozenset({"@level", "@message", "@module", "@timestamp", "type"})
_RESOURCE_CHANGE = frozenset({"resource", "previous_resource", "action", "reason", "importing", "generated_config"})
_APPLY_HOOK = frozenset({"resource", "action", "id_key", "id_value", "elapsed_seconds"})
_REFRESH_HOOK = frozenset({"resource", "id_key", "id_value"})

# type -> (its fields beside the common ones, its payload's key, the payload's fields; None:
# a payload whose keys are data, not vocabulary, or not checked). Every field the engines
# tested here document for the type, whether hyops reads it or not.
KNOWN: dict[str, tuple[frozenset[str], str | None, frozenset[str] | None]] = {
    "version": (frozenset({"terraform", "tofu", "opentf", "ui"}), None, None),
    "log": (frozenset(), None, None),
    "diagnostic": (frozenset({"diagnostic"}), "diagnostic",
                   frozenset({"severity", "summary", "detail", "address", "range", "snippet"})),
    "planned_change": (frozenset({"change"}), "change", _RESOURCE_CHANGE),
    "resource_drift": (frozenset({"change"}), "change", _RESOURCE_CHANGE),
    "change_summary": (frozenset({"changes"}), "changes",
                       frozenset({"add", "change", "remove", "import", "forget", "action_invocation", "action_fail",
                                  "operation"})),
    "outputs": (frozenset({"outputs"}), None, None),
    "apply_start": (frozenset({"hook"}), "hook", _APPLY_HOOK),
    "apply_progress": (frozenset({"hook"}), "hook", _APPLY_HOOK),
    "apply_complete": (frozenset({"hook"}), "hook", _APPLY_HOOK),
    "apply_errored": (frozenset({"hook"}), "hook", _APPLY_HOOK),
    "refresh_start": (frozenset({"hook"}), "hook", _REFRESH_HOOK),
    "refresh_complete": (frozenset({"hook"}), "hook", _REFRESH_HOOK),
    **{kind: (frozenset({"hook"}), "hook", frozenset({"resource", "action", "elapsed_seconds", "Msg"}))
       for kind in EPHEMERAL_OP_TYPES},
    **{kind: (frozenset({"hook", "invocation"}), None, None) for kind in ACTION_TYPES},
}


@dataclass
class StreamCensus:
    """Counts of unknown message types (`type`) and unknown fields (`type.field`,
    `type.payload.field`) seen in one stream."""

    types: Counter[str] = field(default_factory=Counter)
    fields: Counter[str] = field(default_factory=Counter)

    def see(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("type")
        name = kind if isinstance(kind, str) else ""
        known = KNOWN.get(name)
        if known is None:
            self.types[name or "(no type)"] += 1
            return
        top, payload_key, payload_fields = known
        for key in obj.keys() - _COMMON - top:
            self.fields[f"{name}.{key}"] += 1
        payload = obj.get(payload_key) if payload_key is not None else None
        if payload_fields is not None and isinstance(payload, dict):
            for key in payload.keys() - payload_fields:
                self.fields[f"{name}.{payload_key}.{key}"] += 1

    def __bool__(self) -> bool:
        return bool(self.types or self.fields)

    def to_json(self) -> dict[str, Any]:
        return {"unknown_types": dict(sorted(self.types.items())), "unknown_fields": dict(sorted(self.fields.items()))}

    def text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"
