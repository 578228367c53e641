"""Ask the lookups about one module's suspect orphans, in a reconcile run folder of their own.

Which orphans: those the record lists and those a stale `running` record's run left (what
`--write` would list), each whose resource type has a lookup. The unnamed orphan `*` (hyops
died before it read its run's plan) is asked about through every planned create of a
read-only plan (the evidence's planned attributes) whose address the state does not hold.

When nothing is asked: no lookups file applies, the module has no suspect orphan, or its
evidence cannot support a verdict (the state could not be read, so which ids it holds is
unknown; a live process or a still-running engine owns the module; the state is shared).

What was asked and what answered is kept in a run folder of the reconcile
(`runs/<module_id>/reconcile-...`, action `lookup`): meta.json first, each ask's request,
stdout and stderr (ask.py), result.json last with every verdict, so a person can see why
an object was adopted or an orphan dropped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import ExitCode, HyopsError, RefusedError
from hybridops_tf.reconcile import audit, rules
from hybridops_tf.reconcile.evidence import GatherOptions, Target, resolve_inputs
from hybridops_tf.reconcile.lookup import judge
from hybridops_tf.reconcile.lookup.ask import Answer, ask
from hybridops_tf.reconcile.lookup.protocol import LookupRequest, safe_planned
from hybridops_tf.reconcile.lookup.query import QueryEngine, ask_query
from hybridops_tf.reconcile.lookup.spec import Lookups, LookupSpec
from hybridops_tf.reconcile.model import ModuleEvidence
from hybridops_tf.reconcile.verdict import Judgement, OrphanLookup
from hybridops_tf.record.model import CorruptRecordError, OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import new_run_id, run_path
from hybridops_tf.store import Records


def suspects(ev: ModuleEvidence) -> list[str]:
    """The module's suspect orphans: listed, then derived from a stale running record's run."""
    listed = [o.address for o in ev.record.suspect_orphans] if ev.record is not None else []
    return list(dict.fromkeys([*listed, *rules.interrupted_orphans(ev)]))


def askable(ev: ModuleEvidence) -> bool:
    """Whether this evidence can support a lookup's verdict at all."""
    return (ev.record is not None and ev.state is not None and not ev.busy and not ev.engine_alive
            and not ev.shared_with and not ev.forgotten and not ev.record_problem)


def held_ids(store: Records, ev: ModuleEvidence) -> dict[str, str]:
    """Every id a known state or record holds, with who holds it: the module's state (deposed
    objects too), and every record in the store (its resources, whatever their status, and
    released)."""
    held: dict[str, str] = {}
    for res in ev.state.resources if ev.state is not None else ():
        ident = res.values.get("id")
        if isinstance(ident, str) and ident:
            held.setdefault(ident, f"the state of {ev.where.module_ref} (as {res.address})")
    for key in store.keys():
        try:
            record = store.read(key)
        except CorruptRecordError:
            continue  # reported as corrupt_record where it is reconciled
        if record is not None:
            for ident, address in _record_ids(record).items():
                held.setdefault(ident, f"the record of {key} (as {address})")
    if ev.record is not None:
        for ident, address in _record_ids(ev.record).items():
            held.setdefault(ident, f"the record of {ev.where.module_ref} (as {address})")
    return held


def _record_ids(record: OperationRecord) -> dict[str, str]:
    """id -> address of every object the record lists, released ones too."""
    ids = {e.id: address for address, e in (record.resources or {}).items() if e.id}
    return ids | {o.id: f"{o.address}, released" for o in record.released if o.id}


@dataclasses.dataclass(frozen=True)
class _Ask:
    orphan: str
    address: str
    spec: LookupSpec
    planned: Mapping[str, Any]
    in_state: bool


def _plan_asks(ev: ModuleEvidence, lookups: Lookups, orphans: Sequence[str]
               ) -> tuple[list[_Ask], dict[str, str]]:
    """What to ask per orphan, and per orphan why (some of) it cannot be asked."""
    in_state = set(ev.state.addresses()) if ev.state is not None else set()
    planned = ev.planned_attributes
    asks: list[_Ask] = []
    not_asked: dict[str, str] = {}
    named = set(orphans) - {judge.UNNAMED}
    for orphan in orphans:
        if orphan != judge.UNNAMED:
            type_name = judge.resource_type(orphan)
            spec = lookups.for_type(type_name) if type_name else None
            if spec is not None:
                asks.append(_Ask(orphan, orphan, spec, safe_planned((planned or {}).get(orphan)), orphan in in_state))
            continue
        if planned is None:
            not_asked[orphan] = ("no plan could be read, so what the interrupted run may have created "
                                 "cannot be named and no lookup can be asked with planned attributes")
            continue
        creates = [a for a in planned if a not in in_state and a not in named]
        if not creates:
            not_asked[orphan] = "the read-only plan creates nothing, so no lookup can be asked with planned attributes"
            continue
        missing = []
        for address in creates:
            type_name = judge.resource_type(address)
            spec = lookups.for_type(type_name) if type_name else None
            if spec is None:
                missing.append(f"{address} (type {type_name})")
            else:
                asks.append(_Ask(orphan, address, spec, safe_planned(planned[address]), False))
        if missing:
            not_asked[orphan] = f"no lookup is declared for {', '.join(missing)}"
    return asks, not_asked


