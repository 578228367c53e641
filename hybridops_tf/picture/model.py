"""The stack as a picture: members with their status, edges with their wiring. Pure.

A member's status is the one `stack status --json` prints for it (the last run report's,
else its record's, else `none`), so every picture says what the JSON says. `kind` picks
how it is drawn and differs from the status only for a `running` record whose hyops is gone
(`stale`: the outcome is uncertain). Every renderer (text, dot, mermaid, html) reads the one
LOOKS table, so a status looks alike everywhere: a colour, a line style and a glyph (it reads
in grey too), and always its word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hybridops_tf.stack.graph import topological_order
from hybridops_tf.stack.model import Stack
from hybridops_tf.stack.view import RecordNow


@dataclass(frozen=True, slots=True)
class Look:
    """How one status is drawn: fill and line colours, SVG dash pattern ("" solid), line
    width, a glyph, and what it means in words (the legend)."""

    fill: str
    stroke: str
    dash: str
    width: float
    glyph: str
    meaning: str
    double: bool = False  # a second, inner border: kept on purpose


# Drawing order of the legend, too. Keys are member statuses (`stack status --json`) plus
# `stale`, a `running` record nobody runs any more.
LOOKS: dict[str, Look] = {
    "ok": Look("#d7f5dd", "#1a7f37", "", 2, "✓", "applied, and the engine said so"),
    "skipped": Look("#e9f7ec", "#1a7f37", "9 3", 2, "=", "ok already: --resume found no change in what it compared"),
    "error": Look("#ffd8d3", "#b42318", "", 4, "✗", "failed: may be partly live"),
    "interrupted": Look("#ffe7d9", "#b42318", "4 2", 4, "■", "stopped by SIGINT/SIGTERM: may be partly live"),
    "pending": Look("#ffffff", "#57606a", "6 4", 2, "…", "never started: blocked"),
    "cancelled": Look("#ffffff", "#57606a", "2 4", 2, "⊘", "never started: its queued run was cancelled"),
    "running": Look("#fff3c4", "#9a6700", "10 3 2 3", 2, "▶", "running now"),
    "stale": Look("#ffe1bd", "#bc4c00", "2 2", 3, "?", "hyops stopped while it ran: outcome uncertain"),
    "destroyed": Look("#eceff2", "#57606a", "1 3", 2, "∅", "destroyed, state confirmed empty"),
    "absent": Look("#f6f8fa", "#8c959f", "1 3", 1.5, "∅", "nothing there, confirmed"),
    "retained": Look("#dcefff", "#0969da", "", 2, "~", "kept on purpose by stack destroy", double=True),
    "none": Look("#ffffff", "#8c959f", "1 4", 1.5, "·", "no record: never run"),
}

# Member statuses that are also record statuses: a record that says otherwise now is noted.
_RECORDED = frozenset({"ok", "error", "destroyed", "retained"})
_DETAIL_WIDTH = 60


def kind_of(status: str, record: RecordNow | None) -> str:
    """The LOOKS key for a member status (an unknown word is drawn as `none`); a record that
    is a stale `running` now is drawn `stale` whatever the last run said (never green), one
    whose dead hyops's engine still runs `running`."""
    if record is not None and record.stale:
        return "stale"
    if record is not None and record.engine_alive:
        return "running"
    return status if status in LOOKS else "none"


@dataclass(frozen=True, slots=True)
class Node:
    """One member. status/kind are None in a picture drawn without statuses."""

    name: str
    module_ref: str
    layer: int  # longest chain of upstreams before it: its column in a drawing
    status: str | None = None
    kind: str | None = None
    detail: tuple[str, ...] = ()  # short lines under the status: why pending, the error, ...
    blocked_by: str | None = None
    run_id: str | None = None
    error: str | None = None
    owned_by: str | None = None
    retain_on_destroy: bool = False
    workspace: str | None = None
    uncertain: tuple[str, ...] = ()  # why what exists is not known (stack/view.py)

    @property
    def look(self) -> Look | None:
        return LOOKS[self.kind] if self.kind is not None else None


@dataclass(frozen=True, slots=True)
class Edge:
    """upstream -> downstream (apply order), with the outputs wired along it."""

    upstream: str
    downstream: str
    wires: tuple[tuple[str, str], ...] = ()  # (output, input), sorted
    owns: bool = False  # the downstream is owned_by the upstream

    @property
    def label(self) -> str:
        """The wired outputs: `vm_id`, or `vm_id → target_id` where the input is named otherwise."""
        return ", ".join(out if out == inp else f"{out} → {inp}" for out, inp in self.wires)


