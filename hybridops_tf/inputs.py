"""Module inputs: merge the input sources, validate them, keep secrets off disk.

Validation happens here, before any lock or engine run (DESIGN §6.1), so a misspelt input
name is exit 2 with nothing changed. Sources merge in one order (DESIGN §7): module defaults
< stack inputs < --inputs file < --var. A value leaves in the clear only through
`ResolvedInputs.engine_env()`, the engine's TF_VAR_ environment; everything that is stored
or shown says "<redacted>" for sensitive variables, and `digest()` only hashes them.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.declarations import (
    OutputSpec,
    VariableSpec,
    read_outputs,
    read_variables,
    reason,
    remember,
)
from hybridops_tf.errors import UsageError
from hybridops_tf.redact import REDACTED, redact_argv, redact_mapping

__all__ = [
    "REDACTED", "OutputSpec", "ResolvedInputs", "VariableSpec", "dump_yaml", "load_inputs_file",
    "parse_var_option", "parse_var_options", "read_outputs", "read_variables", "redact_argv", "remember", "resolve_inputs",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_HCL_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def parse_var_option(text: str) -> tuple[str, Any]:
    """Split `--var NAME=VALUE`, reading VALUE as YAML so `count=3` is a number.

    An empty VALUE is the empty string, as with `tofu -var name=`. Errors never echo VALUE:
    it may be a secret, and CI logs keep stderr.
    """
    name, eq, raw = text.partition("=")
    name = name.strip()
    if not eq or not _NAME.match(name):
        shown = f"{name}=..." if eq else text
        raise UsageError(f"--var {shown!r}: expected NAME=VALUE with a variable name, "
                         "e.g. --var size=large")
    if not raw.strip():
        return name, raw
    try:
        import yaml

        value = yaml.safe_load(raw)
    except RecursionError:
        raise UsageError(f"--var {name}=...: value is nested too deeply") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"--var {name}=...: value is not valid YAML ({_yaml_problem(exc)}); "
                         f"quote it: --var '{name}=\"...\"'") from exc
    return name, plain_value(value, f"--var {name}")


def parse_var_options(texts: Iterable[str], specs: Mapping[str, VariableSpec]) -> dict[str, Any]:
    """`--var` values by name: VALUE is YAML, except where YAML 1.1 would betray a text.

    For a `string` or untyped variable the engine itself reads `-var` text as a string, so
    a YAML scalar that is not a string (`NO` -> false, `0755` -> 493, `1e3` -> 1000.0) is
    replaced by the text as written: `--var country=NO` means "NO", as with `tofu -var`.
    """
    values: dict[str, Any] = {}
    for text in texts:
        name, value = parse_var_option(text)
        spec = specs.get(name)
        if (spec is not None and spec.type_expr in (None, "string") and value is not None
                and not isinstance(value, (str, list, dict))):
            value = text.partition("=")[2]
        values[name] = value
    return values


def load_inputs_file(path: Path) -> dict[str, Any]:
    """Read an `--inputs` file: a YAML mapping of variable names to values (empty = none)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read inputs file {path}: {reason(exc)}") from exc
    try:
        import yaml

        data = yaml.safe_load(text)
    except RecursionError:
        raise UsageError(f"inputs file {path} is nested too deeply") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"inputs file {path} is not valid YAML: {_yaml_problem(exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"inputs file {path} must be a YAML mapping of variable names to "
                         f"values, not a {type(data).__name__}: write `name: value` lines")
    plain: dict[str, Any] = plain_value(data, f"inputs file {path}")
    return plain


MAX_VALUES = 100_000  # YAML aliases can expand a 1 KB file into billions of values


def plain_value(value: Any, where: str, budget: list[int] | None = None) -> Any:
    """Reduce YAML's types to what an engine can receive: dates become ISO text.

    Every value counts against a budget, so an alias bomb is refused, not expanded.
    """
    budget = budget if budget is not None else [MAX_VALUES]
    budget[0] -= 1
    if budget[0] < 0:
        raise UsageError(f"{where}: more than {MAX_VALUES} values (YAML aliases?); refused")
    if isinstance(value, str) and "\0" in value:
        raise UsageError(f"{where}: a string holds a NUL character, which no engine can receive")
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [plain_value(item, where, budget) for item in value]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise UsageError(f"{where}: key {key!r} is not a string; quote it")
        return {key: plain_value(item, where, budget) for key, item in value.items()}
    raise UsageError(f"{where}: a YAML {type(value).__name__} cannot be passed to the engine; "
                     "use a string, number, bool, list or map")


