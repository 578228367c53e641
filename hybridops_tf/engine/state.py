"""Typed `show -json` (state and plan) and `output -json` documents, and their redaction.

Why this exists: after a red pipeline the provider state is the evidence of what exists
(DESIGN §6, §9). These parsers turn the engine's JSON into small typed values the record,
reconcile and destroy verification can compare, without caring whether Terraform 1.0
(format 0.1/0.2) or OpenTofu (1.x) wrote it. A format with a major version above 1 is refused
loudly instead of being misread. `redact_sensitive` exists because DESIGN §3 forbids a
sensitive value in any plan.json/state.json snapshot on disk. Everything here is pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

SUPPORTED_MAJOR = 1
_NO_CHANGE_ACTIONS = frozenset({"no-op", "read"})


class StateFormatError(ValueError):
    """The document is not JSON, not an object, or of a format version we cannot read."""


@dataclass(frozen=True, slots=True)
class OutputValue:
    """A root output. `value` is None when the engine withheld it (sensitive, or unknown)."""

    sensitive: bool
    value: Any = None
    type: Any = None  # cty type: "string", or ["map", "string"] for complex types
    action: str | None = None  # only in the plan-time `outputs` UI message


@dataclass(frozen=True, slots=True)
class StateResource:
    """One object in state. A deposed object shares its address with the current one."""

    address: str
    mode: str
    type: str
    name: str
    index: int | str | None = None
    provider_name: str = ""
    module_address: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    sensitive_values: Mapping[str, Any] = field(default_factory=dict)
    tainted: bool = False
    deposed_key: str | None = None

    @property
    def is_managed(self) -> bool:
        return self.mode == "managed"


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """What the provider state holds, flattened across child modules."""

    format_version: str
    terraform_version: str
    resources: tuple[StateResource, ...] = ()
    outputs: Mapping[str, OutputValue] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """No managed object left. Data sources are reads, not objects anyone must destroy."""
        return not any(r.is_managed for r in self.resources)

    def addresses(self) -> list[str]:
        """Distinct instance addresses in state order, data sources included (a deposed
        object adds none)."""
        return list(dict.fromkeys(r.address for r in self.resources))

    def get(self, address: str) -> StateResource | None:
        """The current (non-deposed) object at `address`; a scan, use by_address() in loops."""
        return next(
            (r for r in self.resources if r.address == address and r.deposed_key is None), None
        )

    def by_address(self) -> dict[str, StateResource]:
        """Current (non-deposed) objects keyed by address, for many lookups in linear time."""
        return {r.address: r for r in self.resources if r.deposed_key is None}

    @property
    def tainted(self) -> list[StateResource]:
        return [r for r in self.resources if r.tainted]

    @property
    def deposed(self) -> list[StateResource]:
        return [r for r in self.resources if r.deposed_key is not None]

    def outputs_plain(self) -> dict[str, Any]:
        """Outputs as a record stores them (DESIGN §4): a sensitive one is {"sensitive": true}."""
        return outputs_plain(self.outputs)


@dataclass(frozen=True, slots=True)
class ResourceChange:
    """One planned (or drifted) change. `actions` is the engine's list, e.g. ("delete", "create")."""

    address: str
    type: str
    name: str
    actions: tuple[str, ...]
    mode: str = "managed"
    index: int | str | None = None
    module_address: str = ""
    deposed: str | None = None
    action_reason: str | None = None
    previous_address: str | None = None

    @property
    def is_change(self) -> bool:
        return any(a not in _NO_CHANGE_ACTIONS for a in self.actions)


@dataclass(frozen=True, slots=True)
class OutputChange:
    """A planned change to a root output; before/after are None when sensitive or unknown."""

    actions: tuple[str, ...]
    sensitive: bool = False
    before: Any = None
    after: Any = None
    after_unknown: bool = False


@dataclass(frozen=True, slots=True)
class PlanSnapshot:
    """A saved plan as `show -json PLANFILE` describes it."""

    format_version: str
    terraform_version: str
    resource_changes: tuple[ResourceChange, ...] = ()
    resource_drift: tuple[ResourceChange, ...] = ()
    prior_state: StateSnapshot | None = None
    planned_outputs: Mapping[str, OutputValue] = field(default_factory=dict)
    output_changes: Mapping[str, OutputChange] = field(default_factory=dict)
    errored: bool | None = None  # absent before Terraform 1.4 / OpenTofu 1.6

    @property
    def has_changes(self) -> bool:
        """True when applying would touch a resource (anything but no-op and read)."""
        return any(rc.is_change for rc in self.resource_changes)

    @property
    def has_drift(self) -> bool:
        return any(rc.is_change for rc in self.resource_drift)


# --- helpers --------------------------------------------------------------------------------


def _load(doc: Mapping[str, Any] | str | bytes, what: str) -> Mapping[str, Any]:
    if isinstance(doc, (str, bytes)):
        try:
            doc = json.loads(doc)
        except (ValueError, RecursionError) as exc:
            raise StateFormatError(f"{what}: not valid JSON ({exc})") from None
    if not isinstance(doc, Mapping):
        raise StateFormatError(f"{what}: expected a JSON object, got {type(doc).__name__}")
    return doc


