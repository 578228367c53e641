"""A StackPicture as Graphviz dot (`stack graph --format dot --status`): each member filled
and outlined as its status looks (LOOKS), its glyph and status word in its label, edges
labelled with the wired outputs, an owner's edge bold."""

from __future__ import annotations

from hybridops_tf.picture.model import StackPicture

# Graphviz has three line styles; LOOKS' SVG dash patterns map onto them by their first dash.
_DOT_SHAPES = {"error": "octagon", "interrupted": "octagon", "pending": "box", "none": "box"}


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _q(text: str) -> str:
    return f'"{_esc(text)}"'


def _line_style(dash: str) -> str | None:
    if not dash:
        return None
    first = float(dash.split()[0])
    return "dotted" if first <= 2 else "dashed"


def to_dot(picture: StackPicture) -> str:
    lines = [f"digraph {_q(picture.stack)} {{", "  rankdir=LR;", '  node [fontname="sans-serif"];',
             '  edge [fontname="sans-serif", fontsize=10];']
    for n in picture.nodes:
        look = n.look
        title = n.name + (f" (owned by {n.owned_by})" if n.owned_by else "")
        if look is None or n.status is None:
            parts = [title, n.module_ref]
            attrs = [f"label={_label(parts)}", "shape=box"] + (["style=dashed"] if n.owned_by else [])
        else:
            parts = [title, f"{look.glyph} {n.status}", *n.detail]
            styles = ["filled", *filter(None, [_line_style(look.dash)])]
            if look.width >= 3:
                styles.append("bold")
            attrs = [f"label={_label(parts)}", f"shape={_DOT_SHAPES.get(n.kind or '', 'box')}",
                     f"style={_q(','.join(styles))}", f"fillcolor={_q(look.fill)}", f"color={_q(look.stroke)}",
                     f"penwidth={look.width:g}"]
            if look.double:
                attrs.append("peripheries=2")
        lines.append(f"  {_q(n.name)} [{', '.join(attrs)}];")
    for e in picture.edges:
        words = ("owns" + (f": {e.label}" if e.label else "")) if e.owns else e.label
        attrs = [f"label={_q(words)}"] if words else []
        if e.owns:
            attrs.append("style=bold")
        lines.append(f"  {_q(e.upstream)} -> {_q(e.downstream)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines)


def _label(parts: list[str]) -> str:
    return '"' + "\\n".join(_esc(p) for p in parts) + '"'  # dot's own line break
