"""reconcile's rules read whole (reconcile/rules.py): what scripts/mutation.py found surviving
the tests that read them through compare and --write.

Each test is one rule where it alone decides: the record `--write` settles from a stale run
(ids whose delete completed are forgotten, a completed create's are not), the entries an `ok`
settle takes from state, which moves the configuration undoes, and a record the engine's lost
object rule does not apply to."""

from __future__ import annotations

from hybridops_tf.engine.state import StateResource, StateSnapshot
from hybridops_tf.reconcile.rules import Verdict, lost_from_state, moves_undone, settled_record
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import ResourceEntry
from tests.unit.reconcile_builders import evidence, plan_with, progress, record, state


def _resource(address: str, ident: object = None, *, mode: str = "managed", deposed: str | None = None
              ) -> StateResource:
    kind, _, name = address.removeprefix("data.").partition(".")
    return StateResource(address, mode, kind, name, values={} if ident is None else {"id": ident},
                         deposed_key=deposed)


def test_a_module_without_a_record_lost_nothing_to_the_engine() -> None:
    assert lost_from_state(evidence(record=None, state=state())) == {}


def test_a_move_the_plan_leaves_alone_is_kept_and_one_under_an_unnamed_change_is_not_trusted() -> None:
    moved = record(Status.OK, resources={"sim_vm.a": ("complete", "create", "vm-1")})
    after_mv = state("sim_vm.b", ids={"sim_vm.b": "vm-1"})

    quiet_elsewhere = evidence(record=moved, state=after_mv, plan=plan_with(("sim_network.n", "update")))
    unnamed = evidence(record=moved, state=after_mv, plan=plan_with(("(unnamed)", "update")))

    assert moves_undone(quiet_elsewhere) == {}
    assert moves_undone(unnamed) == {"sim_vm.a": "sim_vm.b"}


def test_an_ok_settle_takes_each_managed_current_object_from_state_keeping_what_the_record_knew() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.a": ("error", "create", "vm-1")})
    snapshot = StateSnapshot("1.0", "1.8.0", resources=(
        _resource("data.sim_image.i", "img-1", mode="data"),  # a read, not an object
        _resource("sim_vm.a", None),  # the state gives no id: the record's is kept
        _resource("sim_vm.a", "vm-0", deposed="d1"),  # a deposed object is no entry of its own
        _resource("sim_network.n", "net-1"),
    ))

    out = settled_record(evidence(record=rec, state=snapshot), Verdict.TO_OK, "reconcile-1", "2026-01-01T00:00:00Z")

    assert out.resources == {"sim_vm.a": ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1"),
                             "sim_network.n": ResourceEntry(ResourceStatus.COMPLETE, "reconcile", "net-1")}


def test_a_stale_runs_settle_forgets_each_id_whose_delete_completed_but_not_a_completed_creates() -> None:
    rec = record(Status.RUNNING, resources={"sim_network.n": ("complete", "create", None),
                                            "sim_vm.a": ("complete", "create", "vm-1"),
                                            "sim_vm.b": ("complete", "create", "vm-2")})
    ev = evidence(record=rec, lock_free=True, state=state(),
                  last_run=progress(sim_vm__b=("complete", "create", "vm-2")),
                  deleted={"sim_vm.a": ("vm-1",), "sim_vm.b": ("vm-2",)})

    out = settled_record(ev, Verdict.STALE_TO_ERROR, "reconcile-1", "2026-01-01T00:00:00Z")

    assert out.resources is not None
    assert {a: e.id for a, e in out.resources.items()} == {"sim_network.n": None, "sim_vm.a": None,
                                                          "sim_vm.b": "vm-2"}
