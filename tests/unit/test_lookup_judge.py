"""The lookups' judgement (reconcile/lookup/judge.py) read whole: every field a verdict carries,
not only its outcome (the mutants scripts/mutation.py found surviving test_lookup_rules.py).

A verdict's fields reach the findings, `--json` and the report (verdict.py: to_dict), so
each is part of the rule: which lookup said it, whether it was complete, which ids were
dropped and why."""

from __future__ import annotations

import pytest

from hybridops_tf.reconcile.lookup.judge import disambiguate, failed, judge, resource_type
from hybridops_tf.reconcile.verdict import Candidate, Judgement, OrphanLookup, Outcome

SOURCE = "lookup.py (hyops.lookups.yml, type sim_vm)"


def test_a_failed_lookup_is_incomplete_at_an_address_the_state_does_not_hold_unless_told() -> None:
    assert failed("sim_vm.this", "sim_vm", SOURCE, "timed out") == Judgement(
        "sim_vm.this", "sim_vm", Outcome.FAILED, SOURCE, False, why="timed out", in_state=False)


def test_a_failed_lookup_keeps_its_source_completeness_and_whether_the_state_holds_the_address() -> None:
    assert failed("sim_vm.this", "sim_vm", SOURCE, "no list resource", complete=True, in_state=True,
                  unsupported=True) == Judgement("sim_vm.this", "sim_vm", Outcome.UNSUPPORTED, SOURCE, True,
                                                 why="no list resource", in_state=True)


def test_a_contradiction_names_every_dropped_id_and_the_lookup_that_said_it() -> None:
    out = judge("sim_vm.this", "sim_vm", SOURCE, match=["name"], complete=True, planned={"name": "demo"},
                candidates=[Candidate("vm-1", {"name": "demo"}), Candidate("vm-2", {"name": "other"})],
                held=("vm-1",), in_state=True)

    assert out == Judgement("sim_vm.this", "sim_vm", Outcome.CONTRADICTED, SOURCE, True, ("name",), (),
                            ("vm-1",), ("vm-2",), (), in_state=True,
                            contradicted=(("vm-1", "a known state or record"),))


def test_a_found_verdict_carries_its_address_type_source_and_completeness() -> None:
    kept = Candidate("vm-1", {"name": "demo"})
    out = judge("sim_vm.this", "sim_vm", SOURCE, match=["name"], complete=True, planned={"name": "demo"},
                candidates=[kept, Candidate("vm-2", {"name": "other"}), Candidate("vm-3", {"name": "demo"})],
                held={"vm-3": "stack member net"})

    assert out == Judgement("sim_vm.this", "sim_vm", Outcome.FOUND, SOURCE, True, ("name",), (kept,), ("vm-3",),
                            ("vm-2",), ())


def test_a_candidate_lacking_a_match_attribute_the_plan_set_to_null_differs() -> None:
    out = judge("sim_vm.this", "sim_vm", SOURCE, match=["tag"], complete=True, planned={"tag": None},
                candidates=[Candidate("vm-1", {})], held=())

    assert out.outcome is Outcome.NONE and out.differ == ("vm-1",)


def test_an_orphan_whose_lookup_found_nothing_stays_as_it_was_beside_a_shared_one() -> None:
    shared = [judge(a, "sim_vm", SOURCE, match=(), complete=True, planned={}, candidates=[Candidate("vm-1", {})],
                    held=()) for a in ("sim_vm.a", "sim_vm.b")]
    nothing = failed("sim_vm.c", "sim_vm", SOURCE, "timed out")

    out = disambiguate({"sim_vm.a": OrphanLookup("sim_vm.a", (shared[0],)),
                        "sim_vm.b": OrphanLookup("sim_vm.b", (shared[1],)),
                        "sim_vm.c": OrphanLookup("sim_vm.c", (nothing,))})

    assert out["sim_vm.c"].asks == (nothing,)
    assert [a.outcome for a in out["sim_vm.a"].asks] == [Outcome.SHARED]


@pytest.mark.parametrize(("address", "expected"), [
    ('module.a["k]"].sim_vm.this', "sim_vm"),  # a bracket inside a quoted key is part of the key
    ('module.a["k.x"].sim_vm.this', "sim_vm"),
    ("sim_vm.data", "sim_vm"),  # a resource may be named "data"
    ("module.a", None),  # a module, not a resource
    (".this", None),  # no type
])
def test_the_resource_type_is_read_past_quoted_keys_and_module_paths(address: str, expected: str | None) -> None:
    assert resource_type(address) == expected
