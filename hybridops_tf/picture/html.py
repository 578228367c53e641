"""`hyops report --html FILE`: one self-contained HTML page (docs/report.md).

Inline CSS and SVG only: no script, no font or image from anywhere (a Content-Security-Policy
of `default-src 'none'` says so to the browser too), so the page reads the same offline, in a
CI artifact viewer or attached to a ticket. Order follows a reader after a red pipeline: one
sentence of what happened, the stack with its statuses, the run's timeline with the stop line,
then each module with its last error, its resources and the exact next commands.
"""

from __future__ import annotations

from html import escape

from hybridops_tf.picture.collect import ModuleView, ReportData
from hybridops_tf.picture.model import LOOKS, StackPicture
from hybridops_tf.picture.svg import graph_svg, timeline_svg

_RESOURCE_ORDER = ("error", "pending", "complete", "destroyed", "released")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _kind(status: str) -> str:
    """The LOOKS key of a status as `hyops status` shows it (`running (stale)` -> stale)."""
    if status.startswith("running"):
        return "stale" if "stale" in status else "running"
    return status if status in LOOKS else "none"


def _css() -> str:
    rules = []
    for kind, look in LOOKS.items():
        style = "solid" if not look.dash else ("dotted" if float(look.dash.split()[0]) <= 2 else "dashed")
        border = f"{'double' if look.double else style} {max(look.width, 3 if look.double else 1):g}px {look.stroke}"
        rules.append(f".k-{kind}{{background:{look.fill};border:{border};color:#1f2328}}")
    return _BASE_CSS + "".join(rules)


_BASE_CSS = (
    "body{font-family:system-ui,-apple-system,'Segoe UI','DejaVu Sans',sans-serif;color:#1f2328;"
    "margin:0 auto;max-width:1180px;padding:20px 28px;background:#fff;line-height:1.45}"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;border-bottom:1px solid #d0d7de;padding-bottom:4px;"
    "margin-top:1.6em}h3{font-size:1.1em;margin:.2em 0 .4em}"
    ".story{font-size:1.15em;background:#f6f8fa;border-left:6px solid #57606a;padding:10px 14px;margin:12px 0}"
    ".story.red{border-left-color:#b42318}.story.green{border-left-color:#1a7f37}"
    "dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:.9em;color:#57606a}"
    "dl.meta dt{font-weight:600}dl.meta dd{margin:0;word-break:break-all}"
    ".badge{display:inline-block;padding:1px 9px;border-radius:12px;font-weight:700;font-size:.9em;"
    "margin-right:6px;white-space:nowrap}"
    ".legend{display:flex;flex-wrap:wrap;gap:8px;font-size:.85em;margin:8px 0}"
    ".legend span.badge{font-weight:600}"
    ".scroll{overflow-x:auto}"
    "article.module{border:1px solid #d0d7de;border-radius:8px;padding:12px 16px;margin:14px 0}"
    "article.module small{color:#57606a;font-weight:400}"
    "pre.error{background:#fff5f5;border:1px solid #ffc1ba;padding:8px 10px;white-space:pre-wrap;"
    "word-break:break-word;font-size:.85em}"
    "table{border-collapse:collapse;font-size:.9em;margin:6px 0}th,td{border:1px solid #d0d7de;"
    "padding:3px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}"
    "code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.88em}"
    "code.cmd{display:inline-block;background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;"
    "padding:2px 6px;user-select:all;-webkit-user-select:all;white-space:pre-wrap;word-break:break-all}"
    "ol.next li{margin:4px 0}.when{color:#57606a;font-size:.9em}"
    "ul.waiting li{margin:2px 0}footer{margin-top:2em;color:#57606a;font-size:.85em}"
)


def render(data: ReportData) -> str:
    body = [f"<header><h1>hyops report: {_e(data.title)}</h1>", _story(data), _meta(data), "</header>"]
    if data.picture is not None:
        body += ['<section id="graph"><h2>The stack</h2>', _legend(data.picture),
                 f'<div class="scroll">{graph_svg(data.picture)}</div>',
                 "<p>Arrows go from a member to the members that run after it, labelled with the outputs "
                 "wired along them; a bold arrow marks an owner (its destroy takes the owned member along).</p>",
                 "</section>"]
    body.append(_timeline(data))
    body.append('<section id="modules"><h2>Modules</h2>')
    if data.reconcile_summary is not None:
        body.append(f"<p>Read-only <code>hyops reconcile</code>: {_e(data.reconcile_summary)}. "
                    "Each command below is the exact one to paste (a click selects it whole).</p>")
    else:
        body.append("<p>Next commands were not checked (<code>--no-reconcile</code>): run "
                    "<code>hyops reconcile</code> for them.</p>")
    body += [_module(m) for m in data.modules]
    body.append("</section>")
    body.append(f"<footer>Generated {_e(data.generated_at)} by hyops {_e(data.hyops_version)} from "
                f"{_e(data.source)}. Sensitive values never appear: hyops records them as "
                "&lt;redacted&gt; or not at all.</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>hyops report: {_e(data.title)}</title><style>{_css()}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")


