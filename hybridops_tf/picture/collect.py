"""What `hyops report` shows, read from the runtime root (or the shared store): the stack's
status document and records, the last run's events, and what a read-only reconcile would
advise. The one part of picture/ that does I/O; the renderers only draw what this returns.

Nothing here reads inputs: the report shows statuses, addresses, ids, errors and commands,
which hyops writes redacted everywhere (sensitive inputs as `<redacted>`, sensitive outputs
never recorded), so no value can reach the page that hyops has not already written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf import __version__
from hybridops_tf.picture import timeline
from hybridops_tf.picture.model import StackPicture, picture
from hybridops_tf.runtime.status import StatusEntry, entry
from hybridops_tf.store import RunRecords

if TYPE_CHECKING:
    from hybridops_tf.engine.events import Event
    from hybridops_tf.reconcile.model import ModuleReport, Report
    from hybridops_tf.runtime.root import Runtime
    from hybridops_tf.stack.model import Stack


@dataclass(frozen=True)
class ReportRequest:
    """One of stack_file, module (with its ref and workspace) or all_records."""

    runtime: Runtime
    modules_root: Path | None = None
    stack_file: Path | None = None
    module_dir: Path | None = None
    ref: str | None = None
    workspace: str | None = None
    all_records: bool = False
    reconcile: bool = True  # run the read-only reconcile for the next commands
    hyops_prefix: str = "hyops"
    note: Callable[[str], None] | None = None
    lookups_file: Path | None = None  # the reconcile's lookups file (None: the project top's, if any)


@dataclass(frozen=True, slots=True)
class ResourceView:
    address: str
    status: str  # complete, error, pending, destroyed
    action: str
    id: str | None = None
    tainted: bool = False


@dataclass(frozen=True, slots=True)
class FindingView:
    """A reconcile finding: steps run in order, then exactly one of the choices."""

    code: str
    detail: str
    steps: tuple[str, ...] = ()
    choices: tuple[tuple[str, str], ...] = ()  # (command, when)


@dataclass(frozen=True)
class ModuleView:
    key: str  # the record key
    module_ref: str
    status: str  # the record as `hyops status` shows it: ok, error, running (stale), none, ...
    member: str | None = None  # the stack member's name
    member_status: str | None = None  # the member's status as `stack status --json` gives it
    module_dir: str | None = None
    run_id: str | None = None
    updated_at: str | None = None
    failed_command: str | None = None
    last_error: str | None = None
    resources: tuple[ResourceView, ...] = ()
    released: tuple[tuple[str, str], ...] = ()  # (address, id)
    suspect_orphans: tuple[tuple[str, str, str], ...] = ()  # (address, action, run_id)
    findings: tuple[FindingView, ...] | None = None  # None: reconcile did not run
    unchecked: tuple[str, ...] = ()
    written: str | None = None  # its state was written outside hyops (runtime/state_look.py), in one line
    not_read: str | None = None  # why its state was not compared with the record's stamp
    skip_compared: str | None = None  # a member skipped by --resume: what the skip compared, and what not


@dataclass(frozen=True)
class RunView:
    command: str | None
    run_id: str | None
    started_at: str | None
    finished_at: str | None
    state: str | None = None  # stack/view.py: never_run, running, finished, interrupted


@dataclass(frozen=True)
class ReportData:
    title: str
    generated_at: str
    source: str  # the runtime root or store the records were read from
    hyops_version: str
    engine: str
    picture: StackPicture | None
    run: RunView | None
    timeline: timeline.Timeline
    modules: tuple[ModuleView, ...]
    reconcile_summary: str | None  # None: reconcile did not run


def gather(req: ReportRequest) -> ReportData:
    """Everything the report shows, for a stack, one module or every record."""
    store = req.runtime.store
    advice = _reconcile(req)
    if req.stack_file is not None:
        return _stack(req, store, advice)
    keys = sorted(store.keys()) if req.all_records else [_single_key(req)]
    entries = [entry(store, key) for key in keys]
    advised = _by_key(advice, keys)
    views = tuple(_module(e, advised.get(e.module_ref), advice is not None) for e in entries)
    runs = [timeline.RunEvents(e.module_ref, e.record.run_id, _events(store, e.module_ref, e.record.run_id))
            for e in entries if e.record is not None]
    title = "every record" if req.all_records else f"module {views[0].module_ref}"
    return ReportData(title=title, generated_at=_now(), source=store.describe(), hyops_version=__version__,
                      engine=_engine_line(req), picture=None, run=None, timeline=timeline.build(runs),
                      modules=views, reconcile_summary=advice.summary() if advice is not None else None)


def _stack(req: ReportRequest, store: RunRecords, advice: Report | None) -> ReportData:
    from hybridops_tf.stack.loader import load_stack

    assert req.stack_file is not None
    stack = load_stack(req.stack_file, req.runtime.hcl_cache(), read_only=True,
                       tofu=req.runtime.reads_tofu())
    entries, doc, pic = _drawn(stack, req.runtime)
    advised = _by_key(advice, [m.key for m in stack.members])
    in_report = {str(m.get("name")): m for m in doc["members"] if isinstance(m, dict)}
    views, runs, never = [], [], []
    for member in stack.members:
        node, e = pic.node(member.name), entries[member.name]
        compared = in_report.get(member.name, {}).get("compared") if node.status == "skipped" else None
        views.append(_module(e, advised.get(member.key), advice is not None, member=member.name,
                             member_status=node.status, skip_compared=compared))
        run_id = node.run_id if doc.get("run_id") is not None else (e.record.run_id if e.record else None)
        if node.status == "pending":
            never.append(timeline.Waiting(member.name, None, "never started: " + "; ".join(node.detail)))
        elif run_id and node.status != "skipped" and (member.name in in_report or doc.get("run_id") is None):
            runs.append(timeline.RunEvents(member.name, run_id, _events(store, member.key, run_id)))
    run = RunView(doc.get("command"), doc.get("run_id"), doc.get("started_at"), doc.get("finished_at"),
                  doc.get("state"))
    return ReportData(title=f"stack {stack.name}", generated_at=_now(), source=store.describe(),
                      hyops_version=__version__, engine=_engine_line(req), picture=pic, run=run,
                      timeline=timeline.build(runs, never), modules=tuple(views),
                      reconcile_summary=advice.summary() if advice is not None else None)


def stack_picture(stack: Stack, runtime: Runtime) -> StackPicture:
    """The stack with each member's status as `stack status --json` gives it, and its record now."""
    return _drawn(stack, runtime)[2]


