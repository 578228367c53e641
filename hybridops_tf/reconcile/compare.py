"""`compare(evidence) -> findings`: the pure heart of reconcile (docs/contract.md: Reconcile).

Why pure and linear: a person reads these findings after a red pipeline and acts on them,
so the same evidence must always give the same words, and a 10,000-resource state must not
make the answer slow. Every lookup is a set or dict built once; no I/O, no clock.

Each finding claims only what its evidence shows, and ends in `next_actions`: commands a
person can paste, in the order they should run (orphans and lost state before any apply),
then `alternatives`: commands to choose between (run one), each with when it is the one.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from hybridops_tf.engine.progress import ResourceProgress
from hybridops_tf.engine.state import outputs_plain
from hybridops_tf.reconcile import action_failed, action_not_started, lost, outside, rules
from hybridops_tf.reconcile.lookup import advice
from hybridops_tf.reconcile.model import (
    LISTED,
    PRIORITY,
    Alternative,
    Code,
    Finding,
    ModuleEvidence,
    OrphanEvidence,
    finding,
    names,
)
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.applied import UNKNOWN_CONFIG
from hybridops_tf.record.lifecycle import CLAIMS_EMPTY, ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.objects import UNNAMED_ORPHAN
from hybridops_tf.record.stamp import Written
from hybridops_tf.runtime.liveness import host_name

_LOST = frozenset({Code.STATE_MISSING, Code.LOST_FROM_STATE})  # objects the record knows, no state holds
_PROGRESS_WORDS = {"started": "started and never finished", "pending": "planned and never started"}


def compare(ev: ModuleEvidence, cmd: Commands | None = None) -> list[Finding]:
    """Findings for one module, most urgent first; [] means record and evidence agree."""
    cmd = cmd or Commands()
    if ev.forgotten:
        return []  # hyops claims nothing of it any more
    if ev.busy:
        return []  # a live run owns the module; its record will settle itself
    if ev.engine_alive:
        return [_engine_running(ev, cmd)]  # it may still change objects: judge nothing yet
    if ev.shared_with:
        return [_shared_state(ev, cmd)]  # the state holds another record's objects too: judge nothing
    rec = ev.record
    state = ev.state
    in_state = set(state.addresses()) if state is not None else set()
    stale = ev.stale
    progress = ev.last_run if stale else None
    found: list[Finding] = []
    if ev.record_problem:
        found.append(_corrupt(ev, cmd))
    elif rec is None:
        found.append(_no_record(ev, cmd))
    if ev.state_unreadable is not None and state is None:
        found.append(_state_unreadable(ev, cmd))
    if ev.errored_state:
        found.append(finding(ev, Code.ERRORED_STATEFILE, (
            "errored.tfstate is in the module directory and differs from the state: the engine "
            "could not save the state after a run, so the state misses what that run did until "
            "errored.tfstate is pushed back (if the engine refuses because both have the same "
            "serial, compare the two files, then push with -force)"),
            [cmd.push_errored(ev.where), cmd.reconcile(ev.where)]))
    if rec is not None:
        if stale:
            found.append(_stale(ev, rec, progress, cmd))
        written = outside.written_outside(ev)
        if written is not None:
            found.append(_written_outside(ev, written, cmd))
        if state is not None and rec.status not in CLAIMS_EMPTY:
            dropped = rules.lost_from_state(ev)  # the engine dropped them: a cause of state_missing
            if dropped:
                found.append(lost.lost_from_state(ev, dropped, cmd))
            missing = {a: i for a, i in rules.missing_from_state(ev).items() if a not in dropped}
            if missing:
                found.append(lost.state_missing(ev, missing, cmd))
        found.extend(_orphans(ev, rec, progress, in_state, cmd))
    if ev.stale_imports:
        found.append(_stale_import(ev, cmd))
    if state is not None and state.tainted:
        found.append(_tainted(ev, [r.address for r in state.tainted], cmd))
    if ev.refresh is not None and ev.refresh.drift:
        found.append(_drift(ev, cmd))
    if rec is not None and rec.status is Status.ERROR:
        unfinished = action_failed.finding(ev, rec, cmd)
        found.extend([unfinished] if unfinished is not None else [])
        if not action_failed.only_cause(ev, rec):
            found.append(_partial(ev, rec, cmd))
    waiting = action_not_started.finding(ev, rec, cmd) if rec is not None else None
    found.extend([waiting] if waiting is not None else [])
    if rec is not None and rec.status in CLAIMS_EMPTY and state is not None and not state.is_empty:
        live = state.addresses()
        found.append(finding(ev, Code.STATE_AFTER_DESTROY, (
            f"the record says {rec.status.value} but the state holds {len(live)} resource(s): "
            f"{names(live)}; treat them as live"), [cmd.destroy(ev.where)], live))
    if rec is not None and rec.status in (Status.OK, Status.RETAINED) and state is not None:
        moved = rules.moved_in_state(ev)
        if moved:
            found.append(_moved(ev, moved, cmd))
    if (rec is not None and rec.status in (Status.OK, Status.RETAINED) and state is not None
            and rec.outputs is not None):
        diff = _outputs_diff(rec.outputs, outputs_plain(state.outputs))
        if diff:
            found.append(finding(ev, Code.OUTPUTS_MISMATCH, (
                f"the recorded outputs differ from the state's: {diff}; downstream modules "
                "wired from this record would get stale values"), [cmd.apply(ev.where)]))
    if rec is not None and rec.status is Status.OK and ev.applied_changes is not None:
        found.extend(_member_changes(ev, rec, cmd, missing=any(f.code in _LOST for f in found)))
    if any(f.code in _LOST for f in found):  # an apply or destroy now refuses (record/gate.py): settle first
        healthy = rec is not None and rec.status in (Status.OK, Status.RETAINED)  # a --write would demote it
        found = [f if f.code in _LOST else _without_mutations(f, cmd, ev.where, healthy) for f in found]
    return sorted(found, key=lambda f: PRIORITY[f.code])


def _mutates(command: str, cmd: Commands) -> bool:
    """An apply or destroy of the module (or its stack), as the advice prints it."""
    prefix = cmd.hyops + " "
    if not command.startswith(prefix):
        return False
    rest = command[len(prefix):].split()
    return bool(rest) and (rest[0] in ("apply", "destroy") or rest[:2] in (["stack", "apply"], ["stack", "destroy"]))


def _without_mutations(f: Finding, cmd: Commands, where: Where, healthy: bool) -> Finding:
    """The finding's advice without an apply or a destroy, and, for a `healthy` (ok, retained)
    record, a `--write`: while the record holds an object no state holds (state_missing), the
    first two refuse and the last would turn the record `error` around it, so none is offered
    before it is settled. A stale `running` record's `--write` settles what its run did: kept."""
    write = cmd.write(where) if healthy else None
    actions = tuple(a for a in f.next_actions if not _mutates(a, cmd) and a != write)
    alternatives = tuple(a for a in f.alternatives if not _mutates(a.command, cmd) and a.command != write)
    if actions == f.next_actions and alternatives == f.alternatives:
        return f
    return dataclasses.replace(f, next_actions=actions, alternatives=alternatives,
                               detail=f.detail + " (an apply, destroy or --write waits until state_missing is settled)")


