"""Small builders of reconcile evidence for the unit tests (no engine, no files); their own
test is test_reconcile_builders.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hybridops_tf.engine.progress import ResourceProgress
from hybridops_tf.engine.state import StateSnapshot, parse_state
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.reconcile.model import (
    Change,
    ModuleEvidence,
    PlanEvidence,
)
from hybridops_tf.record.advice import Where
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, Owner, ResourceEntry, SuspectOrphan

REF = "demo/network"
WHERE = Where(REF, "modules/sim/network")


def state(*addresses: str, tainted: Iterable[str] = (), outputs: Mapping[str, Any] | None = None,
          sensitive: Iterable[str] = (), ids: Mapping[str, str] | None = None) -> StateSnapshot:
    """A `show -json` state holding `addresses` (each with an id), parsed as the engine's would be."""
    tainted, sensitive = set(tainted), set(sensitive)
    resources = []
    for address in addresses:
        kind, _, rest = address.partition(".")
        resources.append({
            "address": address, "mode": "managed", "type": kind, "name": rest.split("[")[0],
            "values": {"id": (ids or {}).get(address, f"id-{address}")},
            **({"tainted": True} if address in tainted else {}),
        })
    outs = {name: {"sensitive": name in sensitive, "value": value} for name, value in (outputs or {}).items()}
    return parse_state({"format_version": "1.0", "terraform_version": "1.6.0",
                        "values": {"outputs": outs, "root_module": {"resources": resources}}})


def record(status: Status = Status.OK, *, resources: Mapping[str, tuple[str, str, str | None]] | None = None,
           orphans: Iterable[str] = (), outputs: Mapping[str, Any] | None = None,
           failed_command: str | None = None, active_command: str | None = None,
           last_error: str | None = None, run_id: str = "apply-1") -> OperationRecord:
    """A record; `resources` maps address -> (status, action, id)."""
    rec = OperationRecord(module_ref=REF, status=status, run_id=run_id, module_dir="/w/modules/sim/network")
    rec.resources = ({a: ResourceEntry(s, act, i) for a, (s, act, i) in resources.items()}
                     if resources is not None else None)
    rec.suspect_orphans = [SuspectOrphan(a, "create", "apply-0", "2026-01-01T00:00:00Z") for a in orphans]
    rec.outputs = dict(outputs) if outputs is not None else None
    rec.failed_command = failed_command
    rec.last_error = last_error
    if status is Status.ERROR:
        rec.failed_command = failed_command or "apply"
        rec.last_error = last_error or "boom"
    if status is Status.RUNNING:
        rec.active_command = active_command or "apply"
        rec.owner = Owner(4242, "ci-7", "runner", run_id)
        rec.started_at = "2026-01-01T00:00:00Z"
    return rec


def progress(**by_address: tuple[str, str] | tuple[str, str, str]) -> dict[str, ResourceProgress]:
    """address -> (progress status, action[, id]) as the interrupted run's events left it."""
    out = {}
    for address, spec in by_address.items():
        address = address.replace("__", ".")
        ident = spec[2] if len(spec) > 2 else None
        out[address] = ResourceProgress(address, Progress(spec[0]), spec[1], id_value=ident)
    return out


def quiet() -> PlanEvidence:
    return PlanEvidence()


def plan_with(*changes: tuple[str, str], outputs_changed: bool = False) -> PlanEvidence:
    return PlanEvidence(changes=tuple(Change(a, act) for a, act in changes), outputs_changed=outputs_changed)


def drift(*changes: tuple[str, str]) -> PlanEvidence:
    return PlanEvidence(drift=tuple(Change(a, act) for a, act in changes))


def evidence(**kw: Any) -> ModuleEvidence:
    kw.setdefault("where", WHERE)
    kw.setdefault("record_path", "/rt/state/modules/demo__network/latest.json")
    return ModuleEvidence(**kw)
