"""Whether an input's value converts to its variable's declared type, decided by hyops itself
before any engine runs, so one wrong-typed input is one error in every command on every engine.

Why not leave it to the engine: Terraform >= 1.12 does not evaluate the root module's variables
for a `destroy` of a module whose state holds nothing, so a wrong-typed value there passed
(exit 0, "destroyed") where Terraform 1.0.3, and every `plan` and `apply`, refuse it
(tests/integration/test_input_errors.py).

The rules are the engine's conversions of a root module variable's value to its type constraint
(Terraform's and OpenTofu's alike: both convert with the go-cty library): strings and numbers
convert both ways (a number keeps its decimal text), strings `"true"`/`"false"` and bools both
ways (numbers never become bools, nor bools numbers), any primitive to a string, a list literal
(a tuple) to a list, set or tuple element by element, a map literal (an object) to a map or
object attribute by attribute (extra attributes dropped, `optional(...)` ones may be absent),
`null` into any element, `any` and no type take anything. A `null` for the whole variable is
`nullable`'s to decide (Terraform >= 1.1): with `nullable = false` the engine uses the default,
or refuses when there is none ("required variable may not be set to null").

The one rule of this module: it never refuses what the engine accepts. Each answer is FITS or
REFUSED only where the rule is certain; wherever it is not (a type expression not read; a
`null` for a nullable variable; the engine's unification of a collection's elements when its
element type holds `any`; a string in one of the engine's odder number spellings, `1p3`, `Inf`;
a null in a set) it is UNSURE, and the engine decides as before.
tests/unit/test_type_check.py proves each rule alone; tests/integration/test_type_check_engine.py
compares the verdicts with the real engine's on generated types and values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import numbers
from hybridops_tf.inputs.types import TypeNode, parse_type

if TYPE_CHECKING:
    from hybridops_tf.inputs.declarations import VariableSpec
    from hybridops_tf.inputs.values import ResolvedInputs

__all__ = ["Outcome", "Verdict", "check", "check_node", "null_verdict", "refused_inputs"]

PRIMITIVES = frozenset({"string", "number", "bool"})


class Outcome(Enum):
    FITS = "fits"  # the engine converts it: certain
    UNSURE = "unsure"  # not modelled here: the engine decides
    REFUSED = "refused"  # the engine refuses it: certain


@dataclass(frozen=True)
class Verdict:
    """One value against one type: the outcome and, when REFUSED, the engine's words for why
    (`a number is required`) and where in the value (`element 1`, `attribute "a"`; the engine
    does not say); when UNSURE, what this module does not model."""

    outcome: Outcome
    why: str = ""
    at: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        return self.outcome is Outcome.REFUSED


FITS = Verdict(Outcome.FITS)


def _unsure(why: str) -> Verdict:
    return Verdict(Outcome.UNSURE, why)


def _refused(path: tuple[str, ...], why: str) -> Verdict:
    return Verdict(Outcome.REFUSED, why, path)


def check(value: Any, type_expr: str | None) -> Verdict:
    """`value` (as hyops holds inputs: str, bool, int or a decimal Number, None, lists, dicts)
    against a variable's type expression as declarations.py reads it (None: no type)."""
    if type_expr is None:
        return FITS  # no type constraint: the engine takes any value
    node = parse_type(type_expr)
    if node is None:
        return _unsure(f"type expression {type_expr!r} not read")
    if value is None:
        return _unsure("null: the variable's `nullable` decides (null_verdict)")
    return check_node(value, node)