def _tainted(ev: ModuleEvidence, tainted: list[str], cmd: Commands) -> Finding:
    """Tainted objects: hyops's own failed create, or a taint another writer made (`terraform
    taint`): that one is undone by `untaint`, beside the replace an apply would make."""
    known = (ev.record.resources or {}) if ev.record is not None else {}
    outside_taint = [a for a in tainted if known.get(a) is not None and not known[a].tainted
                     and known[a].status is ResourceStatus.COMPLETE]  # a complete object hyops saw untainted
    if not outside_taint:
        return finding(ev, Code.TAINTED, (
            f"{names(tainted)} {'is' if len(tainted) == 1 else 'are'} tainted in state: the "
            "object was made but its create reported an error; the next apply replaces it"),
            [], tainted, alternatives=[
                Alternative(cmd.apply(ev.where), "to replace the tainted object(s) as configured"),
                Alternative(cmd.destroy(ev.where), "to remove the module's objects instead")])
    untaint = [Alternative(cmd.untaint(ev.where, a), f"keep {a} as it is: undo the taint (nothing remote changes)")
               for a in outside_taint]
    return finding(ev, Code.TAINTED, (
        f"{names(outside_taint)} {'is' if len(outside_taint) == 1 else 'are'} tainted outside hyops (the record "
        "made no such taint): the next apply replaces it; untaint keeps the object"),
        [], tainted, alternatives=[
            *untaint, Alternative(cmd.apply(ev.where), "to replace the tainted object(s) as configured")])


