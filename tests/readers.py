"""Readers of what hyops writes for a person to read: GitHub Markdown tables (step summaries,
PR comments) and Mermaid flowcharts, parsed back the way GitHub and Mermaid read them, so a
test asserts on what a reader sees. Shared by the unit and integration suites."""

from __future__ import annotations

import re

# --- GitHub Markdown tables -------------------------------------------------------------------

_CELL = re.compile(r"((?:\\.|[^|\\])*)\|")  # as GitHub splits a row: `\x` is one character
_PLAIN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def cells(line: str) -> list[str]:
    assert line.startswith("|") and line.endswith("|"), line
    return [c.strip() for c in _CELL.findall(line[1:])]


def parse_table(lines: list[str]) -> list[dict[str, str]]:
    """The first table in `lines` as dicts keyed by the header's cells."""
    rows = [ln for ln in lines if ln.startswith("|")]
    header = cells(rows[0])
    assert all(re.fullmatch(r":?-{3,}:?", c) for c in cells(rows[1])), rows[1]
    return [dict(zip(header, cells(r), strict=True)) for r in rows[2:]]


def plain(cell: str) -> str:
    """What a reader sees in a cell: code spans as their content, escapes undone, <br> as a newline."""
    out, i = [], 0
    while i < len(cell):
        if cell.startswith("<br>", i):
            out.append("\n")
            i += 4
        elif escaped := _PLAIN_ESCAPE.match(cell, i):
            out.append(escaped.group(1))
            i = escaped.end()
        elif fence := re.compile(r"`+").match(cell, i):
            end = cell.index(fence.group(), fence.end())
            content = cell[fence.end():end].replace("\\|", "|")
            if content.startswith(" ") and content.endswith(" ") and content.strip():
                content = content[1:-1]
            out.append(content)
            i = end + len(fence.group())
        else:
            out.append(cell[i])
            i += 1
    return "".join(out)


def code_spans(cell: str) -> list[str]:
    return [m.group(2).replace("\\|", "|").strip() for m in re.finditer(r"(`+)(.+?)\1", cell)]


# --- Mermaid flowcharts -------------------------------------------------------------------------

_NODE = re.compile(r'^  (\w+)(\[|\(|\{\{)"(.*)"(\]|\)|\}\})$')
_EDGE = re.compile(r'^  (\w+) (-->|==>)(?:\|"(.*)"\|)? (\w+)$')
_CLASS = re.compile(r"^  class (\w+) (\w+)$")
_CLASSDEF = re.compile(r"^  classDef (\w+) ((?:[a-z-]+:[^,]+,?)+)$")  # `stroke-dasharray:6 4` has a space


_NAMED = {"quot": '"', "lt": "<", "gt": ">", "amp": "&"}


def decode(text: str) -> str:
    """Mermaid's entity codes (`#35;`, `#quot;`) back to characters, `<br/>` to a newline."""
    assert not re.search(r'"|<(?!br/>)', text.replace("<br/>", "")), text  # nothing raw that ends a label
    text = text.replace("<br/>", "\n")
    return re.sub(r"#(\d+|[a-z]+);", lambda m: chr(int(m.group(1))) if m.group(1).isdigit() else _NAMED[m.group(1)],
                  text)


def parse_mermaid(lines: list[str]) -> dict[str, object]:
    """node id -> label lines, edges (from, arrow, label, to), id -> class, class -> style."""
    assert lines[0] == "flowchart LR"
    nodes: dict[str, list[str]] = {}
    edges: list[tuple[str, str, str, str]] = []
    classes: dict[str, str] = {}
    styles: dict[str, str] = {}
    for line in lines[1:]:
        if line.startswith("  %%"):
            continue
        if m := _NODE.match(line):
            nodes[m.group(1)] = decode(m.group(3)).split("\n")
        elif m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), decode(m.group(3) or ""), m.group(4)))
        elif m := _CLASS.match(line):
            classes[m.group(1)] = m.group(2)
        elif m := _CLASSDEF.match(line):
            styles[m.group(1)] = m.group(2)
        else:
            raise AssertionError(f"a line Mermaid would not read as ours: {line!r}")
    return {"nodes": nodes, "edges": edges, "classes": classes, "styles": styles}
