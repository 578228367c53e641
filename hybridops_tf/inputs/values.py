"""Module inputs: merge the input sources, validate them, keep secrets off disk.

Validation happens here, before any lock or engine run (docs/contract.md: Inputs), so a misspelt input
name is exit 2 with nothing changed. Sources rank as the engine ranks them, lowest first:
variable defaults < the caller's TF_VAR_ environment < terraform.tfvars <
terraform.tfvars.json < *.auto.tfvars(.json) in lexical order < explicit inputs (stack inputs,
inputs_from wiring, then --inputs/--var-file files and --var in the order given). The engine
reads the first ones itself; hyops only reads them to check and record what the engine will
use. The explicit ones leave in the clear only through `ResolvedInputs.var_file()`: one
tfvars text that the engine reads as `-var-file=/dev/fd/0` from a pipe (engine/runner.py),
so they keep -var-file precedence and never reach argv, the environment or a disk file.
Everything stored or shown says "<redacted>" for sensitive variables and "<ephemeral>" for
ephemeral ones (`ephemeral = true`, Terraform >= 1.10); `digest(key)` only hashes sensitive
values, keyed (HMAC) so that a record and a guess list never recover a secret, and leaves
ephemeral values out (the engine keeps them nowhere: a new token is no change).
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from decimal import Decimal
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.base.redact import (
    EPHEMERAL,
    PLACEHOLDERS,
    REDACTED,
    is_placeholder,
    placeholder,
    redact_argv,
    redact_mapping,
)
from hybridops_tf.inputs.declarations import OutputSpec, VariableSpec, read_outputs, read_variables, reason, remember
from hybridops_tf.inputs.types import canonical, parse_type

__all__ = [
    "DIGEST_PREFIX", "EPHEMERAL", "MIN_DIGEST_KEY_BYTES", "PLACEHOLDERS", "REDACTED", "CliInput", "InputLayer",
    "MissingInputError", "OutputSpec", "ResolvedInputs",
    "VariableSpec", "dump_yaml", "load_inputs_file", "module_layers", "parse_var_option", "parse_var_options",
    "StackInputs", "read_outputs", "read_variables", "redact_argv", "remember", "resolve_inputs",
    "split_engine_flags",
]

DIGEST_PREFIX = "hmac-sha256:v1:"  # inputs_digest scheme; a new scheme gets a new prefix
MIN_DIGEST_KEY_BYTES = 32
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

        value = numbers.yaml_load(raw)
    except RecursionError:
        raise UsageError(f"--var {name}=...: value is nested too deeply") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"--var {name}=...: value is not valid YAML ({_yaml_problem(exc)}); "
                         f"quote it: --var '{name}=\"...\"'") from exc
    return name, plain_value(value, f"--var {name}")


def parse_var_options(texts: Iterable[str], specs: Mapping[str, VariableSpec],
                      engine_syntax: bool = False) -> dict[str, Any]:
    """`--var` values by name: VALUE is YAML, except where YAML 1.1 would betray a text.

    For a `string` or untyped variable the engine itself reads `-var` text as a string, so
    a YAML value that is not a string (`NO` -> false, `0755` -> 493, `1e3` -> 1000.0,
    `[a]` -> a list) is replaced by the text as written: `--var country=NO` means "NO" and
    `--var note=[a]` means "[a]", as with `tofu -var`; so do `~` and `null`. A YAML-quoted text
    (`--var 'note="a b"'`) is the text inside the quotes, except with engine_syntax (the engine's
    own `-var` given after `--`), where the text is exactly as written, quotes too, as the engine
    takes it. For any other type (list, map, object, `any`) VALUE is read as the engine reads it,
    an HCL expression (`{a = 1}`, `["x"]`), falling back on YAML when it is not a literal one.
    """
    values: dict[str, Any] = {}
    for text in texts:
        name, raw = text.partition("=")[0].strip(), text.partition("=")[2]
        spec = specs.get(name)
        if spec is not None and not spec.takes_literal and raw.strip():
            value = _hcl_or(raw, _NOT_HCL, f"--var {name}")
            values[name] = parse_var_option(text)[1] if value is _NOT_HCL else value
            continue
        name, value = parse_var_option(text)
        if spec is not None and spec.type_expr == "number":
            value = _number_text(name, raw, None if engine_syntax else value)
        elif spec is not None and spec.takes_literal and (
                engine_syntax or value is None or (spec.type_expr in (None, "string") and not isinstance(value, str))):
            value = _primitive(spec.type_expr, raw, value)
        values[name] = value
    return values


_NOT_HCL = object()


def _number_text(name: str, raw: str, quoted: Any) -> Any:
    """`--var NAME=TEXT` for a number variable: the number the engine reads TEXT as (its digits
    kept: base/numbers.py), or, where hyops's YAML took quotes off (`--var 'n="5"'`), the text
    inside them; refused in the engine's words where the engine would refuse it (`0x10`,
    `1_000`, `Inf`), before anything runs."""
    number = numbers.from_engine_text(raw)
    if number is None and isinstance(quoted, str) and quoted != raw:
        number = numbers.from_engine_text(quoted)
    if number is None:
        raise UsageError(f"--var {name}=...: a number is required (variable {name!r} has type number, and "
                         "the engine reads no number in this text): write e.g. 5, -1.5 or 1e400")
    return number


def _primitive(type_expr: str | None, raw: str, parsed: Any) -> Any:
    """`-var` text for a string, bool or untyped variable: the engine takes the text as written
    and converts it to the type itself (`~`, `null`, `NO`, `0755` stay text). `true`/`false` for
    a bool are kept as such, so records show them as the engine will hold them (a number
    variable's text: _number_text)."""
    if type_expr == "bool" and raw.strip() in ("true", "false"):
        return raw.strip() == "true"
    return raw


def _hcl_or(text: str, fallback: Any, where: str) -> Any:
    """`-var`/`TF_VAR_` text for a variable of a collection or structural type (or `any`): an HCL
    expression, as the engine reads it (`{a = 1}`, `["x", "$${y}"]`), when it is a literal one;
    else `fallback` (YAML's reading, or the text as written)."""
    from hybridops_tf.inputs import hcl_values

    try:
        value = hcl_values.parse_values(f"v = {text}\n", where).get("v", fallback)
    except UsageError:
        return fallback
    value = _constants(value)
    return fallback if hcl_values.has_expression(value) else value


def load_inputs_file(path: Path) -> dict[str, Any]:
    """Read an `--inputs`/`--var-file` file, by its name as the engine would: `*.tfvars` is
    HCL, `*.json` is JSON (a `.tfvars.json`), anything else (`.yml`, `.yaml`) a YAML mapping
    of variable names to values (empty = none)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read inputs file {path}: {reason(exc)}") from exc
    name = Path(path).name
    if name.endswith(".json"):
        return _json_inputs(text, path)
    if name.endswith(".tfvars"):
        return _hcl_inputs(text, path, strict=True)
    if [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")] in ([], ["{}"]):
        return {}  # no values (a rerun.inputs.yml of a module without inputs): yaml, ~15 ms, is not loaded
    try:
        import yaml

        data = numbers.yaml_load(text)
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


def _json_inputs(text: str, path: Path | str) -> dict[str, Any]:
    try:
        data = numbers.loads(text) if text.strip() else {}
    except RecursionError:
        raise UsageError(f"inputs file {path} is nested too deeply") from None
    except ValueError as exc:
        raise UsageError(f"inputs file {path} is not valid JSON: {reason(exc)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"inputs file {path} must be a JSON object of variable names to values, "
                         f"not a {type(data).__name__}")
    plain: dict[str, Any] = plain_value(data, f"inputs file {path}")
    return plain


def _hcl_inputs(text: str, path: Path | str, strict: bool) -> dict[str, Any]:
    """A `.tfvars` file (HCL attributes), via python-hcl2. A value python-hcl2 hands back
    as `${...}` is an expression: a constant one (`1 + 2`) is evaluated as the engine does
    (inputs/constants.py); any other (a function call, a template) is refused when hyops must
    pass the value on (strict), kept as written otherwise."""
    from hybridops_tf.inputs import hcl_values

    values: dict[str, Any] = {}
    for name, value in hcl_values.parse_values(text, path).items():
        value = _constants(value)
        if strict and hcl_values.has_expression(value):
            raise UsageError(f"inputs file {path}: the value of {name!r} is an expression hyops does "
                             "not evaluate (it evaluates literals and the operators on them, such as "
                             "`1 + 2`, not function calls or templates); write the value it gives")
        values[name] = hcl_values.as_written(value)
    plain: dict[str, Any] = plain_value(values, f"inputs file {path}")
    return plain


def _constants(value: Any) -> Any:
    """`value` with each constant expression python-hcl2 left as `${...}` text evaluated
    (inputs/hcl_values.py marks them as Expressions)."""
    from hybridops_tf.inputs.hcl_values import Expression

    if isinstance(value, list):
        return [_constants(v) for v in value]
    if isinstance(value, dict):
        return {k: _constants(v) for k, v in value.items()}
    if isinstance(value, Expression) and value.startswith("${") and value.endswith("}"):
        from hybridops_tf.inputs.constants import evaluate

        known, result = evaluate(value[2:-1])
        return result if known else value
    return value


MAX_VALUES = 100_000  # YAML aliases can expand a 1 KB file into billions of values


def plain_value(value: Any, where: str, budget: list[int] | None = None) -> Any:
    """Reduce YAML's types to what an engine can receive: dates become ISO text; numbers stay
    numbers (a Number keeps its text), a float that is not finite (YAML's `.inf`) is refused.

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
    if isinstance(value, Decimal) and value.is_finite() or isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, (float, Decimal)):
        raise UsageError(f"{where}: {value} is not a finite number, which no engine takes; "
                         "write a number such as 1.5 or 1e400")
    if isinstance(value, datetime.date):
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


class MissingInputError(UsageError):
    """A required variable no source sets (exit 2, nothing run); `names` says which."""

    def __init__(self, message: str, names: Sequence[str]) -> None:
        super().__init__(message)
        self.names = tuple(names)


@dataclass(frozen=True)
class CliInput:
    """One explicit input on the command line, kept in the order given.

    option is "--var" (text NAME=VALUE), "--inputs" or "--var-file" (text a path; the
    engine's `-var`/`-var-file` after `--` become these).
    """

    option: str
    text: str
    engine_syntax: bool = False  # the engine's own `-var` after `--`: its text read as the engine reads it

    @property
    def label(self) -> str:
        """The source as records name it: `--var`, `--inputs FILE`, `--var-file FILE`."""
        if self.option == "--var":
            return "--var"
        return f"{self.option} {self.text}"


@dataclass(frozen=True)
class InputLayer:
    """The values of one source; layers are merged in order, a later one winning.

    explicit: hyops hands these to the engine (its var file); the others (the caller's
    TF_VAR_, the module's tfvars files) the engine reads itself, hyops only records them.
    strict: an undeclared name is an error, as the engine's `-var`, rather than a warning,
    as the engine gives for a tfvars file. opaque: a file hyops could not read (the engine
    may still): which variables it sets is unknown, so nothing is called missing. unread:
    the names whose value is text the engine evaluates and hyops could not read (a TF_VAR_
    expression such as `[for z in ["a"] : z]`).
    """

    source: str
    values: Mapping[str, Any]
    explicit: bool = True
    strict: bool = True
    opaque: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)  # per-name labels, e.g. inputs_from
    unread: frozenset[str] = frozenset()


