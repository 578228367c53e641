"""HCL literal values as the engine reads them: `.tfvars` files, `TF_VAR_` and `-var` text.

python-hcl2 parses the syntax but leaves template strings as written: `"$${aws:username}"`
comes back with its `$${` escape, a heredoc without its closing newline (and with its indent
when asked to keep it), so a value decoded from its output and written again for the engine is
not the value the engine would have read (docs/inputs.md: Values as the engine reads them).
Here python-hcl2 is asked for the text as written (quotes and heredocs kept) and each template
literal is decoded by HCL's own rules:
- a quoted string: the escapes `\\n \\r \\t \\" \\\\ \\uNNNN \\UNNNNNNNN`, `$${` for a literal `${` and
  `%%{` for `%{`;
- a heredoc (`<<EOT`, `<<-EOT`): no backslash escapes, `$${` and `%%{` as above, every line
  ending in a newline, and for `<<-` the smallest indent of its non-blank lines removed;
- an interpolation (`${...}`) or a directive (`%{...}`) anywhere in a template, and any other
  expression, is not a literal: it is returned as an `Expression`, the text python-hcl2 gave,
  for inputs/constants.py to evaluate where it can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.numbers import as_number

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


class Expression(str):
    """HCL that is not a literal value (a reference, a call, a template with `${`/`%{`): kept
    as python-hcl2 wrote it; `${...}` around a whole expression."""

    __slots__ = ()


def parse_values(text: str, path: Path | str) -> dict[str, Any]:
    """The attributes of an HCL body (a `.tfvars` file) as values: literals decoded as the engine
    decodes them, anything else an `Expression`. UsageError naming `path` when it does not parse."""
    from hybridops_tf.inputs.declarations import parse_hcl_raw

    marks = _Marks.unused_in(text)
    text = text.replace("$${", marks.dollar).replace("%%{", marks.percent)
    raw = parse_hcl_raw(text, path)
    if _lossy(raw):
        raw = _parse_keeping_numbers(text, path)
    return {name: literal(value, marks) for name, value in raw.items()
            if not name.startswith("__")}  # python-hcl2's own bookkeeping (line numbers)


def _lossy(raw: Any) -> bool:
    """Whether python-hcl2 made a float of a number literal (a bare one, or inside an expression
    it hands back as `${...}` text): its digits past float64's are gone."""
    if isinstance(raw, float):
        return True
    if isinstance(raw, str):
        return raw.startswith("${")
    if isinstance(raw, list):
        return any(_lossy(item) for item in raw)
    if isinstance(raw, dict):
        return any(_lossy(item) for item in raw.values())
    return False


def _parse_keeping_numbers(text: str, path: Path | str) -> dict[str, Any]:
    """python-hcl2's as-written form, each number literal a Number of its text (base/numbers.py)
    instead of a float: the engine's numbers are arbitrary precision. Run only after the same text
    parsed (parse_hcl_raw said what is wrong with a text that does not)."""
    import hcl2
    from hcl2.rules.tokens import FloatLiteral, IntLiteral

    from hybridops_tf.inputs.declarations import _serialization_options

    class FloatText(FloatLiteral):
        @property
        def serialize_conversion(self) -> Any:
            return _as_number

    class IntText(IntLiteral):
        @property
        def serialize_conversion(self) -> Any:
            return _as_number

    try:
        tree = hcl2.parses(text)
        stack: list[Any] = [tree]
        while stack:
            node = stack.pop()
            if type(node) is FloatLiteral:
                node.__class__ = FloatText
            elif type(node) is IntLiteral:
                node.__class__ = IntText
            stack.extend(child for child in getattr(node, "children", None) or () if child is not None)
        options = _serialization_options(strip_string_quotes=False, preserve_heredocs=True)
        parsed: dict[str, Any] = hcl2.serialize(tree, serialization_options=options)
    except Exception as exc:  # noqa: BLE001 - python-hcl2 failing in its own code: said as such
        raise UsageError(f"cannot read the numbers of {path}: python-hcl2 failed ({type(exc).__name__}); "
                         "report this to hyops") from exc
    return parsed


def _as_number(text: Any) -> Any:
    """A number token's text as a Number (or an int, where that keeps it); python-hcl2's own
    reading of a token the engine's literal does not cover."""
    try:
        return as_number(str(text))
    except ValueError:
        return float(text) if any(c in str(text) for c in ".eE") else int(text)


