"""Fault rules: make the simulated cloud fail on purpose, without editing any HCL.

HYOPS_SIM_FAULTS names a YAML or JSON file holding a list of rules (or `{rules: [...]}`):

    - {type: sim_vm, op: create, mode: fail_after_create, times: 1}
    - {type: "*", name: demo-net, op: delete, mode: fail_delete}
    - {type: sim_vm, op: create, mode: hang, seconds: 2}
    - {type: sim_vm, op: create, mode: hang, hang_until: release, hang_started: started}
    - {type: sim_vm_restart, op: invoke, mode: fail}

`op: invoke` acts on an action's InvokeAction (sim/actions.py): `fail` answers an error, the
vm is not restarted; `name` matches the name of the vm the action targets.

`op: plan` acts on the engine's PlanResourceChange of an existing object (the plan, then the
re-plan an apply makes just before it calls create/update): a `hang` there lets a test change
the world between the engine's two evaluations of a resource's configuration.

A `hang` sleeps `seconds`, or, with `hang_until: PATH`, waits until PATH exists (polled every
GATE_POLL_SECONDS, bounded by `seconds`, default DEFAULT_GATE_SECONDS), then proceeds as if it
had not hung. `hang_started: PATH` is written when the hang begins, so a test can gate on
both ends of the window instead of sleeping. `at: after` lets a create/update/delete take
effect first and hang before answering (the object exists, the engine has not heard so).
`on_stop` says what a hang does when the engine asks the provider to stop (StopProvider, on
an interrupt), as a Go provider's call does with its cancelled request context: `abort` (the
default) gives up at once, with an error; what was done stays done (`at: after`: the object
changed, the answer is lost); `finish` ignores the stop and hangs on, then proceeds as if it
had not hung (a call the stop cannot cut short: the engine waits for it).
Relative paths are resolved against the directory of the faults file; a relative
HYOPS_SIM_FAULTS itself against the current directory of whoever reads it (the provider
opens it from the engine's working directory, so hyops hands the engine an absolute path).

`times` counts per *run of the faults file*: one run lasts from one write of the file to the
next. The provider cannot see "a command" (the engine starts a fresh provider process for
each phase of one apply, and a stack runs many engines), but every provider process sees
the file's modification time; FaultsFile.run names the run by path and mtime, and the count
is kept in the sim cloud under `<run>/<rule key>`. So the commands that use an unchanged file
share one count (a `times: 1` fault fires once, the recovery after it sees none), and writing
the file again, or `touch`ing it, re-arms every rule.

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

from hybridops_tf.sim.kinds import ACTION_TYPES, RESOURCE_TYPES

FAULTS_ENV = "HYOPS_SIM_FAULTS"
DEFAULT_HANG_SECONDS = 30.0
DEFAULT_GATE_SECONDS = 600.0  # the bound of a `hang_until` gate when `seconds` is not given
GATE_POLL_SECONDS = 0.05


class FaultsError(ValueError):
    """A faults file that cannot be used; str() is one line naming the problem."""


class FaultOp(StrEnum):
    CREATE = "create"
    READ = "read"
    UPDATE = "update"
    DELETE = "delete"
    PLAN = "plan"  # the engine's PlanResourceChange: the plan, and the re-plan just before an apply call
    INVOKE = "invoke"  # an action's InvokeAction (type: an action type, e.g. sim_vm_restart)


class FaultMode(StrEnum):
    FAIL_BEFORE_CREATE = "fail_before_create"  # error, nothing created
    FAIL_AFTER_CREATE = "fail_after_create"  # object created, state AND error returned
    LOSE_RESPONSE = "lose_response"  # object created, error, no state returned
    HANG = "hang"  # sleep `seconds` (or wait for `hang_until`), then proceed normally
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
_FIELDS = ("type", "name", "op", "mode", "times", "seconds", "hang_until", "hang_started", "at",
           "on_stop")
_HANG_ONLY = ("seconds", "hang_until", "hang_started", "at", "on_stop")


class HangAt(StrEnum):
    BEFORE = "before"  # hang before the call does anything (the default)
    AFTER = "after"  # do what the call does, then hang before answering


class OnStop(StrEnum):
    ABORT = "abort"  # StopProvider ends the hang: the call gives up with an error
    FINISH = "finish"  # the hang ignores StopProvider: the call runs to its end


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
    hang_until: Path | None = None
    hang_started: Path | None = None
    at: HangAt = HangAt.BEFORE
    on_stop: OnStop = OnStop.ABORT

    def matches(self, type_name: str, name: str | None, op: str) -> bool:
        """True when this rule applies to `op` on the resource `type_name`/`name`."""
        if self.op != op or self.type not in ("*", type_name):
            return False
        return self.name is None or (name is not None and fnmatchcase(name, self.name))

    @property
    def key(self) -> str:
        """The rule's identity: position plus content (claim adds the faults file run)."""
        fields: list[Any] = [
            self.type, self.name, str(self.op), str(self.mode), self.times, self.seconds
        ]
        if self.hang_until or self.hang_started or self.at is not HangAt.BEFORE:
            fields += [str(self.hang_until), str(self.hang_started), str(self.at)]
        if self.on_stop is not OnStop.ABORT:  # the default adds nothing: old keys stay valid
            fields.append(str(self.on_stop))
        body = json.dumps(fields)
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
        names = ", ".join(m.value for m in allowed)
        raise FaultsError(f"{where}: unknown {what} {raw!r} (expected one of: {names})") from None


