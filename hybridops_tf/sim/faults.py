"""Fault rules: make the simulated cloud fail on purpose, without editing any HCL.

HYOPS_SIM_FAULTS names a YAML or JSON file holding a list of rules (or `{rules: [...]}`):

    - {type: sim_vm, op: create, mode: fail_after_create, times: 1}
    - {type: "*", name: demo-net, op: delete, mode: fail_delete}
    - {type: sim_vm, op: create, mode: hang, seconds: 2}

Parsing and matching are pure so they are tested without a provider; counting `times`
goes through a FireCounter (the store, under its lock) because one rule is shared by every
provider process of a run. Errors are one line: a faults file that cannot be trusted must
stop the run with a clear message, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from hybridops_tf.sim.kinds import RESOURCE_TYPES

FAULTS_ENV = "HYOPS_SIM_FAULTS"
DEFAULT_HANG_SECONDS = 30.0


class FaultsError(ValueError):
    """A faults file that cannot be used; str() is one line naming the problem."""


class FaultOp(StrEnum):
    CREATE = "create"
    READ = "read"
    UPDATE = "update"
    DELETE = "delete"


class FaultMode(StrEnum):
    FAIL_BEFORE_CREATE = "fail_before_create"  # error, nothing created
    FAIL_AFTER_CREATE = "fail_after_create"  # object created, state AND error returned
    LOSE_RESPONSE = "lose_response"  # object created, error, no state returned
    HANG = "hang"  # sleep `seconds`, then proceed normally
    FAIL_DELETE = "fail_delete"  # error, object stays
    FAIL = "fail"  # any op: error, nothing changed


_ALL_OPS = frozenset(FaultOp)
# Which ops each mode makes sense for; the op may be omitted when only one fits.
MODE_OPS: dict[FaultMode, frozenset[FaultOp]] = {
    FaultMode.FAIL_BEFORE_CREATE: frozenset({FaultOp.CREATE}),
    FaultMode.FAIL_AFTER_CREATE: frozenset({FaultOp.CREATE}),
    FaultMode.LOSE_RESPONSE: frozenset({FaultOp.CREATE}),
    FaultMode.FAIL_DELETE: frozenset({FaultOp.DELETE}),
    FaultMode.HANG: _ALL_OPS,
    FaultMode.FAIL: _ALL_OPS,
}
_FIELDS = ("type", "name", "op", "mode", "times", "seconds")


@dataclass(frozen=True)
class FaultRule:
    """One validated rule. `index` is its 1-based position, used in messages and keys."""

    index: int
    type: str
    op: FaultOp
    mode: FaultMode
    name: str | None = None
    times: int | None = None
    seconds: float = DEFAULT_HANG_SECONDS

    def matches(self, type_name: str, name: str | None, op: str) -> bool:
        """True when this rule applies to `op` on the resource `type_name`/`name`."""
        if self.op != op or self.type not in ("*", type_name):
            return False
        return self.name is None or (name is not None and fnmatchcase(name, self.name))

    @property
    def key(self) -> str:
        """Identity for fire counts: position plus content, so an edited file counts anew."""
        body = json.dumps(
            [self.type, self.name, str(self.op), str(self.mode), self.times, self.seconds]
        )
        return f"{self.index}:{hashlib.sha256(body.encode()).hexdigest()[:12]}"

    def describe(self) -> str:
        """Short human form for diagnostics: `rule 2 (sim_vm create fail_after_create)`."""
        who = self.type if self.name is None else f"{self.type} name={self.name}"
        return f"rule {self.index} ({who} {self.op} {self.mode})"


class FireCounter(Protocol):
    """Counts rule firings across processes (SimStore implements it under its lock)."""

    def try_fire(self, key: str, limit: int | None) -> bool: ...


def _choice(raw: Any, allowed: type[StrEnum], what: str, where: str) -> Any:
    try:
        return allowed(raw)
    except ValueError:
        names = ", ".join(m.value for m in allowed)  # type: ignore[attr-defined]
        raise FaultsError(f"{where}: unknown {what} {raw!r} (expected one of: {names})") from None


def parse_rule(raw: Any, index: int) -> FaultRule:
    """Validate one rule mapping; FaultsError says which rule and which field is wrong."""
    where = f"rule {index}"
    if not isinstance(raw, dict):
        raise FaultsError(f"{where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in _FIELDS)
    if unknown:
        raise FaultsError(f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(_FIELDS)})")
    for required in ("type", "mode"):
        if raw.get(required) in (None, ""):
            raise FaultsError(f"{where}: missing field {required!r}")
    type_name = raw["type"]
    if type_name != "*" and type_name not in RESOURCE_TYPES:
        raise FaultsError(
            f"{where}: unknown type {type_name!r} (expected '*' or one of: "
            f"{', '.join(RESOURCE_TYPES)})"
        )
    mode = _choice(raw["mode"], FaultMode, "mode", where)
    allowed_ops = MODE_OPS[mode]
    if raw.get("op") is None:
        if len(allowed_ops) != 1:
            raise FaultsError(f"{where}: missing field 'op' (mode {mode} needs one)")
        op = next(iter(allowed_ops))
    else:
        op = _choice(raw["op"], FaultOp, "op", where)
        if op not in allowed_ops:
            raise FaultsError(f"{where}: mode {mode} does not apply to op {op}")
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise FaultsError(f"{where}: 'name' must be a non-empty string")
    times = raw.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise FaultsError(f"{where}: 'times' must be a positive integer, got {times!r}")
    seconds = raw.get("seconds", DEFAULT_HANG_SECONDS)
    if "seconds" in raw and mode is not FaultMode.HANG:
        raise FaultsError(f"{where}: 'seconds' only applies to mode hang")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise FaultsError(f"{where}: 'seconds' must be a number >= 0, got {seconds!r}")
    return FaultRule(index, type_name, op, mode, name, times, float(seconds))


def parse_rules(data: Any) -> list[FaultRule]:
    """Validate a loaded document: a list of rules, `{rules: [...]}`, or empty (no rules)."""
    if data is None:
        return []
    if isinstance(data, dict):
        extra = sorted(str(k) for k in data if k != "rules")
        if extra:
            raise FaultsError(f"unknown top-level key {extra[0]!r} (expected 'rules')")
        data = data.get("rules") or []
    if not isinstance(data, list):
        raise FaultsError(
            f"expected a list of rules or {{rules: [...]}}, got {type(data).__name__}"
        )
    return [parse_rule(raw, i) for i, raw in enumerate(data, start=1)]


def load_rules(path: Path) -> list[FaultRule]:
    """Read and validate a faults file; FaultsError is one line that starts with the path."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise FaultsError(f"{path}: cannot read faults file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise FaultsError(f"{path}: faults file is not UTF-8 text") from None
    import yaml  # lazily: most runs have no faults file

    try:
        if Path(path).suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise FaultsError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise FaultsError(f"{path}: invalid YAML{at}: {problem}") from None
    try:
        return parse_rules(data)
    except FaultsError as exc:
        raise FaultsError(f"{path}: {exc}") from None


def faults_path_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    """The faults file named by HYOPS_SIM_FAULTS, or None when no faults are configured."""
    env = os.environ if environ is None else environ
    value = env.get(FAULTS_ENV, "").strip()
    return Path(value) if value else None


def matching(
    rules: Sequence[FaultRule], type_name: str, name: str | None, op: str
) -> list[FaultRule]:
    """Rules that apply to this call, in file order."""
    return [rule for rule in rules if rule.matches(type_name, name, op)]


def claim(
    rules: Sequence[FaultRule], counter: FireCounter, type_name: str, name: str | None, op: str
) -> FaultRule | None:
    """The first matching rule that still has firings left, counted as fired; else None."""
    for rule in matching(rules, type_name, name, op):
        if counter.try_fire(rule.key, rule.times):
            return rule
    return None