class StackInputs(dict[str, Any]):
    """A stack member's inputs, with the source of those that are not plain `stack` inputs
    (e.g. "inputs_from network.network_id"): what resolved.inputs.yml then names."""

    def __init__(self, values: Mapping[str, Any], sources: Mapping[str, str]) -> None:
        super().__init__(values)
        self.sources = dict(sources)


ENGINE_FLAGS = {"-var": "--var", "--var": "--var", "-var-file": "--var-file", "--var-file": "--var-file"}


def split_engine_flags(passthrough: Sequence[str]) -> tuple[list[CliInput], list[str]]:
    """Take the engine's `-var NAME=V` and `-var-file F` (either dash, `=` or a separate
    word) out of the `--` passthrough: they become inputs like `--var`/`--var-file`, in
    their position, so the record knows them and one var file carries them all."""
    found: list[CliInput] = []
    rest: list[str] = []
    args = list(passthrough)
    i = 0
    while i < len(args):
        flag, eq, value = args[i].partition("=")
        option = ENGINE_FLAGS.get(flag)
        if option is None:
            rest.append(args[i])
        else:
            if not eq:
                if i + 1 >= len(args):
                    raise UsageError(f"{flag} after -- needs a value, e.g. {flag} "
                                     + ("name=value" if option == "--var" else "prod.tfvars"))
                i += 1
                value = args[i]
            found.append(CliInput(option, value, engine_syntax=flag in ("-var", "--var")))
        i += 1
    return found, rest


