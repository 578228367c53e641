"""Constant HCL expressions in a var file (`n = 1 + 2`), evaluated as the engine evaluates them.

Why: a `.tfvars` file may hold any expression that needs no variable or function, and the
engine evaluates it; python-hcl2 hands such a value back as its text (`${1 + 2}`). hyops passes
explicit inputs on in its own var file and records their values, so it evaluates what it can
here: number, bool, null and plain string literals, arithmetic (`* / % + -`), comparison,
equality, `&& || !`, the conditional `c ? a : b` and parentheses, with the engine's precedence
and types (arithmetic takes numbers only; `%` keeps the sign of its left operand, as in Go).
Anything else (a function call, a template, a reference) is `None`: the caller says it cannot.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_TOKEN = re.compile(r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<string>"(?:[^"\\$%]|\\["\\nrt])*")
  | (?P<word>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!?:()])
)""", re.VERBOSE)
_ESCAPES = {'\\"': '"', "\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t"}
_WORDS = {"true": True, "false": False, "null": None}
_MAX_TOKENS = 1000


class _NotConstant(Exception):
    """The text is not a constant expression hyops evaluates."""


def evaluate(text: str) -> tuple[bool, Any]:
    """(True, value) for a constant expression (python-hcl2's `${...}` text without its
    marks), (False, None) for anything else."""
    try:
        tokens = _tokens(text)
        if tokens is None:
            return False, None
        parser = _Parser(tokens)
        value = parser.conditional()
        if parser.pos != len(tokens):
            raise _NotConstant
    except (_NotConstant, RecursionError, OverflowError, ValueError):
        return False, None
    return True, value


def _tokens(text: str) -> list[tuple[str, Any]] | None:
    found: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text) and len(found) <= _MAX_TOKENS:
        if not text[pos:].strip():
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            return None
        pos = match.end()
        kind = match.lastgroup or ""
        raw = match.group(kind)
        if kind == "number":
            number = float(raw)
            found.append(("value", int(raw) if raw.isdigit() else _plain(number)))
        elif kind == "string":
            found.append(("value", re.sub(r"\\.", lambda m: _ESCAPES[m.group(0)], raw[1:-1])))
        elif kind == "word":
            if raw not in _WORDS:
                return None  # a reference or a function: not a constant
            found.append(("value", _WORDS[raw]))
        else:
            found.append(("op", raw))
    return found if len(found) <= _MAX_TOKENS else None


def _plain(number: float) -> int | float:
    """A whole result as an int (the engine prints 6 / 2 as 3), else the float."""
    if number != number or number in (float("inf"), float("-inf")):
        raise _NotConstant
    return int(number) if number == int(number) else number


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _NotConstant  # the engine's arithmetic takes numbers only
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _NotConstant
    return value


def _equal(a: Any, b: Any) -> bool:
    """The engine's `==`: numbers by value (1 == 1.0), anything else by type and value."""
    numbers = [x for x in (a, b) if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if len(numbers) == 2:
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _remainder(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise _NotConstant
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _divide(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise _NotConstant
    return a // b if isinstance(a, int) and isinstance(b, int) and a % b == 0 else a / b


_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "*": lambda a, b: a * b, "/": _divide, "%": _remainder, "+": lambda a, b: a + b, "-": lambda a, b: a - b}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


class _Parser:
    """Recursive descent over the engine's precedence, lowest first: `?:`, `||`, `&&`,
    `== !=`, `< > <= >=`, `+ -`, `* / %`, unary `- !`."""

    def __init__(self, tokens: list[tuple[str, Any]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def _peek(self, *ops: str) -> str | None:
        if self.pos < len(self.tokens) and self.tokens[self.pos][0] == "op" and self.tokens[self.pos][1] in ops:
            return str(self.tokens[self.pos][1])
        return None

    def _take(self, op: str) -> None:
        if self._peek(op) is None:
            raise _NotConstant
        self.pos += 1

    def conditional(self) -> Any:
        condition = self._or()
        if self._peek("?") is None:
            return condition
        self.pos += 1
        first = self.conditional()
        self._take(":")
        second = self.conditional()
        return first if _boolean(condition) else second

    def _or(self) -> Any:
        value = self._and()
        while self._peek("||"):
            self.pos += 1
            right = self._and()
            value = _boolean(value) or _boolean(right)
        return value

    def _and(self) -> Any:
        value = self._equality()
        while self._peek("&&"):
            self.pos += 1
            right = self._equality()
            value = _boolean(value) and _boolean(right)
        return value

    def _equality(self) -> Any:
        value = self._comparison()
        while (op := self._peek("==", "!=")) is not None:
            self.pos += 1
            same = _equal(value, self._comparison())
            value = same if op == "==" else not same
        return value

    def _comparison(self) -> Any:
        value = self._sum()
        while (op := self._peek("<", ">", "<=", ">=")) is not None:
            self.pos += 1
            value = _COMPARE[op](_number(value), _number(self._sum()))
        return value

    def _sum(self) -> Any:
        value = self._product()
        while (op := self._peek("+", "-")) is not None:
            self.pos += 1
            value = _plain(_ARITHMETIC[op](_number(value), _number(self._product())))
        return value

    def _product(self) -> Any:
        value = self._unary()
        while (op := self._peek("*", "/", "%")) is not None:
            self.pos += 1
            value = _plain(_ARITHMETIC[op](_number(value), _number(self._unary())))
        return value

    def _unary(self) -> Any:
        if self._peek("-"):
            self.pos += 1
            return _plain(-_number(self._unary()))
        if self._peek("!"):
            self.pos += 1
            return not _boolean(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        if self._peek("("):
            self.pos += 1
            value = self.conditional()
            self._take(")")
            return value
        if self.pos < len(self.tokens) and self.tokens[self.pos][0] == "value":
            self.pos += 1
            return self.tokens[self.pos - 1][1]
        raise _NotConstant
