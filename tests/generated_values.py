"""Hypothesis strategies for input values of every type the engine has, and a `.tfvars` writer of
the tests' own (so a generated file is not written by the code under test).

Values: strings (unicode, the HCL template marks `${` and `%{`, quotes, backslashes, newlines
and tabs), integers beyond 64 bits, numbers as decimal text (long decimals, huge and tiny
exponents, `-0`, integers past 2^53: base/numbers.py's Number), bools, lists, maps and nested mixes of them,
empty ones too. Left out, each for a documented reason: NUL (no engine can receive it, hyops
refuses it: docs/inputs.md), lone surrogates (not text), the placeholders "<redacted>" and
"<ephemeral>" (refused as values), and a top-level null (a null given for a variable means "use
its default" on Terraform 1.0, unlike later engines).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from hybridops_tf.base.numbers import Number

_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("${}%\\\"'\n\t ab=:#-[],")),
        st.characters(blacklist_categories=("Cs", "Cc")),
    ),
    max_size=12,
).filter(lambda s: s not in ("<redacted>", "<ephemeral>"))

_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=45)


def _decimal_text(sign: str, whole: int, fraction: str | None, exponent: tuple[str, str, int] | None) -> str:
    text = f"{sign}{whole}" + (f".{fraction}" if fraction is not None else "")
    return text + (f"{exponent[0]}{exponent[1]}{exponent[2]}" if exponent else "")


# The engine's number literal, JSON's too (no leading zeros): every digit must survive
number_texts = st.builds(
    _decimal_text,
    st.sampled_from(["", "-"]),
    st.one_of(st.integers(min_value=0, max_value=9), st.integers(min_value=0, max_value=10**40)),
    st.one_of(st.none(), _DIGITS),
    st.one_of(st.none(), st.tuples(st.sampled_from("eE"), st.sampled_from(["", "+", "-"]),
                                   st.integers(min_value=0, max_value=999))),
).filter(lambda t: any(c in t for c in ".eE"))

numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),  # past 2^53 and 64 bits both
    st.builds(Number, number_texts),
    st.sampled_from([Number("-0"), Number("-0.0"), Number("1e400"), Number("1E+5"), Number("1e-400"),
                     Number("3.14159265358979323846264338327950288"),
                     Number("123456789012345678901234567890.125")]),
)
_NUMBERS = numbers

_LEAVES = st.one_of(_TEXT, _NUMBERS, st.booleans())

_KEYS = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8).filter(
    lambda s: s not in ("<redacted>", "<ephemeral>"))

values = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(st.one_of(inner, st.none()), max_size=4),
        st.dictionaries(_KEYS, st.one_of(inner, st.none()), max_size=4),
    ),
    max_leaves=10,
)

inputs = st.dictionaries(st.sampled_from([f"v{i}" for i in range(6)]), values, min_size=1, max_size=6)


def tfvars_text(assignments: dict[str, Any]) -> str:
    """A `.tfvars` file of these values, written as a person would write HCL: every string
    quoted with HCL's escapes (`$${`, `%%{`, `\\n`, `\\"`, `\\uNNNN` for other controls)."""
    return "".join(f"{name} = {_hcl(value)}\n" for name, value in assignments.items())


def _hcl(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, Number):
        return value.text
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, int) else json.dumps(value)
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return '"' + "".join(out).replace("${", "$${").replace("%{", "%%{") + '"'
    if isinstance(value, dict):
        return "{\n" + "".join(f"  {_hcl(k)} = {_hcl(v)}\n" for k, v in value.items()) + "}"
    return "[" + ", ".join(_hcl(item) for item in value) + "]"