@dataclass(frozen=True)
class StackPicture:
    stack: str
    stack_file: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    command: str | None = None  # the last run's, when statuses are drawn
    run_id: str | None = None
    finished_at: str | None = None
    state: str | None = None  # the last run's (stack/view.py): never_run, running, finished, interrupted
    started_at: str | None = None

    @property
    def with_status(self) -> bool:
        return any(n.status is not None for n in self.nodes)

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


def picture(stack: Stack, doc: Mapping[str, object] | None = None,
            records: Mapping[str, RecordNow] | None = None) -> StackPicture:
    """The stack drawn bare (doc None) or with the statuses of a `stack status --json`
    document (stack.status.status_document) and each member's record now."""
    records = records or {}
    entries: dict[str, Mapping[str, object]] = {}
    if doc is not None:
        members = doc.get("members")
        for m in members if isinstance(members, list) else []:
            if isinstance(m, Mapping) and isinstance(m.get("name"), str):
                entries[str(m["name"])] = m
    layers = _layers(stack)
    nodes = []
    for m in stack.members:
        base = Node(name=m.name, module_ref=m.module_ref, layer=layers[m.name], owned_by=m.owned_by,
                    retain_on_destroy=m.retain_on_destroy, workspace=m.workspace)
        entry = entries.get(m.name)
        nodes.append(base if doc is None else _with_status(base, entry or {}, entries, records.get(m.name)))
    edges = tuple(
        Edge(up, m.name, tuple(sorted((w.output, inp) for inp, w in m.inputs_from.items() if w.upstream == up)),
             owns=m.owned_by == up)
        for m in stack.members for up in m.depends_on)
    return StackPicture(
        stack=stack.name, stack_file=str(stack.file), nodes=tuple(nodes), edges=edges,
        command=_text(doc.get("command")) if doc is not None else None,
        run_id=_text(doc.get("run_id")) if doc is not None else None,
        finished_at=_text(doc.get("finished_at")) if doc is not None else None,
        state=_text(doc.get("state")) if doc is not None else None,
        started_at=_text(doc.get("started_at")) if doc is not None else None)


def _with_status(node: Node, entry: Mapping[str, object], entries: Mapping[str, Mapping[str, object]],
                 record: RecordNow | None) -> Node:
    status = _text(entry.get("status")) or "none"
    blocked_by, error = _text(entry.get("blocked_by")), _text(entry.get("error"))
    detail: list[str] = []
    uncertain = entry.get("uncertain")
    uncertain = tuple(str(u) for u in uncertain) if isinstance(uncertain, list) else ()
    if record is not None and (record.stale or record.engine_alive) and status != "running":
        detail.append(f"uncertain: record now {record.shown}")
    if status == "pending":
        if blocked_by:
            detail.append(f"blocked by {blocked_by} ({_text(entries.get(blocked_by, {}).get('status')) or '?'})")
        else:
            detail.append("not started: the run was interrupted")
    if error:
        detail.append(_clip(error.strip().splitlines()[0] if error.strip() else error))
    if record is not None and status == "running":
        if record.stale:
            detail.append("outcome uncertain: hyops stopped")
        elif record.engine_alive:
            detail.append("engine still running")
    elif record is not None and status in _RECORDED and record.shown != status and not (
            record.stale or record.engine_alive):
        detail.append(f"record now: {record.shown}")
    if record is not None and record.orphans:
        detail.append(f"{len(record.orphans)} suspect orphan(s)")
    if entry.get("state_written_outside"):  # stack/view.py: another writer moved its state
        detail.append("state written outside hyops")
    if status == "none":
        detail.append("never run")
    if _text(entry.get("worker")):  # a queued run: the worker that ran it
        detail.append(f"on worker {_text(entry.get('worker'))}")
    return Node(name=node.name, module_ref=node.module_ref, layer=node.layer, status=status,
                kind=kind_of(status, record), detail=tuple(detail), blocked_by=blocked_by,
                run_id=_text(entry.get("run_id")), error=error, owned_by=node.owned_by,
                retain_on_destroy=node.retain_on_destroy, workspace=node.workspace, uncertain=uncertain)


def _layers(stack: Stack) -> dict[str, int]:
    """name -> the length of the longest chain of upstreams before it."""
    layer: dict[str, int] = {}
    for name in topological_order(stack):
        ups = stack.member(name).depends_on
        layer[name] = 1 + max((layer[u] for u in ups), default=-1)
    return layer


def _clip(text: str, width: int = _DETAIL_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