MODULE_VAR_FILES = ("terraform.tfvars", "terraform.tfvars.json")


def module_var_files(directory: Path) -> list[str]:
    """The var files the engine reads from a root module directory on its own, in its order:
    terraform.tfvars, terraform.tfvars.json, then *.auto.tfvars and *.auto.tfvars.json in
    lexical order of their names."""
    try:
        autos = sorted(p.name for p in directory.iterdir()
                       if p.name.endswith((".auto.tfvars", ".auto.tfvars.json")) and p.is_file())
    except OSError:
        autos = []
    return [n for n in MODULE_VAR_FILES if (directory / n).is_file()] + autos


def module_layers(directory: Path, specs: Mapping[str, VariableSpec],
                  environ: Mapping[str, str] | None = None) -> list[InputLayer]:
    """What the engine reads on its own, lowest first: the caller's TF_VAR_<name> for
    declared names (others it ignores), terraform.tfvars, terraform.tfvars.json, then
    *.auto.tfvars and *.auto.tfvars.json in lexical order of their names. A file hyops
    cannot parse is an opaque layer; the engine reports it if it cannot either."""
    env = os.environ if environ is None else environ
    from_env = {name: _env_value(spec, env[f"TF_VAR_{name}"]) for name, spec in specs.items()
                if f"TF_VAR_{name}" in env}
    unread = frozenset(n for n, v in from_env.items() if v is _UNREAD)
    from_env.update({n: env[f"TF_VAR_{n}"] for n in unread})  # its text, as the records show it
    layers = [InputLayer("env", from_env, explicit=False, strict=False, unread=unread)]
    directory = Path(directory)
    for name in module_var_files(directory):
        path = directory / name
        try:
            text = path.read_text(encoding="utf-8")
            values = _json_inputs(text, path) if name.endswith(".json") else _hcl_inputs(text, path, strict=False)
        except (OSError, UnicodeDecodeError, UsageError):
            layers.append(InputLayer(name, {}, explicit=False, strict=False, opaque=True))
            continue
        layers.append(InputLayer(name, values, explicit=False, strict=False))
    return layers


