"""Type constraints and values, for hyops's own type check (hybridops_tf/inputs/type_check.py)
against the engine's conversions: a fixed table where one conversion rule alone decides each
row, hypothesis strategies for (type, value) pairs, and the raw engine's verdict on a batch of
them (many variables in one module, one `plan` for the batch).

The values are written into the engine's var file by the tests' own writer
(tests/generated_values.py: tfvars_text), not by the code under test.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from hybridops_tf.base.numbers import Number
from hybridops_tf.inputs.type_check import Outcome, check
from tests.generated_values import numbers as generated_numbers
from tests.generated_values import tfvars_text
from tests.generated_values import values as generated_values

FITS, UNSURE, REFUSED = Outcome.FITS, Outcome.UNSURE, Outcome.REFUSED


@dataclass(frozen=True)
class Case:
    """One value for one type, the rule that alone decides it, and the check's verdict."""

    rule: str
    type_expr: str | None
    value: Any
    outcome: Outcome
    modern: bool = False  # `optional(...)` attributes: Terraform >= 1.3 only


CASES = (
    Case("string from number", "string", Number("3.14159265358979323846264338327950288"), FITS),
    Case("string from bool", "string", True, FITS),
    Case("string not from a list", "string", ["a"], REFUSED),
    Case("string not from a map", "string", {"a": "b"}, REFUSED),
    Case("number from its text", "number", "5", FITS),
    Case("number from long decimal text", "number", "123456789012345678901234567890.125", FITS),
    Case("number not from a word", "number", "large", REFUSED),
    Case("number not from empty text", "number", "", REFUSED),
    Case("number not from a bool", "number", True, REFUSED),
    Case("number text the engine's parser judges", "number", "1p3", UNSURE),
    Case("number text with an infinity", "number", "Inf", UNSURE),
    Case("number not from a padded text", "number", " 5", REFUSED),
    Case("number not from hexadecimal", "number", "0x10", REFUSED),
    Case("bool from its text", "bool", "false", FITS),
    Case("bool not from a number", "bool", 1, REFUSED),
    Case("bool not from a word", "bool", "yes", REFUSED),
    Case("bool not from capitals", "bool", "True", REFUSED),
    Case("bool from the text 1 on some engines", "bool", "1", UNSURE),
    Case("list element by element", "list(number)", ["1", 2, Number("3.5")], FITS),
    Case("list refuses one element", "list(number)", [1, "x"], REFUSED),
    Case("list holds a null element", "list(string)", ["a", None], FITS),
    Case("list not from a map", "list(string)", {"a": "b"}, REFUSED),
    Case("list not from a primitive", "list(string)", "a", REFUSED),
    Case("set from a list literal", "set(string)", ["b", "a"], FITS),
    Case("set with a null element", "set(string)", ["a", None], UNSURE),
    Case("map value by value", "map(number)", {"a": 1, "b": "2"}, FITS),
    Case("map refuses one value", "map(number)", {"a": 1, "b": "z"}, REFUSED),
    Case("map not from a list", "map(string)", ["a"], REFUSED),
    Case("map not from an empty list", "map(string)", [], REFUSED),
    Case("list not from an empty map", "list(string)", {}, REFUSED),
    Case("tuple position by position", "tuple([string, number])", ["a", "1"], FITS),
    Case("tuple of another length", "tuple([string, number])", ["a"], REFUSED),
    Case("tuple refuses one position", "tuple([string, number])", ["a", "b"], REFUSED),
    Case("object attribute by attribute", "object({a = number, b = string})", {"a": "1", "b": 2}, FITS),
    Case("object drops extra attributes", "object({a = number})", {"a": 1, "zz": [1]}, FITS),
    Case("object needs every attribute", "object({a = number, b = string})", {"a": 1}, REFUSED),
    Case("object refuses one attribute", "object({a = number})", {"a": "x"}, REFUSED),
    Case("object not from a list", "object({a = number})", [1], REFUSED),
    Case("object attribute null", "object({a = number})", {"a": None}, FITS),
    Case("any takes anything", "any", {"a": [1, "x", {"b": True}]}, FITS),
    Case("no type takes anything", None, [1, {"a": "b"}], FITS),
    Case("list of any with one kind", "list(any)", ["a", "b"], FITS),
    Case("list of any with mixed kinds", "list(any)", [1, [2]], UNSURE),
    Case("list of any, wrong bracket", "list(any)", {"a": 1}, REFUSED),
    Case("element type with any still refuses", "list(object({a = number, b = any}))", [{"a": "x", "b": 1}], REFUSED),
    Case("nested list in a map", "map(list(bool))", {"a": ["true", False], "b": []}, FITS),
    Case("nested refusal deep down", "map(list(bool))", {"a": [True, "no"]}, REFUSED),
    Case("optional attribute may be absent", "object({a = number, b = optional(string, \"x\")})", {"a": 1}, FITS,
         modern=True),
    Case("optional attribute still converts", "object({a = optional(number)})", {"a": "x"}, REFUSED, modern=True),
)


