"""The fold of a run's events, the settle rules and reconcile's compare grow linearly with
the number of resources (issue 37): a 10x larger module costs about 10x the work, never
100x. Measured without a clock: the Python and built-in calls the work makes, counted with
sys.setprofile, and every comparison between two addresses counted too (addresses are a str
subclass whose __eq__ is a Python call), so a scan of a list of addresses per event (what
made the fold quadratic) counts as the n comparisons it is, though it runs in C.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

from hybridops_tf.engine.events import Event, iter_events
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.engine.state import StateSnapshot, parse_state
from hybridops_tf.reconcile import rules
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.gather import completed_deletes
from hybridops_tf.reconcile.model import (
    ModuleEvidence,
    PlanEvidence,
)
from hybridops_tf.record import transitions
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry, SuspectOrphan
from hybridops_tf.record.objects import (
    gone_on_refresh,
    interrupted_run_orphans,
    missing_from_state,
    new_suspect_orphans,
    objects_after_run,
    released_after,
    state_view,
)

SMALL = 200
GROWTH = 10  # the large module has GROWTH times the resources of the small one
SLACK = 1.2  # linear work grows by at most GROWTH (fixed costs make it less); this allows a little more


class Addr(str):
    """An address whose every comparison with another string is a counted Python call."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return str.__ne__(self, other)

    __hash__ = str.__hash__


def _line(kind: str, addr: str, rtype: str, **extra: Any) -> str:
    key = "change" if kind in ("planned_change", "resource_drift") else "hook"
    name = addr.split(".")[1].split("[")[0]
    return json.dumps({"type": kind, "@level": "info", key: {
        "resource": {"addr": addr, "resource_type": rtype, "resource_name": name}, **extra}})


def _diagnostic(rtype: str, name: str) -> str:
    """A failed postcondition: it names the block, not the instance (Terraform 1.2+)."""
    return json.dumps({"type": "diagnostic", "@level": "error", "diagnostic": {
        "severity": "error", "summary": "Resource postcondition failed", "detail": "",
        "snippet": {"context": f'resource "{rtype}" "{name}"'}}})