def _run_times(root: Path, key: str, run_id: str | None, record: OperationRecord) -> tuple[str | None, str | None]:
    """The interrupted or failed run's start and end, from its meta.json when this machine has it."""
    if not run_id:
        return None, None
    try:
        meta = json.loads((run_path(root, key, run_id) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return (record.started_at if record.run_id == run_id else None), None
    if not isinstance(meta, dict):
        return None, None
    return meta.get("started_at"), meta.get("finished_at")


def consult(ev: ModuleEvidence, target: Target, lookups: Lookups, runtime: Runtime,
            argv: Sequence[str] = (), *, gather: GatherOptions | None = None) -> dict[str, OrphanLookup] | None:
    """Ask the lookups about `ev`'s suspect orphans; None when nothing was asked (see module doc).
    `gather`: the engine and inputs options of the reconcile, which a `source: query` lookup
    runs the module's engine with."""
    if not lookups or not askable(ev):
        return None
    orphans = suspects(ev)
    if not orphans:
        return None
    asks, not_asked = _plan_asks(ev, lookups, orphans)
    if not asks:
        return {o: OrphanLookup(o, not_asked=why) for o, why in not_asked.items()} or None
    record = ev.record
    assert record is not None
    by_orphan: dict[str, list[Judgement]] = {}
    run_id = new_run_id("reconcile")
    module_dir = str(target.directory) if target.directory is not None else record.module_dir
    try:
        runtime.ensure_root()
        folder, meta = audit.open_run(runtime, target.key, module_dir, run_id, "lookup", argv,
                                      lookups_file=str(lookups.path) if lookups.path else None,
                                      orphans=list(orphans))
    except (RefusedError, OSError) as err:
        why = f"the lookups were not asked: {getattr(err, 'message', None) or err}"
        return {o: OrphanLookup(o, not_asked=why) for o in orphans}
    try:
        env = _env(runtime, target, record)
        env_problem = None
    except HyopsError as err:
        env, env_problem = {}, err.message
    held = held_ids(runtime.store, ev)
    engine: QueryEngine | str | None = None  # the query lookups' engine, or why there is none: made once
    orphan_runs = {o.address: o.run_id for o in record.suspect_orphans}
    for index, item in enumerate(asks, 1):
        source = item.spec.describe()
        if env_problem is not None:
            by_orphan.setdefault(item.orphan, []).append(judge.failed(
                item.address, item.spec.type, source, f"its environment could not be set up: {env_problem}",
                complete=item.spec.complete, in_state=item.in_state))
            continue
        run = orphan_runs.get(item.orphan) or record.run_id
        started, ended = _run_times(runtime.root, target.key, run, record)
        request = LookupRequest(item.spec.type, item.address, module_dir, target.module_ref, item.planned,
                                run, started, ended)
        if item.spec.query:
            engine = engine if engine is not None else _query_engine(target, env, gather)
            answer = (Answer(None, f"the engine could not be set up: {engine}") if isinstance(engine, str)
                      else ask_query(item.spec, Path(module_dir or "."), engine, folder, index, item.planned))
        else:
            answer = ask(item.spec, request, env, folder, index)
        if answer.candidates is None:
            judged = judge.failed(item.address, item.spec.type, source, answer.why,
                                     complete=item.spec.complete, in_state=item.in_state,
                                     unsupported=answer.unsupported)
        else:
            judged = judge.judge(item.address, item.spec.type, source, match=item.spec.match,
                                    complete=item.spec.complete, planned=item.planned,
                                    candidates=answer.candidates, held=held, in_state=item.in_state)
        by_orphan.setdefault(item.orphan, []).append(judged)
    found = {o: OrphanLookup(o, tuple(by_orphan.get(o, ())), not_asked.get(o, ""), run_id)
             for o in orphans if o in by_orphan or o in not_asked}
    found = judge.disambiguate(found)
    audit.close_run(runtime, folder, meta, ExitCode.OK, {
        "outcome": "asked", "held_ids": len(held),
        "lookups": [lookup.to_dict() for lookup in found.values()]})
    return found


def _query_engine(target: Target, env: Mapping[str, str], gather: GatherOptions | None) -> QueryEngine | str:
    """The module's engine with its environment and the inputs a plan of it gets (as the
    reconcile's own plans: evidence.resolve_inputs); else why there is none, in words."""
    if gather is None or gather.engine is None:
        return (gather.engine_problem if gather is not None else None) or "no engine found"
    if target.directory is None:
        return "the module directory is unknown"
    try:
        resolved = resolve_inputs(target, gather)
    except HyopsError as err:
        return f"the module's inputs: {err.message}"
    return QueryEngine(gather.engine, env, resolved.var_file())


def _env(runtime: Runtime, target: Target, record: OperationRecord) -> dict[str, str]:
    """The module's engine environment (the sim's root, a cloud's credentials as the engine
    gets them, the workspace): what the provider sees, the lookup sees."""
    directory = target.directory if target.directory is not None else (
        Path(record.module_dir) if record.module_dir else None)
    if directory is None:
        return {}
    return runtime.engine_env(directory, target.workspace or record.workspace)


def with_lookups(ev: ModuleEvidence, found: Mapping[str, OrphanLookup] | None) -> ModuleEvidence:
    """The evidence with the lookups' verdicts attached (compare words the findings from them)."""
    return dataclasses.replace(ev, lookups=dict(found)) if found else ev
