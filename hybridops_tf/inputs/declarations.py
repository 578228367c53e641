"""What a module declares: its `variable` and `output` blocks, read as the engine reads them:
`.tf` files with python-hcl2, `.tf.json` files with json (JSON syntax: a block type is an
object, or an array of objects, of labels to bodies, a `"//"` key a comment); OpenTofu's
`.tofu`/`.tofu.json` taking the place of the `.tf`/`.tf.json` file of the same name
(base/config_names.py), only when the engine is OpenTofu (`tofu=True`).

Why separate from values.py: reading HCL (and caching the parse so most hyops processes never
import python-hcl2 and lark, ~0.2 s) is one job; merging and validating the values a run is
given is another. The cache is keyed by the module's configuration file names, mtimes and sizes, in
memory per process and on disk under the runtime root once a run's inputs proved valid.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hybridops_tf.base.config_names import engine_reads, suffix_of
from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.base.redact import placeholder

# Terraform/OpenTofu read TF_VAR_x as raw text for these types and for untyped variables,
# and as an HCL expression for every other type constraint (configs/named_values.go).
_LITERAL_TYPES = frozenset({"string", "number", "bool"})


@dataclass(frozen=True)
class VariableSpec:
    """One `variable` block: enough to validate, redact and encode an input for it."""

    name: str
    required: bool  # no `default` attribute at all; `default = null` is optional
    default: Any = None
    sensitive: bool = False
    type_expr: str | None = None  # e.g. "string", "map(string)"; None when untyped
    description: str | None = None
    ephemeral: bool = False  # `ephemeral = true` (Terraform >= 1.10): no run keeps its value
    nullable: bool = True  # False: `nullable = false` (Terraform >= 1.1): null means the default, or no value

    @property
    def takes_literal(self) -> bool:
        """True when the engine reads TF_VAR_<name> as plain text, not as an HCL expression."""
        return self.type_expr is None or self.type_expr in _LITERAL_TYPES


@dataclass(frozen=True)
class OutputSpec:
    """One `output` block; stack wiring checks names, records hide sensitive values."""

    name: str
    sensitive: bool = False


@dataclass(frozen=True)
class ImportBlock:
    """One `import` block (Terraform >= 1.5) that names a single address: where it adopts what."""

    to: str  # the address, as written
    id: str | None  # the literal id; None: by the provider's identity, or an expression
    file: str  # the file's name in the module directory
    # the literal identity (every value a string, number or bool as written); None: by id, or
    # an identity with an expression in it
    identity: Mapping[str, Any] | None = None

    def names(self) -> str:
        """What the block adopts, for a person: the id, or the identity as `{k=v, ...}`."""
        if self.id is not None or self.identity is None:
            return self.id or "an expression"
        return "identity {" + ", ".join(f"{k}={v}" for k, v in self.identity.items()) + "}"


def read_import_blocks(module_dir: Path, *, tofu: bool = False) -> list[ImportBlock]:
    """The module's `import` blocks that adopt into one address (one with `for_each` names no
    single one), from every file the engine reads (`.tf` and `.tf.json`; OpenTofu's `.tofu`
    too with `tofu`); [] when a file cannot be read or parsed: the engine says what is wrong
    with it. Not cached: asked only when something is missing or a plan failed."""
    found: list[ImportBlock] = []
    try:
        names = engine_reads([p.name for p in Path(module_dir).iterdir() if p.is_file()], tofu)
        docs = [(name, _parse_config(Path(module_dir) / name)) for name in names]
    except (OSError, UsageError):
        return []
    for name, doc in docs:
        for block in doc.get("import") or []:
            if not isinstance(block, Mapping) or "for_each" in block or not (to := _expression(block.get("to"))):
                continue
            ident, identity = block.get("id"), block.get("identity")
            literal = ident if isinstance(ident, str) and ident and "${" not in ident else None
            found.append(ImportBlock(to, literal, name, _literal_map(identity)))
    return found


def _literal_map(value: Any) -> dict[str, Any] | None:
    """An identity written as literals only (None: not a map, empty, or an expression in it)."""
    if not isinstance(value, Mapping) or not value:
        return None
    if not all(isinstance(v, str | int | float | bool) and not (isinstance(v, str) and "${" in v)
               for v in value.values()):
        return None
    return {str(k): v for k, v in value.items()}


def import_targets(module_dir: Path) -> frozenset[str]:
    """The addresses (`to`, as written) the module's `import` blocks adopt an object into, by
    id or by the provider's identity."""
    return frozenset(b.to for b in read_import_blocks(module_dir))


