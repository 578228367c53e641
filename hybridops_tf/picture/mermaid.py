"""A StackPicture as a Mermaid flowchart, which GitHub and GitLab draw in job summaries,
merge-request comments and any markdown file (`stack graph --format mermaid`, and above the
table of every `--format markdown` stack summary).

Node ids are `m_` and the member's name with anything but letters, digits and `_` made `_`
(a numbered suffix keeps them apart), so no member name can be a Mermaid keyword. In label
text the characters that could end a label or start markup (`"`, `<`, `>`, `&`, `#`, a
backtick) are written as Mermaid's entity codes (`#quot;`, `#35;`, ...), control characters
as spaces; everything else, glyphs included, as it is (numeric codes of glyphs are not
decoded after a `<br/>` by every Mermaid version).
"""

from __future__ import annotations

import re

from hybridops_tf.picture.model import LOOKS, Node, StackPicture

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_]")
_ENTITIES = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "#": "#35;", "`": "#96;"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# kind -> (open, close) of the node's shape: a failure stands out as a hexagon, members
# that never ran are rounded; the rest are boxes.
_SHAPES = {"error": ("{{", "}}"), "interrupted": ("{{", "}}"), "pending": ("(", ")"), "none": ("(", ")")}


def node_ids(picture: StackPicture) -> dict[str, str]:
    """member name -> its Mermaid node id, distinct for every member."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for n in picture.nodes:
        base = "m_" + _UNSAFE_ID.sub("_", n.name)
        ident, i = base, 2
        while ident in taken:
            ident, i = f"{base}_{i}", i + 1
        taken.add(ident)
        ids[n.name] = ident
    return ids


def text(value: str) -> str:
    """Label text that cannot end its label or start markup (see the module's docstring)."""
    return "".join(_ENTITIES.get(ch, ch) for ch in _CONTROL.sub(" ", value))


def label_lines(node: Node) -> list[str]:
    """What a node says, line by line: name, status (glyph and word) and why."""
    first = node.name + (f" (owned by {node.owned_by})" if node.owned_by else "")
    if node.status is None or node.look is None:
        return [first, node.module_ref]
    return [first, f"{node.look.glyph} {node.status}", *node.detail]


def to_mermaid(picture: StackPicture) -> list[str]:
    """`flowchart LR`: a node per member (its status as a class), an edge per dependency
    labelled with the outputs wired along it; `==>` where the downstream is owned."""
    ids = node_ids(picture)
    lines = ["flowchart LR"]
    if picture.with_status and picture.run_id:
        lines.append(f"  %% stack {picture.stack}: last {picture.command} run {picture.run_id}")
    for n in picture.nodes:
        opening, closing = _SHAPES.get(n.kind or "", ("[", "]"))
        label = "<br/>".join(text(line) for line in label_lines(n))
        lines.append(f'  {ids[n.name]}{opening}"{label}"{closing}')
    for e in picture.edges:
        arrow = "==>" if e.owns else "-->"
        words = ("owns" + (f" · {e.label}" if e.label else "")) if e.owns else e.label
        lines.append(f'  {ids[e.upstream]} {arrow}|"{text(words)}"| {ids[e.downstream]}' if words
                     else f"  {ids[e.upstream]} {arrow} {ids[e.downstream]}")
    kinds = [k for k in LOOKS if any(n.kind == k for n in picture.nodes)]
    for kind in kinds:
        look = LOOKS[kind]
        style = f"fill:{look.fill},stroke:{look.stroke},stroke-width:{look.width:g}px,color:#1f2328"
        if look.dash:
            style += f",stroke-dasharray:{look.dash}"
        lines.append(f"  classDef {kind} {style}")
    for n in picture.nodes:
        if n.kind is not None:
            lines.append(f"  class {ids[n.name]} {n.kind}")
    return lines


def markdown_block(picture: StackPicture) -> list[str]:
    """The flowchart as a fenced ```mermaid block, for a markdown document."""
    return ["```mermaid", *to_mermaid(picture), "```"]
