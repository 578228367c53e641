"""Reconcile advice that agrees with the evidence (issue 10): lost ids, deleted ids, orphan
evidence, unreadable evidence, a live engine, alternatives, inputs and exit codes. No engine."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.inputs.declarations import ImportBlock, import_targets, read_import_blocks
from hybridops_tf.reconcile import rules
from hybridops_tf.reconcile.compare import compare
from hybridops_tf.reconcile.evidence import Target, planned_attributes
from hybridops_tf.reconcile.gather import rerun_args
from hybridops_tf.reconcile.model import (
    Alternative,
    Code,
    Finding,
    ModuleReport,
    OrphanEvidence,
    Report,
)
from hybridops_tf.reconcile.rules import Verdict
from hybridops_tf.record.advice import Commands
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import SuspectOrphan
from hybridops_tf.runtime.root import Runtime
from tests.unit.reconcile_builders import REF, evidence, progress, quiet, record, state

CMD = Commands("hyops", "tofu")
R = f"modules/sim/network --ref {REF}"


def only(findings: list, code: Code):
    matching = [f for f in findings if f.code is code]
    assert len(matching) == 1, [f.code.value for f in findings]
    return matching[0]


# --- case 1: an id the record knows, missing from state ----------------------------------------


def test_an_errored_update_whose_object_left_the_state_is_state_missing_and_never_settles_absent() -> None:
    rec = record(Status.ERROR, resources={"sim_network.this": ("error", "update", "net-1")})
    ev = evidence(record=rec, state=state(), refresh=quiet(), plan=quiet())

    missing = only(compare(ev, CMD), Code.STATE_MISSING)

    assert missing.addresses == ("sim_network.this",)
    assert f"hyops reconcile {R} --import sim_network.this=net-1" in missing.next_actions
    assert rules.decide(ev).verdict is Verdict.NONE


def test_a_destroyed_entry_or_a_data_read_is_not_missing() -> None:
    rec = record(Status.ERROR, resources={"sim_network.this": ("destroyed", "delete", "net-1"),
                                          "data.sim_network.x": ("complete", "read", "net-2")})
    ev = evidence(record=rec, state=state(), refresh=quiet(), plan=quiet())

    assert Code.STATE_MISSING not in [f.code for f in compare(ev, CMD)]
    assert rules.decide(ev).verdict is Verdict.TO_ABSENT


def test_an_ok_record_whose_objects_left_the_state_is_settled_error_keeping_the_ids() -> None:
    rec = record(Status.OK, resources={"sim_network.this": ("complete", "create", "net-1")},
                 outputs={"network_id": "net-1"})
    ev = evidence(record=rec, state=state(), refresh=quiet())

    decision = rules.decide(ev)
    settled = rules.settled_record(ev, decision.verdict, "reconcile-1")

    assert decision.verdict is Verdict.MISSING_TO_ERROR
    assert settled.status is Status.ERROR and "state_missing" in (settled.last_error or "")
    assert settled.resources is not None and settled.resources["sim_network.this"].id == "net-1"
    assert rules.decide(evidence(record=settled, state=state(), refresh=quiet(), plan=quiet())).verdict \
        is Verdict.NONE


# --- case 5: a completed delete, and what shows an orphan's create ------------------------------


def test_an_id_whose_delete_completed_in_the_killed_run_is_never_offered_to_import() -> None:
    rec = record(Status.RUNNING, run_id="apply-9", resources={"sim_network.this": ("complete", "create", "net-old")})
    ev = evidence(record=rec, lock_free=True, state=state(), refresh=quiet(), plan=quiet(),
                  last_run=progress(sim_network__this=("started", "create")),
                  deleted={"sim_network.this": ("net-old",)},
                  orphan_evidence={"sim_network.this": OrphanEvidence.STARTED})

    found = compare(ev, CMD)
    settled = rules.settled_record(ev, Verdict.STALE_TO_ERROR, "reconcile-1")

    assert Code.STATE_MISSING not in [f.code for f in found]
    assert not any("net-old" in c for f in found for c in (*f.next_actions, *(a.command for a in f.alternatives)))
    orphan = only(found, Code.SUSPECT_ORPHAN)
    assert orphan.evidence is OrphanEvidence.STARTED and "a create started" in orphan.detail
    assert "net-old" not in json.dumps(settled.to_dict()["resources"])


def test_without_the_delete_the_recorded_id_is_still_state_missing() -> None:
    rec = record(Status.RUNNING, run_id="apply-9", resources={"sim_network.this": ("complete", "create", "net-old")})
    ev = evidence(record=rec, lock_free=True, state=state(), refresh=quiet(),
                  last_run=progress(sim_network__this=("pending", "replace")))

    assert "net-old" in only(compare(ev, CMD), Code.STATE_MISSING).next_actions[0]


@pytest.mark.parametrize(("seen", "words", "absent"), [
    (OrphanEvidence.STARTED, "a create started in run apply-0", "create planned"),
    (OrphanEvidence.PLANNED, "a create planned, may have started, in run apply-0", "create started"),
    (None, "may have made an object", "create started"),
])
def test_a_listed_orphan_says_started_only_when_a_start_was_seen(seen, words: str, absent: str) -> None:
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.this"]), state=state(), refresh=quiet(),
                  orphan_evidence={"sim_vm.this": seen} if seen else None)

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert words in orphan.detail and absent not in orphan.detail
    assert orphan.to_dict()["evidence"] == (seen or OrphanEvidence.UNKNOWN).value


# --- case 11: what identifies an orphan in the provider ------------------------------------------


def test_planned_attributes_are_the_creates_after_values_redacted_without_unknowns() -> None:
    doc = {"resource_changes": [
        {"address": "sim_config.this", "mode": "managed", "change": {
            "actions": ["create"],
            "after": {"name": "cfg", "secret": "hunter2", "vm_id": None, "id": None, "content": "x"},
            "after_unknown": {"id": True, "vm_id": True}, "after_sensitive": {"secret": True}}},
        {"address": "sim_network.this", "mode": "managed", "change": {
            "actions": ["no-op"], "after": {"name": "n"}, "after_unknown": {}, "after_sensitive": {}}},
    ]}

    attrs = planned_attributes(doc)

    assert attrs == {"sim_config.this": {"name": "cfg", "secret": "<redacted>", "content": "x"}}
    assert "hunter2" not in json.dumps(attrs)


def test_an_orphan_shows_its_planned_attributes_in_its_text_and_document() -> None:
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.this"]), state=state(), refresh=quiet(),
                  planned_attributes={"sim_vm.this": {"name": "web-1", "size": "small"}})

    orphan = only(compare(ev, CMD), Code.SUSPECT_ORPHAN)

    assert 'planned with name="web-1", size="small"' in orphan.detail
    assert orphan.to_dict()["planned_attributes"] == {"name": "web-1", "size": "small"}


# --- case 4: unreadable evidence, a live engine ---------------------------------------------------


def test_write_settles_nothing_while_some_evidence_could_not_be_read() -> None:
    ev = evidence(record=record(Status.RUNNING), lock_free=True, state=state(),
                  unchecked=("plan failed (exit 1): Error acquiring the state lock",))

    decision = rules.decide(ev)

    assert decision.verdict is Verdict.NONE and "not settled" in decision.reason
    assert "state lock" in decision.reason


class _Live:
    pid, host, run_id, since = 4242, "ci-7", "apply-1", "2026-01-01T00:00:00Z"


def test_a_running_record_whose_engine_still_runs_is_engine_running_and_never_settled() -> None:
    ev = evidence(record=record(Status.RUNNING), lock_free=True, state=state(), live_engine=_Live())

    [finding] = compare(ev, CMD)

    assert finding.code is Code.ENGINE_RUNNING
    assert "pid 4242 on ci-7" in finding.detail and "apply-1" in finding.detail
    assert [a.command for a in finding.alternatives] == [f"hyops reconcile {R}", "kill 4242"]
    assert rules.decide(ev).verdict is Verdict.NONE


def test_the_cli_reports_a_live_engine_and_write_leaves_the_record_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybridops_tf.runtime import liveness

    monkeypatch.setattr("hybridops_tf.engine.binary.resolve",
                        lambda *_, **__: EngineInfo(Path("/usr/bin/tofu"), "1.8.0", "tofu"))
    monkeypatch.setattr(liveness, "live_engine", lambda root, ref, run_id: liveness.LiveEngine(
        4242, "ci-7", run_id, "2026-01-01T00:00:00Z"))
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text('resource "sim_network" "this" {\n  name = "n"\n}\n')
    root = tmp_path / "rt"
    path = root / "state" / "modules" / "mod" / "latest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({
        "schema_version": 1, "module_ref": "mod", "status": "running", "run_id": "apply-1",
        "updated_at": "2026-01-01T00:00:00Z", "module_dir": str(module), "active_command": "apply"}))
    before = path.read_bytes()

    written = CliRunner().invoke(cli, ["--runtime-root", str(root), "reconcile", str(module), "--ref", "mod",
                                       "--write", "--json"])
    human = CliRunner().invoke(cli, ["--runtime-root", str(root), "reconcile", str(module), "--ref", "mod"])

    assert path.read_bytes() == before
    assert written.exit_code == 3, written.output
    [module_doc] = json.loads(written.stdout)["modules"]
    assert [f["code"] for f in module_doc["findings"]] == ["engine_running"]
    assert any(not a["ok"] and "not settled" in a["detail"] for a in module_doc["actions"])
    lines = [ln.strip() for ln in human.stdout.splitlines()]
    one_of = next(i for i, ln in enumerate(lines) if ln.startswith("1. one of (engine_running"))
    assert lines[one_of + 3] == "b. kill 4242"


# --- case 6: exit code after --forget-orphan / --import; inputs in suggestions -------------------


def _report(*findings: Finding, addressed: tuple[str, ...] = ()) -> Report:
    return Report((ModuleReport(REF, "error", "/m", findings=findings, addressed=addressed),))


def test_a_successful_forget_or_import_exits_0_once_its_finding_is_gone_even_with_others_left() -> None:
    partial = Finding(Code.PARTIAL_APPLY, REF, "the last apply failed",
                      alternatives=(Alternative("hyops apply", "to finish"),))
    orphan = Finding(Code.SUSPECT_ORPHAN, REF, "x", addresses=("sim_vm.this",))

    assert _report(partial, addressed=("sim_vm.this",)).exit_code == 0
    assert _report(partial, orphan, addressed=("sim_vm.this",)).exit_code == 3
    assert _report(partial).exit_code == 3  # a plain reconcile or --write: every finding counts


def test_a_suggestion_names_each_input_the_rerun_file_cannot_supply(tmp_path: Path) -> None:
    module = tmp_path / "m"
    module.mkdir()
    (module / "main.tf").write_text(
        'variable "name" { type = string }\n'
        'variable "token" {\n  type = string\n  sensitive = true\n}\n'
        'variable "size" {\n  type = string\n  default = "s"\n}\n')
    target = Target("m", module)

    assert rerun_args(target, Runtime(tmp_path / "rt"), module) == ("--var", "name=<value>", "--var", "token=<secret>")
    assert rerun_args(target, Runtime(tmp_path / "rt"), module, ("name=web", "token=hunter2")) == (
        "--var", "name=web", "--var", "token=<secret>")


def test_an_orphan_whose_run_events_were_not_read_is_unknown_never_said_started() -> None:
    rec = record(Status.ERROR)
    orphan = SuspectOrphan("sim_vm.this", "create", "apply-0", "t")
    rec.suspect_orphans = [orphan]
    ev = evidence(record=rec, state=state(), refresh=quiet())

    assert only(compare(ev, CMD), Code.SUSPECT_ORPHAN).evidence is OrphanEvidence.UNKNOWN


# --- an orphan besides the object the state holds; an import block naming a deleted object -------


def test_an_orphan_at_an_address_the_state_holds_is_advised_deleted_with_sim_rm_then_forgotten() -> None:
    """The state holds the old object at the address (a create_before_destroy replace whose
    create lost its answer): importing there is impossible, so the advice must delete."""
    sim = evidence(where=dataclasses.replace(evidence().where, uses_sim=True),
                   record=record(Status.ERROR, resources={"sim_vm.a": ("complete", "create", "vm-old")},
                                 orphans=["sim_vm.a"]),
                   state=state("sim_vm.a", ids={"sim_vm.a": "vm-old"}), refresh=quiet())
    elsewhere = dataclasses.replace(sim, where=evidence().where)

    on_sim = only(compare(sim, CMD), Code.SUSPECT_ORPHAN)
    other = only(compare(elsewhere, CMD), Code.SUSPECT_ORPHAN)

    assert on_sim.next_actions == ("hyops sim ls",)
    assert [a.command for a in on_sim.alternatives] == [
        "hyops sim rm '<id>'", f"hyops reconcile {R} --forget-orphan sim_vm.a"]
    assert not any("--import" in a.command for a in on_sim.alternatives + other.alternatives)
    assert other.next_actions == (f"hyops reconcile {R} --forget-orphan sim_vm.a",)


def test_an_import_block_naming_a_deleted_object_is_a_stale_import_naming_the_block_to_delete() -> None:
    rec = record(Status.ERROR, resources={"sim_vm.b": ("destroyed", "delete", "vm-gone")})
    block = ImportBlock("sim_vm.b", "vm-gone", "main.tf")
    ev = evidence(record=rec, state=state(), stale_imports=(block,),
                  unchecked=("plan failed (exit 1): cannot import",))

    finding = only(compare(ev, CMD), Code.STALE_IMPORT)

    assert finding.addresses == ("sim_vm.b",)
    assert "main.tf imports vm-gone into sim_vm.b" in finding.detail
    assert [a.command for a in finding.alternatives] == [f"hyops apply {R}", f"hyops destroy {R}"]
    assert Code.STALE_IMPORT not in {f.code for f in compare(dataclasses.replace(ev, stale_imports=()), CMD)}


def test_only_literal_import_ids_are_read_and_a_for_each_block_names_no_address(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'import {\n  to = sim_vm.b\n  id = "vm-1"\n}\n'
        'import {\n  for_each = var.ids\n  to = sim_vm.c[each.key]\n  id = each.value\n}\n'
        'import {\n  to = sim_vm.d\n  id = var.d\n}\n')

    assert read_import_blocks(tmp_path) == [ImportBlock("sim_vm.b", "vm-1", "main.tf"),
                                            ImportBlock("sim_vm.d", None, "main.tf")]
    assert import_targets(tmp_path) == {"sim_vm.b", "sim_vm.d"}


def test_import_blocks_in_a_tf_json_file_are_read_as_the_engine_reads_them(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "sim_vm" "b" {}\n')
    (tmp_path / "imports.tf.json").write_text(
        '{"import": [{"to": "sim_vm.b", "id": "vm-1", "//": "adopt"}, {"to": "sim_vm.e", "identity": {"id": "x"}}]}')
    (tmp_path / "more.tf.json").write_text('{"import": {"to": "sim_vm.f", "id": "vm-2"}}')

    assert read_import_blocks(tmp_path) == [ImportBlock("sim_vm.b", "vm-1", "imports.tf.json"),
                                            ImportBlock("sim_vm.e", None, "imports.tf.json", {"id": "x"}),
                                            ImportBlock("sim_vm.f", "vm-2", "more.tf.json")]


def test_an_identity_import_block_naming_an_object_a_completed_delete_removed_is_a_stale_import(
        tmp_path: Path) -> None:
    """The identity alternative's block, left in the configuration after its object was deleted:
    every plan fails; reconcile names the block to delete, as for one that imports by id."""
    from hybridops_tf.reconcile.gather import _stale_imports

    rec = record(Status.ERROR, resources={"sim_vm.b": ("destroyed", "delete", "vm-gone"),
                                          "sim_vm.c": ("destroyed", "delete", "vm-other")})
    rec.resources["sim_vm.b"].identity = {"id": "vm-gone", "zone": 2}
    rec.resources["sim_vm.c"].identity = {"id": "vm-other"}
    (tmp_path / "main.tf").write_text(
        'import {\n  to = sim_vm.b\n  identity = {\n    id = "vm-gone"\n    zone = 2\n  }\n}\n'
        'import {\n  to = sim_vm.d\n  identity = {\n    id = "vm-live"\n  }\n}\n')
    ev = evidence(record=rec, state=state(), unchecked=("plan failed (exit 1): cannot import",))

    stale = _stale_imports(ev, tmp_path).stale_imports

    assert [b.to for b in stale] == ["sim_vm.b"]
    finding = only(compare(dataclasses.replace(ev, stale_imports=stale), CMD), Code.STALE_IMPORT)
    assert "main.tf imports identity {id=vm-gone, zone=2} into sim_vm.b" in finding.detail


def test_a_failed_read_of_a_module_whose_record_lists_no_resources_looks_for_no_stale_import(
        tmp_path: Path) -> None:
    """A record written before any resource was known (`resources` null) after a failed plan."""
    from hybridops_tf.reconcile.gather import _stale_imports

    rec = record(Status.RUNNING)
    rec.resources = None
    ev = evidence(record=rec, unchecked=("plan failed (exit 1)",))

    assert _stale_imports(ev, tmp_path) is ev
