"""The record follows objects, not addresses: settle.objects_after_run and what feeds it.

Pure rules, tested without a process: moves (a `moved` block's previous address, or an id the
state holds elsewhere), releases (`removed` with destroy = false), imports, deposed objects,
condition failures, retired ids. The real-engine proofs are tests/integration/test_refactors.py.
"""

from __future__ import annotations

import json
import random

from hybridops_tf.cli.plan_render import render_markdown, render_plan
from hybridops_tf.engine.events import parse_event
from hybridops_tf.engine.progress import ResourceProgress, ResourceTracker
from hybridops_tf.engine.state import parse_local_state
from hybridops_tf.engine.vocabulary import Progress
from hybridops_tf.record.lifecycle import ResourceStatus
from hybridops_tf.record.model import ReleasedObject, ResourceEntry, deposed_entry_key
from hybridops_tf.record.objects import StateObject, missing_from_state, objects_after_run, released_after

RUN = "apply-2"


def entry(status: str, action: str, ident: str | None = None) -> ResourceEntry:
    return ResourceEntry(ResourceStatus(status), action, ident)


def planned(address: str, action: str, **kw: object) -> ResourceProgress:
    return ResourceProgress(address, Progress.PENDING, action, action, **kw)  # type: ignore[arg-type]


def test_a_moved_block_moves_the_entry_with_its_id() -> None:
    known = {"sim_vm.a": entry("complete", "create", "vm-1")}
    progress = {"sim_vm.app": planned("sim_vm.app", "move", previous_address="sim_vm.a")}

    out = objects_after_run(known, progress, {"sim_vm.app": StateObject("vm-1")}, run_id=RUN, converged=True)

    assert out.resources == {"sim_vm.app": entry("complete", "move", "vm-1")}
    assert out.released == []


def test_an_id_the_state_holds_elsewhere_moves_its_entry_and_keeps_what_was_known() -> None:
    known = {"sim_vm.a": entry("complete", "create", "vm-1")}

    out = objects_after_run(known, {}, {"sim_vm.web": StateObject("vm-1")}, run_id=RUN)

    assert out.resources == {"sim_vm.web": entry("complete", "create", "vm-1")}


def test_a_forgotten_object_leaves_resources_for_released() -> None:
    known = {"sim_vm.a": entry("complete", "create", "vm-1"), "sim_network.n": entry("complete", "create", "net-1")}
    progress = {"sim_vm.a": planned("sim_vm.a", "remove")}

    out = objects_after_run(known, progress, {"sim_network.n": StateObject("net-1")}, run_id=RUN, converged=True)

    assert set(out.resources) == {"sim_network.n"}
    assert [(o.address, o.id, o.run_id) for o in out.released] == [("sim_vm.a", "vm-1", RUN)]


def test_an_import_block_makes_a_complete_entry_and_a_failed_one_leaves_nothing_pending() -> None:
    progress = {"sim_vm.b": planned("sim_vm.b", "import", importing_id="vm-9")}

    imported = objects_after_run({}, progress, {"sim_vm.b": StateObject("vm-9")}, run_id=RUN, converged=True)
    refused = objects_after_run({}, progress, {}, run_id=RUN)

    assert imported.resources == {"sim_vm.b": entry("complete", "import", "vm-9")}
    assert refused.resources == {}


def test_a_deposed_object_is_its_own_entry_and_its_completed_delete_retires_it() -> None:
    known = {"sim_vm.a": entry("complete", "create", "vm-old")}
    progress = {"sim_vm.a": ResourceProgress("sim_vm.a", Progress.ERROR, "delete", "replace", id_value="vm-new")}
    deposed = deposed_entry_key("sim_vm.a", "00aa")
    state = {"sim_vm.a": StateObject("vm-new"), deposed: StateObject("vm-old", deposed="00aa")}

    left = objects_after_run(known, progress, state, run_id=RUN)
    cleaned = objects_after_run(left.resources, {"sim_vm.a": ResourceProgress(
        "sim_vm.a", Progress.COMPLETE, "delete", deleted_ids=("vm-old",))}, {"sim_vm.a": StateObject("vm-new")})

    assert left.resources["sim_vm.a"].id == "vm-new"
    assert left.resources[deposed] == ResourceEntry(ResourceStatus.ERROR, "delete", "vm-old", None, "00aa")
    assert cleaned.resources[deposed].status is ResourceStatus.DESTROYED
    assert missing_from_state(cleaned.resources, {"sim_vm.a": StateObject("vm-new")}) == []


