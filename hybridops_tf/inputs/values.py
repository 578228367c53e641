"""Module inputs: merge the input sources, validate them, keep secrets off disk (each source
is read in inputs/sources.py).

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
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
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
from hybridops_tf.inputs.declarations import OutputSpec, VariableSpec, read_outputs, read_variables, remember
from hybridops_tf.inputs.sources import (
    hcl_inputs,
    hcl_or,
    json_inputs,
    load_inputs_file,
    parse_var_option,
    parse_var_options,
)
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
_HCL_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


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
            values = json_inputs(text, path) if name.endswith(".json") else hcl_inputs(text, path, strict=False)
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
    return hcl_or(text, _UNREAD, f"TF_VAR_{spec.name}")


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