# Strings the conversions treat apart: bools, numbers and near-misses of each
INTERESTING_TEXT = st.sampled_from(["true", "false", "True", "FALSE", "1", "0", "5", "-1.5", "1e3", ".5", "5.",
                                    "+5", " 5", "5 ", "1_000", "0x10", "1p3", "Inf", "-inf", "NaN", "large", "",
                                    "yes", "null"])


def _leaf_types() -> st.SearchStrategy[str]:
    return st.sampled_from(["string", "number", "bool", "any"])


@functools.cache
def type_exprs(modern: bool = False) -> st.SearchStrategy[str]:
    """Type expressions as a person writes them, nested; `optional(...)` attributes when modern.
    (Each strategy is built once: hypothesis validates every new one, which costs more than
    drawing from it.)"""
    optional = st.booleans() if modern else st.just(False)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds(lambda t: f"list({t})", inner),
            st.builds(lambda t: f"set({t})", inner),
            st.builds(lambda t: f"map({t})", inner),
            st.builds(lambda ts: f"tuple([{', '.join(ts)}])", st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda attrs: "object({" + ", ".join(
                f"{n} = optional({t})" if opt else f"{n} = {t}" for n, (t, opt) in attrs.items()) + "})",
                st.dictionaries(st.sampled_from(["a", "b", "c"]), st.tuples(inner, optional), min_size=1, max_size=3)),
        )
    return st.recursive(_leaf_types(), extend, max_leaves=5)


# Near-numbers: the engine's number parser takes more than the plain literal (`1p3`, `Inf`, `5.`)
NUMBERISH_TEXT = st.text(alphabet="0123456789+-.eEpPxX_ iInNfaty", max_size=6)

_LEAF_VALUES = st.one_of(INTERESTING_TEXT, NUMBERISH_TEXT, generated_numbers, st.booleans())
_ANY_VALUE = st.one_of(generated_values, _LEAF_VALUES)
_ODDS = {n: st.integers(0, n) for n in (3, 4, 5, 7, 9, 12)}
_MAP_KEYS = st.lists(st.sampled_from("xyz"), max_size=3, unique=True)


@st.composite
def values_near(draw: st.DrawFn, type_expr: str) -> Any:
    """A value shaped like `type_expr` most of the time (so the conversion rules, not only the
    shape, decide), with leaves and whole parts drawn at random."""
    from hybridops_tf.inputs.types import TypeNode, parse_type

    def near(node: TypeNode | None, depth: int) -> Any:
        if node is None or draw(_ODDS[9]) == 0:
            return draw(generated_values if depth else _ANY_VALUE)
        kind = node.kind
        if kind == "optional":
            return near(node.items[0], depth)
        if kind in ("list", "set"):
            return [near(node.items[0], depth + 1) for _ in range(draw(_ODDS[3]))]
        if kind == "map":
            return {k: near(node.items[0], depth + 1) for k in draw(_MAP_KEYS)}
        if kind == "tuple":
            items = [near(t, depth + 1) for t in node.items]
            return items if draw(_ODDS[5]) else items[:-1]
        if kind == "object":
            value = {name: near(t, depth + 1) for name, t in node.attributes if draw(_ODDS[7])}
            if draw(_ODDS[4]) == 0:
                value["extra"] = draw(generated_values)
            return value
        if depth and draw(_ODDS[12]) == 0:
            return None
        return draw(_LEAF_VALUES)

    return near(parse_type(type_expr), 0)


@st.composite
def typed_pairs(draw: st.DrawFn, modern: bool = False) -> tuple[str, Any]:
    type_expr = draw(type_exprs(modern))
    return type_expr, draw(values_near(type_expr))


