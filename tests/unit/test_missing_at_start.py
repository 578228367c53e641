"""What an apply or destroy would act without (operation/missing.py) is one answer for a
module's own run and a stack's preflight: a stack apply refuses exactly where its member's own
`hyops apply` would, and lets through exactly what it lets through.

The preflight once asked record/gate.py alone: it refused a member whose missing object an
`import` block adopts, or whose killed run's own events show the delete done, where the
member's own apply went ahead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.operation.missing import missing_at_start
from hybridops_tf.record.lifecycle import Command, ResourceStatus, Status
from hybridops_tf.record.model import OperationRecord, ResourceEntry
from hybridops_tf.runtime.run_folder import run_path
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.preflight import refuse_uncertain
from hybridops_tf.store.local import RecordStore

WEB = 'sim_vm.vm["web"]'
IMPORT_WEB = 'import {\n  to = sim_vm.vm["web"]\n  id = "vm-1"\n}\n'


def _record(status: Status = Status.OK, run_id: str = "apply-1") -> OperationRecord:
    web = ResourceEntry(ResourceStatus.COMPLETE, "create", "vm-1")
    return OperationRecord("vm", status, run_id, resources={WEB: web})


def _member(tmp_path: Path, tf: str = "") -> Member:
    directory = tmp_path / "vm"
    directory.mkdir(exist_ok=True)
    (directory / "main.tf").write_text(tf)
    return Member("vm", directory, "vm")


def _delete_done_by(store: RecordStore, run_id: str) -> None:
    """The killed run's events, as its relay wrote them: the delete of vm-1 began and completed."""
    folder = run_path(store.root, "vm", run_id)
    folder.mkdir(parents=True)
    hook = {"resource": {"addr": WEB, "resource_type": "sim_vm"}, "action": "delete", "id_key": "id",
            "id_value": "vm-1"}
    lines = [json.dumps({"@level": "info", "@message": "", "type": kind, "hook": hook})
             for kind in ("apply_start", "apply_complete")]
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")


def test_an_object_no_state_holds_is_missing_for_an_apply_and_a_destroy(tmp_path: Path) -> None:
    store, m = RecordStore(tmp_path / "rt"), _member(tmp_path)
    for command in (Command.APPLY, Command.DESTROY):
        assert missing_at_start(command, _record(), set(), m.directory, store, "vm") == [(WEB, "vm-1")]
    assert missing_at_start(Command.APPLY, _record(), {"vm-1"}, m.directory, store, "vm") == []
    assert missing_at_start(Command.REFRESH, _record(), set(), m.directory, store, "vm") == []


def test_an_import_block_that_adopts_the_address_lets_an_apply_through_never_a_destroy(tmp_path: Path) -> None:
    store, m = RecordStore(tmp_path / "rt"), _member(tmp_path, IMPORT_WEB)

    assert missing_at_start(Command.APPLY, _record(), set(), m.directory, store, "vm") == []
    assert missing_at_start(Command.DESTROY, _record(), set(), m.directory, store, "vm") == [(WEB, "vm-1")]


def test_a_delete_the_killed_runs_own_events_show_done_is_proof(tmp_path: Path) -> None:
    store, m = RecordStore(tmp_path / "rt"), _member(tmp_path)
    _delete_done_by(store, "destroy-1")

    stale = _record(Status.RUNNING, "destroy-1")
    assert missing_at_start(Command.DESTROY, stale, set(), m.directory, store, "vm") == []
    # a settled record's earlier events prove nothing of what happened since
    assert missing_at_start(Command.DESTROY, _record(Status.OK, "destroy-1"), set(), m.directory, store,
                            "vm") == [(WEB, "vm-1")]


def test_a_stack_apply_refuses_where_the_members_own_apply_would_and_only_there(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "rt")
    m = _member(tmp_path)
    stack = Stack("s", tmp_path / "stack.yml", (m,))
    (m.directory / "terraform.tfstate").write_text(json.dumps(
        {"version": 4, "lineage": "l", "serial": 3, "resources": []}))
    rec = _record()

    with pytest.raises(RefusedError) as refused:
        refuse_uncertain(stack, {"vm": rec}, store)
    assert "vm-1" in refused.value.message and "state_missing" in refused.value.message

    (m.directory / "import.tf").write_text(IMPORT_WEB)
    refuse_uncertain(stack, {"vm": rec}, store)  # the member's own apply goes ahead: so does the stack's
