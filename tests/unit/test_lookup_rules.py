"""The pure parts of reconcile's lookups: which candidates are left and what that means
(reconcile/lookup/judge.py), what a command must answer (protocol.py), and the findings'
words (advice.py through compare.py). No engine, no process."""

from __future__ import annotations

import json

import pytest

from hybridops_tf.base.redact import REDACTED
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.lookup.judge import (
    disambiguate,
    failed,
    judge,
    resource_type,
)
from hybridops_tf.reconcile.lookup.protocol import (
    AnswerError,
    LookupRequest,
    parse_answer,
    safe_planned,
)
from hybridops_tf.reconcile.model import (
    Code,
)
from hybridops_tf.reconcile.verdict import Candidate, Judgement, OrphanLookup, Outcome
from hybridops_tf.record.advice import Commands, Where
from hybridops_tf.record.lifecycle import Status
from tests.unit.reconcile_builders import evidence, quiet, record, state

VM = "sim_vm.this"
PLANNED = {"name": "demo-vm", "size": "small"}


def c(ident: str, **attributes: object) -> Candidate:
    return Candidate(ident, attributes)


def verdict(*candidates: Candidate, held: tuple[str, ...] = (), complete: bool = True,
            match: tuple[str, ...] = ("name",), planned: dict[str, object] | None = None) -> Judgement:
    return judge(VM, "sim_vm", "lookup.py (hyops.lookups.yml, type sim_vm)", match=match, complete=complete,
                 planned=PLANNED if planned is None else planned, candidates=candidates, held=held)


# --- judge: which candidates are left, and what that proves ----------------------------------


def test_the_one_candidate_no_state_or_record_holds_and_that_matches_is_found() -> None:
    found = verdict(c("vm-1", name="demo-vm"), c("vm-2", name="other"), c("vm-3", name="demo-vm"),
                    held=("vm-3",))

    assert found.outcome is Outcome.FOUND and found.found == c("vm-1", name="demo-vm")
    assert found.held == ("vm-3",) and found.differ == ("vm-2",) and found.adoptable


def test_a_candidate_missing_a_match_attribute_differs() -> None:
    assert verdict(c("vm-1", size="small")).outcome is Outcome.NONE


def test_none_left_from_a_complete_lookup_proves_nothing_was_made_and_from_an_incomplete_one_nothing() -> None:
    assert verdict(c("vm-1", name="other-vm"), held=("vm-1",)).outcome is Outcome.NONE
    assert verdict().outcome is Outcome.NONE
    assert verdict(complete=False).outcome is Outcome.NOT_FOUND


@pytest.mark.parametrize("complete", [True, False])
def test_a_held_candidate_shaped_as_the_plan_contradicts_the_states_and_proves_nothing(complete: bool) -> None:
    said = judge(VM, "sim_vm", "x", match=("name",), complete=complete, planned=PLANNED,
                 candidates=[c("vm-9", name="demo-vm")], held={"vm-9": "the state of web (as sim_vm.web)"})

    assert said.outcome is Outcome.CONTRADICTED and not said.adoptable
    assert said.contradicted == (("vm-9", "the state of web (as sim_vm.web)"),)


def test_without_match_a_held_candidate_is_no_contradiction() -> None:
    assert verdict(c("vm-1", name="demo-vm"), held=("vm-1",), match=()).outcome is Outcome.NONE


def test_two_left_are_several_and_never_adoptable() -> None:
    several = verdict(c("vm-1", name="demo-vm"), c("vm-2", name="demo-vm"))

    assert several.outcome is Outcome.SEVERAL and not several.adoptable and several.found is None
    assert [x.id for x in several.kept] == ["vm-1", "vm-2"]


def test_a_match_attribute_the_plan_gives_no_value_for_never_lets_one_candidate_be_adopted() -> None:
    unmatched = verdict(c("vm-1", name="demo-vm", ip="10.0.0.9"), match=("name", "ip"))

    assert unmatched.outcome is Outcome.UNMATCHED and unmatched.unplanned == ("ip",) and not unmatched.adoptable


def test_without_match_the_commands_own_answer_decides() -> None:
    assert verdict(c("vm-1", name="anything"), match=()).outcome is Outcome.FOUND


def test_a_found_object_at_an_address_the_state_holds_is_a_second_object_not_adopted() -> None:
    second = judge(VM, "sim_vm", "x", match=("name",), complete=True, planned=PLANNED,
                   candidates=[c("vm-9", name="demo-vm")], held=(), in_state=True)

    assert second.outcome is Outcome.FOUND and not second.adoptable