_Module = tuple[dict[str, VariableSpec], dict[str, OutputSpec]]
_CACHE: dict[Path, tuple[tuple[tuple[str, int, int], ...], _Module]] = {}


def read_variables(module_dir: Path, cache_dir: Path | None = None, *, tofu: bool = False) -> dict[str, VariableSpec]:
    """The variables declared by the module's top-level configuration files, by name.

    With cache_dir, a parse kept on disk (keyed by file names, mtimes and sizes) is used,
    so a hyops process can skip python-hcl2 entirely; `remember` writes it.
    """
    return dict(_load_module(module_dir, cache_dir, tofu)[0])


def remember(module_dir: Path, cache_dir: Path) -> None:
    """Keep this process's parse of module_dir on disk. Called once the run's inputs are
    valid: a refused input (exit 2) must leave the runtime root untouched."""
    directory = Path(module_dir).resolve()
    cached = _CACHE.get(directory)
    if cached is not None and (directory, cache_dir) not in _ON_DISK:
        _write_disk_cache(cache_dir, directory, cached[0], cached[1])
        _ON_DISK.add((directory, cache_dir))


def read_outputs(module_dir: Path, cache_dir: Path | None = None, *, tofu: bool = False) -> dict[str, OutputSpec]:
    """The outputs declared by the module's top-level configuration files, by name."""
    return dict(_load_module(module_dir, cache_dir, tofu)[1])


_DISK_CACHE_VERSION = 3  # 2: variables say `ephemeral`; 3: `nullable`
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
    """Best effort. A sensitive (ephemeral) variable's default is stored as "<redacted>"
    ("<ephemeral>"): it is only ever shown so (defaults are not passed to the engine), and
    secrets never touch disk."""
    from dataclasses import asdict

    from hybridops_tf.base.files import atomic_write_text

    variables = {}
    for name, spec in module[0].items():
        doc = asdict(spec)
        withheld = placeholder(name, {name} if spec.sensitive else (), {name} if spec.ephemeral else ())
        if withheld is not None and not spec.required:
            doc["default"] = withheld
        variables[name] = doc
    try:
        text = json.dumps({"schema_version": _DISK_CACHE_VERSION, "directory": str(directory),
                           "fingerprint": [list(f) for f in fingerprint], "variables": variables,
                           "outputs": {n: asdict(o) for n, o in module[1].items()}})
        atomic_write_text(_disk_cache_path(cache_dir, directory), text, durable=False)  # a cache: lost, parsed again
    except (OSError, TypeError, ValueError):
        pass  # a default JSON cannot hold, or an unwritable cache: parse again next time


def _load_module(module_dir: Path, cache_dir: Path | None = None, tofu: bool = False) -> _Module:
    """Parse once per content: a stack run asks for the same module many times."""
    directory = Path(module_dir).resolve()
    if not directory.is_dir():
        raise UsageError(f"module directory {directory} does not exist: check MODULE_DIR")
    try:
        names = engine_reads([p.name for p in directory.iterdir() if p.is_file()], tofu)
        files = [directory / name for name in names]
        fingerprint = tuple((p.name, s.st_mtime_ns, s.st_size) for p in files for s in [p.stat()])
    except OSError as exc:
        raise UsageError(f"cannot read module directory {directory}: {exc.strerror}") from exc
    if not files:
        raise UsageError(f"module directory {directory} holds no .tf files (nor .tf.json{', .tofu' if tofu else ''}): "
                         "check MODULE_DIR")
    cached = _CACHE.get(directory)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    module = _read_disk_cache(cache_dir, directory, fingerprint) if cache_dir is not None else None
    if module is not None and cache_dir is not None:
        _ON_DISK.add((directory, cache_dir))
    else:
        _ON_DISK.difference_update({k for k in _ON_DISK if k[0] == directory})
        module = _build_module([(path, _parse_config(path)) for path in files])
    _CACHE[directory] = (fingerprint, module)
    return module