def _gate_path(raw: Mapping[str, Any], field: str, where: str, base: Path | None) -> Path | None:
    value = raw.get(field)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FaultsError(f"{where}: {field!r} must be a non-empty path, got {value!r}")
    path = Path(value)
    return path if path.is_absolute() or base is None else base / path


def parse_rule(raw: Any, index: int, base: Path | None = None) -> FaultRule:
    """Validate one rule mapping; FaultsError says which rule and which field is wrong.

    `base` is the directory relative `hang_until`/`hang_started` paths are resolved in
    (the faults file's directory); None keeps them as written.
    """
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
    if type_name != "*" and type_name not in RESOURCE_TYPES + ACTION_TYPES:
        raise FaultsError(
            f"{where}: unknown type {type_name!r} (expected '*' or one of: "
            f"{', '.join(RESOURCE_TYPES + ACTION_TYPES)})"
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
    if (type_name in ACTION_TYPES) != (op is FaultOp.INVOKE) and type_name != "*":
        raise FaultsError(f"{where}: op invoke is for action types ({', '.join(ACTION_TYPES)}), "
                          f"and an action type takes op invoke only")
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise FaultsError(f"{where}: 'name' must be a non-empty string")
    times = raw.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise FaultsError(f"{where}: 'times' must be a positive integer, got {times!r}")
    for field in _HANG_ONLY:
        if field in raw and mode is not FaultMode.HANG:
            raise FaultsError(f"{where}: {field!r} only applies to mode hang")
    until = _gate_path(raw, "hang_until", where, base)
    started = _gate_path(raw, "hang_started", where, base)
    if until is not None and until == started:
        raise FaultsError(f"{where}: 'hang_started' and 'hang_until' name the same file")
    seconds = raw.get("seconds", DEFAULT_HANG_SECONDS if until is None else DEFAULT_GATE_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise FaultsError(f"{where}: 'seconds' must be a number >= 0, got {seconds!r}")
    at = _choice(raw.get("at", HangAt.BEFORE.value), HangAt, "at", where)
    if at is HangAt.AFTER and op in (FaultOp.READ, FaultOp.PLAN, FaultOp.INVOKE):
        raise FaultsError(f"{where}: 'at: after' applies to create, update and delete")
    on_stop = _choice(raw.get("on_stop", OnStop.ABORT.value), OnStop, "on_stop", where)
    return FaultRule(index, type_name, op, mode, name, times, float(seconds), until, started, at,
                     on_stop)


def parse_rules(data: Any, base: Path | None = None) -> list[FaultRule]:
    """Validate a loaded document: a list of rules, `{rules: [...]}`, or empty (no rules).

    `base`: where relative gate paths are resolved (see parse_rule).
    """
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
    return [parse_rule(raw, i, base) for i, raw in enumerate(data, start=1)]


@dataclass(frozen=True)
class FaultsFile:
    """A faults file as read: its absolute path, which run of it this is, and its rules.

    `run` is `<8 hex of the path>@<mtime in ns>`: the same for every provider process and
    command that reads the file unchanged, new each time the file is written (or touched).
    """

    path: Path
    run: str
    rules: list[FaultRule]

    def counter_key(self, rule: FaultRule) -> str:
        """Where this run's firings of `rule` are counted (see `claim`)."""
        return run_key(self.run, rule)


def run_key(run: str, rule: FaultRule) -> str:
    """The fire-count key of `rule` in the faults file run `run` ("" = not tied to a file)."""
    return f"{run}/{rule.key}" if run else rule.key


def resolve_faults_path(path: str | Path, base: Path | None = None) -> Path:
    """The absolute file a faults path names: a relative one is taken from `base` (default
    the current directory, as `open` in the reading process takes it). Not normalised:
    `..` is left to the file system, as it is when the file is opened."""
    given = Path(path)
    if given.is_absolute():
        return given
    return (base if base is not None else Path.cwd()) / given


def _read_text(path: Path) -> tuple[str, int]:
    """The file's text and its mtime (ns), from one open file: they belong together."""
    try:
        with path.open("rb") as handle:
            written_ns = os.fstat(handle.fileno()).st_mtime_ns
            raw = handle.read()
    except OSError as exc:
        raise FaultsError(f"{path}: cannot read faults file ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8"), written_ns
    except UnicodeDecodeError:
        raise FaultsError(f"{path}: faults file is not UTF-8 text") from None


def _parse_document(path: Path, text: str) -> Any:
    import yaml  # lazily: most runs have no faults file

    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise FaultsError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise FaultsError(f"{path}: invalid YAML{at}: {problem}") from None


def load_faults(path: str | Path, base: Path | None = None) -> FaultsFile:
    """Read and validate a faults file (a relative path from `base`, default the cwd).

    FaultsError is one line that starts with the absolute path.
    """
    where = resolve_faults_path(path, base)
    text, written_ns = _read_text(where)
    data = _parse_document(where, text)
    try:
        rules = parse_rules(data, where.parent)
    except FaultsError as exc:
        raise FaultsError(f"{where}: {exc}") from None
    digest = hashlib.sha256(str(where).encode()).hexdigest()[:8]
    return FaultsFile(where, f"{digest}@{written_ns}", rules)


def faults_path_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    """The faults file named by HYOPS_SIM_FAULTS, as written (resolve_faults_path makes it
    absolute), or None when no faults are configured."""
    env = os.environ if environ is None else environ
    value = env.get(FAULTS_ENV, "").strip()
    return Path(value) if value else None


def matching(
    rules: Sequence[FaultRule], type_name: str, name: str | None, op: str
) -> list[FaultRule]:
    """Rules that apply to this call, in file order."""
    return [rule for rule in rules if rule.matches(type_name, name, op)]


def claim(
    rules: Sequence[FaultRule],
    counter: FireCounter,
    type_name: str,
    name: str | None,
    op: str,
    run: str = "",
) -> FaultRule | None:
    """The first matching rule that still has firings left in faults file run `run`,
    counted as fired; else None."""
    for rule in matching(rules, type_name, name, op):
        if counter.try_fire(run_key(run, rule), rule.times):
            return rule
    return None