def check_node(value: Any, node: TypeNode, path: tuple[str, ...] = ()) -> Verdict:
    """`value` against one parsed type; `path` says where it sits in the whole input."""
    kind = node.kind
    if value is None:
        return FITS  # a null element or attribute has every type
    if kind == "any":
        return FITS
    if kind in PRIMITIVES:
        return _primitive(value, kind, path)
    if kind in ("list", "set", "tuple"):
        if not isinstance(value, list):
            return _wrong_bracket(value, node, path)
        if kind == "tuple":
            return _tuple(value, node, path)
        return _elements(enumerate(value), node.items[0], path, "element", kind == "set")
    if kind in ("map", "object"):
        if not isinstance(value, dict):
            return _wrong_bracket(value, node, path)
        if kind == "object":
            return _object(value, node, path)
        return _elements(value.items(), node.items[0], path, "key", False)
    return _unsure(f"type {kind!r} not modelled")


def _primitive(value: Any, kind: str, path: tuple[str, ...]) -> Verdict:
    if isinstance(value, (list, dict)):
        return _refused(path, f"{kind} required")
    if kind == "string":
        return FITS  # a bool becomes "true"/"false", a number its decimal text
    if isinstance(value, bool):
        return FITS if kind == "bool" else _refused(path, f"{kind} required")
    if isinstance(value, (int, Decimal, float)):
        return FITS if kind == "number" else _refused(path, f"{kind} required")
    if not isinstance(value, str):
        return _unsure(f"a {type(value).__name__} value is not modelled")
    if kind == "number":
        return _string_to_number(value, path)
    return _string_to_bool(value, path)


def _string_to_number(text: str, path: tuple[str, ...]) -> Verdict:
    """The engine parses the text as a decimal number (Go's big.Float in base 10). Certain to
    fit: the plain literals base/numbers.py reads. Certain to be refused: text outside even the
    wider grammar that parser takes (a sign, digits with one point, an `e` or a binary `p`
    exponent, an infinity): ` 5`, `0x10`, `1_000`, `large`. In between (`1p3`, `Inf`): the
    engine's to judge."""
    if numbers.from_engine_text(text) is not None:
        return FITS
    if NUMBER_PARSER_TAKES.match(text):
        return _unsure("a number spelling past the plain literal")
    return _refused(path, "a number is required")


# A superset of what the engine's number parser takes, with any case of the words for good measure
NUMBER_PARSER_TAKES = re.compile(
    r"[+-]?(?:(?i:inf(?:inity)?|nan)|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eEpP][+-]?[0-9]+)?)\Z")


BOOL_TEXTS = frozenset({"true", "false"})
UNSURE_BOOL_TEXTS = frozenset({"1", "0"})  # some engine versions take these strings as bools


def _string_to_bool(text: str, path: tuple[str, ...]) -> Verdict:
    if text in BOOL_TEXTS:
        return FITS
    if text in UNSURE_BOOL_TEXTS:
        return _unsure("the strings \"1\" and \"0\" are bools to some engine versions")
    if text.lower() in BOOL_TEXTS:
        return _refused(path, f'a bool is required; to convert from string, use lowercase "{text.lower()}"')
    return _refused(path, "a bool is required")


def _wrong_bracket(value: Any, node: TypeNode, path: tuple[str, ...]) -> Verdict:
    """A collection or structural type given a primitive, or the other bracket (`{...}` for a
    list, `[...]` for a map or object), even an empty one: no conversion exists."""
    return _refused(path, f"{_name(node)} required")


def _name(node: TypeNode) -> str:
    """The engine's name for a type in "... required" (`list of string`, `object`)."""
    if node.kind in ("list", "set", "map"):
        return f"{node.kind} of {_name(node.items[0])}"
    if node.kind == "any":
        return "any single type"
    return node.kind


def _tuple(value: list[Any], node: TypeNode, path: tuple[str, ...]) -> Verdict:
    if len(value) != len(node.items):
        return _refused(path, "tuple required")
    return _all(check_node(item, t, (*path, f"element {i}"))
                for i, (item, t) in enumerate(zip(value, node.items, strict=True)))


def _object(value: Mapping[str, Any], node: TypeNode, path: tuple[str, ...]) -> Verdict:
    verdicts = []
    for name, t in node.attributes:
        optional = t.kind == "optional"
        if name not in value:
            if not optional:
                return _refused(path, f'attribute "{name}" is required')
            continue  # absent: its default, or null
        verdicts.append(check_node(value[name], t.items[0] if optional else t, (*path, f'attribute "{name}"')))
    return _all(verdicts)  # attributes the type does not declare are dropped