def _check_format(doc: Mapping[str, Any], what: str) -> str:
    version = doc.get("format_version")
    if not isinstance(version, str):
        raise StateFormatError(f"{what}: no format_version; is this `show -json` output?")
    major, _, _ = version.partition(".")
    if not major.isdigit():
        raise StateFormatError(f"{what}: unreadable format_version {version!r}")
    if int(major) > SUPPORTED_MAJOR:
        raise StateFormatError(
            f"{what}: format_version {version} is newer than this hyops understands "
            f"(major {SUPPORTED_MAJOR}); upgrade hyops or use an older engine"
        )
    return version


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _index(value: Any) -> int | str | None:
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def parse_output_value(raw: Any) -> OutputValue:
    """One output object as `output -json`, `show -json` and the UI stream all shape it."""
    d = _dict(raw)
    action = d.get("action")
    return OutputValue(
        sensitive=d.get("sensitive") is True,
        value=d.get("value"),
        type=d.get("type"),
        action=action if isinstance(action, str) else None,
    )


def _parse_outputs(raw: Any) -> dict[str, OutputValue]:
    return {str(k): parse_output_value(v) for k, v in _dict(raw).items()}


def outputs_plain(outputs: Mapping[str, OutputValue]) -> dict[str, Any]:
    """Values of non-sensitive outputs; a sensitive one becomes {"sensitive": true}."""
    return {
        name: ({"sensitive": True} if out.sensitive else out.value) for name, out in outputs.items()
    }


def walk_modules(root: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Root module then every descendant, depth first, without recursion limits."""
    stack = [root]
    while stack:
        module = stack.pop()
        yield module
        stack.extend(reversed([_dict(c) for c in _list(module.get("child_modules"))]))


def _state_resource(raw: Mapping[str, Any], module_address: str) -> StateResource:
    deposed = raw.get("deposed_key")
    return StateResource(
        address=_str(raw.get("address")),
        mode=_str(raw.get("mode"), "managed"),
        type=_str(raw.get("type")),
        name=_str(raw.get("name")),
        index=_index(raw.get("index")),
        provider_name=_str(raw.get("provider_name")),
        module_address=module_address,
        values=_dict(raw.get("values")),
        sensitive_values=_dict(raw.get("sensitive_values")),
        tainted=raw.get("tainted") is True,
        deposed_key=deposed if isinstance(deposed, str) and deposed else None,
    )


# --- public parsers -------------------------------------------------------------------------


def parse_state(doc: Mapping[str, Any] | str | bytes) -> StateSnapshot:
    """Parse `show -json` of a state. A state with nothing in it parses as empty."""
    d = _load(doc, "state")
    version = _check_format(d, "state")
    values = _dict(d.get("values"))
    resources: list[StateResource] = []
    root = _dict(values.get("root_module"))
    if root:
        for module in walk_modules(root):
            addr = _str(module.get("address"))
            resources.extend(
                _state_resource(_dict(r), addr) for r in _list(module.get("resources"))
            )
    return StateSnapshot(
        format_version=version,
        terraform_version=_str(d.get("terraform_version")),
        resources=tuple(resources),
        outputs=_parse_outputs(values.get("outputs")),
    )


def _resource_change(raw: Mapping[str, Any]) -> ResourceChange:
    change = _dict(raw.get("change"))
    reason, prev, deposed = (
        raw.get("action_reason"),
        raw.get("previous_address"),
        raw.get("deposed"),
    )
    return ResourceChange(
        address=_str(raw.get("address")),
        type=_str(raw.get("type")),
        name=_str(raw.get("name")),
        actions=tuple(a for a in _list(change.get("actions")) if isinstance(a, str)),
        mode=_str(raw.get("mode"), "managed"),
        index=_index(raw.get("index")),
        module_address=_str(raw.get("module_address")),
        deposed=deposed if isinstance(deposed, str) and deposed else None,
        action_reason=reason if isinstance(reason, str) else None,
        previous_address=prev if isinstance(prev, str) else None,
    )


def unwrap_output_change(raw: Any) -> Any:
    """The engines emit the change object itself under the output name (`map[string]Change`);
    the docs show it wrapped in {"change": ...}. Accept both: misreading it would leak."""
    if isinstance(raw, Mapping) and "actions" not in raw and isinstance(raw.get("change"), Mapping):
        return raw["change"]
    return raw


def _output_change(raw: Any) -> OutputChange:
    change = _dict(unwrap_output_change(raw))
    sensitive = change.get("before_sensitive") is True or change.get("after_sensitive") is True
    return OutputChange(
        actions=tuple(a for a in _list(change.get("actions")) if isinstance(a, str)),
        sensitive=sensitive,
        before=None if sensitive else change.get("before"),
        after=None if sensitive else change.get("after"),
        after_unknown=change.get("after_unknown") is True,
    )


def parse_plan(doc: Mapping[str, Any] | str | bytes) -> PlanSnapshot:
    """Parse `show -json PLANFILE` (also refresh-only plans, whose news is `resource_drift`)."""
    d = _load(doc, "plan")
    version = _check_format(d, "plan")
    prior = d.get("prior_state")
    errored = d.get("errored")
    return PlanSnapshot(
        format_version=version,
        terraform_version=_str(d.get("terraform_version")),
        resource_changes=tuple(
            _resource_change(_dict(r)) for r in _list(d.get("resource_changes"))
        ),
        resource_drift=tuple(_resource_change(_dict(r)) for r in _list(d.get("resource_drift"))),
        prior_state=parse_state(prior) if isinstance(prior, Mapping) else None,
        planned_outputs=_parse_outputs(_dict(d.get("planned_values")).get("outputs")),
        output_changes={
            str(k): _output_change(v) for k, v in _dict(d.get("output_changes")).items()
        },
        errored=errored if isinstance(errored, bool) else None,
    )


def parse_outputs(doc: Mapping[str, Any] | str | bytes) -> dict[str, OutputValue]:
    """Parse `output -json` (no format_version there: a plain name -> output object map)."""
    return _parse_outputs(_load(doc, "output -json"))