def _story(data: ReportData) -> str:
    """One sentence a person reads first: where it stopped, what is fine, what never ran."""
    pic = data.picture
    if pic is not None and pic.with_status:
        groups: dict[str, list[str]] = {}
        for n in pic.nodes:
            groups.setdefault(n.status or "none", []).append(n.name)
        parts = []
        run = (f"The last {pic.command} of stack {pic.stack}" if pic.run_id
               else f"Stack {pic.stack} (never run as a stack)")
        failed = [n for n in pic.nodes if n.status == "error"]
        unknown = [n for n in pic.nodes if n.uncertain]
        if pic.state == "interrupted":  # what is not known comes before anything green
            parts.append(f"{_e(run)} did not finish: its runner stopped before writing its end "
                         f"(started {_e(pic.started_at or '?')}).")
            run = "Each member as its record says now"
        elif pic.state == "running":
            parts.append(f"{_e(run)} is still running (started {_e(pic.started_at or '?')}).")
            run = "So far"
        if unknown:
            parts.append("<b>Uncertain</b>: " + "; ".join(
                f"<b>{_e(n.name)}</b> ({_e('; '.join(n.uncertain))})" for n in unknown) + ".")
        if failed:
            first = failed[0]
            why = f": {first.detail[0]}" if first.detail else ""
            parts.append(f"{run} stopped at <b>{_e(first.name)}</b> (error{_e(why)}).")
        else:
            parts.append(f"{run}:")
        for status in ("error", "interrupted", "ok", "skipped", "running", "pending", "cancelled", "destroyed",
                       "absent", "retained", "none"):
            names = [n for n in groups.get(status, []) if not (status == "error" and failed and n == failed[0].name)]
            if names:
                word = {"pending": "never started (pending)", "none": "never run",
                        "interrupted": "stopped by a signal (interrupted)"}.get(status, status)
                parts.append(f"{_e(word)}: {_e(', '.join(names))}.")
        colour = ("red" if failed or unknown or any(groups.get(s) for s in ("pending", "cancelled", "interrupted"))
                  or pic.state == "interrupted" else "green")
        return f'<p class="story {colour}">{" ".join(parts)}</p>'
    bad = [m for m in data.modules if _kind(m.status) in ("error", "stale", "running", "none")]
    colour = "red" if bad else "green"
    text = (f"{len(bad)} of {len(data.modules)} module(s) need attention: {', '.join(m.module_ref for m in bad)}."
            if bad else f"{len(data.modules)} module(s), nothing failed.")
    return f'<p class="story {colour}">{_e(text)}</p>'


def _meta(data: ReportData) -> str:
    rows = [("generated", data.generated_at), ("records from", data.source),
            ("hyops", data.hyops_version), ("engine", data.engine)]
    if data.run is not None and data.run.run_id:
        run = data.run
        end = {"interrupted": "did not finish (its runner stopped)", "running": "still running"}.get(
            run.state or "", f"to {run.finished_at}")
        rows.append(("last run", f"{run.command} {run.run_id}, {run.started_at} {end}"))
    return '<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows) + "</dl>"


def _legend(picture: StackPicture) -> str:
    used = {n.kind for n in picture.nodes}
    items = [f'<span class="badge k-{k}" title="{_e(look.meaning)}">{_e(look.glyph)} {_e(k)}</span>'
             f'<span>{_e(look.meaning)}</span>' for k, look in LOOKS.items() if k in used]
    return '<div class="legend">' + "".join(items) + "</div>"


def _timeline(data: ReportData) -> str:
    tl = data.timeline
    out = ['<section id="timeline"><h2>The last run, resource by resource</h2>']
    if tl.empty:
        out.append("<p>No run events to draw (nothing ran yet, or its run folders are not on this machine).</p>")
        return "".join([*out, "</section>"])
    if tl.started_at is not None:
        out.append(f"<p>Seconds from {_e(tl.started_at.isoformat())}. One bar per resource change, from the "
                   "engine's start to its answer: green ✓ completed, red hatched ✗ errored, amber dashed ? "
                   "never answered; the thin grey line behind is the member's whole engine run (init, plan, "
                   "apply). Bars that overlap ran at the same time.")
        if tl.stop is not None:
            out.append(f" The red line is where it stopped: {_e(tl.stop_reason)}.")
        out.append("</p>")
    out.append(f'<div class="scroll">{timeline_svg(tl)}</div>')
    if tl.waiting:
        out.append("<h3>After the stop line: never started</h3><ul class=\"waiting\">")
        out += [f'<li data-lane="{_e(w.lane)}" data-address="{_e(w.address or "")}"><b>{_e(w.lane)}</b> '
                f"{_e(w.address or '')} <span class=\"when\">{_e(w.why)}</span></li>" for w in tl.waiting]
        out.append("</ul>")
    return "".join([*out, "</section>"])


