"""Inline SVG for the HTML report: the stack graph with statuses and the run's timeline.

Laid out here, not by a browser script or Graphviz: members in columns by their longest chain
of upstreams (apply order left to right), edges as curves (one that skips a column arcs over
it), bars on a seconds axis. Every element a reader (or a test) looks for carries its facts as
data attributes: `data-member`/`data-status` on a node, `data-lane`, `data-address`,
`data-start`, `data-end`, `data-outcome` on a bar.
"""

from __future__ import annotations

from html import escape

from hybridops_tf.picture.model import LOOKS, Look, Node, StackPicture
from hybridops_tf.picture.timeline import Outcome, Timeline

NODE_W, NODE_H = 196, 82
COL_GAP, ROW_GAP = 84, 36
MARGIN = 16
ARC = 34  # how far above its row an edge that skips columns arcs, per column skipped
_CHAR = 7.0  # average glyph width at 12px, for clipping and label boxes


def _a(value: object) -> str:
    return escape(str(value), quote=True)


def _clip(text: str, room: float, size: float = 12) -> str:
    fits = max(4, int(room / (_CHAR * size / 12)))
    return text if len(text) <= fits else text[: fits - 1].rstrip() + "…"


def _fit(width: float, height: float) -> str:
    """Drawn at its size, or shrunk to the page's width (never cut off): a wide stack stays whole."""
    return (f'width="{width:g}" height="{height:g}" viewBox="0 0 {width:g} {height:g}" '
            f'style="max-width:100%;height:auto"')


def _stroke(look: Look) -> str:
    dash = f' stroke-dasharray="{look.dash}"' if look.dash else ""
    return f'fill="{look.fill}" stroke="{look.stroke}" stroke-width="{look.width:g}"{dash}'


def graph_svg(picture: StackPicture) -> str:
    columns: dict[int, list[Node]] = {}
    for n in picture.nodes:
        columns.setdefault(n.layer, []).append(n)
    rows = max((len(c) for c in columns.values()), default=1)
    spans = [abs(picture.node(e.downstream).layer - picture.node(e.upstream).layer) for e in picture.edges]
    top = MARGIN + 18 + ARC * max([s - 1 for s in spans if s > 1] or [0])
    where: dict[str, tuple[float, float]] = {}
    for layer, nodes in sorted(columns.items()):
        for row, n in enumerate(nodes):
            where[n.name] = (MARGIN + layer * (NODE_W + COL_GAP), top + row * (NODE_H + ROW_GAP))
    width = MARGIN * 2 + (max(columns, default=0) + 1) * (NODE_W + COL_GAP) - COL_GAP
    height = top + rows * (NODE_H + ROW_GAP) - ROW_GAP + MARGIN
    out = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" {_fit(width, height)} '
           f'role="img" aria-label="stack {_a(picture.stack)} as a graph">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>']
    labels: list[str] = []
    for e in picture.edges:
        (x1, y1), (x2, y2) = where[e.upstream], where[e.downstream]
        sx, sy, ex, ey = x1 + NODE_W, y1 + NODE_H / 2, x2, y2 + NODE_H / 2
        span = picture.node(e.downstream).layer - picture.node(e.upstream).layer
        if span > 1:  # over the columns in between
            lift = min(y1, y2) - 14 - ARC * (span - 1)
            sx, sy, ex, ey = x1 + NODE_W / 2, y1, x2 + NODE_W / 2, y2
            c1, c2 = (sx, lift), (ex, lift)
        else:
            c1, c2 = (sx + COL_GAP / 2, sy), (ex - COL_GAP / 2, ey)
        width_ = 3 if e.owns else 1.6
        out.append(f'<path class="edge" data-from="{_a(e.upstream)}" data-to="{_a(e.downstream)}" '
                   f'd="M{sx:.1f},{sy:.1f} C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {ex:.1f},{ey:.1f}" '
                   f'fill="none" stroke="#57606a" stroke-width="{width_}" marker-end="url(#arrow)"/>')
        words = ("owns" + (f" · {e.label}" if e.label else "")) if e.owns else e.label
        if words:
            mx = 0.125 * sx + 0.375 * c1[0] + 0.375 * c2[0] + 0.125 * ex
            my = 0.125 * sy + 0.375 * c1[1] + 0.375 * c2[1] + 0.125 * ey
            shown = _clip(words, COL_GAP + NODE_W / 2, 11)
            w = len(shown) * _CHAR * 11 / 12 + 8
            labels.append(f'<g class="wire"><rect x="{mx - w / 2:.1f}" y="{my - 9:.1f}" width="{w:.1f}" height="16" '
                          f'rx="3" fill="#ffffff" stroke="#d0d7de"/><text x="{mx:.1f}" y="{my + 3:.1f}" '
                          f'font-size="11" text-anchor="middle" fill="#24292f">{_a(shown)}</text></g>')
    for n in picture.nodes:
        out.append(_node(n, *where[n.name]))
    out += labels
    out.append("</svg>")
    return "".join(out)


