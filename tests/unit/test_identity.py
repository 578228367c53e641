"""Resource identity (Terraform and OpenTofu >= 1.12): the provider's own key for an object,
kept beside its id in every record entry when the engine gives one.

Written fixtures in the shapes the engines document (`show -json`'s `identity` and
`identity_schema_version` per instance, a state file's instance keys of the same names);
the real-engine proofs are tests/integration/test_identity.py.
"""

from __future__ import annotations

import json
from typing import Any

from hybridops_tf.engine.state import identity_of, parse_local_state, parse_state
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry
from hybridops_tf.record.objects import StateObject, objects_after_run, state_view

IDENTITY = {"id": "vm-1a2b3c4d"}


def _show(resource: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": "1.0", "terraform_version": "1.12.2",
            "values": {"root_module": {"resources": [resource]}}}


def _vm(**extra: Any) -> dict[str, Any]:
    return {"address": "sim_vm.app", "mode": "managed", "type": "sim_vm", "name": "app",
            "provider_name": "hybridops.dev/hybridops/sim", "schema_version": 0,
            "values": {"id": "vm-1a2b3c4d", "name": "app"}, **extra}


def test_show_json_identity_is_kept_with_its_schema_version() -> None:
    state = parse_state(_show(_vm(identity_schema_version=0, identity=IDENTITY)))

    vm = state.get("sim_vm.app")
    assert vm is not None
    assert (vm.identity, vm.identity_schema_version) == (IDENTITY, 0)


def test_an_engine_before_identity_gives_none() -> None:
    vm = parse_state(_show(_vm())).get("sim_vm.app")

    assert vm is not None
    assert (vm.identity, vm.identity_schema_version) == (None, None)


def test_an_identity_that_is_not_an_object_is_none() -> None:
    for raw in ("vm-1", [], {}, None, 3):
        assert identity_of({"identity": raw, "identity_schema_version": 0}) == {}


def test_a_plan_change_gives_its_identity_under_its_own_key() -> None:
    change = {"actions": ["delete"], "before_identity": IDENTITY, "after_identity": None}

    assert identity_of(change, "before_identity") == {"identity": IDENTITY, "identity_schema_version": None}
    assert identity_of(change, "after_identity") == {}


def test_a_state_file_gives_the_identity_of_each_instance() -> None:
    doc = {"version": 4, "terraform_version": "1.15.5", "serial": 3, "lineage": "x", "outputs": {},
           "resources": [{"mode": "managed", "type": "sim_vm", "name": "app",
                          "provider": 'provider["hybridops.dev/hybridops/sim"]',
                          "instances": [{"schema_version": 0, "identity_schema_version": 0, "identity": IDENTITY,
                                         "attributes": {"id": "vm-1a2b3c4d", "name": "app"}}]}]}

    vm = parse_local_state(json.dumps(doc)).get("sim_vm.app")

    assert vm is not None
    assert (vm.identity, vm.identity_schema_version) == (IDENTITY, 0)


def test_the_record_entry_keeps_identity_beside_id_and_reads_it_back() -> None:
    entry = ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1a2b3c4d", identity=dict(IDENTITY),
                          identity_schema_version=0)
    rec = OperationRecord(module_ref="m", status=Status.OK, run_id="apply-1", resources={"sim_vm.app": entry})

    doc = rec.to_dict()
    assert doc["resources"]["sim_vm.app"] == {"status": "complete", "action": "create", "id": "vm-1a2b3c4d",
                                              "identity": IDENTITY, "identity_schema_version": 0}
    assert OperationRecord.from_dict(json.loads(json.dumps(doc))).resources == {"sim_vm.app": entry}


def test_a_record_without_identity_reads_as_before() -> None:
    doc = {"schema_version": 1, "module_ref": "m", "status": "ok", "run_id": "apply-1", "updated_at": "x",
           "resources": {"sim_vm.app": {"status": "complete", "action": "create", "id": "vm-1"}}}

    entry = OperationRecord.from_dict(doc).resources["sim_vm.app"]  # type: ignore[index]

    assert (entry.identity, entry.identity_schema_version) == (None, None)
    assert "identity" not in entry.to_dict()


def test_the_state_view_carries_identity_into_the_entry() -> None:
    view = state_view(parse_state(_show(_vm(identity_schema_version=0, identity=IDENTITY))).resources)

    out = objects_after_run({}, {}, view, run_id="apply-1", converged=True)

    assert out.resources["sim_vm.app"].identity == IDENTITY
    assert out.resources["sim_vm.app"].identity_schema_version == 0


