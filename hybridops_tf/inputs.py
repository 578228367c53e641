"""Module inputs: read declared variables, merge the input sources, keep secrets off disk.

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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.errors import UsageError
from hybridops_tf.redact import REDACTED, redact_argv, redact_mapping

__all__ = [
    "REDACTED", "OutputSpec", "ResolvedInputs", "VariableSpec", "dump_yaml", "load_inputs_file",
    "parse_var_option", "read_outputs", "read_variables", "redact_argv", "resolve_inputs",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
# Terraform/OpenTofu read TF_VAR_x as raw text for these types and for untyped variables,
# and as an HCL expression for every other type constraint (configs/named_values.go).
_LITERAL_TYPES = frozenset({"string", "number", "bool"})
_HCL_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass(frozen=True)
class VariableSpec:
    """One `variable` block: enough to validate, redact and encode an input for it."""

    name: str
    required: bool  # no `default` attribute at all; `default = null` is optional
    default: Any = None
    sensitive: bool = False
    type_expr: str | None = None  # e.g. "string", "map(string)"; None when untyped
    description: str | None = None

    @property
    def takes_literal(self) -> bool:
        """True when the engine reads TF_VAR_<name> as plain text, not as an HCL expression."""
        return self.type_expr is None or self.type_expr in _LITERAL_TYPES


@dataclass(frozen=True)
class OutputSpec:
    """One `output` block; stack wiring checks names, records hide sensitive values."""

    name: str
    sensitive: bool = False


_Module = tuple[dict[str, VariableSpec], dict[str, OutputSpec]]
_CACHE: dict[Path, tuple[tuple[tuple[str, int, int], ...], _Module]] = {}


def read_variables(module_dir: Path, cache_dir: Path | None = None) -> dict[str, VariableSpec]:
    """The variables declared by the module's top-level `*.tf` files, by name.

    With cache_dir, a parse kept on disk (keyed by file names, mtimes and sizes) is used,
    so a hyops process can skip python-hcl2 entirely; `remember` writes it.
    """
    return dict(_load_module(module_dir, cache_dir)[0])


def remember(module_dir: Path, cache_dir: Path) -> None:
    """Keep this process's parse of module_dir on disk. Called once the run's inputs are
    valid: a refused input (exit 2) must leave the runtime root untouched."""
    directory = Path(module_dir).resolve()
    cached = _CACHE.get(directory)
    if cached is not None and (directory, cache_dir) not in _ON_DISK:
        _write_disk_cache(cache_dir, directory, cached[0], cached[1])
        _ON_DISK.add((directory, cache_dir))


def read_outputs(module_dir: Path, cache_dir: Path | None = None) -> dict[str, OutputSpec]:
    """The outputs declared by the module's top-level `*.tf` files, by name."""
    return dict(_load_module(module_dir, cache_dir)[1])


_DISK_CACHE_VERSION = 1
_ON_DISK: set[tuple[Path, Path]] = set()  # (module dir, cache dir) already holding this parse


def _disk_cache_path(cache_dir: Path, directory: Path) -> Path:
    return cache_dir / (hashlib.sha256(str(directory).encode()).hexdigest()[:32] + ".json")