def _member_changes(ev: ModuleEvidence, rec: OperationRecord, cmd: Commands, missing: bool) -> list[Finding]:
    """An `ok` stack member that `stack apply` would change: what it was applied from differs
    from the stack now (config_changed), or its plan has changes (plan_changes)."""
    why = [w for w in ev.applied_changes or () if w != UNKNOWN_CONFIG]
    if why:
        return [finding(ev, Code.CONFIG_CHANGED, (
            f"the record says ok (run {rec.run_id}), but since that apply {'; '.join(why)}: the stack "
            "has not applied what it holds now; `stack apply --resume` applies this member again (a "
            "no-op apply where its plan shows no change)"), [cmd.stack_apply(ev.where)])]
    if missing or ev.plan is None or not ev.plan.changes:
        return []
    changes = ev.plan.changes
    shown = ", ".join(f"{c.action} {c.address}" for c in changes[:LISTED])
    more = f" and {len(changes) - LISTED} more" if len(changes) > LISTED else ""
    detail = (f"the record says ok (run {rec.run_id}), but the plan of its configuration now has "
              f"{len(changes)} change(s): {shown}{more}")
    if ev.applied_changes:  # the record does not say what it applied: --resume applies it again
        detail += f"; {UNKNOWN_CONFIG}, so `stack apply --resume` applies it again"
        return [finding(ev, Code.PLAN_CHANGES, detail, [cmd.stack_apply(ev.where)], [c.address for c in changes])]
    detail += ("; nothing it was applied from changed (configuration, inputs, engine), so `stack apply "
               "--resume` would skip it: apply the stack without --resume (members with nothing to "
               "change apply as no-ops)")
    return [finding(ev, Code.PLAN_CHANGES, detail, [cmd.stack_apply(ev.where, resume=False)],
                     [c.address for c in changes])]


def _state_unreadable(ev: ModuleEvidence, cmd: Commands) -> Finding:
    """`show -json` failed: the state is unknown, never empty. After a provider upgrade the
    usual cause is the objects' identity, stored under the old provider's identity schema
    (engines >= 1.12): a refresh through the new provider upgrades it in the state."""
    return finding(ev, Code.STATE_UNREADABLE, (
        f"state unreadable: refresh with the new provider; the engine could not show the state "
        f"({ev.state_unreadable}): what it holds is unknown, not empty, so nothing is settled from it. "
        "After a provider upgrade this is most often the identity the state stores for each object, "
        "written under the old provider's identity schema: a refresh-only apply through the new provider "
        "upgrades it"), [cmd.refresh(ev.where), cmd.reconcile(ev.where)])


def _engine_running(ev: ModuleEvidence, cmd: Commands) -> Finding:
    rec, live = ev.record, ev.live_engine
    assert rec is not None and live is not None
    command = rec.active_command or "a mutation"
    pid, host = getattr(live, "pid", "?"), getattr(live, "host", "?")
    since = getattr(live, "since", "") or "?"
    run = getattr(live, "run_id", "") or rec.run_id
    detail = (f"the record says running ({command}, run {run}) and the hyops that ran it is gone, but "
              f"its engine still runs (pid {pid} on {host}, since {since}): it may still change "
              "objects and holds the state lock, so nothing is judged or settled until it stops")
    return finding(ev, Code.ENGINE_RUNNING, detail, [], alternatives=[
        Alternative(cmd.reconcile(ev.where), "wait for the engine to finish (it saves the state as "
                    "it goes), then reconcile again"),
        Alternative(f"kill {pid}", f"it must stop now (run it on {host}), then reconcile again")])


