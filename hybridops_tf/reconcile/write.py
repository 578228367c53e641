"""`--write`: settle a record from evidence, under the module lock (docs/contract.md: Reconcile).

Why the evidence is gathered again under the lock: what reconcile saw a moment ago may be
stale by the time it writes (another run may have started and finished), and a settled
record must rest on evidence no other hyops process could change meanwhile. The rules are
rules.py's; this module only locks, gathers, writes atomically and leaves a run folder.

One settlement needs an engine mutation of state (never of remote objects): when the state
holds the full configuration but not its output values (an `import` writes none), the
refresh runs through `steps.run(command="refresh")`, under the full per-module
contract, and the module is then judged again.

The evidence the last settle rested on is handed back (`Settled.evidence`), with the record
as it now is, so the report needs no second read: it was read under the lock, and only
this settle changed the module since (a plan the new record needs is read before the
lock is released; gather.gather_parts).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hybridops_tf.base.errors import ExitCode, OperationFailed
from hybridops_tf.engine import process
from hybridops_tf.operation import steps
from hybridops_tf.operation.request import ModuleRequest
from hybridops_tf.reconcile import audit, rules
from hybridops_tf.reconcile.evidence import GatherOptions, Target, base_inputs
from hybridops_tf.reconcile.gather import gather_parts
from hybridops_tf.reconcile.model import Action, ActionKind, ModuleEvidence
from hybridops_tf.reconcile.rules import Decision, Verdict
from hybridops_tf.record import gate
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.advice import reconcile_command
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.run_folder import new_run_id
from hybridops_tf.store import Records

_MAX_STEPS = 4  # stale -> error -> ok/destroyed/absent is the longest chain
_MEANT = {Verdict.TO_OK: Status.OK, Verdict.TO_DESTROYED: Status.DESTROYED, Verdict.TO_ABSENT: Status.ABSENT,
          Verdict.STALE_TO_ERROR: Status.ERROR}


@dataclass(frozen=True)
class WriteContext:
    """What a mutating reconcile needs beyond the evidence options."""

    gather: GatherOptions
    lock_timeout: float = 0
    argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settled:
    """What one settle did, and the module's evidence after it (with the record it wrote)."""

    actions: list[Action]
    evidence: ModuleEvidence | None


def settle(target: Target, ctx: WriteContext) -> Settled:
    """Apply every settlement the evidence allows; at most one refresh on the way."""
    actions: list[Action] = []
    refreshed = False
    while True:
        verdict, done, ev = _settle_locked(target, ctx)
        actions.extend(done)
        if verdict is not Verdict.REFRESH_THEN_OK:
            return Settled(actions, ev)
        if refreshed:
            actions.append(Action(ActionKind.SETTLE, "unchanged: after a refresh the state still lacks the "
                                  "configuration's output values (see the plan)"))
            return Settled(actions, ev)
        actions.append(_refresh(target, ctx))
        refreshed = True


def _summary(ev: ModuleEvidence) -> dict[str, object]:
    """The evidence a settlement rested on, for result.json."""
    state = ev.state
    return {
        "state_resources": state.addresses() if state is not None else None,
        "tainted": [r.address for r in state.tainted] if state is not None else None,
        "drift": [dataclasses.asdict(c) for c in ev.refresh.drift] if ev.refresh else None,
        "plan_changes": [dataclasses.asdict(c) for c in ev.plan.changes] if ev.plan else None,
        "plan_outputs_changed": ev.plan.outputs_changed if ev.plan else None,
        "errored_statefile": ev.errored_state,
        "interrupted_run_progress": ({a: p.status.value for a, p in ev.last_run.items()}
                                     if ev.last_run is not None else None),
        "could_not_check": list(ev.unchecked),
    }


