"""One input source read as the engine reads it: `--var NAME=VALUE` text (YAML, or for a
collection-typed variable an HCL expression, a number's digits kept), an `--inputs`/`--var-file`
file (`.tfvars` HCL, `.json`, YAML), each reduced to values an engine can receive. Merging the
sources, validating them against the module's variables and keeping secrets off disk is
inputs/values.py's job."""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import UsageError
from hybridops_tf.inputs.declarations import VariableSpec, reason

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


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
            value = hcl_or(raw, _NOT_HCL, f"--var {name}")
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


def hcl_or(text: str, fallback: Any, where: str) -> Any:
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
        return json_inputs(text, path)
    if name.endswith(".tfvars"):
        return hcl_inputs(text, path, strict=True)
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


def json_inputs(text: str, path: Path | str) -> dict[str, Any]:
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


def hcl_inputs(text: str, path: Path | str, strict: bool) -> dict[str, Any]:
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


def _yaml_problem(exc: Any) -> str:
    """Where YAML failed, never what it read: PyYAML's problem text quotes the token
    (an alias, a tag), and the value may be a secret."""
    mark = getattr(exc, "problem_mark", None)
    return f"at line {mark.line + 1}, column {mark.column + 1}" if mark else "unparsable"