def _shared_state(ev: ModuleEvidence, cmd: Commands) -> Finding:
    others = ", ".join(ev.shared_with)
    place = ev.where.display_dir or "its module directory"
    if ev.where.workspace and ev.where.workspace != "default":
        place += f" (workspace {ev.where.workspace})"
    detail = (f"{place} is also module {others}'s: the engine keeps one state per module directory and "
              "workspace, whatever the ref, so these records claim one state, which holds only what the "
              "last run of any of them made; an apply, destroy or --write of one would act on the others' "
              "objects, so hyops refuses them and judges none. Decide which ref keeps this directory and "
              "forget the others' records (the state and every object stay as they are; check in the "
              "provider that the objects a forgotten record claims are gone, or adopt them elsewhere)")
    return finding(ev, Code.SHARED_STATE, detail, [], alternatives=[
        Alternative(cmd.forget_record(ev.where), f"module {others} keeps this directory: hyops forgets "
                    f"{ev.where.module_ref}'s record (who, when and the record itself stay in a run folder)")])


def _corrupt(ev: ModuleEvidence, cmd: Commands) -> Finding:
    path = ev.record_path or "latest.json"
    return finding(ev, Code.CORRUPT_RECORD, ev.record_problem or "the record is unreadable",
                    [f"cat {path}", f"mv {path} {path}.corrupt", cmd.reconcile(ev.where)])


def _no_record(ev: ModuleEvidence, cmd: Commands) -> Finding:
    if ev.claimed_by:
        owner = ev.claimed_by[0]
        place = ev.where.display_dir or "its module directory"
        return finding(ev, Code.NO_RECORD, (
            f"hyops has no operation record for {ev.where.module_ref}, and {place} is module {owner}'s: its "
            "record claims the engine state there, which this ref would share (hyops refuses that); "
            f"reconcile and run it as --ref {owner}, or give this ref a workspace of its own"),
            [cmd.reconcile(dataclasses.replace(ev.where, module_ref=owner, inputs_args=(), stack_file=None))])
    state = ev.state
    if state is None:
        return finding(ev, Code.NO_RECORD, "hyops has no operation record for this module, and "
                        "its state could not be read", [cmd.apply(ev.where)])
    if state.is_empty:
        return finding(ev, Code.NO_RECORD, (
            "hyops has no operation record for this module and its state holds nothing; "
            "`--write` records it as absent once the refresh-only plan confirms it"),
            [cmd.write(ev.where), cmd.apply(ev.where)])
    live = state.addresses()
    return finding(ev, Code.NO_RECORD, (
        f"hyops has no operation record for this module, but its state holds {len(live)} "
        f"resource(s): {names(live)}; they are live and untracked"),
        [], live, alternatives=[
            Alternative(cmd.apply(ev.where), "to keep them: the apply records them (and creates what is missing)"),
            Alternative(cmd.destroy(ev.where), "to remove them")])


def _progress_summary(progress: Mapping[str, ResourceProgress] | None) -> str:
    if not progress:
        return "its events show no resource activity"
    counts: dict[str, int] = {}
    for p in progress.values():
        counts[p.status.value] = counts.get(p.status.value, 0) + 1
    return "its events show " + ", ".join(f"{n} {_PROGRESS_WORDS.get(s, s)}" for s, n in sorted(counts.items()))


def _stale(ev: ModuleEvidence, rec: OperationRecord, progress: Mapping[str, ResourceProgress] | None,
           cmd: Commands) -> Finding:
    who = f" by pid {rec.owner.pid} on {rec.owner.host}" if rec.owner else ""
    command = rec.active_command or "a mutation"
    detail = (f"the record says running ({command}, run {rec.run_id}, started "
              f"{rec.started_at or '?'}{who}) but no live process holds the module lock: hyops "
              f"stopped mid-{command} and the outcome is uncertain; {_progress_summary(progress)}. "
              "`--write` settles it as error and lists the creates that left no state as suspect orphans")
    if rec.owner is not None and rec.owner.host != host_name():
        detail += (f"; it ran on another machine ({rec.owner.host}): a runner cut off from the store "
                   "(rather than gone) may still run its engine, which hyops cannot see from here: "
                   "make sure that runner is gone before --write")
    return finding(ev, Code.STALE_RUNNING, detail, [cmd.write(ev.where)])


def _objects(what: str, objects: Iterable[tuple[str, str | None]]) -> str:
    listed = [f"{k} ({i})" if i else k for k, i in objects]
    return f"{what} {names(listed)}" if listed else ""


