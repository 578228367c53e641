"""A variable's type constraint, read far enough to put a value in its canonical form.

The engine holds a `set` without order and without duplicates: `["b", "a", "a"]` and `["a",
"b"]` given to a `set(string)` are one value to it. So hyops sorts and de-duplicates each set
inside an input (at any depth: `map(set(string))`, an object attribute that is a set) before it
records, digests or passes it, and the same set written in another order is no change for
`stack apply --resume` (docs/inputs.md). Anything this reader does not understand leaves the
value exactly as given.
"""

from __future__ import annotations

import re
from decimal import Context, Decimal
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.lazy_dataclass import dataclass

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*|[(){}\[\],=:]|\"(?:[^\"\\]|\\.)*\"|[^\s(){}\[\],=:\"]+)")


@dataclass(frozen=True)
class TypeNode:
    """One type: kind (`set`, `list`, `map`, `tuple`, `object`, or a leaf: `string`, `any`, ...)
    with its element types (one for collections, each position's for a tuple) or attributes."""

    kind: str
    items: tuple[TypeNode, ...] = ()
    attributes: tuple[tuple[str, TypeNode], ...] = ()


def parse_type(text: str | None) -> TypeNode | None:
    """The type expression as python-hcl2 gives it (`map(set(string))`), or None when it is not
    one this reader knows."""
    if not text:
        return None
    tokens = [t for t in _TOKEN.findall(text) if t]
    try:
        node, rest = _parse(tokens, 0)
    except (IndexError, ValueError):
        return None
    return node if rest == len(tokens) else None


def canonical(value: Any, node: TypeNode | None) -> Any:
    """`value` with every set (by `node`) sorted and de-duplicated; the rest as given."""
    if node is None or value is None:
        return value
    if node.kind == "optional":
        return canonical(value, node.items[0])
    if node.kind in ("list", "set") and isinstance(value, list):
        items = [canonical(item, node.items[0]) for item in value]
        if node.kind == "set":
            unique = {_key(item): item for item in items}
            items = [unique[key] for key in sorted(unique)]
        return items
    if node.kind == "map" and isinstance(value, dict):
        return {k: canonical(v, node.items[0]) for k, v in value.items()}
    if node.kind == "tuple" and isinstance(value, list) and len(value) == len(node.items):
        return [canonical(item, t) for item, t in zip(value, node.items, strict=True)]
    if node.kind == "object" and isinstance(value, dict):
        types = dict(node.attributes)
        return {k: canonical(v, types.get(k)) for k, v in value.items()}
    return value


def _key(value: Any) -> str:
    """A set element's identity: numbers by value (`1`, `1.0` and `1e0` are one number to the
    engine), anything else as it is."""
    return numbers.dumps(_by_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _by_value(value: Any) -> Any:
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return Decimal(value).normalize(_WIDE) if value else Decimal(0)
    if isinstance(value, list):
        return [_by_value(item) for item in value]
    if isinstance(value, dict):
        return {k: _by_value(v) for k, v in value.items()}
    return value


_WIDE = Context(prec=100_000, Emax=10**9, Emin=-(10**9))


def _parse(tokens: list[str], i: int) -> tuple[TypeNode, int]:
    name = tokens[i]
    if name in ("list", "set", "map", "optional"):
        _expect(tokens, i + 1, "(")
        inner, j = _parse(tokens, i + 2)
        if name == "optional" and tokens[j] == ",":
            j = _skip_value(tokens, j + 1)  # the default: not a type
        _expect(tokens, j, ")")
        return TypeNode(name, (inner,)), j + 1
    if name == "tuple":
        _expect(tokens, i + 1, "(")
        _expect(tokens, i + 2, "[")
        items: list[TypeNode] = []
        j = i + 3
        while tokens[j] != "]":
            node, j = _parse(tokens, j)
            items.append(node)
            if tokens[j] == ",":
                j += 1
        _expect(tokens, j + 1, ")")
        return TypeNode("tuple", tuple(items)), j + 2
    if name == "object":
        _expect(tokens, i + 1, "(")
        _expect(tokens, i + 2, "{")
        attributes: list[tuple[str, TypeNode]] = []
        j = i + 3
        while tokens[j] != "}":
            key = tokens[j].strip('"')
            if tokens[j + 1] not in ("=", ":"):
                raise ValueError("attribute without =")
            node, j = _parse(tokens, j + 2)
            attributes.append((key, node))
            if tokens[j] == ",":
                j += 1
        _expect(tokens, j + 1, ")")
        return TypeNode("object", attributes=tuple(attributes)), j + 2
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return TypeNode(name), i + 1
    raise ValueError(f"not a type: {name}")


def _skip_value(tokens: list[str], i: int) -> int:
    """Past one expression (an optional attribute's default), brackets balanced."""
    depth = 0
    while True:
        token = tokens[i]
        if token in ("(", "[", "{"):
            depth += 1
        elif token in (")", "]", "}"):
            if depth == 0:
                return i
            depth -= 1
        elif token == "," and depth == 0:
            return i
        i += 1


def _expect(tokens: list[str], i: int, token: str) -> None:
    if tokens[i] != token:
        raise ValueError(f"expected {token}")
