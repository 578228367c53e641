"""Constant HCL expressions in a var file (`n = 1 + 2`), evaluated as the engine evaluates them.

Why: a `.tfvars` file may hold any expression that needs no variable or function, and the
engine evaluates it; python-hcl2 hands such a value back as its text (`${1 + 2}`). hyops passes
explicit inputs on in its own var file and records their values, so it evaluates what it can
here: number, bool, null and plain string literals, arithmetic (`* / % + -`), comparison,
equality, `&& || !`, the conditional `c ? a : b` and parentheses, with the engine's precedence
and types (arithmetic takes numbers only; `%` keeps the sign of its left operand, as in Go).
Numbers are exact decimals, as the engine's are arbitrary precision: a literal keeps its text
(base/numbers.py), and arithmetic is done in decimal, exactly; a quotient decimal cannot hold
exactly (`1 / 3`) is the engine's: its operands and the quotient rounded to 512-bit binary
floats (Go's big.Float, as cty divides), written as the shortest decimal that reads back as that
float (big.Float's Text('f', -1), as the engine writes a number).
Anything else (a function call, a template, a reference) is `None`: the caller says it cannot.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Context, Decimal, Inexact, InvalidOperation
from fractions import Fraction
from typing import Any

from hybridops_tf.base.numbers import Number, as_number, number_text

# Exact decimal arithmetic: an inexact result raises (and is not evaluated), as does one past
# these bounds, so nothing hyops computes is rounded where the engine's result is not.
_EXACT = Context(prec=2000, Emax=100_000, Emin=-100_000, traps=[Inexact, InvalidOperation])

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
    except (_NotConstant, RecursionError, OverflowError, ValueError, ArithmeticError):
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
            found.append(("value", as_number(raw)))
        elif kind == "string":
            found.append(("value", re.sub(r"\\.", lambda m: _ESCAPES[m.group(0)], raw[1:-1])))
        elif kind == "word":
            if raw not in _WORDS:
                return None  # a reference or a function: not a constant
            found.append(("value", _WORDS[raw]))
        else:
            found.append(("op", raw))
    return found if len(found) <= _MAX_TOKENS else None


def _plain(number: Decimal | int) -> int | Number:
    """A computed number as hyops holds it: a whole one as an int (the engine prints 6 / 2 as 3),
    else a Number of its exact decimal text."""
    if isinstance(number, int):
        return number
    if not number.is_finite():
        raise _NotConstant
    if number == number.to_integral_value() and number.adjusted() < 4000:
        return int(number)
    return Number(number_text(number.normalize(_EXACT)))


def _number(value: Any) -> int | Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise _NotConstant  # the engine's arithmetic takes numbers only
    return value if isinstance(value, int) else Decimal(value)


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _NotConstant
    return value


def _equal(a: Any, b: Any) -> bool:
    """The engine's `==`: numbers by value (1 == 1.0), anything else by type and value."""
    numbers = [x for x in (a, b) if isinstance(x, (int, Decimal)) and not isinstance(x, bool)]
    if len(numbers) == 2:
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _remainder(a: int | Decimal, b: int | Decimal) -> int | Decimal:
    if b == 0:
        raise _NotConstant
    r = _EXACT.remainder(abs(Decimal(a)), abs(Decimal(b)))
    return -r if a < 0 else r


def _divide(a: int | Decimal, b: int | Decimal) -> int | Decimal:
    if b == 0:
        raise _NotConstant
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return a // b
    try:
        return _EXACT.divide(Decimal(a), Decimal(b))
    except Inexact:  # 1 / 3: as the engine rounds it
        return _binary_quotient(Fraction(Decimal(a)), Fraction(Decimal(b)))


_BITS = 512  # the precision of the engine's numbers (cty parses and divides big.Floats at 512 bits)


def _binary(q: Fraction) -> tuple[Fraction, Fraction]:
    """q rounded to a _BITS-bit binary float, ties to even, and that float's unit in the last place."""
    if q == 0:
        return q, Fraction(0)
    size = abs(q)
    shift = size.numerator.bit_length() - size.denominator.bit_length() - _BITS + 1
    while size / Fraction(2) ** shift >= 2 ** _BITS:
        shift += 1
    while size / Fraction(2) ** shift < 2 ** (_BITS - 1):
        shift -= 1
    scaled = size / Fraction(2) ** shift
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    if 2 * rest > scaled.denominator or (2 * rest == scaled.denominator and whole % 2):
        whole += 1
    ulp = Fraction(2) ** shift
    return (whole if q > 0 else -whole) * ulp, ulp


def _binary_quotient(a: Fraction, b: Fraction) -> Number:
    """a / b as the engine computes and writes it: the shortest decimal inside the rounding
    interval of the _BITS-bit quotient of the _BITS-bit operands."""
    value, ulp = _binary(_binary(a)[0] / _binary(b)[0])
    low, high = value - ulp / 2, value + ulp / 2
    for digits in range(1, 200):
        candidate = Context(prec=digits, rounding=ROUND_HALF_EVEN).divide(value.numerator, value.denominator)
        if low < Fraction(candidate) < high:
            return Number(format(candidate, "f"))
    raise _NotConstant


def _exact(op: Callable[[Decimal, Decimal], Decimal], on_ints: Callable[[int, int], int]) -> Callable[[Any, Any], Any]:
    def apply(a: int | Decimal, b: int | Decimal) -> int | Decimal:
        if isinstance(a, int) and isinstance(b, int):
            return on_ints(a, b)
        return op(Decimal(a), Decimal(b))
    return apply


_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "*": _exact(_EXACT.multiply, lambda a, b: a * b), "/": _divide, "%": _remainder,
    "+": _exact(_EXACT.add, lambda a, b: a + b), "-": _exact(_EXACT.subtract, lambda a, b: a - b)}
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
            value = self._unary()
            if isinstance(value, Number):  # the literal's text, negated: every digit kept
                return Number(value.text[1:] if value.text.startswith("-") else "-" + value.text)
            return _plain(-_number(value))
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