def _written_outside(ev: ModuleEvidence, w: Written, cmd: Commands) -> Finding:
    """The state moved since hyops left it: say what changed, by object, and never advise
    the apply that would undo it before a plan has shown what it undoes."""
    was = f"serial {w.before.serial}"
    now = (f"another state (lineage {w.now.lineage or 'none'}, serial {w.now.serial}; hyops left lineage "
           f"{w.before.lineage or 'none'})" if w.other_lineage else f"serial {w.now.serial}")
    parts = [p for p in (_objects("added", w.added), _objects("removed", w.removed),
                         _objects("changed", w.changed),
                         _objects("moved", [(f"{old} to {new}", i) for old, new, i in w.moved])) if p]
    what = "; ".join(parts) or "no object changed (only the state's serial moved)"
    detail = (f"since run {w.since} ({was}) the state was written by something other than hyops (now {now}): "
              f"{what}. The next apply undoes every such change the configuration does not hold (it puts a "
              "changed object back, destroys an added object no block declares, creates a removed one anew): "
              "plan first and read what it would undo; to keep the change, put it in the configuration or "
              "its inputs, then `--write` records the state as it is now")
    keys = [k for k, _ in (*w.added, *w.removed, *w.changed)] + [new for _, new, _ in w.moved]
    return finding(ev, Code.STATE_WRITTEN_OUTSIDE, detail, [cmd.plan(ev.where)], dict.fromkeys(keys),
                    alternatives=[
                        Alternative(cmd.write(ev.where), "the plan shows no change, or only changes you mean: the "
                                    "record takes the state as the other writer left it (nothing remote changes)"),
                        Alternative(cmd.apply(ev.where), "to undo the other writer's change: the plan shows "
                                    "exactly what the apply reverts")])


def _stale_import(ev: ModuleEvidence, cmd: Commands) -> Finding:
    blocks = ev.stale_imports
    shown = "; ".join(f"{b.file} imports {b.names()} into {b.to}" for b in blocks[:LISTED])
    return finding(ev, Code.STALE_IMPORT, (
        f"the configuration has `import` blocks for objects a completed delete removed ({shown}): "
        "the engine cannot import what is gone, so every plan fails; delete those import blocks "
        "from the configuration (the resource blocks stay), then apply creates each anew"),
        [], [b.to for b in blocks], alternatives=[
            Alternative(cmd.apply(ev.where), "once the import blocks are gone: create them anew as configured"),
            Alternative(cmd.destroy(ev.where), "once the import blocks are gone: remove the module's objects instead")])


def _origin(run: str, evidence: OrphanEvidence | None, interrupted: bool) -> str:
    where = f"the interrupted run {run} (its events)" if interrupted else f"run {run}"
    if evidence is OrphanEvidence.STARTED:
        return f"a create started in {where}"
    if evidence is OrphanEvidence.PLANNED:
        return (f"a create planned, may have started, in {where} (no start of it was seen: hyops "
                "stopped reading before the engine could report one)")
    return f"a create of {where} may have made an object (its events are gone)"


def _identity(attributes: Mapping[str, Any] | None) -> str:
    if not attributes:
        return ""
    shown = ", ".join(f"{k}={_short(v)}" for k, v in list(attributes.items())[:8])
    return f"; planned with {shown}"