def _module(m: ModuleView) -> str:
    shown = m.member_status or m.status
    kind = _kind(shown)
    glyph = LOOKS[kind].glyph
    anchor = "m-" + "".join(c if c.isalnum() else "-" for c in m.key)
    title = f"{_e(m.member)} <small>{_e(m.module_ref)}</small>" if m.member else _e(m.module_ref)
    out = [f'<article class="module" id="{_e(anchor)}" data-module="{_e(m.key)}" data-member="{_e(m.member or "")}" '
           f'data-status="{_e(shown)}" data-record="{_e(m.status)}">',
           f'<h3><span class="badge k-{kind}">{_e(glyph)} {_e(shown)}</span>{title}</h3>']
    facts = [f"record: {m.status}"]
    if m.failed_command:
        facts.append(f"failed command: {m.failed_command}")
    if m.run_id:
        facts.append(f"run {m.run_id}")
    if m.updated_at:
        facts.append(f"updated {m.updated_at}")
    if m.module_dir:
        facts.append(f"in {m.module_dir}")
    out.append(f"<p>{_e(' · '.join(facts))}</p>")
    if m.written:  # runtime/state_look.py, as `hyops status` says it
        out.append(f'<p class="written" data-finding="state_written_outside"><b>state_written_outside</b>: '
                   f"{_e(m.written)}: the next apply undoes that writer's changes; plan first "
                   "(<code>hyops reconcile</code> says what changed, by object)</p>")
    elif m.not_read:
        out.append(f'<p class="when" data-state-not-read="1">state not compared with the record: {_e(m.not_read)}</p>')
    if m.skip_compared:
        out.append(f'<p class="when" data-skip-compared="1">skipped by --resume, which {_e(m.skip_compared)}</p>')
    if m.last_error:
        out.append(f'<pre class="error">{_e(m.last_error)}</pre>')
    out.append(_resources(m))
    if m.suspect_orphans:
        out.append("<h4>Suspect orphans: a create started and left nothing in state; the object may be live</h4><ul>")
        out += [f'<li data-orphan="{_e(a)}"><code>{_e(a)}</code> ({_e(act)}, run {_e(run)})</li>'
                for a, act, run in m.suspect_orphans]
        out.append("</ul>")
    out.append(_next(m))
    out.append("</article>")
    return "".join(out)


def _resources(m: ModuleView) -> str:
    rows = [(r.status, r.address, r.action + (" (tainted)" if r.tainted else ""), r.id or "") for r in m.resources]
    rows += [("released", address, "no longer managed, alive when released", ident) for address, ident in m.released]
    if not rows:
        return "<p>No resources recorded.</p>"
    order = {s: i for i, s in enumerate(_RESOURCE_ORDER)}
    rows.sort(key=lambda r: (order.get(r[0], 99), r[1]))
    counts: dict[str, int] = {}
    for status, *_ in rows:
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: order.get(kv[0], 99)))
    body = "".join(f'<tr class="r-{_e(s)}" data-address="{_e(a)}" data-status="{_e(s)}"><td><code>{_e(a)}</code></td>'
                   f"<td>{_e(s)}</td><td>{_e(act)}</td><td><code>{_e(i)}</code></td></tr>" for s, a, act, i in rows)
    return (f"<p>Resources: {_e(summary)}.</p><table class=\"resources\"><tr><th>resource</th><th>status</th>"
            f"<th>last action</th><th>id</th></tr>{body}</table>")


def _next(m: ModuleView) -> str:
    if m.findings is None:
        return ""
    if not m.findings and not m.unchecked:
        return "<p>Consistent: the record agrees with the state and the live objects. Nothing to do.</p>"
    out = ["<h4>Next, in order</h4><ol class=\"next\">"]
    for f in m.findings:
        out.append(f'<li data-finding="{_e(f.code)}"><b>{_e(f.code)}</b>: {_e(f.detail)}')
        if f.steps:
            out.append("<ol>" + "".join(f'<li><code class="cmd">{_e(s)}</code></li>' for s in f.steps) + "</ol>")
        if f.choices:
            out.append("<div>then exactly one of:</div><ul>" + "".join(
                f'<li><code class="cmd">{_e(c)}</code> <span class="when">when {_e(w)}</span></li>'
                for c, w in f.choices) + "</ul>")
        out.append("</li>")
    out += [f'<li data-finding="could_not_check">could not check: {_e(why)}</li>' for why in m.unchecked]
    out.append("</ol>")
    return "".join(out)
