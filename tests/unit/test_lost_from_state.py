"""Objects the engine drops from state (issue 47, item 4): Terraform before 1.14.2 removes an
object from state when its update fails on an early path (hashicorp/terraform#37981). The
record keeps the entry with its id; reconcile calls it `lost_from_state`, advises only the
import that puts it back (an apply would create a second object), and `--write` never drops
it on the state's word. Each test builds the evidence where this rule alone decides."""

from __future__ import annotations

from hybridops_tf.engine.progress import ResourceProgress
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.model import Code
from hybridops_tf.reconcile.rules import Verdict, decide
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import ResourceEntry
from hybridops_tf.record.objects import resources_after_run, state_view
from hybridops_tf.record.stamp import SeenObject, StateStamp
from tests.unit.reconcile_builders import REF, evidence, plan_with, quiet, record, state

CMD = Commands("hyops", "terraform")
DIR = "modules/sim/network"
R = f"{DIR} --ref {REF}"
NET = "sim_network.this"


def codes(found: list) -> list[str]:
    return [f.code.value for f in found]


def _left(*ids: str, run_id: str = "apply-1") -> StateStamp:  # the builders' record is run apply-1
    """The record's `state_seen`: the state as run `run_id` left it, holding `ids`."""
    return StateStamp("lineage-1", 2, {f"obj.{i}": SeenObject(i, "d") for i in ids}, run_id)


_LEFT = _left("vm-1")  # the failed run's state: the vm, without NET


def _dropped(*, command: str = "apply", status: str = "error", action: str = "update",
             seen: StateStamp | None = _LEFT, run_id: str = "apply-1", **extra):
    """A failed apply whose update of NET errored, and a state that no longer holds NET: as
    that run left it (`seen`), and now."""
    rec = record(Status.ERROR, failed_command=command, run_id=run_id,
                 resources={NET: (status, action, "net-1a2b3c4d"), "sim_vm.this": ("complete", "create", "vm-1")})
    rec.state_seen = seen
    return evidence(record=rec, state=state("sim_vm.this", ids={"sim_vm.this": "vm-1"}), refresh=quiet(),
                    plan=plan_with((NET, "create")), **extra)


def test_an_object_whose_failed_update_left_it_out_of_state_is_lost_from_state_with_its_import() -> None:
    found = compare(_dropped(), CMD)

    [lost] = [f for f in found if f.code is Code.LOST_FROM_STATE]
    assert "state_missing" not in codes(found)
    assert lost.addresses == (NET,)
    assert "net-1a2b3c4d" in lost.detail
    assert lost.next_actions == (f"hyops reconcile {R} --import {NET}=net-1a2b3c4d",)
    assert lost.alternatives == ()  # no apply: it would create a second object beside the live one


def test_the_import_names_the_workspace_and_the_global_options() -> None:
    ev = _dropped(where=Where(REF, DIR, workspace="stg"))

    [lost] = [f for f in compare(ev, Commands("hyops --runtime-root /rt", "terraform"))
              if f.code is Code.LOST_FROM_STATE]

    assert lost.next_actions == (f"hyops --runtime-root /rt reconcile {R} --workspace stg --import {NET}=net-1a2b3c4d",)


def test_an_errored_delete_or_replace_is_not_lost_from_state_but_state_missing() -> None:
    for action in ("delete", "replace", "create"):
        found = compare(_dropped(action=action), CMD)

        assert "lost_from_state" not in codes(found), action
        assert "state_missing" in codes(found), action


def test_a_lost_object_after_a_destroy_or_of_an_entry_the_run_did_not_fail_is_state_missing() -> None:
    for ev in (_dropped(command="destroy"), _dropped(status="complete")):
        found = compare(ev, CMD)

        assert "lost_from_state" not in codes(found)
        assert "state_missing" in codes(found)


def test_a_state_that_held_the_object_when_the_run_left_it_lost_it_since_state_missing() -> None:
    """Only the state as the failed run left it tells the engine's drop from a state lost or
    rewritten since (a deleted state file, another writer): that one is state_missing."""
    for seen in (_left("vm-1", "net-1a2b3c4d"), None, _left("vm-1", run_id="reconcile-2")):
        found = compare(_dropped(seen=seen), CMD)

        assert "lost_from_state" not in codes(found), seen
        assert "state_missing" in codes(found), seen


def test_a_stamp_a_later_write_took_says_nothing_of_the_apply_state_missing() -> None:
    """`reconcile --write` after another writer stamps the state as it found it, and the record
    takes that run's id: the stamp is no longer the failed apply's."""
    found = compare(_dropped(seen=_left("vm-1", run_id="reconcile-2"), run_id="reconcile-2"), CMD)

    assert "lost_from_state" not in codes(found)
    assert "state_missing" in codes(found)


def test_write_never_settles_a_module_whose_object_the_engine_dropped() -> None:
    ev = _dropped()

    assert decide(ev).verdict is Verdict.NONE
    empty = evidence(record=_dropped().record, state=state(), refresh=quiet(), plan=plan_with((NET, "create")))
    assert decide(empty).verdict is Verdict.NONE  # never destroyed/absent on the state's word


def test_the_record_keeps_the_entry_of_an_object_the_engine_dropped_when_its_update_failed() -> None:
    known = {NET: ResourceEntry(ResourceStatus.COMPLETE, "create", "net-1a2b3c4d")}
    progress = {NET: ResourceProgress(NET, Progress.ERROR, "update")}

    after = resources_after_run(known, progress, state_view(state().resources))

    assert after[NET] == ResourceEntry(ResourceStatus.ERROR, "update", "net-1a2b3c4d")