def test_an_object_two_orphans_could_each_be_is_nobodys() -> None:
    a = judge("sim_vm.a", "sim_vm", "x", match=(), complete=True, planned={}, candidates=[c("vm-1")], held=())
    b = judge("sim_vm.b", "sim_vm", "x", match=(), complete=True, planned={}, candidates=[c("vm-1")], held=())
    lone = judge("sim_network.n", "sim_network", "x", match=(), complete=True, planned={},
                 candidates=[c("net-1")], held=())

    out = disambiguate({"sim_vm.a": OrphanLookup("sim_vm.a", (a,)), "sim_vm.b": OrphanLookup("sim_vm.b", (b,)),
                        "sim_network.n": OrphanLookup("sim_network.n", (lone,))})

    assert [ask.outcome for ask in out["sim_vm.a"].asks] == [Outcome.SHARED]
    assert out["sim_vm.a"].asks[0].also_for == ("sim_vm.b",) and not out["sim_vm.b"].adoptable
    assert out["sim_network.n"].asks[0].outcome is Outcome.FOUND


def test_an_orphan_is_settled_only_when_every_ask_found_one_to_adopt_or_proved_none() -> None:
    found = verdict(c("vm-1", name="demo-vm"))
    none = verdict()
    several = verdict(c("vm-1", name="demo-vm"), c("vm-2", name="demo-vm"))
    broke = failed(VM, "sim_vm", "x", "it exited 1")

    assert OrphanLookup("*", (found, none)).settled
    assert not OrphanLookup("*", (found, several)).settled
    assert not OrphanLookup("*", (found, broke)).settled
    assert not OrphanLookup("*", (found,), not_asked="no lookup is declared for sim_config.this").settled
    assert not OrphanLookup("*", ()).settled


@pytest.mark.parametrize("address,expected", [
    ("sim_vm.this", "sim_vm"), ("sim_vm.this[0]", "sim_vm"), ('sim_vm.this["a.b"]', "sim_vm"),
    ('module.net["x.y"].sim_network.this', "sim_network"), ("module.a.module.b.sim_vm.v[2]", "sim_vm"),
    ("data.sim_vm.x", None), ("*", None), ("", None),
])
def test_the_resource_type_is_read_from_the_address(address: str, expected: str | None) -> None:
    assert resource_type(address) == expected


# --- protocol: the request and the answer -----------------------------------------------------


def test_planned_never_carries_a_sensitive_value_nor_an_id() -> None:
    planned = {"name": "cfg", "secret": REDACTED, "nested": {"a": 1, "b": [REDACTED]}, "id": "x", "n": 3}

    assert safe_planned(planned) == {"name": "cfg", "n": 3}


def test_the_request_holds_the_documented_keys() -> None:
    doc = json.loads(LookupRequest("sim_vm", VM, "/m", "demo/vm", {"name": "x"}, "apply-1", "t0", None).stdin())

    assert {"type", "address", "module_dir", "ref", "planned", "run"} <= set(doc)
    assert doc["run"] == {"id": "apply-1", "started_at": "t0", "ended_at": None}


def test_an_answer_is_parsed_into_candidates_one_per_id() -> None:
    out = parse_answer('{"candidates": [{"id": "vm-1", "attributes": {"name": "a"}}, {"id": "vm-1"}, {"id": "vm-2"}]}')

    assert out == (c("vm-1", name="a"), c("vm-2"))


@pytest.mark.parametrize("text,why", [
    ("", "printed nothing"),
    ("<html>", "not one JSON document"),
    ('{"candidates": []}\n{"candidates": []}', "not one JSON document"),
    ("[]", 'not {"candidates": [...]}'),
    ('{"objects": []}', 'not {"candidates": [...]}'),
    ('{"candidates": ["vm-1"]}', "candidates[0] is not an object"),
    ('{"candidates": [{"id": 7}]}', "candidates[0].id is not a non-empty string"),
    ('{"candidates": [{"id": " "}]}', "candidates[0].id is not a non-empty string"),
    ('{"candidates": [{"id": "a", "attributes": []}]}', "candidates[0].attributes is not an object"),
    ("[" * 100000, "nests too deep"),
    (json.dumps({"candidates": [{"id": f"vm-{i}"} for i in range(1001)]}), "1001 candidates (at most 1000)"),
])
def test_what_is_not_the_answer_document_is_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(AnswerError) as info:
        parse_answer(text)
    assert why in str(info.value)


# --- the findings ------------------------------------------------------------------------------


def _orphaned(lookup: OrphanLookup, *, in_state: tuple[str, ...] = (), uses_sim: bool = False) -> list:
    ev = evidence(record=record(Status.ERROR, orphans=[lookup.orphan]), state=state(*in_state), refresh=quiet(),
                  plan=quiet(), lookups={lookup.orphan: lookup},
                  where=Where("demo/network", "modules/vm", uses_sim=uses_sim))
    return [f for f in compare(ev, Commands()) if lookup.orphan in f.addresses]