def _node(n: Node, x: float, y: float) -> str:
    look = n.look or LOOKS["none"]
    status = n.status or ""
    tip = "\n".join([n.name, n.module_ref, *([status] if status else []), *n.detail, *([n.error] if n.error else [])])
    parts = [f'<g class="node" data-member="{_a(n.name)}" data-status="{_a(status)}" data-kind="{_a(n.kind or "")}">',
             f"<title>{_a(tip)}</title>",
             f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="8" {_stroke(look)}/>']
    if look.double:
        parts.append(f'<rect x="{x + 4}" y="{y + 4}" width="{NODE_W - 8}" height="{NODE_H - 8}" rx="6" '
                     f'fill="none" stroke="{look.stroke}" stroke-width="1.5"/>')
    room = NODE_W - 20
    lines = [(f"{look.glyph} {n.name}" if n.status else n.name, 14, "700", "#1f2328"),
             (n.module_ref + (f" · owned by {n.owned_by}" if n.owned_by else ""), 11, "400", "#57606a")]
    if n.status:
        lines.append((status.upper(), 13, "700", look.stroke))
    if n.detail:
        lines.append((n.detail[0], 11, "400", "#24292f"))
    ty = y + 20
    for text, size, weight, colour in lines:
        cls = ' class="status"' if text == status.upper() and status else ""
        parts.append(f'<text{cls} x="{x + 10}" y="{ty}" font-size="{size}" font-weight="{weight}" '
                     f'fill="{colour}">{_a(_clip(text, room, size))}</text>')
        ty += size + 6
    parts.append("</g>")
    return "".join(parts)


# --- the timeline -----------------------------------------------------------------------------

LABEL_W, PLOT_W, ROW_H = 300, 640, 24
_AFTER = 130  # room right of the last bar for its label and the never-started boxes
_BAR = {Outcome.COMPLETE: ("#2da44e", "#1a7f37", "", "✓"),
        Outcome.ERROR: ("url(#hatch)", "#b42318", "", "✗"),
        Outcome.UNFINISHED: ("#f2cc60", "#9a6700", "4 3", "?")}
_STEPS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)


def _lane_label(lane: str, what: str, y: float, colour: str) -> str:
    lane = _clip(lane, 110)
    return (f'<text x="8" y="{y + 16}" font-size="12" fill="{colour}"><tspan font-weight="700">{_a(lane)}'
            f"</tspan> {_a(_clip(what, LABEL_W - 30 - _CHAR * len(lane)))}</text>")


def timeline_svg(timeline: Timeline) -> str:
    span = max(timeline.span, 0.5)
    scale = (PLOT_W - _AFTER) / span
    rows = len(timeline.bars) + len(timeline.waiting)
    head = 34
    height = head + rows * ROW_H + 16
    width = LABEL_W + PLOT_W + MARGIN
    step = next((s for s in _STEPS if span / s <= 8), _STEPS[-1])
    out = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" {_fit(width, height)} '
           'role="img" aria-label="the last run, one bar per resource">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e5534b"/>'
           '<rect width="2.5" height="6" fill="#8e1519"/></pattern></defs>']
    t = 0.0
    while t <= span + 1e-9:
        x = LABEL_W + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{head - 6}" x2="{x:.1f}" y2="{height - 12}" stroke="#eaeef2"/>'
                   f'<text x="{x:.1f}" y="{head - 10}" font-size="10" text-anchor="middle" fill="#57606a">'
                   f"{t:g}s</text>")
        t = round(t + step, 3)
    y = head
    for i, bar in enumerate(timeline.bars):
        fill, stroke, dash, glyph = _BAR[bar.outcome]
        x = LABEL_W + bar.start * scale
        w = max(6.0, (bar.end - bar.start) * scale)
        shade = ' fill="#f6f8fa"' if i % 2 else ' fill="#ffffff"'
        out.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW_H}"{shade}/>')
        for run in (r for r in timeline.runs if r.lane == bar.lane):  # its engine's whole run, behind
            out.append(f'<rect class="run" x="{LABEL_W + run.start * scale:.1f}" y="{y + ROW_H / 2 - 2}" '
                       f'width="{max(1.0, (run.end - run.start) * scale):.1f}" height="4" fill="#d0d7de"/>')
        out.append(_lane_label(bar.lane, bar.address, y, "#1f2328"))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        tip = f"{bar.lane}: {bar.address} {bar.action} {bar.outcome.value}, {bar.start:g}s to {bar.end:g}s"
        out.append(f'<rect class="bar" data-lane="{_a(bar.lane)}" data-address="{_a(bar.address)}" '
                   f'data-action="{_a(bar.action)}" data-start="{bar.start:g}" data-end="{bar.end:g}" '
                   f'data-outcome="{bar.outcome.value}" x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{ROW_H - 8}" '
                   f'rx="2" fill="{fill}" stroke="{stroke}" stroke-width="1.5"{dash_attr}>'
                   f"<title>{_a(tip)}</title></rect>")
        out.append(f'<text x="{x + w + 5:.1f}" y="{y + 16}" font-size="11" fill="{stroke}">'
                   f"{glyph} {_a(bar.action)} {bar.end - bar.start:.1f}s</text>")
        y += ROW_H
    stop_x = LABEL_W + (timeline.stop if timeline.stop is not None else span) * scale
    for item in timeline.waiting:
        what = item.address or "(whole member)"
        out.append(_lane_label(item.lane, what, y, "#57606a") +
                   f'<rect class="waiting" data-lane="{_a(item.lane)}" data-address="{_a(item.address or "")}" '
                   f'x="{stop_x + 6:.1f}" y="{y + 4}" width="110" height="{ROW_H - 8}" rx="2" fill="#ffffff" '
                   f'stroke="#57606a" stroke-dasharray="6 4"/><text x="{stop_x + 12:.1f}" y="{y + 16}" '
                   f'font-size="11" fill="#57606a">… never started</text>')
        y += ROW_H
    if timeline.stop is not None:
        out.append(f'<line class="stop" data-at="{timeline.stop:g}" x1="{stop_x:.1f}" y1="{head - 4}" '
                   f'x2="{stop_x:.1f}" y2="{height - 8}" stroke="#b42318" stroke-width="2.5" stroke-dasharray="7 4"/>'
                   f'<text x="{stop_x - 4:.1f}" y="11" font-size="11" font-weight="700" fill="#b42318" '
                   f'text-anchor="end">stopped here ({timeline.stop:g}s) ▼</text>')
    out.append("</svg>")
    return "".join(out)
