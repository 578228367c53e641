"""reconcile's pure path on a synthetic module: parsers + compare, no engine.

The evidence of a 10,000-resource module after a killed apply: a `show -json` state, the
interrupted run's events.jsonl (planned, started, completed; a few creates never finished),
a refresh-only plan stream with some drift, and a record listing every resource. Timed:
parse_state + iter_events/ResourceTracker + PlanEvidence.from_events + compare, best of
ROUNDS, in CPU seconds of this process (the work is one thread of pure Python, so its CPU
time is its cost, whatever else the machine runs; wall time on a shared machine adds the
waits for a core). Targets (issue 37): < 1 s at 10,000 resources, and linear growth: at
50,000 the time per resource within 1.5x of 1,000's. tests/unit/test_fold_growth.py guards
the growth without a clock.
"""

from __future__ import annotations

import gc
import json
import os
import time
from typing import Any

from hybridops_tf.engine.events import iter_events
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.engine.state import parse_state
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Commands, ModuleEvidence, PlanEvidence, Where
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry, SuspectOrphan

TITLE = "reconcile compare on a synthetic state + event log (parsers + compare, no engine)"
SIZES = (1_000, 10_000, 50_000)
ROUNDS = int(os.environ.get("HYOPS_BENCH_ROUNDS", "3"))
TARGET_SECONDS = 1.0  # at 10,000 resources
TARGET_GROWTH = 1.5  # per resource, 50,000 against 1,000


def _hook(kind: str, addr: str, **extra: Any) -> str:
    res = {"addr": addr, "module": "", "resource": addr, "implied_provider": "sim",
           "resource_type": "sim_vm", "resource_name": addr.split(".")[1].split("[")[0], "resource_key": None}
    key = "change" if kind in ("planned_change", "resource_drift") else "hook"
    return json.dumps({"@level": "info", "@message": f"{addr}: {kind}", "@module": "terraform.ui",
                       "@timestamp": "2026-01-01T00:00:00.000000Z", "type": kind,
                       key: {"resource": res, **extra}})


def synthetic(n: int) -> tuple[str, list[str], list[str], OperationRecord]:
    """State JSON, run events, refresh-only plan events and a running record, for n resources."""
    addrs = [f"sim_vm.vm[{i}]" for i in range(n)]
    unfinished = set(addrs[-max(1, n // 200):])  # creates the kill interrupted: suspect orphans
    in_state = [a for a in addrs if a not in unfinished]
    state = {"format_version": "1.0", "terraform_version": "1.8.0", "values": {
        "outputs": {"ids": {"sensitive": False, "value": [f"vm-{i:08x}" for i in range(10)]}},
        "root_module": {"resources": [
            {"address": a, "mode": "managed", "type": "sim_vm", "name": "vm", "index": i,
             "provider_name": "hybridops.dev/hybridops/sim",
             "values": {"id": f"vm-{i:08x}", "name": f"vm-{i}", "size": "small", "network_id": "net-1"},
             "sensitive_values": {}, **({"tainted": True} if i % 997 == 0 else {})}
            for i, a in enumerate(in_state)]}}}
    events = ['{"@level":"info","@message":"OpenTofu 1.8.0","type":"version","tofu":"1.8.0","ui":"1.2"}']
    for a in addrs:
        events.append(_hook("planned_change", a, action="create"))
    for i, a in enumerate(addrs):
        events.append(_hook("apply_start", a, action="create"))
        if a not in unfinished:
            events.append(_hook("apply_complete", a, action="create", id_key="id", id_value=f"vm-{i:08x}",
                                elapsed_seconds=0.1))
    refresh = [_hook("refresh_complete", a, id_key="id", id_value="x") for a in in_state]
    refresh += [_hook("resource_drift", a, action="update") for a in in_state[:: max(1, n // 100)]]
    refresh.append('{"type":"change_summary","changes":{"add":0,"change":0,"remove":0,"operation":"plan"}}')
    record = OperationRecord(module_ref="bench/vms", status=Status.RUNNING, run_id="apply-bench",
                             active_command="apply", outputs={"ids": []})
    record.resources = {a: ResourceEntry("complete", "create", f"vm-{i:08x}") for i, a in enumerate(addrs[: n // 2])}
    record.suspect_orphans = [SuspectOrphan(addrs[0], "create", "apply-old", "2026-01-01T00:00:00Z")]
    return json.dumps(state), events, refresh, record


def _once(state_text: str, events: list[str], refresh: list[str],
          record: OperationRecord) -> tuple[float, float, float, int]:
    gc.collect()  # a collection left over from building the data must not land in a timing
    t0 = time.process_time()
    state = parse_state(state_text)
    t1 = time.process_time()
    progress = dict(ResourceTracker().feed_all(iter_events(events)).resources)
    drift = PlanEvidence.from_events(iter_events(refresh), 2)
    t2 = time.process_time()
    ev = ModuleEvidence(where=Where("bench/vms", "modules/bench"), record=record, lock_free=True, state=state,
                        refresh=drift, last_run=progress)
    found = compare(ev, Commands())
    t3 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2, len(found)


def _target(n: int, total: float, growth: float) -> tuple[str, str]:
    if n == 10_000:
        return f"< {TARGET_SECONDS:g} s", "yes" if total < TARGET_SECONDS else "NO"
    if n == SIZES[-1]:
        return f"per resource <= {TARGET_GROWTH:g}x 1k's", "yes" if growth <= TARGET_GROWTH else "NO"
    return "", ""


def run() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    base_per_resource = None
    for n in SIZES:
        data = synthetic(n)
        best = min((_once(*data) for _ in range(ROUNDS)), key=lambda r: sum(r[:3]))
        total = sum(best[:3])
        per = total / n * 1e6
        base_per_resource = base_per_resource or per
        target, met = _target(n, total, per / base_per_resource)
        rows.append({
            "resources": n, "parse state s": f"{best[0]:.3f}", "fold events s": f"{best[1]:.3f}",
            "compare s": f"{best[2]:.3f}", "total CPU s": f"{total:.3f}", "us/resource": f"{per:.1f}",
            "vs 1k per resource": f"{per / base_per_resource:.2f}x", "findings": best[3],
            "target": target, "met": met,
        })
    return rows


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import table  # type: ignore[import-not-found]

    print(table(run()))
