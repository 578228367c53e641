"""Typed messages of the engine's machine-readable UI stream (`-json`); progress.py folds them.

Why this exists: the `-json` stream is the only honest, line-by-line account of what the engine
attempted, and the operation record (docs/contract.md: The record, Statuses) is settled from it. The stream differs in
detail between Terraform 1.0 and OpenTofu 1.8+ (new message types, float vs int elapsed time,
`tofu` vs `terraform` version keys), and a line may be cut short when the engine is killed. So
`parse_event` never raises: a line it cannot read becomes `GarbageLine`, a type it does not
know becomes `UnknownEvent`, and every known field is optional on the wire. The raw line is
written to `events.jsonl` before it reaches this module (STYLE habit 4); nothing here does I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field, fields
from typing import TYPE_CHECKING, Any, TypeAlias

from hybridops_tf.base import numbers
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.jsonshape import as_dict, as_index, as_str
from hybridops_tf.engine.state import OutputValue, parse_output_value
from hybridops_tf.engine.vocabulary import ACTION_TYPES, EPHEMERAL_OP_TYPES

if TYPE_CHECKING:
    from hybridops_tf.engine.census import StreamCensus


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """The `resource` object of hook and change payloads; `addr` links messages together."""

    addr: str
    module: str = ""
    resource: str = ""
    implied_provider: str = ""
    resource_type: str = ""
    resource_name: str = ""
    resource_key: int | str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Fields every UI message carries. `timestamp` stays the engine's string, unparsed."""

    level: str = ""
    message: str = ""
    module: str = ""
    timestamp: str = ""
    type: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionMessage(Message):
    """First line of a stream: which engine (`terraform` or `tofu` key) and UI schema."""

    type: str = "version"
    engine: str = ""  # "terraform" or "tofu": whichever key carried the version
    version: str = ""
    ui: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogMessage(Message):
    """Unstructured human-readable line; only `message` matters."""

    type: str = "log"


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic(Message):
    """A warning or error. Decisions use `severity`, never the human text (STYLE habit 3)."""

    type: str = "diagnostic"
    severity: str = ""
    summary: str = ""
    detail: str = ""
    address: str | None = None
    filename: str | None = None
    start_line: int | None = None
    context: str | None = None  # the enclosing block as the engine quotes it: `resource "T" "N"`

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def resource_block(self) -> tuple[str, str] | None:
        """(type, name) of the managed resource block the diagnostic points into, if any: a
        failed pre/postcondition names no address, only this block (Terraform 1.2+)."""
        words = (self.context or "").split()
        if len(words) != 3 or words[0] != "resource":
            return None
        kind, name = (w.strip('"') for w in words[1:])
        return (kind, name) if kind and name else None