def _env_value(spec: VariableSpec, text: str) -> Any:
    """TF_VAR_ text as the engine reads it: as written for string/number/bool/untyped
    variables, an HCL expression for the others (kept as written if hyops cannot read it),
    so a rerun that passes it in a var file gives the engine the same value."""
    if spec.type_expr == "number" and (number := numbers.from_engine_text(text)) is not None:
        return number  # the engine's number, every digit kept; other text it refuses itself
    if spec.takes_literal:
        return text
    return _hcl_or(text, _UNREAD, f"TF_VAR_{spec.name}")


_UNREAD = object()  # TF_VAR_ text hyops could not read as a literal (module_layers keeps the text)


@dataclass(frozen=True)
class ResolvedInputs:
    """The merged inputs of one run, with every safe way to use them."""

    values: dict[str, Any]  # every value the engine will use, in the clear: never stored
    explicit: dict[str, Any]  # what hyops passes in its var file; the rest the engine reads itself
    sensitive_names: frozenset[str]
    sources: Mapping[str, str] = field(default_factory=dict)  # the winning source of each value
    overridden: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # lower sources, per name
    warnings: tuple[str, ...] = ()  # undeclared names in files: the engine only warns too
    ephemeral_names: frozenset[str] = frozenset()  # `ephemeral = true`: never stored, not even digested
    # the caller's TF_VAR_ text for a collection or structural type that hyops cannot read as a
    # literal (`[for z in ["a"] : z]`): the engine evaluates it, hyops holds only the text
    unevaluated: frozenset[str] = frozenset()

    def source_of(self, name: str) -> str:
        return self.sources.get(name, "default")

    def withheld(self, name: str) -> str | None:
        """What is stored instead of `name`'s value ("<ephemeral>", "<redacted>"), or None."""
        return placeholder(name, self.sensitive_names, self.ephemeral_names)

    def redacted(self) -> dict[str, Any]:
        """Every value, sensitive ones as "<redacted>", ephemeral ones as "<ephemeral>": for display."""
        return redact_mapping(self.values, self.sensitive_names, self.ephemeral_names)

    def set_ephemeral(self) -> tuple[str, ...]:
        """The ephemeral variables given a value (any source but their default): the engine wants
        them again to apply a plan it saved, which keeps no ephemeral value."""
        return tuple(sorted(n for n in self.ephemeral_names if n in self.sources))

    def rerun_names(self) -> list[str]:
        """What a rerun needs: the explicit inputs, and values from the caller's TF_VAR_
        (a rerun may run in another shell). Values from the module's tfvars files are not:
        the engine reads those again itself, as they are then; nor a TF_VAR_ expression hyops
        did not evaluate: its text in a var file would be a string, not the engine's value."""
        from_env = {n for n in self.values if self.sources.get(n) == "env" and n not in self.unevaluated}
        return sorted(set(self.explicit) | from_env)

    def rerun_inputs(self) -> dict[str, Any]:
        """rerun.inputs.yml's values, sensitive ones as "<redacted>", ephemeral ones as "<ephemeral>"."""
        return redact_mapping({n: self.values[n] for n in self.rerun_names()}, self.sensitive_names,
                              self.ephemeral_names)

    def var_file(self, only: frozenset[str] | None = None) -> str | None:
        """The explicit inputs (those named in `only`, when given) as one tfvars text, secrets
        included, for the engine's `-var-file=/dev/fd/0` only (never a disk file or argv). HCL,
        not JSON: the engine reads a var file as JSON only when its name ends in `.json`. None
        when empty."""
        chosen = {n: v for n, v in self.explicit.items() if only is None or n in only}
        if not chosen:
            return None
        return "".join(f"{name} = {_hcl(value)}\n" for name, value in chosen.items())

    def resolved_yaml(self, header: str = "") -> str:
        """resolved.inputs.yml: every variable, its value (sensitive: "<redacted>"), the
        source it came from and the lower sources it overrode."""
        shown = self.redacted()
        doc: dict[str, Any] = {}
        for name in sorted(shown):
            entry: dict[str, Any] = {"value": shown[name], "source": self.source_of(name)}
            if self.overridden.get(name):
                entry["overrides"] = list(self.overridden[name])
            doc[name] = entry
        lines = [f"# {line}".rstrip() for line in header.splitlines()]
        lines += ["# Each variable: the value the engine used and its source; sources rank, lowest first:",
                  "#   default < env (TF_VAR_) < terraform.tfvars < terraform.tfvars.json < *.auto.tfvars(.json)",
                  "#   < stack < inputs_from < recorded < --inputs/--var-file files and --var, in the order given.",
                  f"# Sensitive values are {REDACTED}, ephemeral ones {EPHEMERAL}."]
        if not doc:
            return "\n".join(lines) + "\n{}\n"
        return "\n".join(lines) + "\n" + numbers.yaml_dump(doc, sort_keys=False, default_flow_style=False,
                                                            allow_unicode=True)

    def rerun_yaml(self, header: str = "") -> str:
        """rerun.inputs.yml: a plain `--inputs` file (name: value, sensitive "<redacted>"),
        each value with its source in a comment line above it."""
        values = self.rerun_inputs()
        lines = [f"# {line}".rstrip() for line in header.splitlines()]
        lines += ["# The inputs a rerun needs: explicit ones and the caller's TF_VAR_ values; the module's",
                  "# terraform.tfvars and *.auto.tfvars are read again by the engine itself.",
                  f"# Usable as `--inputs`; sensitive values are {REDACTED} and ephemeral ones {EPHEMERAL}:",
                  "# pass them with --var."]
        lines += [f"# {name}: from TF_VAR_{name}, an expression hyops does not evaluate, so not kept here: "
                  f"give TF_VAR_{name} again" for name in sorted(self.unevaluated)]
        text = "\n".join(lines) + "\n"
        if not values:
            return text + "{}\n"
        for name in sorted(values):
            text += f"# {name}: from {self.source_of(name)}\n" + dump_yaml({name: values[name]})
        return text

    def digest(self, key: bytes) -> str:
        """The record's `inputs_digest`, compared by `stack apply --resume`: HMAC-SHA256 of
        the explicit inputs (order-independent), secrets included, under the runtime root's
        random key (run_inputs.digest_key). Unkeyed, a short guess list would find a secret
        from its digest. The versioned prefix keeps an older scheme's digest (a plain
        sha256) from ever matching: such a record is simply not skipped. An ephemeral value
        counts only as given ("<ephemeral>"): nothing of it is kept, and the engine keeps no
        trace of it either (a new token changes nothing applied)."""
        if len(key) < MIN_DIGEST_KEY_BYTES:
            raise ValueError("inputs digest key too short")
        kept = {n: EPHEMERAL if n in self.ephemeral_names else v for n, v in self.explicit.items()}
        canonical = numbers.dumps(kept, sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False, allow_nan=False)  # numbers as their text
        mac = hmac.new(key, canonical.encode("utf-8"), hashlib.sha256).hexdigest()
        return DIGEST_PREFIX + mac


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
    stack_sources: Mapping[str, str] | None = None,
    base_layers: Sequence[InputLayer] = (),
    layers: Sequence[InputLayer] = (),
) -> ResolvedInputs:
    """Merge every source in the engine's order and refuse what the engine would not take.

    Lowest first: defaults < base_layers (the engine's own: env, the module's tfvars files)
    < stack inputs < inputs_file < var_options < layers (the command line's, in order).
    The *_source labels name each source in records and errors (e.g. "--inputs prod.yml");
    stack_sources names single stack inputs (e.g. "inputs_from network.id").
    """
    explicit_layers = [
        InputLayer(stack_source, stack_inputs or {}, sources=stack_sources or {}),
        InputLayer(inputs_file_source, inputs_file or {}, strict=False),
        InputLayer(var_source, var_options or {}),
        *layers,
    ]
    declared = ", ".join(sorted(specs)) or "no variables"
    values = {n: copy.deepcopy(s.default) for n, s in specs.items() if not s.required}
    explicit: dict[str, Any] = {}
    origin: dict[str, str] = {}
    overridden: dict[str, list[str]] = {}
    warnings: list[str] = []
    unread: set[str] = set()  # values the engine evaluates from text hyops could not read
    opaque = False
    for layer in [*base_layers, *explicit_layers]:
        opaque = opaque or layer.opaque
        for name, value in layer.values.items():
            source = layer.sources.get(name, layer.source)
            if name not in specs:
                if layer.strict:
                    raise UsageError(
                        f"unknown input {name!r} in {source} (module declares: {declared})")
                if layer.explicit:
                    warnings.append(f"{source} sets {name!r}, which {module_dir} does not declare: "
                                    "ignored, as the engine does")
                continue
            if name in origin:
                overridden.setdefault(name, []).append(origin[name])
            (unread.add if name in layer.unread else unread.discard)(name)
            values[name], origin[name] = canonical(copy.deepcopy(value), parse_type(specs[name].type_expr)), source
            if layer.explicit:
                explicit[name] = values[name]
            else:
                explicit.pop(name, None)
    missing = [] if opaque else [n for n in sorted(specs) if specs[n].required and n not in origin]
    if len(missing) == 1:
        raise MissingInputError(f"missing required input {missing[0]!r} for {module_dir}: "
                                f"pass --var {missing[0]}=... or add it to --inputs", missing)
    if missing:
        raise MissingInputError(f"missing required inputs {', '.join(map(repr, missing))} for "
                                f"{module_dir}: pass --var NAME=... for each or add them to --inputs", missing)
    for name, value in explicit.items():
        _check_transport(specs[name], value, origin[name])
    return ResolvedInputs(
        values=values,
        explicit=explicit,
        sensitive_names=frozenset(name for name, spec in specs.items() if spec.sensitive),
        ephemeral_names=frozenset(name for name, spec in specs.items() if spec.ephemeral),
        sources=origin,
        overridden={n: tuple(v) for n, v in overridden.items()},
        warnings=tuple(warnings),
        unevaluated=frozenset(unread),
    )