def _elements(items: Iterable[tuple[Any, Any]], element: TypeNode, path: tuple[str, ...], label: str,
              is_set: bool) -> Verdict:
    """Every element converts to the one element type. With `any` inside that type the engine
    also makes the elements agree on one type, which is not modelled: a refused element is
    refused all the same, anything else is UNSURE (FITS when `any` is the whole element type and
    the elements are primitives of one kind)."""
    values = []
    verdicts = []
    for key, item in items:
        values.append(item)
        if item is None and is_set:
            verdicts.append(_unsure("null in a set"))
            continue
        where = f"element {key}" if label == "element" else f'key "{key}"'
        verdicts.append(check_node(item, element, (*path, where)))
    verdict = _all(verdicts)
    if verdict.refused or not _holds_any(element):
        return verdict
    kinds = {_primitive_kind(v) for v in values}
    if element.kind == "any" and None not in kinds and len(kinds) <= 1:
        return verdict
    return _unsure("elements of an element type with `any`: the engine unifies them")


def _primitive_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, Decimal, float)):
        return "number"
    return None


def _holds_any(node: TypeNode) -> bool:
    return node.kind == "any" or any(_holds_any(t) for t in node.items) or any(
        _holds_any(t) for _, t in node.attributes)


def _all(verdicts: Iterable[Verdict]) -> Verdict:
    """The whole converts only if every part does: the first refusal, else the first doubt."""
    unsure = None
    for verdict in verdicts:
        if verdict.refused:
            return verdict
        if verdict.outcome is Outcome.UNSURE and unsure is None:
            unsure = verdict
    return unsure or FITS


def refused_inputs(specs: Mapping[str, VariableSpec], resolved: ResolvedInputs) -> list[tuple[str, Verdict]]:
    """Each resolved input the engine certainly refuses for its variable's type, by name.

    Checked only where the value hyops holds is certainly the one the engine converts: an
    explicit input (hyops writes that very value into the engine's var file); the caller's
    TF_VAR_ text of a string, number, bool or untyped variable, and one of another type that
    hyops read as a literal (a list or a map; else the engine reads text hyops could not); a
    value of the module's own tfvars files without `${` or `%{` in any string (an expression or
    template there is kept as written, not as the engine evaluates it). A default is the
    module's own, never an input."""
    found = []
    for name in sorted(resolved.values):
        spec = specs.get(name)
        source = resolved.source_of(name)
        if spec is None or source == "default":
            continue
        value = resolved.values[name]
        if name in resolved.explicit:
            seen = True
        elif source == "env":
            seen = spec.takes_literal or isinstance(value, (list, dict))
        else:
            seen = not _has_template(value)
        if not seen:
            continue  # not the value the engine converts: it judges that one itself
        verdict = null_verdict(spec) if value is None else check(value, spec.type_expr)
        if verdict.refused:
            found.append((name, verdict))
    return found


def null_verdict(spec: VariableSpec) -> Verdict:
    """A null given for the whole variable. `nullable = false`: the engine uses the default, or,
    with none, refuses in these words. A nullable variable takes null on Terraform >= 1.1 (its
    `default = null` and 1.0.3, which has no `nullable`, are left to the engine)."""
    if spec.nullable:
        return _unsure("null for a nullable variable")
    if spec.required:
        return _refused((), "required variable may not be set to null")
    return FITS if spec.default is not None else _unsure("null default of a variable that is not nullable")


def _has_template(value: Any) -> bool:
    if isinstance(value, str):
        return "${" in value or "%{" in value
    if isinstance(value, list):
        return any(_has_template(v) for v in value)
    if isinstance(value, dict):
        return any(_has_template(k) or _has_template(v) for k, v in value.items())
    return False