def _read_disk_cache(cache_dir: Path, directory: Path, fingerprint: tuple[Any, ...]) -> _Module | None:
    try:
        doc = json.loads(_disk_cache_path(cache_dir, directory).read_text(encoding="utf-8"))
        if doc.get("schema_version") != _DISK_CACHE_VERSION or doc.get("fingerprint") != [
            list(f) for f in fingerprint
        ]:
            return None
        variables = {n: VariableSpec(**v) for n, v in doc["variables"].items()}
        outputs = {n: OutputSpec(**o) for n, o in doc["outputs"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return variables, outputs


def _write_disk_cache(cache_dir: Path, directory: Path, fingerprint: tuple[Any, ...], module: _Module) -> None:
    """Best effort. A sensitive variable's default is stored as REDACTED: it is only ever
    shown redacted (defaults are not passed to the engine), and secrets never touch disk."""
    from dataclasses import asdict

    from hybridops_tf.fsutil import atomic_write_text

    variables = {}
    for name, spec in module[0].items():
        doc = asdict(spec)
        if spec.sensitive and not spec.required:
            doc["default"] = REDACTED
        variables[name] = doc
    try:
        text = json.dumps({"schema_version": _DISK_CACHE_VERSION, "directory": str(directory),
                           "fingerprint": [list(f) for f in fingerprint], "variables": variables,
                           "outputs": {n: asdict(o) for n, o in module[1].items()}})
        atomic_write_text(_disk_cache_path(cache_dir, directory), text)
    except (OSError, TypeError, ValueError):
        pass  # a default JSON cannot hold, or an unwritable cache: parse again next time


def _load_module(module_dir: Path, cache_dir: Path | None = None) -> _Module:
    """Parse once per content: a stack run asks for the same module many times."""
    directory = Path(module_dir).resolve()
    if not directory.is_dir():
        raise UsageError(f"module directory {directory} does not exist: check MODULE_DIR")
    try:
        files = sorted(p for p in directory.glob("*.tf") if p.is_file())
        fingerprint = tuple((p.name, s.st_mtime_ns, s.st_size) for p in files for s in [p.stat()])
    except OSError as exc:
        raise UsageError(f"cannot read module directory {directory}: {exc.strerror}") from exc
    if not files:
        raise UsageError(f"module directory {directory} holds no .tf files: check MODULE_DIR")
    cached = _CACHE.get(directory)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    module = _read_disk_cache(cache_dir, directory, fingerprint) if cache_dir is not None else None
    if module is not None and cache_dir is not None:
        _ON_DISK.add((directory, cache_dir))
    else:
        _ON_DISK.difference_update({k for k in _ON_DISK if k[0] == directory})
        module = _build_module([(path, _parse_hcl(path)) for path in files])
    _CACHE[directory] = (fingerprint, module)
    return module


def _parse_hcl(path: Path) -> dict[str, Any]:
    """One file in python-hcl2's dict form, with string values unquoted.

    python-hcl2 8.x keeps the quotes of strings (and always of block labels) unless asked
    with `strip_string_quotes` (8.1+); 7.x and older strip them. Imported here because
    python-hcl2 and lark cost ~0.2 s and `hyops --help` must not pay it.
    """
    import hcl2

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {_reason(exc)}") from exc
    options = _serialization_options()
    try:
        if options is not None:
            return hcl2.loads(text, serialization_options=options)
        parsed = hcl2.loads(text)
    except Exception as exc:  # lark's parse errors and python-hcl2's own, alike
        raise UsageError(f"cannot parse {path}: {_reason(exc)}; fix the HCL syntax") from exc
    return _unquote(parsed)  # 8.0 keeps quotes and has no option to drop them


def _serialization_options() -> Any:
    try:
        from hcl2.utils import SerializationOptions
    except ImportError:
        return None
    fields = getattr(SerializationOptions, "__dataclass_fields__", {})
    wanted = {"with_comments": False, "explicit_blocks": False, "preserve_heredocs": False,
              "preserve_scientific_notation": False, "strip_string_quotes": True}
    if "strip_string_quotes" not in fields:
        return None
    return SerializationOptions(**{k: v for k, v in wanted.items() if k in fields})


def _unquote(value: Any) -> Any:
    """Drop the quotes python-hcl2 8.x keeps: on labels always, on values when unasked."""
    if isinstance(value, list):
        return [_unquote(v) for v in value]
    if isinstance(value, dict):
        return {_unquote(k): _unquote(v) for k, v in value.items()}
    if not isinstance(value, str) or len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return value
    try:
        return str(json.loads(value))  # HCL's common escapes are JSON's
    except ValueError:
        return value[1:-1]


def _build_module(parsed: list[tuple[Path, dict[str, Any]]]) -> _Module:
    """Merge blocks across files; override files are applied last, as the engine does."""
    merged: dict[str, dict[str, dict[str, Any]]] = {"variable": {}, "output": {}}
    first_seen: dict[tuple[str, str], Path] = {}
    for path, doc in sorted(parsed, key=lambda item: (_is_override(item[0]), item[0].name)):
        for kind, blocks in merged.items():
            for name, body in _blocks(doc, kind):
                if name in blocks and not _is_override(path):
                    where = f"{first_seen[kind, name].name} and {path.name} in {path.parent}"
                    raise UsageError(f"{kind} '{name}' is declared twice ({where}): keep one")
                first_seen.setdefault((kind, name), path)
                blocks.setdefault(name, {}).update(body)
    variables = {
        name: VariableSpec(
            name=name,
            required="default" not in body,
            default=None if body.get("default") == "${null}" else body.get("default"),
            sensitive=_as_bool(body.get("sensitive")),
            type_expr=_expression(body.get("type")),
            description=body.get("description"),
        )
        for name, body in merged["variable"].items()
    }
    outputs = {name: OutputSpec(name, _as_bool(body.get("sensitive")))
               for name, body in merged["output"].items()}
    return variables, outputs


def _is_override(path: Path) -> bool:
    return path.name == "override.tf" or path.name.endswith("_override.tf")


def _blocks(doc: Mapping[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for entry in doc.get(kind) or []:
        for label, body in (entry.items() if isinstance(entry, Mapping) else ()):
            if not label.startswith("__") and isinstance(body, Mapping):
                yield _unquote(label), {k: v for k, v in body.items() if not k.startswith("__")}


def _as_bool(value: Any) -> bool:
    return str(value).strip().strip('"').lower() in {"true", "${true}"}


def _expression(value: Any) -> str | None:
    text = None if value is None else str(value).strip()
    return text[2:-1].strip() if text and text.startswith("${") and text.endswith("}") else text


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


def load_inputs_file(path: Path) -> dict[str, Any]:
    """Read an `--inputs` file: a YAML mapping of variable names to values (empty = none)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read inputs file {path}: {_reason(exc)}") from exc
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


def _reason(exc: BaseException) -> str:
    """One line from an exception: lark's messages run to a dozen lines."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__