def test_deleting_only_a_deposed_object_leaves_the_current_entry_as_it_was() -> None:
    deposed = deposed_entry_key("sim_vm.a", "00aa")
    known = {"sim_vm.a": entry("complete", "create", "vm-new"),
             deposed: ResourceEntry(ResourceStatus.ERROR, "delete", "vm-old", None, "00aa")}
    cleanup = ResourceProgress("sim_vm.a", Progress.DESTROYED, "delete", "delete", id_value="vm-old",
                               deleted_ids=("vm-old",), deleting_ids=("vm-old",))
    failed_again = ResourceProgress("sim_vm.a", Progress.ERROR, "delete", "delete", id_value="vm-old",
                                    deleting_ids=("vm-old",))
    current_fails = ResourceProgress("sim_vm.a", Progress.ERROR, "delete", "delete", id_value="vm-new",
                                     deleting_ids=("vm-new",))
    both = {"sim_vm.a": StateObject("vm-new"), deposed: StateObject("vm-old", deposed="00aa")}

    cleaned = objects_after_run(known, {"sim_vm.a": cleanup}, {"sim_vm.a": StateObject("vm-new")}, run_id=RUN)
    still = objects_after_run(known, {"sim_vm.a": failed_again}, both, run_id=RUN)
    destroy_failed = objects_after_run(known, {"sim_vm.a": current_fails}, both, run_id=RUN)

    assert cleaned.resources["sim_vm.a"] == still.resources["sim_vm.a"] == entry("complete", "create", "vm-new")
    assert cleaned.resources[deposed].status is ResourceStatus.DESTROYED
    assert still.resources[deposed].status is ResourceStatus.ERROR
    assert destroy_failed.resources["sim_vm.a"] == entry("error", "delete", "vm-new")


def test_a_destroyed_id_is_never_inherited_by_a_later_failed_create() -> None:
    known = {"sim_vm.web[0]": entry("destroyed", "delete", "vm-dead")}
    progress = {"sim_vm.web[0]": ResourceProgress("sim_vm.web[0]", Progress.ERROR, "create", "create")}

    out = objects_after_run(known, progress, {}, run_id=RUN)

    assert out.resources["sim_vm.web[0]"] == entry("error", "create", None)


def test_an_id_held_anywhere_in_state_is_never_missing() -> None:
    resources = {"sim_vm.a": entry("complete", "create", "vm-1"), "sim_vm.b": entry("complete", "create", "vm-2")}

    assert missing_from_state(resources, {"sim_vm.z": StateObject("vm-1")}) == [("sim_vm.b", "vm-2")]


def test_a_converged_apply_leaves_no_pending_entry_whatever_it_planned() -> None:
    rng = random.Random(22)
    actions = ["create", "update", "move", "remove", "import", "no-op", "read", "delete"]
    for _ in range(2000):
        known = {f"r.k{i}": entry(rng.choice(["complete", "error", "pending", "destroyed"]),
                                  rng.choice(actions), rng.choice([None, f"id-{i}"])) for i in range(rng.randint(0, 4))}
        state = {f"r.s{i}": StateObject(f"id-{rng.randint(0, 5)}") for i in range(rng.randint(0, 4))}
        progress = {a: planned(a, rng.choice(actions)) for a in rng.sample(sorted(set(known) | set(state)),
                                                                             k=min(2, len(known) + len(state)))}
        out = objects_after_run(known, progress, state, run_id=RUN, converged=True)
        live_before = {e.id for e in known.values() if e.id and e.status is not ResourceStatus.DESTROYED}
        live_after = {e.id for e in out.resources.values() if e.id} | {o.id for o in out.released}

        assert not [a for a, e in out.resources.items() if e.status is ResourceStatus.PENDING], (known, progress, state)
        assert set(state) <= set(out.resources)
        assert live_before <= live_after, "an object the record knew is no longer listed"