def run_lines(n: int) -> list[str]:
    """An apply over n instances of one counted block (creates, a few unfinished or failed,
    some replaced: delete then create) and n // 10 of another whose every instance failed its
    postcondition (one diagnostic each, naming only the block)."""
    vms = [f"sim_vm.vm[{i}]" for i in range(n)]
    disks = [f"sim_disk.d[{i}]" for i in range(n // 10)]
    lines = [json.dumps({"type": "version", "terraform": "1.8.0", "ui": "1.2"})]
    for i, a in enumerate(vms):
        lines.append(_line("planned_change", a, "sim_vm", action="replace" if i % 7 == 0 else "create"))
    lines += [_line("planned_change", a, "sim_disk", action="create") for a in disks]
    for i, a in enumerate(vms):
        if i % 7 == 0:
            lines.append(_line("apply_start", a, "sim_vm", action="delete", id_key="id", id_value=f"old-{i}"))
            lines.append(_line("apply_complete", a, "sim_vm", action="delete", id_key="id", id_value=f"old-{i}"))
        lines.append(_line("apply_start", a, "sim_vm", action="create"))
        lines.append(_line("apply_progress", a, "sim_vm", action="create", elapsed_seconds=10))
        if i % 50 == 1:
            continue  # killed mid-create: no completion
        if i % 50 == 2:
            lines.append(_line("apply_errored", a, "sim_vm", action="create", elapsed_seconds=11))
            continue
        lines.append(_line("apply_complete", a, "sim_vm", action="create", id_key="id", id_value=f"vm-{i}",
                           elapsed_seconds=12))
    for i, a in enumerate(disks):
        lines.append(_line("apply_start", a, "sim_disk", action="create"))
        lines.append(_line("apply_complete", a, "sim_disk", action="create", id_key="id", id_value=f"d-{i}"))
    lines += [_diagnostic("sim_disk", "d") for _ in disks]
    return lines


def refresh_lines(n: int) -> list[str]:
    vms = [f"sim_vm.vm[{i}]" for i in range(n)]
    lines = [_line("refresh_complete", a, "sim_vm", id_key="id", id_value=f"vm-{i}") for i, a in enumerate(vms)]
    lines += [_line("resource_drift", a, "sim_vm", action="update") for a in vms[::25]]
    lines.append(json.dumps({"type": "change_summary", "changes": {"add": 0, "change": 0, "remove": 0,
                                                                   "operation": "plan"}}))
    return lines


def state_doc(n: int) -> str:
    """What the state holds after the run: every completed create, the first one's id lost."""
    resources = [{"address": f"sim_vm.vm[{i}]", "mode": "managed", "type": "sim_vm", "name": "vm", "index": i,
                  "values": {"id": f"vm-{i}", "size": "small"}, **({"tainted": True} if i % 97 == 3 else {})}
                 for i in range(1, n) if i % 50 not in (1, 2)]
    resources += [{"address": f"sim_disk.d[{i}]", "mode": "managed", "type": "sim_disk", "name": "d", "index": i,
                   "values": {"id": f"d-{i}"}} for i in range(n // 10)]
    return json.dumps({"format_version": "1.0", "terraform_version": "1.8.0", "values": {
        "outputs": {"ids": {"sensitive": False, "value": ["vm-1"]}}, "root_module": {"resources": resources}}})


def record(n: int) -> OperationRecord:
    """The stale `running` record of the run, knowing the objects an earlier run made."""
    rec = OperationRecord(module_ref="bench/vms", status=Status.RUNNING, run_id="apply-2", active_command="apply",
                          outputs={"ids": []})
    rec.resources = {Addr(f"sim_vm.vm[{i}]"): ResourceEntry("complete", "create", f"old-{i}")
                     for i in range(0, n, 7)}
    rec.suspect_orphans = [SuspectOrphan(Addr(f"sim_vm.vm[{i}]"), "create", "apply-1", "2026-01-01T00:00:00Z")
                           for i in range(0, n, 100)]
    return rec


def counted(events: Iterable[Event]) -> list[Event]:
    """Each resource event with an address of its own (a fresh Addr, as parsing makes one)."""
    out: list[Event] = []
    for event in events:
        resource = getattr(event, "resource", None)
        if resource is not None and resource.addr:
            event = dataclasses.replace(event, resource=dataclasses.replace(resource, addr=Addr(resource.addr)))
        out.append(event)
    return out


def counted_state(state: StateSnapshot) -> StateSnapshot:
    return dataclasses.replace(state, resources=tuple(dataclasses.replace(r, address=Addr(r.address))
                                                      for r in state.resources))


def settle_and_compare(n: int) -> Callable[[], object]:
    """The work of one large module's settle and reconcile, from its evidence as text."""
    lines, refresh, doc, rec = run_lines(n), refresh_lines(n), state_doc(n), record(n)

    def work() -> object:
        events = counted(iter_events(lines))
        tracker = ResourceTracker().feed_all(events)
        progress = dict(tracker.resources)
        state = counted_state(parse_state(doc))
        view = state_view(state.resources)
        objects = objects_after_run(rec.resources, progress, view, run_id="apply-2")
        orphans = new_suspect_orphans(progress, view, "apply-2", known=rec.resources)
        interrupted_run_orphans(progress, view, "apply-2", list(progress), known=rec.resources)
        released_after(objects.released, objects.released, view, objects.resources)
        missing_from_state(objects.resources, view)
        gone_on_refresh(objects.resources, tracker.read_addresses, view)
        settled = transitions.failed(rec, command="apply", error="boom", recovered_outputs=state.outputs_plain(),
                                     resources=objects.resources, orphans=orphans)
        OperationRecord.from_dict(json.loads(json.dumps(settled.to_dict())))
        ev = ModuleEvidence(where=Where("bench/vms", "modules/bench"), record=rec, lock_free=True, state=state,
                            refresh=PlanEvidence.from_events(counted(iter_events(refresh)), 2),
                            plan=PlanEvidence.from_events(events, 2), last_run=progress,
                            deleted=completed_deletes(tracker, events))
        decision = rules.decide(ev)
        rules.settled_record(ev, decision.verdict, "reconcile-1")
        return compare(ev, Commands())

    return work


def calls(work: Callable[[], object]) -> int:
    """How many Python and built-in calls `work` makes (deterministic, whatever the machine)."""
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def test_settle_and_compare_of_ten_times_the_resources_cost_at_most_ten_times_the_calls() -> None:
    small, large = calls(settle_and_compare(SMALL)), calls(settle_and_compare(SMALL * GROWTH))
    assert large <= small * GROWTH * SLACK, (
        f"{SMALL} resources took {small} calls, {SMALL * GROWTH} took {large}: {large / small:.1f}x for "
        f"{GROWTH}x the resources (superlinear)")


def test_the_count_sees_a_scan_of_addresses_per_resource() -> None:
    """The measure itself: a membership test on a list of n addresses, once per address,
    counts as quadratic though `in` runs in C."""

    def scans(n: int) -> Callable[[], object]:
        addrs = [Addr(f"a[{i}]") for i in range(n)]

        def work() -> object:
            seen: list[str] = []
            for a in addrs:
                if a not in seen:
                    seen.append(a)
            return seen

        return work

    assert calls(scans(100 * GROWTH)) > calls(scans(100)) * GROWTH * 5


def postconditions_failed(n: int) -> Callable[[], object]:
    """A counted block whose n deletes completed and whose n creates each failed their
    postcondition: one diagnostic per instance, each naming only the block."""
    old = [f"sim_disk.d[{i}]" for i in range(n)]
    new = [f"sim_disk.d[{n + i}]" for i in range(n)]
    lines = [_line("apply_start", a, "sim_disk", action="delete", id_key="id", id_value=f"o-{i}")
             for i, a in enumerate(old)]
    lines += [_line("apply_complete", a, "sim_disk", action="delete", id_key="id", id_value=f"o-{i}")
              for i, a in enumerate(old)]
    lines += [_line("apply_complete", a, "sim_disk", action="create", id_key="id", id_value=f"d-{i}")
              for i, a in enumerate(new)]
    lines += [_diagnostic("sim_disk", "d") for _ in new]
    events = counted(iter_events(lines))
    return lambda: ResourceTracker().feed_all(events)


def test_a_postcondition_failed_by_every_instance_costs_calls_in_proportion() -> None:
    small, large = calls(postconditions_failed(SMALL)), calls(postconditions_failed(SMALL * GROWTH))
    assert large <= small * GROWTH * SLACK, f"{small} calls, then {large} for {GROWTH}x the instances"