def _drawn(stack: Stack, runtime: Runtime) -> tuple[dict[str, StatusEntry], dict[str, Any], StackPicture]:
    """Each member's status entry now, the stack's status document read with them
    (stack/status.py), and the picture of both."""
    from hybridops_tf.stack.status import record_now, records_now, status_document

    entries = records_now(stack, runtime)
    doc = status_document(stack, runtime, entries)
    return entries, doc, picture(stack, doc, {name: record_now(e) for name, e in entries.items()})


def _module(e: StatusEntry, advice: ModuleReport | None, reconciled: bool, member: str | None = None,
            member_status: str | None = None, skip_compared: str | None = None) -> ModuleView:
    rec = e.record
    findings = unchecked = None
    if advice is not None:
        findings = tuple(FindingView(f.code.value, f.detail, tuple(f.next_actions),
                                     tuple((a.command, a.when) for a in f.alternatives)) for f in advice.findings)
        unchecked = tuple(advice.unchecked)
    elif reconciled:
        findings, unchecked = (), ("reconcile did not report this module",)
    unchecked = unchecked or ()
    if rec is None:
        return ModuleView(key=e.module_ref, module_ref=e.module_ref, status=e.shown_status, member=member,
                          member_status=member_status, last_error=e.problem, findings=findings,
                          unchecked=unchecked)
    resources = tuple(ResourceView(addr, r.status.value, r.action, r.id, bool(r.tainted))
                      for addr, r in sorted((rec.resources or {}).items()))
    return ModuleView(
        key=e.module_ref, module_ref=rec.module_ref, status=e.shown_status, member=member,
        member_status=member_status, module_dir=rec.module_dir, run_id=rec.run_id, updated_at=rec.updated_at,
        failed_command=rec.failed_command, last_error=rec.last_error, resources=resources,
        released=tuple((o.address, o.id) for o in rec.released),
        suspect_orphans=tuple((o.address, o.action, o.run_id) for o in rec.suspect_orphans),
        findings=findings, unchecked=unchecked, written=e.written.headline() if e.written is not None else None,
        not_read=e.not_looked, skip_compared=skip_compared if isinstance(skip_compared, str) else None)


def _by_key(advice: Report | None, keys: Sequence[str]) -> dict[str, ModuleReport]:
    """Reconcile reports its modules in the order of its targets, which is `keys`' order (a
    stack's members, the sorted record keys, or the one module)."""
    if advice is None or len(advice.modules) != len(keys):
        return {}
    return dict(zip(keys, advice.modules, strict=True))


def _reconcile(req: ReportRequest) -> Report | None:
    """The read-only reconcile of the same modules (it writes nothing), or None when not asked."""
    if not req.reconcile:
        return None
    from hybridops_tf.reconcile.service import ReconcileRequest, reconcile

    return reconcile(ReconcileRequest(
        runtime=req.runtime, modules_root=req.modules_root,
        module_dir=req.module_dir if req.stack_file is None and not req.all_records else None,
        ref=req.ref, stack_file=req.stack_file, all_records=req.all_records,
        hyops_prefix=req.hyops_prefix, note=req.note, workspace=req.workspace, lookups_file=req.lookups_file))


def _single_key(req: ReportRequest) -> str:
    from hybridops_tf.record.address import record_key, resolve_module

    target = resolve_module(req.module_dir or Path("."), req.ref, req.modules_root, req.runtime.root.parent)
    return record_key(target.ref, req.workspace)


def _events(store: RunRecords, key: str, run_id: str) -> Sequence[Event]:
    from hybridops_tf.runtime.run_folder import EarlierRun

    return EarlierRun.read(store, key, run_id).events


def _engine_line(req: ReportRequest) -> str:
    from hybridops_tf.base.errors import EngineError

    try:
        info = req.runtime.engine_info(remember=False)
    except EngineError as err:
        return f"unknown ({err.message})"
    return f"{info.kind} {info.version} ({info.binary})"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