def test_released_objects_are_listed_once_and_leave_the_list_when_managed_again() -> None:
    old = ReleasedObject("sim_vm.a", "vm-1", "apply-1", "t")
    again = ReleasedObject("sim_vm.a", "vm-1", "apply-2", "t")
    other = ReleasedObject("sim_vm.b", "vm-2", "apply-2", "t")

    assert released_after([old], [again, other], None) == [old, other]
    assert released_after([old, other], [], {"sim_vm.back": StateObject("vm-1")}) == [other]


# --- the stream: a failed condition ------------------------------------------------------------

def _line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"type": kind, **payload})


def _hook(address: str, action: str, ident: str | None = None) -> dict[str, object]:
    kind, name = address.split(".")
    hook: dict[str, object] = {"resource": {"addr": address, "resource_type": kind, "resource_name": name},
                               "action": action}
    if ident:
        hook.update(id_key="id", id_value=ident)
    return {"hook": hook}


POSTCONDITION = _line("diagnostic", {"diagnostic": {
    "severity": "error", "summary": "Resource postcondition failed", "detail": "no",
    "snippet": {"context": 'resource "sim_vm" "c"'}}})


def test_a_failed_postcondition_makes_the_completed_resource_error_with_its_id() -> None:
    lines = [_line("apply_start", _hook("sim_vm.c", "create")),
             _line("apply_complete", _hook("sim_vm.c", "create", "vm-7")), POSTCONDITION]

    p = ResourceTracker().feed_all(parse_event(line) for line in lines).resources["sim_vm.c"]

    assert (p.status, p.id_value, p.condition_failed) == (Progress.ERROR, "vm-7", True)


def test_an_error_of_a_failed_instance_does_not_blame_its_completed_siblings() -> None:
    lines = [_line("apply_complete", _hook("sim_vm.c", "create", "vm-7")),
             _line("apply_errored", {"hook": {"resource": {"addr": "sim_vm.c[1]", "resource_type": "sim_vm",
                                                           "resource_name": "c"}, "action": "create"}}),
             POSTCONDITION]

    progress = ResourceTracker().feed_all(parse_event(line) for line in lines).resources

    assert progress["sim_vm.c"].status is Progress.COMPLETE


def _deletes(order: list[tuple[str, str | None]], *, exit_0: bool = False) -> tuple[str, ...]:
    """Feed a create_before_destroy replace of tainted vm-b while deposed vm-a is deleted too:
    `order` lists (event, id) for the two deletes, in the order the engine reported them."""
    lines = [_line("apply_start", _hook("sim_vm.a", "create")),
             _line("apply_complete", _hook("sim_vm.a", "create", "vm-c"))]
    lines += [_line(kind, _hook("sim_vm.a", "delete", ident)) for kind, ident in order]
    tracker = ResourceTracker().feed_all(parse_event(line) for line in lines)
    if exit_0:
        tracker.engine_succeeded()
    return tracker.resources["sim_vm.a"].deleted_ids


def test_two_deletes_in_flight_at_one_address_retire_both_ids_once_both_complete() -> None:
    interleaved = _deletes([("apply_start", "vm-a"), ("apply_start", "vm-b"),
                            ("apply_complete", None), ("apply_complete", None)])
    in_turn = _deletes([("apply_start", "vm-a"), ("apply_complete", None),
                        ("apply_start", "vm-b"), ("apply_complete", None)])

    assert sorted(interleaved) == sorted(in_turn) == ["vm-a", "vm-b"]


def test_an_engine_that_exits_0_completed_every_delete_it_started_even_unreported() -> None:
    """Terraform 1.11 sends no apply_complete for a deposed object's delete."""
    stream = [("apply_start", "vm-b"), ("apply_start", "vm-a"), ("apply_complete", None)]

    assert _deletes(stream) == ()
    assert sorted(_deletes(stream, exit_0=True)) == ["vm-a", "vm-b"]


def test_of_two_deletes_in_flight_one_failing_retires_neither_id() -> None:
    """The stream names the address, not the object: which one failed is unknown."""
    assert _deletes([("apply_start", "vm-a"), ("apply_start", "vm-b"),
                     ("apply_complete", None), ("apply_errored", None)]) == ()


# --- the local state file -----------------------------------------------------------------------

