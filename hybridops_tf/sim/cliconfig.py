"""The user's own CLI config (TF_CLI_CONFIG_FILE) combined with the sim provider's mirror.

The engine reads one CLI config file, and that file has no include directive: so for a sim
module hyops gives the engine a derived file, the user's text as written (comments, settings
it does not know, `credentials` blocks: all of it) plus what installs the sim provider from
hyops's mirror:

- no `provider_installation` block in the user's file: hyops's own block is appended, a
  `filesystem_mirror` for the sim and `direct { exclude = [sim] }` for every other provider
  (what hyops writes without a file of the user's). An explicit block also ends the engine's
  implied local mirrors (`~/.terraform.d/plugins`, `terraform.d/plugins`, ...): their
  providers come from the registry instead, as they already did with hyops's own config;
- one such block: the engine takes only one, so the sim's `filesystem_mirror` goes into the
  user's block, and the sim is added to the `exclude` of each installation method of theirs
  that would otherwise be asked for it (`direct`, `network_mirror`, `filesystem_mirror`, any
  other), so only hyops's mirror answers for it;
- a file that already installs the sim from a mirror of its own (the sim named in the
  `include` of one of its mirrors) is used as it is: the user has done it.

The file is read with python-hcl2 for its structure (where the blocks and attributes are);
the derived text is the user's with insertions at those places. The engine reads its CLI
config as HCL 1, where a key may be quoted (`dev_overrides { "ns/name" = "/dir" }`), which
python-hcl2 (HCL 2) does not take: such keys are masked, same length, before parsing.
What cannot be combined safely is CliConfigError: one line, why and what to do.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.sim.names import CLI_CONFIG_ENV, SIM_SOURCE, CliConfigError  # re-exported: the CLI's and tests' names

VERSION = 1  # of the composition below: a new one rewrites every derived file
ADDED = "added by hybridops-tf"
_KEY = r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_-]*'
_KEY_AT = re.compile(rf"[ \t]*({_KEY})")
_VALUE_AT = re.compile(rf"[ \t]*(?:{_KEY})[ \t]*=")
_QUOTED_KEY = re.compile(r'(?m)^([ \t]*)("(?:[^"\\\n]|\\.)*")(?=[ \t]*=(?!=))')
_GAP = re.compile(r"(?:\s|#[^\n]*|//[^\n]*|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


@dataclass(frozen=True, slots=True)
class Node:
    """A block or attribute of the user's file: where it is (`end` exclusive: a block's
    closing brace is at end - 1) and, for a block, its body."""

    kind: str  # "block" or "attribute"
    name: str
    start: int
    end: int
    body: tuple[Node, ...] = ()

    def blocks(self, name: str | None = None) -> list[Node]:
        return [n for n in self.body if n.kind == "block" and (name is None or n.name == name)]

    def attribute(self, name: str) -> Node | None:
        return next((n for n in self.body if n.kind == "attribute" and n.name == name), None)


def stamp(text: str, where: str, mirror: Path) -> str:
    """The derived file's first line: a digest of everything it is made of, so an unchanged
    user file and mirror need no new parse."""
    digest = hashlib.sha256(json.dumps([VERSION, text, where, str(mirror)]).encode()).hexdigest()
    return f"# hybridops-tf derived CLI config v{VERSION} sha256:{digest}\n"


def combine(text: str, where: str, mirror: Path) -> str | None:
    """The derived CLI config: `text` (the user's file, read from `where`) plus the sim
    mirror; None when the file already installs the sim from a mirror of its own.
    CliConfigError when the two cannot be combined safely."""
    top = parse(text, where, mirror)
    if top.attribute("provider_installation") is not None:
        raise CliConfigError(
            f"your {CLI_CONFIG_ENV} {where} sets provider_installation as an attribute "
            "(`provider_installation = {...}`): write it as a block (`provider_installation {...}`) "
            f"so hyops can add the sim provider's mirror to it, or {_how(mirror)}")
    found = top.blocks("provider_installation")
    if len(found) > 1:
        raise CliConfigError(
            f"your {CLI_CONFIG_ENV} {where} has {len(found)} provider_installation blocks and the "
            f"engine takes only one: merge them, or {_how(mirror)}")
    head = stamp(text, where, mirror) + _header(where)
    if not found:
        tail = "" if not text or text.endswith("\n") else "\n"
        return head + text + tail + "\n" + _own_block(mirror)
    edits = _merge(text, where, found[0], mirror)
    if edits is None:
        return None
    for at, insert in sorted(edits, key=lambda edit: edit[0], reverse=True):
        text = text[:at] + insert + text[at:]
    return head + text


def parse(text: str, where: str, mirror: Path) -> Node:
    """The file's top level as Nodes; CliConfigError when python-hcl2 does not read it."""
    if text.lstrip().startswith("{"):
        raise CliConfigError(
            f"your {CLI_CONFIG_ENV} {where} is in JSON syntax: hyops adds the sim provider's mirror "
            f"to HCL ones only; {_how(mirror)}")
    masked = _QUOTED_KEY.sub(lambda m: m.group(1) + "_" * len(m.group(2)), text)
    try:
        tree = _tree(masked)
        return Node("block", "", 0, len(text), _nodes(_body(tree), text))
    except CliConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - lark's errors and python-hcl2's own, said in one line
        raise CliConfigError(
            f"hyops cannot read your {CLI_CONFIG_ENV} {where}{_at(err)}, so it cannot add the sim "
            f"provider's mirror to it: fix the file, or {_how(mirror)}") from None


def _tree(text: str) -> Any:
    """python-hcl2's raw Lark tree, with positions (8.x: parses_to_tree; 7.x: parses)."""
    import hcl2

    parse = getattr(hcl2, "parses_to_tree", None)
    if parse is not None:
        return parse(text)
    from hcl2.parser import parser

    return parser().parse(text + "\n")


def _body(tree: Any) -> Any:
    if getattr(tree, "data", None) == "body":
        return tree
    body = next((c for c in getattr(tree, "children", ()) if getattr(c, "data", None) == "body"), None)
    if body is None:
        raise ValueError("python-hcl2 gave no body")
    return body


def _nodes(body: Any, text: str) -> tuple[Node, ...]:
    found = []
    for child in body.children:
        kind = getattr(child, "data", None)
        if kind not in ("block", "attribute"):
            continue
        start, end = child.meta.start_pos, child.meta.end_pos
        key = _KEY_AT.match(text, start)
        if key is None or (kind == "block" and text[end - 1] != "}"):
            raise ValueError("python-hcl2 gave positions that do not fit the file")
        inner = next((c for c in child.children if getattr(c, "data", None) == "body"), None)
        nodes = _nodes(inner, text) if kind == "block" and inner is not None else ()
        found.append(Node(kind, _decode(key.group(1)), start, end, nodes))
    return tuple(found)


def _merge(text: str, where: str, block: Node, mirror: Path) -> list[tuple[int, str]] | None:
    """The insertions that add the sim to the user's provider_installation block, or None
    when it installs the sim from a mirror of its own already."""
    methods = [m for m in block.blocks() if m.name != "dev_overrides"]
    lists = {m: (_list(text, where, m, "include", mirror), _list(text, where, m, "exclude", mirror))
             for m in methods}
    for method, (include, exclude) in lists.items():
        named = include is not None and any(_names_sim(p) for p in include[0])
        if named and not (exclude is not None and any(_matches(p) for p in exclude[0])):
            if method.name != "direct":
                return None  # their own mirror serves the sim: the file is used as it is
            raise CliConfigError(
                f"your {CLI_CONFIG_ENV} {where} asks `direct` for {SIM_SOURCE} (its include), which "
                f"no registry serves: take it out of that include, or {_how(mirror)}")
    for overrides in block.blocks("dev_overrides"):
        if any(_names_sim(n.name) for n in overrides.body if n.kind == "attribute"):
            raise CliConfigError(
                f"your {CLI_CONFIG_ENV} {where} has a dev_overrides for {SIM_SOURCE}, and hyops cannot "
                f"tell which build you mean to install: {_how(mirror)}")
    edits = []
    for method, (include, exclude) in lists.items():
        if exclude is not None and any(_matches(p) for p in exclude[0]):
            continue  # the sim is excluded already
        if include is not None and not any(_matches(p) for p in include[0]):
            continue  # never asked for the sim
        if exclude is not None:
            items, bracket = exclude
            gap = "," if text[bracket + 1] in "\r\n" else ", "  # keep their line breaks
            edits.append((bracket + 1, json.dumps(SIM_SOURCE) + (gap if items else "")))
        else:
            edits.append(_before_close(text, method, [f"exclude = [{json.dumps(SIM_SOURCE)}] # {ADDED}"]))
    edits.append(_before_close(text, block, [f"# {ADDED}: the sim provider from its local mirror",
                                             *_mirror_lines(mirror)]))
    return edits


def _list(text: str, where: str, method: Node, name: str, mirror: Path) -> tuple[list[str], int] | None:
    """A method's include/exclude: its strings and where its `[` is; None when not set."""
    attribute = method.attribute(name)
    if attribute is None:
        return None
    value = _VALUE_AT.match(text, attribute.start)
    parsed = _string_list(text, value.end(), attribute.end) if value is not None else None
    if parsed is None:
        raise CliConfigError(
            f"the {name} of {method.name} in your {CLI_CONFIG_ENV} {where} is not a list of quoted "
            f"provider addresses, so hyops cannot add the sim provider to it: write it as one, or "
            f"{_how(mirror)}")
    return parsed


def _string_list(text: str, start: int, end: int) -> tuple[list[str], int] | None:
    """`[ "a", "b", ]` (comments allowed) between start and end: its strings and the
    position of its `[`; None for any other value."""
    pos = _skip_gap(text, start, end)
    if pos >= end or text[pos] != "[":
        return None
    bracket, items = pos, []
    pos += 1
    while True:
        pos = _skip_gap(text, pos, end)
        if pos < end and text[pos] == "]":
            break
        string = _STRING.match(text, pos, end)
        if string is None:
            return None
        items.append(_decode(string.group(0)))
        pos = _skip_gap(text, string.end(), end)
        if pos < end and text[pos] == ",":
            pos += 1
        elif not (pos < end and text[pos] == "]"):
            return None
    return items, bracket


def _skip_gap(text: str, pos: int, end: int) -> int:
    """The position after the whitespace and comments at pos (_GAP also matches nothing)."""
    gap = _GAP.match(text, pos, end)
    return gap.end() if gap else pos


def _decode(token: str) -> str:
    if not token.startswith('"'):
        return token
    try:
        return str(json.loads(token))  # HCL's common escapes are JSON's
    except ValueError:
        return token[1:-1]


def _address(pattern: str) -> list[str] | None:
    parts = pattern.strip().lower().split("/")
    if len(parts) == 2:
        parts = ["registry.terraform.io", *parts]
    return parts if len(parts) == 3 else None


def _matches(pattern: str) -> bool:
    """True when an include/exclude pattern (`host/ns/name`, `ns/name`, `*` segments)
    covers the sim provider."""
    parts = _address(pattern)
    return parts is not None and all(p in ("*", s) for p, s in zip(parts, SIM_SOURCE.split("/"), strict=True))


def _names_sim(address: str) -> bool:
    return _address(address) == SIM_SOURCE.split("/")


def _before_close(text: str, block: Node, lines: list[str]) -> tuple[int, str]:
    """An insertion of `lines` as the last lines of `block`'s body, indented one step
    deeper than the line the block starts on."""
    close = block.end - 1
    from_line = text[text.rfind("\n", 0, block.start) + 1:]
    outer = from_line[:len(from_line) - len(from_line.lstrip(" \t"))]  # the line's indent
    chunk = "".join(f"{outer}  {line}\n" for line in lines)
    line_start = text.rfind("\n", 0, close) + 1
    if text[line_start:close].strip() == "":  # the closing brace starts its line
        return line_start, chunk
    return close, "\n" + chunk + outer


def _mirror_lines(mirror: Path) -> list[str]:
    return ["filesystem_mirror {", f"  path    = {json.dumps(str(mirror))}",
            f"  include = [{json.dumps(SIM_SOURCE)}]", "}"]


def _own_block(mirror: Path) -> str:
    """hyops's block for a file without one: the sim from the mirror, the rest as before
    from its registry (an explicit block replaces the implied local mirrors as well)."""
    lines = [*_mirror_lines(mirror), "direct {", f"  exclude = [{json.dumps(SIM_SOURCE)}]", "}"]
    return (f"# {ADDED}: the sim provider from its local mirror, every other provider from its\n"
            "# registry (an explicit provider_installation replaces the implied local mirrors)\n"
            "provider_installation {\n" + "".join(f"  {line}\n" for line in lines) + "}\n")


def _header(where: str) -> str:
    return (f"# Your {CLI_CONFIG_ENV}, {where}, as it is, plus the sim provider's mirror (the lines\n"
            f"# marked \"{ADDED}\"). hyops rewrites this file when either changes: edit yours.\n"
            "# Whatever yours holds (credentials too) is copied here, hence mode 0600.\n")


def _how(mirror: Path) -> str:
    return (f"add a filesystem_mirror with path = {json.dumps(str(mirror))} and include = "
            f"[{json.dumps(SIM_SOURCE)}] to its provider_installation yourself (hyops then uses the "
            f"file as it is), or unset {CLI_CONFIG_ENV}")


def _at(err: BaseException) -> str:
    line, column = getattr(err, "line", None), getattr(err, "column", None)
    if not isinstance(line, int) or line < 1:
        return f" ({type(err).__name__})"
    return f" (line {line}" + (f", column {column})" if isinstance(column, int) and column > 0 else ")")