def _parse_config(path: Path) -> dict[str, Any]:
    """One configuration file in python-hcl2's dict form, whichever its syntax."""
    return _parse_json(path) if path.name.endswith(".json") else _parse_hcl(path)


def _parse_json(path: Path) -> dict[str, Any]:
    """A `.tf.json` file in python-hcl2's dict form (`{"variable": [{name: body}], ...}`): the
    engine's JSON syntax writes a block type as an object of labels to bodies or an array of
    such objects, and a body as an object or an array of objects; `"//"` keys are comments."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {reason(exc)}") from exc
    except ValueError as exc:
        where = f" line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise UsageError(f"cannot parse {path}{where}: {reason(exc)}; fix the JSON syntax "
                         "(`terraform validate` / `tofu validate` says the same)") from exc
    if not isinstance(doc, Mapping):
        raise UsageError(f"cannot parse {path}: the root of a .tf.json file must be an object")
    out: dict[str, Any] = {}
    imports = doc.get("import")
    for body in imports if isinstance(imports, list) else [imports] if imports is not None else []:
        if isinstance(body, Mapping):  # no labels: each body is one block
            out.setdefault("import", []).append({k: v for k, v in body.items() if k != "//"})
    for kind in ("variable", "output"):
        entries = doc.get(kind)
        for entry in entries if isinstance(entries, list) else [entries] if entries is not None else []:
            if not isinstance(entry, Mapping):
                continue
            for label, body in entry.items():
                for one in body if isinstance(body, list) else [body]:
                    if label != "//" and isinstance(one, Mapping):
                        out.setdefault(kind, []).append({label: {k: v for k, v in one.items() if k != "//"}})
    return out


def _parse_hcl(path: Path) -> dict[str, Any]:
    """One file in python-hcl2's dict form, with string values unquoted.

    python-hcl2 8.x keeps the quotes of strings (and always of block labels) unless asked
    with `strip_string_quotes` (8.1+); 7.x and older strip them. Imported here because
    python-hcl2 and lark cost ~0.2 s and `hyops --help` must not pay it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {reason(exc)}") from exc
    return parse_hcl_text(text, path)


def parse_hcl_text(text: str, path: Path | str) -> dict[str, Any]:
    """HCL text in python-hcl2's dict form, strings unquoted (also for `.tfvars` files);
    UsageError naming `path` when it does not parse."""
    options = _serialization_options()
    if options is not None:
        return _loads(text, path, options)
    return _unquote(_loads(text, path, None))  # 8.0 keeps quotes and has no option to drop them


def parse_hcl_raw(text: str, path: Path | str) -> dict[str, Any]:
    """HCL text in python-hcl2's dict form with strings as written: quoted, escapes and heredocs
    kept, for inputs/hcl_values.py to decode as the engine does (python-hcl2 leaves template
    escapes such as `$${` in the strings it unquotes). UsageError naming `path`, as above."""
    return _loads(text, path, _serialization_options(strip_string_quotes=False, preserve_heredocs=True))


def _loads(text: str, path: Path | str, options: Any) -> dict[str, Any]:
    import hcl2
    from lark.exceptions import UnexpectedInput, VisitError

    try:
        if options is not None:
            parsed: dict[str, Any] = hcl2.loads(text, serialization_options=options)
            return parsed
        parsed = hcl2.loads(text)
    except UnexpectedInput as exc:  # not HCL: said as the engine says it, where it is
        raise UsageError(f"cannot parse {path}{_where(exc)}: {_syntax_error(exc)}; fix the HCL syntax "
                         "(`terraform validate` / `tofu validate` says the same)") from exc
    except RecursionError as exc:  # nested beyond the parser's reach
        raise UsageError(f"cannot parse {path}: {reason(exc)}; fix the HCL syntax") from exc
    except VisitError as exc:  # raised inside python-hcl2's transformer
        if isinstance(exc.orig_exc, RuntimeError):  # its verdict on the text: an unterminated template directive
            raise UsageError(f"cannot parse {path}: {reason(exc)}; fix the HCL syntax") from exc
        raise _parser_failed(path, exc.orig_exc) from exc
    except Exception as exc:  # noqa: BLE001 - python-hcl2 failing in its own code: said as such, no traceback
        raise _parser_failed(path, exc) from exc
    return parsed