_PRIMITIVE_TYPES = frozenset({"string", "number", "bool"})


def _check_transport(spec: VariableSpec, value: Any, source: str) -> None:
    """Refuse, before anything runs, values the engine would refuse or could not receive."""
    name = spec.name
    if _has_nul(value):
        raise UsageError(f"input '{name}' from {source} holds a NUL character, which no engine can receive")
    if is_placeholder(value):
        raise UsageError(f"input '{name}' from {source} is the placeholder {value!r} "
                         f"(secrets and ephemeral values are never stored): give the real value in the "
                         f"environment, TF_VAR_{name}=..., never on a command line")
    if spec.type_expr not in _PRIMITIVE_TYPES or not isinstance(value, (list, dict)):
        return
    kind = "a list" if isinstance(value, list) else "a map"
    raise UsageError(f"input '{name}' from {source} is {kind}, but variable '{name}' has type "
                     f"{spec.type_expr}, so the engine would refuse it: pass a plain value or "
                     "declare a matching type (e.g. type = any)")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


def _hcl(value: Any) -> str:
    """A value as an HCL expression: the right-hand side of a var-file line (var_file).

    JSON is nearly HCL, but HCL would interpolate `${` inside strings and lacks JSON's
    `\\b`/`\\f` escapes, so strings are written here.
    """
    if isinstance(value, Decimal) or isinstance(value, float):
        return numbers.number_text(value)  # a Number's own text: every digit reaches the engine
    if value is None or isinstance(value, (bool, int)):
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
    return numbers.yaml_dump(dict(data), sort_keys=True, default_flow_style=False, allow_unicode=True)


def _yaml_problem(exc: Any) -> str:
    """Where YAML failed, never what it read: PyYAML's problem text quotes the token
    (an alias, a tag), and the value may be a secret."""
    mark = getattr(exc, "problem_mark", None)
    return f"at line {mark.line + 1}, column {mark.column + 1}" if mark else "unparsable"