_VARIABLE = re.compile(r'variable "(v\d+)"|var\.(v\d+) declared')


def engine_refusals(engine: str, workdir: Path, pairs: Sequence[tuple[str | None, Any]]) -> list[str | None]:
    """The raw engine's verdict on each (type, value): None where it accepts the value, else its
    error's detail. One module declares a variable per pair, one var file gives the values, one
    `plan` judges them all (the engine reports every refused variable)."""
    module = workdir / f"types-{uuid.uuid4().hex[:8]}"
    module.mkdir(parents=True)
    (module / "main.tf").write_text("".join(
        f'variable "v{i}" {{\n' + (f"  type = {t}\n" if t is not None else "") + "}\n"
        for i, (t, _) in enumerate(pairs)), encoding="utf-8")
    (module / "given.tfvars").write_text(tfvars_text({f"v{i}": v for i, (_, v) in enumerate(pairs)}),
                                         encoding="utf-8")
    env = {**os.environ, "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}
    done = subprocess.run([engine, "plan", "-input=false", "-no-color", "-json", "-lock=false",
                           "-var-file=given.tfvars"], cwd=module, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    refused: dict[str, str] = {}
    for line in done.stdout.splitlines():
        doc = json.loads(line) if line.startswith("{") else {}
        diag = doc.get("diagnostic") if doc.get("type") == "diagnostic" else None
        if diag is None or diag.get("severity") != "error":
            continue
        found = _VARIABLE.search(diag.get("detail") or "")
        assert found is not None, f"an error not about one variable: {diag}\n{done.stderr}"
        refused[found.group(1) or found.group(2)] = diag.get("detail") or ""
    assert (done.returncode == 0) == (not refused), done.stdout + done.stderr
    return [refused.get(f"v{i}") for i in range(len(pairs))]


def wrong_verdicts(pairs: Sequence[tuple[str | None, Any]], engine_said: Sequence[str | None]) -> list[str]:
    """Where hyops's check claims a certainty the engine contradicts: refused what the engine
    accepts, or fits what it refuses. UNSURE is never wrong."""
    wrong = []
    for (type_expr, value), said in zip(pairs, engine_said, strict=True):
        verdict = check(value, type_expr)
        if verdict.outcome is REFUSED and said is None:
            wrong.append(f"refused what the engine accepts: {type_expr} = {value!r} ({verdict.why})")
        elif verdict.outcome is FITS and said is not None:
            wrong.append(f"fits what the engine refuses: {type_expr} = {value!r} ({said})")
    return wrong


_STRING_LEAF = st.one_of(st.text(max_size=5), generated_numbers, st.booleans())
_NUMBER_LEAF = st.one_of(generated_numbers, generated_numbers.map(str))
_BOOL_LEAF = st.one_of(st.booleans(), st.sampled_from(["true", "false"]))


@st.composite
def fitting_values(draw: st.DrawFn, type_expr: str) -> Any:
    """A value each conversion rule takes for `type_expr`: each leaf in a spelling the rules
    take (a number as a number or its plain text, a bool as a bool or "true"/"false", anything
    primitive for a string), each collection of the right bracket and size, each object with
    every attribute it needs (optional ones sometimes left out, extra ones sometimes added).
    Only an `any` inside a collection may get elements the engine cannot unify to one type,
    which the check leaves unsure."""
    from hybridops_tf.inputs.types import TypeNode, parse_type

    leaves = {"string": _STRING_LEAF, "number": _NUMBER_LEAF, "bool": _BOOL_LEAF, "any": generated_values}

    def fit(node: TypeNode | None) -> Any:
        if node is None:
            return draw(generated_values)
        kind = node.kind
        if kind in leaves:
            return draw(leaves[kind])
        if kind == "optional":
            return fit(node.items[0])
        if kind in ("list", "set"):
            return [fit(node.items[0]) for _ in range(draw(_ODDS[3]))]
        if kind == "map":
            return {k: fit(node.items[0]) for k in draw(_MAP_KEYS)}
        if kind == "tuple":
            return [fit(t) for t in node.items]
        value = {name: fit(t) for name, t in node.attributes if t.kind != "optional" or draw(_ODDS[3])}
        if draw(_ODDS[3]) == 0:
            value["extra"] = draw(generated_values)
        return value

    return fit(parse_type(type_expr))