# lark's terminal names for what python-hcl2's grammar expected, in the characters people type
_TERMINALS = {"RBRACE": "}", "LBRACE": "{", "RSQB": "]", "LSQB": "[", "RPAR": ")", "LPAR": "(",
              "EQ": "=", "COMMA": ",", "COLON": ":", "DBLQUOTE": '"', "NAME": "a name"}


def _where(exc: Any) -> str:
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    if not isinstance(line, int) or line < 1:
        return ""
    return f" line {line}" + (f", column {column}" if isinstance(column, int) and column > 0 else "")


def _syntax_error(exc: Any) -> str:
    """python-hcl2's (lark's) complaint as a person reads it: what was found, what was expected."""
    token = getattr(exc, "token", None)
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    wanted = [_TERMINALS[t] for t in expected if t in _TERMINALS]
    if token is not None and getattr(token, "type", "") == "$END":
        if "}" in wanted:
            return "Unclosed configuration block: there is no closing brace '}' for a block before the end of the file"
        return "unexpected end of file" + (f"; expected {' or '.join(repr(w) for w in wanted[:4])}" if wanted else "")
    text = str(token) if token is not None else str(getattr(exc, "char", "?"))
    found = repr((text.strip().splitlines() or ["?"])[0][:20])
    return f"Invalid syntax: unexpected {found}" + (
        f"; expected {' or '.join(repr(w) for w in wanted[:4])}" if wanted else "")


def _parser_failed(path: Path | str, exc: BaseException) -> UsageError:
    """python-hcl2 broke on text it did not reject as HCL: name the parser, not the user's syntax
    (still exit 2, and still "cannot read" to callers that fall back on the text as written)."""
    return UsageError(f"python-hcl2 failed on {path} ({type(exc).__name__}: {reason(exc)}); this may be "
                      "a python-hcl2 bug rather than an HCL error: the engine's `validate` checks the syntax")


def _serialization_options(strip_string_quotes: bool = True, preserve_heredocs: bool = False) -> Any:
    try:
        from hcl2.utils import SerializationOptions
    except ImportError:
        return None
    fields = getattr(SerializationOptions, "__dataclass_fields__", {})
    wanted = {"with_comments": False, "explicit_blocks": False, "preserve_heredocs": preserve_heredocs,
              "preserve_scientific_notation": False, "strip_string_quotes": strip_string_quotes}
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
            sensitive=_is_literal(body.get("sensitive"), "true"),
            type_expr=_expression(body.get("type")),
            description=body.get("description"),
            ephemeral=_is_literal(body.get("ephemeral"), "true"),
            nullable=not _is_literal(body.get("nullable"), "false"),
        )
        for name, body in merged["variable"].items()
    }
    outputs = {name: OutputSpec(name, _is_literal(body.get("sensitive"), "true"))
               for name, body in merged["output"].items()}
    return variables, outputs


def _is_override(path: Path) -> bool:
    stem = path.name[: -len(suffix_of(path.name))] if suffix_of(path.name) else path.name
    return stem == "override" or stem.endswith("_override")


def _blocks(doc: Mapping[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for entry in doc.get(kind) or []:
        for label, body in (entry.items() if isinstance(entry, Mapping) else ()):
            if not label.startswith("__") and isinstance(body, Mapping):
                yield _unquote(label), {k: v for k, v in body.items() if not k.startswith("__")}


def _is_literal(value: Any, literal: str) -> bool:
    """Whether an attribute is the literal `literal` (`true` or `false`), as HCL or JSON spells it:
    anything else (an expression, absent) is neither."""
    return str(value).strip().strip('"').lower() in {literal, f"${{{literal}}}"}


def _expression(value: Any) -> str | None:
    text = None if value is None else str(value).strip()
    return text[2:-1].strip() if text and text.startswith("${") and text.endswith("}") else text


def reason(exc: BaseException) -> str:
    """One line from an exception: lark's messages run to a dozen lines."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__