@dataclass(frozen=True)
class ResolvedInputs:
    """The merged inputs of one run, with every safe way to use them."""

    values: dict[str, Any]  # defaults and explicit inputs, in the clear: engine only
    explicit: dict[str, Any]  # only what a source gave; defaults stay in the HCL
    sensitive_names: frozenset[str]
    literal_names: frozenset[str] = frozenset()  # variables whose TF_VAR_ is plain text

    def redacted(self) -> dict[str, Any]:
        """Every value, sensitive ones as "<redacted>": resolved.inputs.yml and display."""
        return redact_mapping(self.values, self.sensitive_names)

    def rerun_inputs(self) -> dict[str, Any]:
        """The explicit inputs, sensitive ones as "<redacted>": rerun.inputs.yml."""
        return redact_mapping(self.explicit, self.sensitive_names)

    def engine_env(self) -> dict[str, str]:
        """TF_VAR_<name> for every explicit input, secrets included: never a file or argv."""
        return {f"TF_VAR_{name}": _literal(value) if name in self.literal_names else _hcl(value)
                for name, value in self.explicit.items()}

    def digest(self) -> str:
        """sha256 of the explicit inputs, order-independent: `stack --resume` compares it."""
        canonical = json.dumps(self.explicit, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False, allow_nan=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def resolve_inputs(
    specs: Mapping[str, VariableSpec],
    *,
    stack_inputs: Mapping[str, Any] | None = None,
    inputs_file: Mapping[str, Any] | None = None,
    var_options: Mapping[str, Any] | None = None,
    module_dir: str | Path = "the module",
    stack_source: str = "stack inputs",
    inputs_file_source: str = "--inputs",
    var_source: str = "--var",
) -> ResolvedInputs:
    """Merge defaults < stack inputs < --inputs < --var and refuse what the engine would not take.

    The *_source labels name each source in errors (e.g. "--inputs prod.yml").
    """
    declared = ", ".join(sorted(specs)) or "no variables"
    explicit: dict[str, Any] = {}
    origin: dict[str, str] = {}
    sources = ((stack_source, stack_inputs), (inputs_file_source, inputs_file),
               (var_source, var_options))
    for source, given in sources:
        for name, value in (given or {}).items():
            if name not in specs:
                raise UsageError(
                    f"unknown input {name!r} in {source} (module declares: {declared})")
            explicit[name], origin[name] = copy.deepcopy(value), source
    missing = [name for name in sorted(specs) if specs[name].required and name not in explicit]
    if len(missing) == 1:
        raise UsageError(f"missing required input {missing[0]!r} for {module_dir}: "
                         f"pass --var {missing[0]}=... or add it to --inputs")
    if missing:
        raise UsageError(f"missing required inputs {', '.join(map(repr, missing))} for "
                         f"{module_dir}: pass --var NAME=... for each or add them to --inputs")
    for name, value in explicit.items():
        _check_transport(specs[name], value, origin[name])
    values = {n: copy.deepcopy(s.default) for n, s in specs.items() if not s.required} | explicit
    return ResolvedInputs(
        values=values,
        explicit=explicit,
        sensitive_names=frozenset(name for name, spec in specs.items() if spec.sensitive),
        literal_names=frozenset(name for name, spec in specs.items() if spec.takes_literal),
    )


def _check_transport(spec: VariableSpec, value: Any, source: str) -> None:
    """Refuse values that would reach the engine as something else than the user meant."""
    name = spec.name
    if _has_nul(value):
        raise UsageError(f"input '{name}' from {source} holds a NUL character, which no engine can receive")
    if value == REDACTED:
        raise UsageError(f"input '{name}' from {source} is the placeholder {REDACTED!r} "
                         f"(secrets are never stored): pass the real value with --var {name}=...")
    if not spec.takes_literal or not (value is None or isinstance(value, (list, dict))):
        return
    kind = "null" if value is None else "a list" if isinstance(value, list) else "a map"
    typed = f"has type {spec.type_expr}" if spec.type_expr else "declares no type"
    raise UsageError(f"input '{name}' from {source} is {kind}, but variable '{name}' {typed}, "
                     "so the engine would read it as text: pass a plain value or declare "
                     "a matching type (e.g. type = any)")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


def _literal(value: Any) -> str:
    """TF_VAR_ text for string/number/bool/untyped variables: no quotes, HCL spellings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _hcl(value: Any) -> str:
    """TF_VAR_ text for collection/`any` variables: an HCL expression.

    JSON is nearly HCL, but HCL would interpolate `${` inside strings and lacks JSON's
    `\\b`/`\\f` escapes, so strings are written here.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        escaped = "".join(_HCL_ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch)
                          for ch in value)
        return '"' + escaped.replace("${", "$${").replace("%{", "%%{") + '"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_hcl(str(k))} = {_hcl(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_hcl(item) for item in value) + "]"


def dump_yaml(data: Mapping[str, Any]) -> str:
    """Deterministic YAML for resolved.inputs.yml and rerun.inputs.yml (diffable runs)."""
    if not data:
        return "{}\n"  # the common no-inputs case, without importing yaml (~15 ms)
    import yaml

    return yaml.safe_dump(dict(data), sort_keys=True, default_flow_style=False, allow_unicode=True)


def _yaml_problem(exc: Any) -> str:
    """Where YAML failed, never what it read: PyYAML's problem text quotes the token
    (an alias, a tag), and the value may be a secret."""
    mark = getattr(exc, "problem_mark", None)
    return f"at line {mark.line + 1}, column {mark.column + 1}" if mark else "unparsable"