# A heredoc's opener and its newline: a quoted string holds no newline as written ("<<" is text)
_HEREDOC = re.compile(r"<<-?[A-Za-z_][A-Za-z0-9_-]*\n")


@dataclass(frozen=True)
class _Marks:
    """python-hcl2's grammar wants a `}` after `$${` or `%%{` (it refuses `"$${"`, which the engine
    reads as the text `${`): each escape is handed to it as one private-use character, which no
    grammar rule looks at, and decoded back here; two characters the text does not hold, so a
    value holding private-use characters reads back as written."""

    dollar: str = ""
    percent: str = ""

    @classmethod
    def unused_in(cls, text: str) -> _Marks:
        free = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)
        return cls(next(free), next(free))

    def escape_at(self, text: str, i: int) -> str | None:
        """The escape a mark at text[i] stands for, if one does."""
        if not self.dollar:
            return None
        return "${" if text[i] == self.dollar else "%{" if text[i] == self.percent else None


def literal(raw: Any, marks: _Marks = _Marks()) -> Any:
    """One value of python-hcl2's as-written form, decoded (see the module's docstring)."""
    if isinstance(raw, list):
        return [literal(item, marks) for item in raw]
    if isinstance(raw, dict):
        return {_key(key, marks): literal(item, marks) for key, item in raw.items()
                if not str(key).startswith("__")}
    if not isinstance(raw, str):
        return raw  # numbers, bools and null come back as Python values
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        inner = raw[1:-1]
        return _heredoc(inner, raw, marks) if _HEREDOC.match(inner) else _quoted(inner, raw, marks)
    return Expression(raw)


def has_expression(value: Any) -> bool:
    """Whether any part of a decoded value is an Expression (not a literal)."""
    if isinstance(value, Expression):
        return True
    if isinstance(value, list):
        return any(has_expression(item) for item in value)
    if isinstance(value, dict):
        return any(has_expression(k) or has_expression(v) for k, v in value.items())
    return False


def as_written(value: Any) -> Any:
    """A decoded value with each Expression as plain text: what a record shows for a value hyops
    could not read (YAML and JSON writers take no str subclass)."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return [as_written(item) for item in value]
    if isinstance(value, dict):
        return {str(k): as_written(v) for k, v in value.items()}
    return value


def _key(raw: Any, marks: _Marks) -> Any:
    """An object key: a bare name as it is, a quoted one decoded."""
    if isinstance(raw, str) and len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        return _quoted(raw[1:-1], raw, marks)
    return raw


def _quoted(inner: str, raw: str, marks: _Marks) -> str:
    """A quoted template's text, or an Expression when it interpolates, directs or holds an escape
    the engine would refuse."""
    out: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\":
            nxt = inner[i + 1:i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            width = {"u": 4, "U": 8}.get(nxt)
            digits = inner[i + 2:i + 2 + width] if width else ""
            if not width or len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                return Expression(raw)  # an escape HCL does not know: the engine refuses the file
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        step = _template_mark(inner, i, marks)
        if step is None:
            return Expression(raw)
        out.append(step[0])
        i += step[1]
    return "".join(out)


def _heredoc(inner: str, raw: str, marks: _Marks) -> str:
    """A heredoc's text: its lines each ending in a newline, `<<-` ones unindented."""
    opener, _, rest = inner.partition("\n")
    body = rest.split("\n")[:-1] if "\n" in rest else []  # the last line is the closing marker
    if opener.startswith("<<-"):
        indents = [len(line) - len(line.lstrip(" \t")) for line in body if line.strip(" \t")]
        cut = min(indents, default=0)
        body = [line[cut:] if line.strip(" \t") else line for line in body]
    text = "".join(f"{line}\n" for line in body)
    out: list[str] = []
    i = 0
    while i < len(text):
        step = _template_mark(text, i, marks)
        if step is None:
            return Expression(raw)
        out.append(step[0])
        i += step[1]
    return "".join(out)


def _template_mark(text: str, i: int, marks: _Marks) -> tuple[str, int] | None:
    """At text[i]: the literal text it stands for and its length, or None at an interpolation
    or directive (`${`, `%{`), where the template stops being a literal."""
    if text.startswith(("$${", "%%{"), i):
        return text[i + 1:i + 3], 3
    escaped = marks.escape_at(text, i)
    if escaped is not None:
        return escaped, 1
    if text.startswith(("${", "%{"), i):
        return None
    return text[i], 1