def _orphans(ev: ModuleEvidence, rec: OperationRecord, progress: Mapping[str, ResourceProgress] | None,
             in_state: set[str], cmd: Commands) -> list[Finding]:
    listed = {o.address: o for o in rec.suspect_orphans}
    derived = [a for a in rules.interrupted_orphans(ev) if a not in listed]
    known = ev.orphan_evidence or {}
    found = []
    for address in [*listed, *derived]:
        orphan = listed.get(address)
        evidence = known.get(address)
        if orphan is not None:
            origin = _origin(orphan.run_id, evidence, False) + f" (recorded {orphan.at})"
            forget = cmd.forget(ev.where, address)
        else:
            origin = _origin(rec.run_id, evidence, True)
            forget = cmd.reconcile(ev.where, "--write", "--forget-orphan", shlex.quote(address))
        attributes = (ev.planned_attributes or {}).get(address)
        how = " by the attributes it was planned with" if attributes else ""
        tail = ("the object may exist in the cloud without the state knowing it: look it up"
                f"{how}, then adopt it with --import or, once checked, --forget-orphan")
        what = f"{address}: {origin} and left nothing in state{_identity(attributes)}"
        if address == UNNAMED_ORPHAN:
            what = (f"{address} (unnamed): the interrupted run's engine started, hyops read none of "
                    "its plan, and no plan could be read since, so what it may have created cannot be "
                    "named")
            tail = ("look in the provider for objects of this module that the state does not "
                    "hold, delete or --import each, then --forget-orphan '*'")
        elif address in in_state:
            what = f"{address}: {origin}{_identity(attributes)}"
            tail = (f"{address} is in state now, as another object: the orphan would be a second "
                    "one; look it up and delete it, then --forget-orphan")
        steps = [cmd.sim_ls()] if ev.where.uses_sim else []
        choices: list[Alternative] = []
        checked = Alternative(forget, "you checked it does not exist (or you deleted it)")
        if address not in in_state and address != UNNAMED_ORPHAN:
            choices = [Alternative(cmd.import_(ev.where, address, None),
                                   "it exists in the provider: adopt it into state with its id"), checked]
        elif address in in_state and ev.where.uses_sim:  # the delete is a command here
            choices = [Alternative(cmd.sim_rm(), f"it exists: a second object besides the one the state "
                                   f"holds at {address}; delete it, then --forget-orphan"), checked]
        else:
            steps.append(forget)
        suspect = finding(ev, Code.SUSPECT_ORPHAN, f"{what}; {tail}", steps, [address],
                          alternatives=choices, evidence=evidence or OrphanEvidence.UNKNOWN,
                          planned_attributes=dict(attributes) if attributes is not None else None)
        lookup = (ev.lookups or {}).get(address)
        found.append(advice.amend(suspect, what, lookup, ev, cmd) if lookup is not None else suspect)
    return found


def _drift(ev: ModuleEvidence, cmd: Commands) -> Finding:
    assert ev.refresh is not None
    drift = ev.refresh.drift
    parts = [f"{c.address} vanished" if c.action == "delete" else f"{c.address} changed outside "
             f"the engine ({c.action})" for c in drift[:LISTED]]
    more = f" and {len(drift) - LISTED} more" if len(drift) > LISTED else ""
    return finding(ev, Code.DRIFT, (
        f"the refresh-only plan shows live objects differ from the state: {'; '.join(parts)}{more}; "
        "apply puts them back as configured, destroy removes what is left"),
        [], [c.address for c in drift], alternatives=[
            Alternative(cmd.apply(ev.where), "to put the live objects back as configured"),
            Alternative(cmd.destroy(ev.where), "to remove what is left of the module")])


def _moved(ev: ModuleEvidence, moved: Mapping[str, str], cmd: Commands) -> Finding:
    """The state holds objects the record knows under other addresses (a `state mv` by hand):
    nothing is lost, but the record names the old ones until `--write` follows the objects;
    unless the configuration disagrees with a move (rules.moves_undone): then the next apply
    destroys the object and makes a new one, and the advice is to move it back or declare it."""
    undone = rules.moves_undone(ev)
    if undone:
        return _moves_undone(ev, undone, cmd)
    olds = sorted(moved)
    parts = [f"{old} is at {moved[old]}" for old in olds[:LISTED]]
    more = f" and {len(olds) - LISTED} more" if len(olds) > LISTED else ""
    return finding(ev, Code.MOVED_IN_STATE, (
        f"the state holds objects the record knows at other addresses (a `state mv`): {'; '.join(parts)}{more}; "
        "the record still names the old ones: --write follows the objects (nothing remote changes)"),
        [cmd.write(ev.where)], olds)