def _settle_locked(target: Target, ctx: WriteContext) -> tuple[Verdict, list[Action], ModuleEvidence]:
    """One settle under the lock: the verdict, the actions and the evidence to report from."""
    rt = ctx.gather.runtime
    store = rt.store
    run_id = new_run_id("reconcile")
    rt.ensure_root()
    opts = dataclasses.replace(ctx.gather, lock_held=True)
    with process.FORWARDER, store.lock(target.key, run_id, ctx.lock_timeout):
        ev, parts = gather_parts(target, opts)
        before = ev.record
        decided: list[Decision] = []
        record: OperationRecord | None = None
        decision = rules.decide(ev)
        while decision.verdict not in (Verdict.NONE, Verdict.REFRESH_THEN_OK) and len(decided) < _MAX_STEPS:
            settled = rules.settled_record(ev, decision.verdict, run_id)
            meant = _MEANT.get(decision.verdict, settled.status)
            if settled.status is not meant:
                # record/transitions.py refused what this evidence seemed to allow (e.g. an id it still
                # counts as live): write only the steps before, never loop on it
                decision = Decision(Verdict.NONE, f"stays {(record or ev.record or settled).status.value}: "
                                    f"not {meant.value}: {settled.last_error or 'refused by the settle rules'}")
                break
            record = settled
            if record.module_dir is None and target.directory is not None:
                record.module_dir = str(target.directory)
            decided.append(decision)
            if decision.verdict in (Verdict.DEMOTE_TO_ERROR, Verdict.MISSING_TO_ERROR):
                decision = Decision(Verdict.NONE, "demoted")
                break
            ev = dataclasses.replace(ev, record=record)
            decision = rules.decide(ev)
        if record is None:
            if decision.verdict is Verdict.NONE and (ev.unchecked or ev.engine_alive):
                return decision.verdict, [Action(ActionKind.SETTLE, decision.reason, ok=False)], ev
            if decision.verdict is Verdict.NONE:
                return decision.verdict, [Action(ActionKind.SETTLE, f"unchanged: {decision.reason}")], ev
            return decision.verdict, [], ev
        action = _write(target, ctx, store, before, record, decided, ev, run_id)
        # the record changed: what it derives (orphans, progress, plan wanted) is read again
        after, _ = gather_parts(target, opts, reuse=parts)
        return decision.verdict, [action], after


def _write(target: Target, ctx: WriteContext, store: Records, before: OperationRecord | None,
           record: OperationRecord, decided: list[Decision], ev: ModuleEvidence, run_id: str) -> Action:
    rt = ctx.gather.runtime
    was = before.status.value if before is not None else "no record"
    folder, meta = audit.open_run(
        rt, target.key, record.module_dir, run_id, "write", ctx.argv,
        record_before=before.to_dict() if before is not None else None)
    result = {"steps": [{"verdict": d.verdict.value, "reason": d.reason} for d in decided],
              "evidence": _summary(ev), "status_before": was}
    proof = gate.Proof(deleted=frozenset(i for ids in (ev.deleted or {}).values() for i in ids if i))
    record, kept = gate.gated(before, record, proof)
    try:
        store.write(record)
    except OSError as err:
        message = (f"could not write the settled record {store.where(target.key)}: "
                   f"{err.strerror or err}; the record was left as it was ({was})")
        audit.close_run(rt, folder, meta, ExitCode.FAILED, {**result, "outcome": "failed", "error": message})
        raise OperationFailed(message) from None
    audit.close_run(rt, folder, meta, ExitCode.OK, {**result, "outcome": record.status.value,
                                                      "record_after": record.to_dict()})
    why = "; ".join(d.reason for d in decided)
    orphans = f", {len(record.suspect_orphans)} suspect orphan(s) kept" if record.suspect_orphans else ""
    if kept:
        again = reconcile_command(target.module_ref, record.module_dir, target.workspace)
        orphans += "; " + gate.kept_note(kept, again)
    return Action(ActionKind.SETTLE, f"{was} -> {record.status.value} ({why}){orphans}", run_id=run_id)


def contract_request(target: Target, ctx: WriteContext, command: str, **extra: Any) -> ModuleRequest:
    """A state-changing reconcile step as a module run under the full contract (running
    first, then settled), with the last run's inputs, the caller's overrides and workspace."""
    assert target.directory is not None
    rt = ctx.gather.runtime
    record = rt.store.read(target.key)
    base, _ = base_inputs(target, rt)
    if command == "refresh":
        extra.setdefault("empty_status", rules.empty_status(record))
    return ModuleRequest(
        command=Command(command), target=ModuleTarget(target.directory, target.module_ref), runtime=rt,
        inputs_file=ctx.gather.inputs_file, var_options=ctx.gather.var_options,
        stack_inputs=base, lock_timeout=ctx.lock_timeout, argv=ctx.argv,
        workspace=target.workspace or (record.workspace if record else None), **extra)


def _refresh(target: Target, ctx: WriteContext) -> Action:
    """`apply -refresh-only` under the contract: state follows the live objects, nothing remote changes."""
    outcome = steps.run(contract_request(target, ctx, "refresh", expect_empty=False, on_stderr=None))
    ran = outcome.exit_code == ExitCode.OK
    return Action(ActionKind.REFRESH, "ran apply -refresh-only (no remote change) so the state holds the "
                  f"configuration's output values (run {outcome.run_id})", ok=ran, run_id=outcome.run_id)