@dataclass(frozen=True, slots=True, kw_only=True)
class _ResourceMessage(Message):
    """Any message about one resource instance; `addr` is the key the tracker folds on."""

    resource: ResourceRef = ResourceRef(addr="")

    @property
    def addr(self) -> str:
        return self.resource.addr

    @property
    def resource_type(self) -> str:
        return self.resource.resource_type

    @property
    def resource_name(self) -> str:
        return self.resource.resource_name


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedChange(_ResourceMessage):
    """One resource the engine plans to touch (`change` payload); `reason` only for some."""

    type: str = "planned_change"
    action: str = ""
    reason: str | None = None
    previous_addr: str | None = None  # where a `moved` block takes the object from
    importing_id: str | None = None  # the object an `import` block adopts (Terraform 1.5+)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceDrift(_ResourceMessage):
    """A resource changed outside the engine (seen by refresh)."""

    type: str = "resource_drift"
    action: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSummary(Message):
    """Counts after a plan/apply/destroy. `import_count`/`forget` are newer, hence optional."""

    type: str = "change_summary"
    add: int = 0
    change: int = 0
    remove: int = 0
    import_count: int | None = None
    forget: int | None = None  # OpenTofu 1.9+: objects `removed` blocks drop from state
    action_invocation: int | None = None  # Terraform 1.14+: actions invoked (or to invoke)
    action_fail: int | None = None  # Terraform 1.14+: action invocations that failed
    operation: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyStart(_ResourceMessage):
    """The engine is about to call the provider: from here on the remote side may change."""

    type: str = "apply_start"
    action: str = ""
    id_key: str | None = None
    id_value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyProgress(_ResourceMessage):
    """Periodic 'still creating' tick; proves the call is in flight."""

    type: str = "apply_progress"
    action: str = ""
    elapsed_seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyComplete(_ResourceMessage):
    """The provider answered success; `id_value` is the remote object's id when known."""

    type: str = "apply_complete"
    action: str = ""
    id_key: str | None = None
    id_value: str | None = None
    elapsed_seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyErrored(_ResourceMessage):
    """The provider call failed; the reason follows as a `diagnostic`."""

    type: str = "apply_errored"
    action: str = ""
    elapsed_seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RefreshStart(_ResourceMessage):
    """Reading one existing object during refresh."""

    type: str = "refresh_start"
    id_key: str | None = None
    id_value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RefreshComplete(_ResourceMessage):
    """Refresh of one object finished; it still exists remotely under `id_value`."""

    type: str = "refresh_complete"
    id_key: str | None = None
    id_value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EphemeralOp(Message):
    """An ephemeral resource opened, renewed or closed (Terraform 1.10+ `ephemeral_op_start`,
    `_progress`, `_complete`, `_errored`; OpenTofu `ephemeral_action_started`, `_complete`).
    It lives for one run and is never in state: never an object of the record, so not a
    `_ResourceMessage`. `action` is Terraform's (`open`, `renew`, `close`); OpenTofu sends none."""

    addr: str = ""
    action: str = ""
    elapsed_seconds: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionMessage(Message):
    """A Terraform 1.14+ action: planned (`planned_action_invocation`), then `action_start`,
    `action_progress`, `action_complete` or `action_errored` (with the provider's `error`
    text). An action is an operation a provider runs, not an object: never a resource of the
    record, but a row of its `actions` (record/actions.py). `trigger_addr` and `trigger_event`
    (`AfterCreate`, ...) name the resource whose lifecycle triggered it, when one did; none for
    an `apply -invoke`."""

    action_addr: str = ""
    trigger_addr: str | None = None
    trigger_event: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputsMessage(Message):
    """Root outputs after apply. OpenTofu omits the value of a sensitive output, Terraform 1.0
    sends it in the clear: `value` may hold a secret, so keep only outputs_plain() of it."""

    type: str = "outputs"
    outputs: Mapping[str, OutputValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEvent(Message):
    """A well-formed message of a type we do not model (provision_*, test_*, newer types)."""

    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GarbageLine:
    """A line that is not a JSON object: a truncated write, stray text, an empty line."""

    raw: str
    type: str = ""


Event: TypeAlias = Message | GarbageLine


# --- tolerant field readers: the wire may omit anything or carry the wrong JSON type ---------


def _opt_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # ids are strings on the wire, but be generous
    return None


def _num(value: Any) -> float | None:
    """A finite JSON number (Terraform 1.0 sends ints where OpenTofu sends floats), else None:
    an out-of-range number reads as absent, so it cannot turn its message into an UnknownEvent."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        num = float(value)
    except OverflowError:  # an int beyond float range
        return None
    return num if math.isfinite(num) else None


def _opt_int(value: Any) -> int | None:
    num = _num(value)
    return None if num is None else int(num)


def _resource(payload: Mapping[str, Any]) -> ResourceRef:
    res = as_dict(payload.get("resource"))
    return ResourceRef(
        addr=as_str(res.get("addr")),
        module=as_str(res.get("module")),
        resource=as_str(res.get("resource")),
        implied_provider=as_str(res.get("implied_provider")),
        resource_type=as_str(res.get("resource_type")),
        resource_name=as_str(res.get("resource_name")),
        resource_key=as_index(res.get("resource_key")),
    )


def _common(obj: Mapping[str, Any]) -> dict[str, str]:
    return {
        "level": as_str(obj.get("@level")),
        "message": as_str(obj.get("@message")),
        "module": as_str(obj.get("@module")),
        "timestamp": as_str(obj.get("@timestamp")),
        "type": as_str(obj.get("type")),
    }


# --- parsers: each receives the decoded object and the common fields ------------------------

_Parser: TypeAlias = Callable[[Mapping[str, Any], dict[str, str]], Message]


def _version(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    engine = next((k for k in ("tofu", "terraform", "opentf") if isinstance(obj.get(k), str)), "")
    return VersionMessage(
        **c, engine=engine, version=as_str(obj.get(engine)) if engine else "", ui=as_str(obj.get("ui"))
    )


def _log(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    return LogMessage(**c)


def _diagnostic(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    d = as_dict(obj.get("diagnostic"))
    rng = as_dict(d.get("range"))
    return Diagnostic(
        **c,
        severity=as_str(d.get("severity")),
        summary=as_str(d.get("summary")),
        detail=as_str(d.get("detail")),
        address=_opt_str(d.get("address")) or None,
        filename=_opt_str(rng.get("filename")),
        start_line=_opt_int(as_dict(rng.get("start")).get("line")),
        context=_opt_str(as_dict(d.get("snippet")).get("context")) or None,
    )


def _resource_parser(cls: type[_ResourceMessage], key: str) -> _Parser:
    """Build the parser of one `hook`/`change` message from the fields its class declares."""
    names = {f.name for f in fields(cls)}

    def parse(obj: Mapping[str, Any], c: Mapping[str, Any]) -> Message:
        p = as_dict(obj.get(key))
        kw: dict[str, Any] = {"resource": _resource(p)}
        if "action" in names:
            kw["action"] = as_str(p.get("action"))
        if "id_key" in names:
            kw["id_key"] = _opt_str(p.get("id_key"))
            kw["id_value"] = _opt_str(p.get("id_value"))
        if "elapsed_seconds" in names:
            kw["elapsed_seconds"] = _num(p.get("elapsed_seconds")) or 0.0
        if "reason" in names:
            kw["reason"] = _opt_str(p.get("reason")) or None
            prev = p.get("previous_resource")
            kw["previous_addr"] = _resource({"resource": prev}).addr or None if prev else None
        if "importing_id" in names:
            kw["importing_id"] = _opt_str(as_dict(p.get("importing")).get("id")) or None
        return cls(**c, **kw)

    return parse


def _change_summary(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    ch = as_dict(obj.get("changes"))
    return ChangeSummary(
        **c,
        add=_opt_int(ch.get("add")) or 0,
        change=_opt_int(ch.get("change")) or 0,
        remove=_opt_int(ch.get("remove")) or 0,
        import_count=_opt_int(ch.get("import")),
        forget=_opt_int(ch.get("forget")),
        action_invocation=_opt_int(ch.get("action_invocation")),
        action_fail=_opt_int(ch.get("action_fail")),
        operation=as_str(ch.get("operation")),
    )


def _ephemeral_op(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    h = as_dict(obj.get("hook"))
    return EphemeralOp(**c, addr=_resource(h).addr, action=as_str(h.get("action")),
                       elapsed_seconds=_num(h.get("elapsed_seconds")))


def _action(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    """The `hook` of `action_*`, the `invocation` of `planned_action_invocation`: `action`
    (`action_addr` in a planned invocation of Terraform 1.14/1.15) is the action's address
    object; a lifecycle trigger names its resource and event."""
    p = as_dict(obj.get("invocation" if c["type"] == "planned_action_invocation" else "hook"))
    trigger = as_dict(p.get("lifecycle") or p.get("lifecycle_trigger"))
    triggered_by = _resource({"resource": trigger.get("resource") or trigger.get("triggering_resource")}).addr
    event = _opt_str(trigger.get("trigger_event") or trigger.get("triggering_event"))
    return ActionMessage(**c, action_addr=as_str(as_dict(p.get("action") or p.get("action_addr")).get("addr")),
                         trigger_addr=triggered_by or None, trigger_event=event or None,
                         error=_opt_str(p.get("error")))


def _outputs(obj: Mapping[str, Any], c: dict[str, str]) -> Message:
    outs = as_dict(obj.get("outputs"))
    return OutputsMessage(**c, outputs={str(k): parse_output_value(v) for k, v in outs.items()})


_PARSERS: dict[str, _Parser] = {
    "version": _version,
    "log": _log,
    "diagnostic": _diagnostic,
    "change_summary": _change_summary,
    "outputs": _outputs,
    "planned_change": _resource_parser(PlannedChange, "change"),
    "resource_drift": _resource_parser(ResourceDrift, "change"),
    "apply_start": _resource_parser(ApplyStart, "hook"),
    "apply_progress": _resource_parser(ApplyProgress, "hook"),
    "apply_complete": _resource_parser(ApplyComplete, "hook"),
    "apply_errored": _resource_parser(ApplyErrored, "hook"),
    "refresh_start": _resource_parser(RefreshStart, "hook"),
    "refresh_complete": _resource_parser(RefreshComplete, "hook"),
    **dict.fromkeys(EPHEMERAL_OP_TYPES, _ephemeral_op),
    **dict.fromkeys(ACTION_TYPES, _action),
}


def parse_event(line: str | bytes, census: StreamCensus | None = None) -> Event:
    """Parse one stream line. Never raises on bad input: the stream must never crash the run
    that reads it. With a `census`, the message's types and fields beyond hyops's vocabulary
    are counted there (they are otherwise ignored).

    Missing, wrongly typed or out-of-range fields of a known type read as their defaults
    (empty address, no id); should a value still defeat its parser, the line becomes an
    `UnknownEvent`. Only the errors bad input can raise are caught: a bug in a parser must
    surface, not quietly turn an `apply_start` into an `UnknownEvent` the fold ignores.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    try:
        obj = json.loads(line)
        if isinstance(obj, dict) and obj.get("type") == "outputs":
            obj = numbers.loads(line)  # output values keep their numbers' text (base/numbers.py)
    except (ValueError, RecursionError):
        return GarbageLine(raw=line)
    if not isinstance(obj, dict):
        return GarbageLine(raw=line)
    if census is not None:
        census.see(obj)
    common = _common(obj)
    parser = _PARSERS.get(common["type"])
    if parser is None:
        return UnknownEvent(**common, raw=obj)
    try:
        return parser(obj, common)
    except (ValueError, ArithmeticError):  # what a bad value can raise; a parser's bug is not hidden
        return UnknownEvent(**common, raw=obj)


def iter_events(lines: Iterable[str | bytes]) -> Iterator[Event]:
    """Parse lines lazily; blank lines (trailing newline of a file) are skipped, not garbage."""
    for line in lines:
        if line.strip():
            yield parse_event(line)


# --- diagnostics summary for the record's `last_error` ---------------------------------------

_MAX_SUMMARY_ITEMS = 5
_MAX_SUMMARY_CHARS = 1000


def _first_line(text: str) -> str:
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped:
            return stripped
    return ""


def summarize_diagnostics(events: Iterable[Event]) -> str:
    """One short paragraph from the error diagnostics, for `last_error` (docs/contract.md: The record).

    Each error reads `ADDRESS: SUMMARY: first line of detail`; duplicates (the engine repeats
    some) are dropped, at most five are listed, and the text is capped so a record stays small.
    Returns "" when the stream holds no error diagnostic.
    """
    parts: list[str] = []
    seen: set[str] = set()
    extra = 0
    for event in events:
        if not isinstance(event, Diagnostic) or not event.is_error:
            continue
        where = event.address
        if not where and event.filename:
            where = event.filename + (f" line {event.start_line}" if event.start_line else "")
        detail = _first_line(event.detail)
        text = event.summary.strip() or "error"
        if detail and detail != text:
            text = f"{text}: {detail}"
        if where:
            text = f"{where}: {text}"
        if text in seen:
            continue
        seen.add(text)
        if len(parts) < _MAX_SUMMARY_ITEMS:
            parts.append(text)
        else:
            extra += 1
    if extra:
        parts.append(f"and {extra} more error(s)")
    summary = "; ".join(parts)
    if len(summary) > _MAX_SUMMARY_CHARS:
        summary = summary[: _MAX_SUMMARY_CHARS - 3].rstrip() + "..."
    return summary
