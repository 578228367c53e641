"""Instance keys in addresses, spelled as the engine spells them, and read back.

Why: the engine prints an address (`state list`, `show -json`, the `-json` events, plans) with
its own quoting of a string key, and hyops builds some addresses itself (from a local state
file's `index_key`). An address hyops builds must be the very text the engine prints, or the
record holds one object under two spellings. The engines quote in two ways (captured from
each engine: tests/fixtures/address_keys/, scripts/capture_address_keys.py):

- Go's `%q` (Terraform < 1.11, OpenTofu before it took the same fix): `\\"`, `\\\\`, `\\n`,
  `\\t`, `\\r`, `\\a`..`\\v`, other control characters as `\\xNN`, other unprintable ones as
  `\\uNNNN`; `${` and `%{` stay as they are.
- HCL's quoted-string syntax (Terraform >= 1.11): `\\"`, `\\\\`, `\\n`, `\\r`, `\\t`, a `$` or `%`
  before `{` doubled (`$${`, `%%{`), every other unprintable character `\\uNNNN`/`\\UNNNNNNNN`.

Every engine *parses* an address (`-target`, `import`, `state rm`, an `import` block's `to`)
as HCL: an address printed by an engine of the first kind with `${` or a control character in
a key does not parse back. So a command hyops prints or runs names an address in the HCL
spelling (`command_address`), whatever the engine printed. Which spelling an engine prints is
a version gate: engine/features.py `key_spelling`.
"""

from __future__ import annotations

import re
from enum import Enum


class Spelling(Enum):
    """How an engine quotes a string instance key in the addresses it prints."""

    GO = "go"  # fmt.Sprintf("[%q]", key)
    HCL = "hcl"  # HCL's quoted string: template openers doubled


_GO_SHORT = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
             '"': '\\"', "\\": "\\\\"}
_HCL_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def _unprintable(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def quote_key(key: str, spelling: Spelling) -> str:
    """A string key quoted as the engine of `spelling` quotes it, quotes included."""
    out = ['"']
    for i, char in enumerate(key):
        short = (_GO_SHORT if spelling is Spelling.GO else _HCL_SHORT).get(char)
        if short is not None:
            out.append(short)
        elif spelling is Spelling.HCL and char in "$%" and key[i + 1:i + 2] == "{":
            out.append(char * 2)
        elif char.isprintable():  # Python's "printable" is Go's unicode.IsPrint: letters, marks,
            out.append(char)  # numbers, punctuation, symbols and the ASCII space
        elif spelling is Spelling.GO and ord(char) < 0x20:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(_unprintable(char))
    out.append('"')
    return "".join(out)


def render_key(key: int | str | None, spelling: Spelling) -> str:
    """`[0]`, `["key"]` as the engine writes an instance key into an address; "" for none."""
    if key is None:
        return ""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"[{key}]"
    return f"[{quote_key(str(key), spelling)}]"


_ESCAPE = re.compile(r'\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))', re.S)
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "\\": "\\"}


def unquote_key(quoted: str, spelling: Spelling) -> str:
    """The key a quoted key (quotes included) spells: `quote_key`'s inverse. ValueError when
    it is not a quoted key of that spelling."""
    if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
        raise ValueError(f"not a quoted key: {quoted!r}")
    body = quoted[1:-1]

    def escape(match: re.Match[str]) -> str:
        hex2, hex4, hex8, char = match.groups()
        code = hex2 or hex4 or hex8
        if code is not None:
            return chr(int(code, 16))
        if char in _SIMPLE:
            return _SIMPLE[char]
        raise ValueError(f"unknown escape \\{char} in {quoted!r}")

    return _ESCAPE.sub(escape, body) if spelling is Spelling.GO else _unescape_hcl(body, quoted)


def _unescape_hcl(body: str, quoted: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith(("$${", "%%{"), i):
            out.append(body[i] + "{")
            i += 3
            continue
        if body.startswith(("${", "%{"), i):
            raise ValueError(f"a template sequence in a quoted key: {quoted!r}")
        match = _ESCAPE.match(body, i) if body[i] == "\\" else None
        if match is None:
            out.append(body[i])
            i += 1
            continue
        _hex2, hex4, hex8, char = match.groups()
        if hex4 or hex8:
            out.append(chr(int(hex4 or hex8, 16)))
        elif char is not None and char in 'nrt"\\':
            out.append(_SIMPLE[char])
        else:
            raise ValueError(f"unknown escape in {quoted!r}")
        i = match.end()
    return "".join(out)


_QUOTED = re.compile(r'\["((?:[^"\\]|\\.)*)"\]', re.S)


def respell(address: str, source: Spelling, target: Spelling) -> str:
    """The address with each string key (`["..."]`, of resources and module calls alike) read
    in `source`'s spelling and written in `target`'s; unchanged where the two agree or a key
    does not read in `source`'s spelling."""
    if source is target or '["' not in address:
        return address

    def one(match: re.Match[str]) -> str:
        try:
            return f"[{quote_key(unquote_key(match.group(0)[1:-1], source), target)}]"
        except ValueError:
            return match.group(0)

    return _QUOTED.sub(one, address)


def command_address(address: str, printed: Spelling) -> str:
    """An address the engine printed in `printed`'s spelling, as every engine parses it in a
    command (`-target`, `import`, `state rm`, an `import` block's `to`): HCL's spelling."""
    return respell(address, printed, Spelling.HCL)
