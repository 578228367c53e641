"""Typed `show -json` (state) and `output -json` documents.

Why this exists: after a red pipeline the provider state is the evidence of what exists
(docs/contract.md: Statuses, Reconcile). These parsers turn the engine's JSON into small typed values the record,
reconcile and destroy verification can compare, without caring whether Terraform 1.0
(format 0.1/0.2) or OpenTofu (1.x) wrote it. A format with a major version above 1 is refused
loudly instead of being misread. Plans are not parsed here: sensitive.py masks a plan
document's secrets before it is kept (docs/contract.md: Files under the runtime root), and
callers read the masked dict. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.addresses import Spelling, render_key
from hybridops_tf.engine.features import key_spelling_of
from hybridops_tf.engine.jsonshape import as_dict, as_index, as_list, as_str

SUPPORTED_MAJOR = 1


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
    # The provider's own key for the object (Terraform/OpenTofu >= 1.12 with a provider that
    # declares an identity schema); None where the engine or the provider gives none.
    identity: Mapping[str, Any] | None = None
    identity_schema_version: int | None = None

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
        """The current (non-deposed) object at `address` (a scan)."""
        return next(
            (r for r in self.resources if r.address == address and r.deposed_key is None), None
        )

    @property
    def tainted(self) -> list[StateResource]:
        return [r for r in self.resources if r.tainted]

    @property
    def deposed(self) -> list[StateResource]:
        return [r for r in self.resources if r.deposed_key is not None]

    def outputs_plain(self) -> dict[str, Any]:
        """Outputs as a record stores them (docs/contract.md: The record): a sensitive one is {"sensitive": true}."""
        return outputs_plain(self.outputs)


# --- helpers --------------------------------------------------------------------------------


def _load(doc: Mapping[str, Any] | str | bytes, what: str) -> Mapping[str, Any]:
    if isinstance(doc, (str, bytes)):
        try:
            doc = numbers.loads(doc)  # numbers keep their text: the engine's are arbitrary precision
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


def parse_output_value(raw: Any) -> OutputValue:
    """One output object as `output -json`, `show -json` and the UI stream all shape it."""
    d = as_dict(raw)
    action = d.get("action")
    return OutputValue(
        sensitive=d.get("sensitive") is True,
        value=d.get("value"),
        type=d.get("type"),
        action=action if isinstance(action, str) else None,
    )


def _parse_outputs(raw: Any) -> dict[str, OutputValue]:
    return {str(k): parse_output_value(v) for k, v in as_dict(raw).items()}


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
        stack.extend(reversed([as_dict(c) for c in as_list(module.get("child_modules"))]))


def _state_resource(raw: Mapping[str, Any], module_address: str) -> StateResource:
    deposed = raw.get("deposed_key")
    return StateResource(
        address=as_str(raw.get("address")),
        mode=as_str(raw.get("mode"), "managed"),
        type=as_str(raw.get("type")),
        name=as_str(raw.get("name")),
        index=as_index(raw.get("index")),
        provider_name=as_str(raw.get("provider_name")),
        module_address=module_address,
        values=as_dict(raw.get("values")),
        sensitive_values=as_dict(raw.get("sensitive_values")),
        tainted=raw.get("tainted") is True,
        deposed_key=deposed if isinstance(deposed, str) and deposed else None,
        **identity_of(raw),
    )


def identity_of(raw: Mapping[str, Any], key: str = "identity") -> dict[str, Any]:
    """`identity` and `identity_schema_version` of one object as `show -json`, a state file
    (key `identity`) or a plan's change (`before_identity`/`after_identity`) give them: an
    identity that is not a non-empty object is none (older engines, providers without one)."""
    identity = raw.get(key)
    if not isinstance(identity, Mapping) or not identity:
        return {}
    version = raw.get("identity_schema_version")
    return {"identity": dict(identity),
            "identity_schema_version": version if isinstance(version, int) and not isinstance(version, bool) else None}


# --- public parsers -------------------------------------------------------------------------


def parse_state(doc: Mapping[str, Any] | str | bytes) -> StateSnapshot:
    """Parse `show -json` of a state. A state with nothing in it parses as empty."""
    d = _load(doc, "state")
    version = _check_format(d, "state")
    values = as_dict(d.get("values"))
    resources: list[StateResource] = []
    root = as_dict(values.get("root_module"))
    if root:
        for module in walk_modules(root):
            addr = as_str(module.get("address"))
            resources.extend(
                _state_resource(as_dict(r), addr) for r in as_list(module.get("resources"))
            )
    return StateSnapshot(
        format_version=version,
        terraform_version=as_str(d.get("terraform_version")),
        resources=tuple(resources),
        outputs=_parse_outputs(values.get("outputs")),
    )


def unwrap_output_change(raw: Any) -> Any:
    """The engines emit the change object itself under the output name (`map[string]Change`);
    the docs show it wrapped in {"change": ...}. Accept both: misreading it would leak."""
    if isinstance(raw, Mapping) and "actions" not in raw and isinstance(raw.get("change"), Mapping):
        return raw["change"]
    return raw


def parse_outputs(doc: Mapping[str, Any] | str | bytes) -> dict[str, OutputValue]:
    """Parse `output -json` (no format_version there: a plain name -> output object map)."""
    return _parse_outputs(_load(doc, "output -json"))


LOCAL_STATE_FORMAT = 4  # the `version` of the local state file Terraform >= 0.12 and OpenTofu write


def parse_local_state(doc: Mapping[str, Any] | str | bytes, spelling: Spelling | None = None) -> StateSnapshot:
    """Parse a local state file (`terraform.tfstate`, format 4) into the same snapshot as
    `show -json` gives, reading of each object only its address, id, taint and deposed key
    (the file holds every attribute, secrets too: nothing else is kept).

    Each address is spelled as the engine that runs the module prints it (`spelling`, from
    engine/features.py key_spelling; without it, as the Terraform that wrote the file would),
    so the record holds one object under one address (engine/addresses.py).

    Raises StateFormatError for another format or a shape it cannot read: the caller then
    asks the engine (`show -json`), never guesses.
    """
    d = _load(doc, "state file")
    if spelling is None:
        spelling = key_spelling_of(as_str(d.get("terraform_version")))
    if d.get("version") != LOCAL_STATE_FORMAT:
        raise StateFormatError(f"state file: version {d.get('version')!r} is not {LOCAL_STATE_FORMAT}")
    resources: list[StateResource] = []
    raw_resources = d.get("resources", [])
    if not isinstance(raw_resources, list):
        raise StateFormatError("state file: resources is not a list")
    for raw in raw_resources:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("instances", []), list):
            raise StateFormatError("state file: a resource is not an object with instances")
        mode, kind, name = as_str(raw.get("mode"), "managed"), as_str(raw.get("type")), as_str(raw.get("name"))
        module = as_str(raw.get("module"))
        base = ".".join(p for p in (module, "data" if mode == "data" else "", f"{kind}.{name}") if p)
        for inst in raw.get("instances", []):
            if not isinstance(inst, Mapping):
                raise StateFormatError("state file: an instance is not an object")
            index = as_index(inst.get("index_key"))
            attrs = as_dict(inst.get("attributes"))
            ident = attrs.get("id")
            deposed = inst.get("deposed")
            resources.append(StateResource(
                address=base + render_key(index, spelling), mode=mode, type=kind, name=name, index=index,
                provider_name=as_str(raw.get("provider")), module_address=module,
                values={"id": ident} if isinstance(ident, str) else {},
                tainted=inst.get("status") == "tainted",
                deposed_key=deposed if isinstance(deposed, str) and deposed else None,
                **identity_of(inst),
            ))
    outputs = d.get("outputs", {})
    if not isinstance(outputs, Mapping):
        raise StateFormatError("state file: outputs is not an object")
    return StateSnapshot(format_version="local", terraform_version=as_str(d.get("terraform_version")),
                         resources=tuple(resources),
                         outputs={str(k): parse_output_value(v) for k, v in outputs.items()})