def test_the_local_state_file_gives_addresses_ids_taint_and_deposed_keys_only() -> None:
    doc = {"version": 4, "terraform_version": "1.11.4", "outputs": {"o": {"value": "x", "type": "string"}},
           "resources": [
               {"mode": "managed", "type": "sim_vm", "name": "web", "provider": "p",
                "instances": [{"index_key": 0, "attributes": {"id": "vm-0", "secret": "s3cr3t"}},
                              {"index_key": 0, "deposed": "00aa", "attributes": {"id": "vm-old"}},
                              {"index_key": 1, "status": "tainted", "attributes": {"id": "vm-1"}}]},
               {"module": "module.child", "mode": "data", "type": "sim_network", "name": "n",
                "instances": [{"index_key": "k", "attributes": {"id": "net-1"}}]}]}

    snap = parse_local_state(json.dumps(doc))

    assert [(r.address, r.values.get("id"), r.tainted, r.deposed_key) for r in snap.resources] == [
        ("sim_vm.web[0]", "vm-0", False, None), ("sim_vm.web[0]", "vm-old", False, "00aa"),
        ("sim_vm.web[1]", "vm-1", True, None), ('module.child.data.sim_network.n["k"]', "net-1", False, None)]
    assert "s3cr3t" not in repr(snap)


# --- plans say what will happen ------------------------------------------------------------------

PLAN = {"resource_changes": [
    {"address": "sim_vm.app", "previous_address": "sim_vm.a", "change": {"actions": ["no-op"]}},
    {"address": "sim_vm.gone", "change": {"actions": ["forget"]}},
    {"address": "sim_vm.b", "change": {"actions": ["no-op"], "importing": {"id": "vm-9"}}},
    {"address": "sim_vm.c", "deposed": "00aa", "change": {"actions": ["delete"]}},
]}


def test_a_plan_shows_moves_forgets_imports_and_deposed_deletes() -> None:
    assert render_plan(PLAN) == [
        "  > sim_vm.a -> sim_vm.app will be moved (the object is kept as it is)",
        "  ! sim_vm.gone will no longer be managed; the object is not destroyed",
        "  <= sim_vm.b will be imported (id vm-9)",
        "  - sim_vm.c (deposed object 00aa) will be destroyed",
    ]
    assert render_plan({"resource_changes": [{"address": "x.y", "change": {"actions": ["no-op"]}}]}) == ["No changes."]


def test_a_markdown_plan_has_a_row_for_each_move_forget_and_import() -> None:
    rows = [line for line in render_markdown(PLAN, "m", "s") if line.startswith("| `")]

    assert [row.split(" | ")[1] for row in rows] == [
        "no change to the object; moved from `sim_vm.a`",
        "no longer managed (the object is not destroyed)",
        "no change to the object; import (id `vm-9`)",
        "delete (deposed object 00aa)",
    ]


def test_a_converged_apply_clears_the_error_of_an_object_whose_condition_holds_now() -> None:
    known = {"sim_vm.c": entry("error", "create", "vm-7")}

    out = objects_after_run(known, {}, {"sim_vm.c": StateObject("vm-7")}, run_id=RUN, converged=True)
    failed = objects_after_run(known, {}, {"sim_vm.c": StateObject("vm-7")}, run_id=RUN)

    assert out.resources["sim_vm.c"].status is ResourceStatus.COMPLETE
    assert failed.resources["sim_vm.c"].status is ResourceStatus.ERROR


def test_a_released_object_adopted_back_and_deleted_leaves_the_released_list() -> None:
    gone = ReleasedObject("sim_vm.a", "vm-1", "apply-1", "t")
    kept = ReleasedObject("sim_vm.z", "vm-9", "apply-1", "t")
    resources = {"sim_vm.b": entry("destroyed", "delete", "vm-1")}

    assert released_after([gone, kept], [], {}, resources) == [kept]


def test_an_instance_key_with_non_ascii_letters_is_addressed_as_the_engine_writes_it() -> None:
    """The engine writes `f["ünï"]`, not `f["\\u00fcn\\u00ef"]`: a record keyed otherwise never
    matched its state, and a destroy that removed everything exited 1 (found by the corpus)."""
    from hybridops_tf.engine.addresses import Spelling, render_key

    for spelling in Spelling:
        assert render_key("ünï \"q\"", spelling) == '["ünï \\"q\\""]'