def test_a_state_read_without_identity_keeps_what_the_entry_knew_of_the_same_object() -> None:
    known = {"sim_vm.app": ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1", identity={"id": "vm-1"},
                                         identity_schema_version=0)}

    same = objects_after_run(known, {}, {"sim_vm.app": StateObject("vm-1")}, run_id="r")
    other = objects_after_run(known, {}, {"sim_vm.app": StateObject("vm-2")}, run_id="r")

    assert same.resources["sim_vm.app"].identity == {"id": "vm-1"}
    assert other.resources["sim_vm.app"].identity is None


def test_a_show_json_that_failed_is_state_unreadable_never_an_empty_state() -> None:
    from hybridops_tf.reconcile.compare import compare
    from hybridops_tf.reconcile.model import Code
    from tests.unit.reconcile_builders import WHERE, evidence, record

    why = "`show -json` failed (exit 1): Error: Failed to decode identity"
    rec = record(Status.OK, resources={"sim_vm.app": ("complete", "create", "vm-1")})
    ev = evidence(where=WHERE, record=rec, state=None, state_unreadable=why, unchecked=(f"state: {why}",))

    found = compare(ev)

    unreadable = [f for f in found if f.code is Code.STATE_UNREADABLE]
    assert len(unreadable) == 1
    assert why in unreadable[0].detail
    assert unreadable[0].next_actions[0].endswith("-- -refresh-only")
    assert not any(f.code in (Code.STATE_MISSING, Code.STATE_AFTER_DESTROY) for f in found)


def test_without_a_failed_show_there_is_no_state_unreadable_finding() -> None:
    from hybridops_tf.reconcile.compare import compare
    from hybridops_tf.reconcile.model import Code
    from tests.unit.reconcile_builders import WHERE, evidence, record

    rec = record(Status.OK, resources={"sim_vm.app": ("complete", "create", "vm-1")})

    found = compare(evidence(where=WHERE, record=rec, state=None, unchecked=("no engine found",)))

    assert not any(f.code is Code.STATE_UNREADABLE for f in found)


def _lost(engine_version: str | None, identity: dict[str, Any] | None) -> Any:
    from hybridops_tf.reconcile.compare import compare
    from hybridops_tf.reconcile.model import Code
    from hybridops_tf.record.model import RecordEngine
    from tests.unit.reconcile_builders import WHERE, evidence, record, state

    rec = record(Status.OK, resources={"sim_vm.app": ("complete", "create", "vm-1")})
    assert rec.resources is not None
    rec.resources["sim_vm.app"].identity = identity
    rec.engine = RecordEngine("terraform", engine_version)
    found = compare(evidence(where=WHERE, record=rec, state=state()))
    return next(f for f in found if f.code is Code.STATE_MISSING)


def test_import_advice_uses_the_identity_where_the_engine_takes_it() -> None:
    finding = _lost("1.12.2", {"id": "vm-1"})

    assert any("--import" in a and "sim_vm.app=vm-1" in a for a in finding.next_actions)  # the id still works
    (by_identity,) = [a for a in finding.alternatives if "identity" in a.when]
    assert 'identity = { id = "vm-1" }' in by_identity.when
    assert "to       = sim_vm.app" in by_identity.when


def test_import_advice_uses_the_id_alone_before_1_12_or_without_identity() -> None:
    for version, identity in (("1.11.4", {"id": "vm-1"}), ("1.0.3", {"id": "vm-1"}), (None, {"id": "vm-1"}),
                              ("1.15.5", None)):
        finding = _lost(version, identity)
        assert not any("identity" in a.when for a in finding.alternatives), version
        assert any("sim_vm.app=vm-1" in a for a in finding.next_actions)


def test_the_identity_gate_names_versions_as_the_engines_write_them() -> None:
    from hybridops_tf.engine.features import takes_import_identity

    assert [takes_import_identity(v) for v in ("1.12.0", "1.15.5", "v1.12.0-beta1", "1.11.9", "1.0.3", "", None)] \
        == [True, True, True, False, False, False, False]


def test_an_import_block_never_interpolates_a_value() -> None:
    from hybridops_tf.record.advice import Commands

    block = Commands.import_block("sim_vm.app", {"id": "a${b}%{c}", "n": 3})

    assert block.splitlines()[2] == '  identity = { id = "a$${b}%%{c}", n = 3 }'
