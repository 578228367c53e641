"""Numbers as their decimal text, from every source to the engine and into every file hyops writes.

Why: the engine's numbers are arbitrary precision (`3.14159265358979323846264338327950288`,
`123456789012345678901234567890.125` and `1e400` are all exact to it), where Python's `float`
keeps 17 digits and refuses `1e400`. A number hyops reads (a var file, JSON, YAML, the engine's
own state and event lines) is a `Number`: a `decimal.Decimal` (so it compares, hashes and sorts
by value: `Number("1.0") == 1`) that also keeps the text it was written with, and is written
back with exactly that text (docs/inputs.md: Numbers). A whole number keeps being a Python `int`
(exact already), except where its text would not survive one (`-0`, more digits than `int()`
takes). Every JSON and YAML load or dump of values goes through the helpers here.
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from typing import Any

__all__ = ["Number", "as_number", "dumps", "from_engine_text", "loads", "number_text", "yaml_dump", "yaml_load",
           "yaml_loader"]

# The engine's number literal (HCL and JSON alike, bar JSON's ban on leading zeros)
NUMBER_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")
_MAX_INT_DIGITS = 4000  # int() refuses texts past 4300 digits (sys.int_info.str_digits_check_threshold)


class Number(Decimal):
    """A number and the decimal text it was written with (`Number("1e400")`)."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> Number:
        if not isinstance(text, str) or not NUMBER_TEXT.match(text):
            raise ValueError(f"not a decimal number: {text!r}")
        self = super().__new__(cls, text)
        self.text = text
        return self

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Number({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Number, (self.text,))

    def __copy__(self) -> Number:
        return self

    def __deepcopy__(self, memo: Any) -> Number:
        return self


def _int(text: str) -> int | Number:
    """A JSON/HCL integer: an int, unless the int would lose its text (`-0`, very long)."""
    if len(text) > _MAX_INT_DIGITS or text.lstrip("-").strip("0") == "" and text.startswith("-"):
        return Number(text)
    return int(text)


def as_number(text: str) -> int | Number:
    """A number literal's text as hyops holds it: an int when that keeps its text, else a Number.
    ValueError when the text is not the engine's number literal."""
    text = text.strip()
    if not NUMBER_TEXT.match(text):
        raise ValueError(f"not a decimal number: {text!r}")
    if any(c in text for c in ".eE"):
        return Number(text)
    return _int(text)


# What the engine takes as a number variable's text (`-var`, `TF_VAR_`): Go's big.ParseFloat in
# base 10, as cty's string-to-number conversion calls it, less its infinities (refused too)
ENGINE_TEXT = re.compile(r"([-+]?)([0-9]*)(?:\.([0-9]*))?((?:[eE][-+]?[0-9]+)?)\Z")


def from_engine_text(text: str) -> int | Number | None:
    """A number variable's text (`-var one=.5`) as the number the engine makes of it, in the
    engine's literal (`0.5`), or None where the engine says "a number is required" (`0x10`,
    `1_000`, ` 5`, `Inf`)."""
    match = ENGINE_TEXT.match(text)
    if match is None:
        return None
    sign, whole, fraction, exponent = match.groups()
    if not whole and not fraction:
        return None
    literal = ("-" if sign == "-" else "") + (whole or "0") + (f".{fraction}" if fraction else "") + exponent
    return as_number(literal)


def number_text(value: Any) -> str:
    """A number's text, as the engine reads it: a Number's own; a Decimal's in plain notation
    where its exponent is small; an int's digits; a float's shortest round-trip form."""
    if isinstance(value, Number):
        return value.text
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"not a finite number: {value}")
        text = str(value)
        return text if NUMBER_TEXT.match(text) else format(value, "f")
    if isinstance(value, float):
        return json.dumps(value, allow_nan=False)
    return str(int(value))


def _refuse_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a number the engine takes")


def loads(text: str | bytes) -> Any:
    """JSON with every non-integer number a Number and every integer an int (or a Number where an
    int would lose its text); NaN and Infinity, which the engine's JSON refuses, are ValueError."""
    return json.loads(text, parse_float=Number, parse_int=_int, parse_constant=_refuse_constant)


def dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps, each Number (and Decimal) written as its text, not as a string or a float."""
    found: list[str] = []
    token = os.urandom(8).hex()

    def swap(item: Any) -> Any:
        if isinstance(item, Decimal):
            found.append(number_text(item))
            return f"{token}:{len(found) - 1}"
        if isinstance(item, dict):
            return {k: swap(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [swap(v) for v in item]
        return item

    swapped = swap(value)
    text = json.dumps(swapped, **kwargs)
    if not found:
        return text
    return re.sub(f'"{token}:([0-9]+)"', lambda m: found[int(m.group(1))], text)


# --- YAML ------------------------------------------------------------------------------------

_YAML: dict[str, Any] = {}  # the loader and dumper classes, built once on first use (yaml costs ~15 ms)


def _yaml_float_text(text: str) -> str | None:
    """A YAML 1.1 float scalar (`1_000.5`, `+.5`, `5.`, `1.5e+3`, `1:30.5`) as the engine's
    literal, or None for `.inf`/`.nan`, which are not numbers the engine takes."""
    text = text.replace("_", "")
    sign = "-" if text.startswith("-") else ""
    text = text.lstrip("+-")
    if text.lower() in (".inf", ".nan"):
        return None
    if ":" in text:  # sexagesimal: base 60 parts
        total = Decimal(0)
        for part in text.split(":"):
            total = total * 60 + Decimal(part)
        return sign + number_text(total)
    mantissa, mark, exponent = text.replace("E", "e").partition("e")
    mark = text[len(mantissa)] if mark else ""
    whole, _, fraction = mantissa.partition(".")
    literal = (whole or "0") + (f".{fraction}" if fraction else "") + (f"{mark}{exponent}" if mark else "")
    return sign + literal


def _classes() -> tuple[Any, Any]:
    if _YAML:
        return _YAML["loader"], _YAML["dumper"]
    import yaml

    class NumberLoader(yaml.SafeLoader):
        """PyYAML's safe loader (YAML 1.1 resolution, and `1e400` a number), each float a Number
        of its text."""

        def construct_yaml_float(self, node: Any) -> Any:
            literal = _yaml_float_text(str(self.construct_scalar(node)))
            return super().construct_yaml_float(node) if literal is None else Number(literal)

        def construct_yaml_int(self, node: Any) -> Any:
            text = str(self.construct_scalar(node)).replace("_", "")
            value = super().construct_yaml_int(node)
            return Number(text) if value == 0 and text.startswith("-") and NUMBER_TEXT.match(text) else value

    # YAML 1.1 reads `1e400` and `1E+5` as text (its floats need a dot); YAML 1.2 and the engine
    # read them as numbers, and so does hyops (a text that looks so is quoted when written)
    exponent = re.compile(r"^[-+]?[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+$")
    NumberLoader.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789"))
    NumberLoader.add_constructor("tag:yaml.org,2002:float", NumberLoader.construct_yaml_float)
    NumberLoader.add_constructor("tag:yaml.org,2002:int", NumberLoader.construct_yaml_int)

    class NumberDumper(yaml.SafeDumper):
        """PyYAML's safe dumper, each Number its text: a plain scalar where YAML reads that text
        as a number, else tagged `!!float` (`!!float 1e400`), so NumberLoader reads it back."""

        def ignore_aliases(self, data: Any) -> bool:
            return isinstance(data, Decimal) or bool(super().ignore_aliases(data))  # a number is a scalar

    def represent_number(dumper: Any, value: Decimal) -> Any:
        text = number_text(value)
        tag = dumper.resolve(yaml.ScalarNode, text, (True, False))
        if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
            tag = "tag:yaml.org,2002:float"
        return dumper.represent_scalar(tag, text)

    NumberDumper.add_multi_representer(Decimal, represent_number)
    NumberDumper.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789"))
    _YAML.update(loader=NumberLoader, dumper=NumberDumper)
    return NumberLoader, NumberDumper


def yaml_loader() -> Any:
    """The YAML loader class that keeps numbers' text (for callers that compose nodes)."""
    return _classes()[0]


def yaml_load(text: str) -> Any:
    """YAML (safe, as PyYAML reads YAML 1.1, and `1e400` a number) with each float a Number of its
    text."""
    import yaml

    return yaml.load(text, Loader=_classes()[0])  # noqa: S506 - a subclass of SafeLoader


def yaml_dump(data: Any, **kwargs: Any) -> str:
    """yaml.safe_dump with each Number (and Decimal) written as its text."""
    import yaml

    return str(yaml.dump(data, Dumper=_classes()[1], **kwargs))

