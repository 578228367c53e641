"""Instance keys spelled as each engine spells them (engine/addresses.py), checked against what
each engine printed (tests/fixtures/address_keys/, scripts/capture_address_keys.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.engine.addresses import Spelling, command_address, render_key, respell, unquote_key
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.features import key_spelling, key_spelling_of
from hybridops_tf.engine.state import parse_local_state
from hybridops_tf.record.stamp import parse_state_stamp

CAPTURED = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "address_keys").glob("terraform-*.json"))
CASES = [(path.stem, key) for path in CAPTURED for key in json.loads(path.read_text(encoding="utf-8"))["keys"]]


def _spelling(name: str) -> Spelling:
    return key_spelling(EngineInfo(Path("terraform"), name.removeprefix("terraform-"), "terraform"))


def test_every_engine_of_make_engines_and_the_bundled_one_was_captured() -> None:
    assert {p.stem for p in CAPTURED} >= {"terraform-1.0.3", "terraform-1.11.4", "terraform-1.12.2",
                                          "terraform-1.13.5", "terraform-1.14.9", "terraform-1.15.5"}


@pytest.mark.parametrize(("engine", "case"), CASES, ids=[f"{e}-{c['key']!r}" for e, c in CASES])
def test_a_key_is_rendered_as_that_engine_prints_it_and_read_back_to_the_same_key(engine: str, case: dict) -> None:
    spelling = _spelling(engine)
    address = "null_resource.k" + render_key(case["key"], spelling)

    assert address == case["show_json"] == case["event_addr"]
    assert unquote_key(address.removeprefix("null_resource.k")[1:-1], spelling) == case["key"]


@pytest.mark.parametrize(("engine", "case"), CASES, ids=[f"{e}-{c['key']!r}" for e, c in CASES])
def test_an_address_in_a_command_is_the_hcl_spelling_every_engine_parses(engine: str, case: dict) -> None:
    command = command_address(case["show_json"], _spelling(engine))

    assert case["hcl_spelling_parses"]
    assert command == "null_resource.k" + render_key(case["key"], Spelling.HCL)


def test_the_spelling_changes_at_terraform_1_11_and_an_unknown_engine_is_taken_to_be_current() -> None:
    assert key_spelling_of("1.10.5") is Spelling.GO
    assert key_spelling_of("1.11.0") is Spelling.HCL
    assert key_spelling(None) is Spelling.HCL


def test_the_two_spellings_of_a_template_opener_are_different_keys() -> None:
    # `["$${x}"]` is the key `$${x}` as Terraform 1.0 prints it and the key `${x}` as 1.11 does
    assert unquote_key('"$${x}"', Spelling.GO) == "$${x}"
    assert unquote_key('"$${x}"', Spelling.HCL) == "${x}"
    with pytest.raises(ValueError):
        unquote_key('"${x}"', Spelling.HCL)  # a template sequence: no engine parses it in an address


def test_respell_rewrites_the_keys_of_module_calls_and_resources_alike() -> None:
    go = 'module.m["${a}"].null_resource.k["ctl\\x01"]'

    assert respell(go, Spelling.GO, Spelling.HCL) == 'module.m["$${a}"].null_resource.k["ctl\\u0001"]'
    assert respell(go, Spelling.GO, Spelling.GO) == go


def _state_file(key: str, version: str) -> dict:
    return {"version": 4, "terraform_version": version, "serial": 1, "lineage": "l", "outputs": {},
            "resources": [{"mode": "managed", "type": "null_resource", "name": "k", "provider": "p",
                           "instances": [{"index_key": key, "attributes": {"id": "1"}}]}]}


@pytest.mark.parametrize(("engine", "case"), [c for c in CASES if c[0] in ("terraform-1.0.3", "terraform-1.15.5")],
                         ids=lambda c: c if isinstance(c, str) else repr(c["key"]))
def test_a_local_state_file_and_its_stamp_give_the_address_the_engine_prints(engine: str, case: dict) -> None:
    doc = _state_file(case["key"], engine.removeprefix("terraform-"))

    (state,) = parse_local_state(doc, _spelling(engine)).resources
    assert state.address == case["show_json"]
    assert list(parse_state_stamp(doc).objects) == [case["show_json"]]


def test_a_raw_state_rm_reconcile_prints_names_a_terraform_1_0_address_in_the_spelling_it_parses() -> None:
    from hybridops_tf.reconcile.compare import compare
    from hybridops_tf.reconcile.model import Code, ModuleEvidence, PlanEvidence
    from hybridops_tf.record.lifecycle import ResourceStatus
    from hybridops_tf.record.model import RecordEngine
    from hybridops_tf.record.stamp import StateStamp
    from tests.unit.reconcile_builders import WHERE, record, state

    printed = 'sim_vm.web["${a}"]'  # as Terraform 1.0 prints the key `${a}`; it cannot parse it back
    rec = record(resources={printed: (ResourceStatus.COMPLETE, "create", "vm-1")})
    rec.engine = RecordEngine("terraform", "1.0.3")
    ev = ModuleEvidence(where=WHERE, record=rec, state=state(printed, ids={printed: "vm-2"}),
                        stamp=StateStamp("L", 3), refresh=PlanEvidence(), plan=PlanEvidence())

    [found] = [f for f in compare(ev) if f.code is Code.STATE_MISSING]
    [state_rm] = [a.command for a in found.alternatives if " state rm " in a.command]
    assert state_rm.endswith(" state rm 'sim_vm.web[\"$${a}\"]'"), state_rm