def _moves_undone(ev: ModuleEvidence, undone: Mapping[str, str], cmd: Commands) -> Finding:
    ids = {k: e.id for k, e in ((ev.record.resources or {}) if ev.record is not None else {}).items()}
    olds = sorted(undone)
    parts = [f"{old} ({ids.get(old) or 'no id'}) is at {undone[old]}" for old in olds[:LISTED]]
    more = f" and {len(olds) - LISTED} more" if len(olds) > LISTED else ""
    detail = (f"the state holds objects the record knows at other addresses (a `state mv`): {'; '.join(parts)}{more}; "
              "the configuration does not declare the new address and no `moved` block explains the move, so the "
              "next apply destroys each object at its new address and creates a new one at the old: move each back, "
              "or declare the move in the configuration (rename the block and add a `moved` block), then reconcile")
    first = olds[0]
    also = " (reconcile again names the next one)" if len(olds) > 1 else ""
    choices = [Alternative(cmd.state_mv(ev.where, lost.typed(ev, undone[first]), lost.typed(ev, first)),
                           f"to move {undone[first]} back to {first}: "
                           f"the state, the record and the configuration agree again (nothing remote changes){also}")]
    choices.append(Alternative(cmd.reconcile(ev.where), "once the configuration declares the new address(es), "
                               "with a `moved { from = OLD, to = NEW }` block each: reconcile again"))
    return finding(ev, Code.MOVED_IN_STATE, detail, [], olds, alternatives=choices)


def _partial(ev: ModuleEvidence, rec: OperationRecord, cmd: Commands) -> Finding:
    command = rec.failed_command or "operation"
    error = (rec.last_error or "no error text recorded").strip().rstrip(".")
    if len(error) > 300:
        error = error[:300].rstrip(" .;") + " [...]"
    counts: dict[str, int] = {}
    for entry in (rec.resources or {}).values():
        counts[entry.status] = counts.get(entry.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no resource activity recorded"
    detail = f"the last {command} failed ({summary}): {error}"
    if rules.empty_confirmed(ev) is None:
        write = f"records {rules.empty_status(rec).value}"
        # one --write, one word for it: the orphan findings of this module say the same
        if any(lookup.adoptable for lookup in (ev.lookups or {}).values()):
            write = "adopts what the lookup matched (orphan_found), then records what the state holds"
        elif rules.orphan_blockers(ev):
            write += "; what it does with the suspect orphan(s), their own finding says"
        detail += f". Evidence: the state is empty (refresh-only plan agrees); `--write` {write}"
        actions = [cmd.write(ev.where)]
    elif rules.fully_applied(ev) is None:
        detail += (". Evidence: the state now holds the full configuration and both plans show no "
                   "change; `--write` records ok")
        actions = [cmd.write(ev.where)]
    elif rules.missing_from_state(ev):
        detail += (". Objects the record knows are held by no state (state_missing, lost_from_state): deal with "
                   "them first; an apply or destroy now would act without them")
        actions = []
    else:
        if ev.plan is not None and ev.plan.changes:
            shown = ", ".join(f"{c.action} {c.address}" for c in ev.plan.changes[:LISTED])
            detail += f". The plan still has {len(ev.plan.changes)} change(s): {shown}"
        apply = Alternative(cmd.apply(ev.where), "to finish the configuration (fix the cause first)")
        destroy = Alternative(cmd.destroy(ev.where), "to remove what the partial run made")
        if command == "destroy":
            apply = Alternative(apply.command, "to keep the module: re-create what the destroy removed")
            destroy = Alternative(destroy.command, "to finish the destroy (fix the cause first)")
        choices = [destroy, apply] if command == "destroy" else [apply, destroy]
        if ev.where.stack_file and command != "destroy":
            choices = [Alternative(cmd.stack_apply(ev.where), (
                "fix the cause first (the configuration, or the stack file): it applies this member "
                "with the stack's inputs as they are now, then every member that waits on it")),
                Alternative(apply.command, "to apply this member alone, with the stack file's inputs as "
                            "they are now (the members that wait on it stay pending)"), destroy]
        return finding(ev, Code.PARTIAL_APPLY, detail, [], alternatives=choices)
    return finding(ev, Code.PARTIAL_APPLY, detail, actions)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _outputs_diff(recorded: Mapping[str, Any], in_state: Mapping[str, Any]) -> str:
    """'' when equal; else the differences, named (sensitive values are never shown)."""
    parts: list[str] = []
    for name in sorted(set(recorded) | set(in_state)):
        if name not in in_state:
            parts.append(f"{name} is recorded but not in state")
        elif name not in recorded:
            parts.append(f"{name} is in state but not recorded")
        elif recorded[name] != in_state[name]:
            if {"sensitive": True} in (recorded[name], in_state[name]):
                parts.append(f"{name} differs in sensitivity")
            else:
                parts.append(f"{name}: record {_short(recorded[name])}, state {_short(in_state[name])}")
    return "; ".join(parts)