def test_one_found_is_orphan_found_naming_it_with_write_as_the_next_action() -> None:
    [finding] = _orphaned(OrphanLookup(VM, (verdict(c("vm-1", name="demo-vm", size="small")),), run_id="rec-1"))

    assert finding.code is Code.ORPHAN_FOUND
    assert "vm-1 (name=\"demo-vm\", size=\"small\")" in finding.detail and "run rec-1" in finding.detail
    assert finding.next_actions == ("hyops reconcile modules/vm --ref demo/network --write",)
    assert finding.alternatives == ()
    assert finding.to_dict()["lookup"]["asks"][0]["candidates"] == [
        {"id": "vm-1", "attributes": {"name": "demo-vm", "size": "small"}}]


def test_none_from_a_complete_lookup_says_the_create_made_nothing_and_write_drops_it() -> None:
    [finding] = _orphaned(OrphanLookup(VM, (verdict(),)))

    assert finding.code is Code.SUSPECT_ORPHAN and "the create made nothing" in finding.detail
    assert finding.next_actions == ("hyops reconcile modules/vm --ref demo/network --write",)


def test_several_name_every_candidate_with_its_own_import_and_never_write() -> None:
    [finding] = _orphaned(OrphanLookup(VM, (verdict(c("vm-1", name="demo-vm"), c("vm-2", name="demo-vm")),)))

    assert finding.code is Code.SUSPECT_ORPHAN
    assert [a.command for a in finding.alternatives] == [
        "hyops reconcile modules/vm --ref demo/network --import sim_vm.this=vm-1",
        "hyops reconcile modules/vm --ref demo/network --import sim_vm.this=vm-2",
        "hyops reconcile modules/vm --ref demo/network --forget-orphan sim_vm.this"]
    assert not any(step.endswith("--write") for step in finding.next_actions)


def test_a_failed_lookup_keeps_todays_advice_and_says_why() -> None:
    [finding] = _orphaned(OrphanLookup(VM, (failed(VM, "sim_vm", "lookup.py", "it exited 1: boom"),)))

    assert finding.code is Code.SUSPECT_ORPHAN and finding.detail.endswith("failed: it exited 1: boom")
    assert [a.command for a in finding.alternatives] == [
        "hyops reconcile modules/vm --ref demo/network --import 'sim_vm.this=<id>'",
        "hyops reconcile modules/vm --ref demo/network --forget-orphan sim_vm.this"]


def test_a_source_that_cannot_list_the_type_keeps_todays_advice_and_says_so_never_write() -> None:
    why = "the engine, terraform 1.0.3, has no `terraform query`"
    cannot = failed(VM, "sim_vm", "`source: query`", why, complete=True, unsupported=True)
    lookup = OrphanLookup(VM, (cannot,))

    [finding] = _orphaned(lookup)

    assert cannot.outcome.value == "unsupported" and not lookup.settled and not lookup.adoptable
    assert finding.code is Code.SUSPECT_ORPHAN and f"cannot list type sim_vm: {why}" in finding.detail
    assert not any(step.endswith("--write") for step in finding.next_actions)
    assert [a.command for a in finding.alternatives] == [
        "hyops reconcile modules/vm --ref demo/network --import 'sim_vm.this=<id>'",
        "hyops reconcile modules/vm --ref demo/network --forget-orphan sim_vm.this"]


def test_a_second_object_found_beside_the_one_in_state_is_advised_for_deletion_not_adoption() -> None:
    second = judge(VM, "sim_vm", "x", match=("name",), complete=True, planned=PLANNED,
                   candidates=[c("vm-9", name="demo-vm")], held=(), in_state=True)

    [finding] = _orphaned(OrphanLookup(VM, (second,)), in_state=(VM,), uses_sim=True)

    assert finding.code is Code.SUSPECT_ORPHAN and "a second object" in finding.detail
    assert [a.command for a in finding.alternatives][0] == "hyops sim rm vm-9"
    assert not any("--import" in a.command for a in finding.alternatives)


def test_the_unnamed_orphan_found_whole_is_adopted_address_by_address() -> None:
    net = judge("sim_network.n", "sim_network", "x", match=("name",), complete=True, planned={"name": "n"},
                candidates=[c("net-1", name="n")], held=())
    vm = judge("sim_vm.v", "sim_vm", "x", match=("name",), complete=True, planned={"name": "v"},
               candidates=[], held=())

    [finding] = _orphaned(OrphanLookup("*", (net, vm)))

    assert finding.code is Code.ORPHAN_FOUND and "net-1 at sim_network.n" in finding.detail
    assert "then drops *" in finding.detail
    assert finding.next_actions == ("hyops reconcile modules/vm --ref demo/network --write",)
