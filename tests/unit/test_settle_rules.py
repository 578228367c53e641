"""Settle rules that only the integration tests guarded, as unit tests (docs/contract.md: Statuses steps 3, 6).

Each rule is checked twice: on the pure transition (settle.py) and on the step that decides
which transition applies (operation/steps.py, operation/settle.py). For the step, a stand-in engine
replays a stdout stream into the real StreamReader and answers `show -json` from a document:
no process is started, and everything else (run folder, record store, settle) is real.
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import ExitCode, RefusedError
from hybridops_tf.engine.process import ProcessResult
from hybridops_tf.operation import guards, steps
from hybridops_tf.operation.request import ModuleRequest, Outcome
from hybridops_tf.operation.stream import StreamReader
from hybridops_tf.record import transitions
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import ResourceStatus, Status
from hybridops_tf.record.model import LastAttempt, OperationRecord, Owner, RecordEngine, ResourceEntry, SuspectOrphan
from hybridops_tf.record.objects import resources_after_run
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import EventLog, RunFolder, RunLife, RunMeta
from hybridops_tf.store.local import RecordStore

REF = "unit/mod"
NET, VM = "sim_network.n", "sim_vm.v"
EMPTY_STATE: dict[str, Any] = {"format_version": "1.0"}


# --- the evidence: engine stdout lines ----------------------------------------------------------


def line(type_: str, addr: str, **hook: object) -> str:
    """One engine stdout message about `addr` (planned_change carries `change`, others `hook`)."""
    key = "change" if type_ == "planned_change" else "hook"
    return json.dumps({"type": type_, key: {"resource": {"addr": addr}, **hook}})


def planned(addr: str, action: str) -> str:
    return line("planned_change", addr, action=action)


def started(addr: str, action: str, ident: str | None = None) -> str:
    return line("apply_start", addr, action=action, **({"id_key": "id", "id_value": ident} if ident else {}))


def completed(addr: str, action: str, ident: str | None = None) -> str:
    return line("apply_complete", addr, action=action, **({"id_key": "id", "id_value": ident} if ident else {}))


def error_diagnostic(summary: str) -> str:
    return json.dumps({"type": "diagnostic", "diagnostic": {"severity": "error", "summary": summary}})


# --- records -------------------------------------------------------------------------------------


def run_start(command: str, run_id: str) -> transitions.RunStart:
    return transitions.RunStart(
        command=command, module_ref=REF, module_dir="/work/mod", run_id=run_id,
        owner=Owner(pid=99, host="ci-1", user="runner", run_id=run_id),
        resolved_inputs_file=f"/rt/runs/{run_id}/resolved.inputs.yml",
        rerun_inputs_file="/rt/config/rerun.inputs.yml", inputs_digest="sha256:new",
        engine=RecordEngine("/usr/bin/terraform", "1.0.3"),
    )


def applied_record() -> OperationRecord:
    """What an earlier apply left: ok, two live objects with their ids, outputs."""
    return OperationRecord(
        module_ref=REF, status=Status.OK, run_id="apply-1",
        outputs={"network_id": "net-1"},
        resources={NET: ResourceEntry("complete", "create", "net-1"), VM: ResourceEntry("complete", "create", "vm-1")},
        inputs_digest="sha256:old",
    )


def failed_record() -> OperationRecord:
    """What a failed apply left: error, its failure, one live object, a suspect orphan."""
    return OperationRecord(
        module_ref=REF, status=Status.ERROR, run_id="apply-1", failed_command="apply",
        last_error="sim_vm.v: create failed", outputs={"network_id": "net-1"},
        resources={NET: ResourceEntry("complete", "create", "net-1")},
        suspect_orphans=[SuspectOrphan(VM, "create", "apply-1", "2025-01-01T00:00:00Z")],
    )


def without_bookkeeping(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored record minus what every write restamps (updated_at) and the attempt note."""
    return {k: v for k, v in doc.items() if k not in ("updated_at", "last_attempt")}


# --- a run's steps 5-6 without a process ---------------------------------------------------------


@dataclass
class ReplayEngine:
    """The engine as steps._execute and settle use it: `stream` feeds the given stdout
    lines to the reader and exits `returncode`; `show -json` answers `state`."""

    module_dir: Path
    lines: list[str]
    returncode: int
    state: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_STATE))
    env: dict[str, str] = field(default_factory=dict)

    def argv(self, builder: Any, *args: Any, **kwargs: Any) -> list[str]:
        return ["replay-engine"]

    def stream(self, argv: Any, on_line: Any, stderr_log: Any, on_stderr_line: Any = None,
               journal: Any = None) -> ProcessResult:
        for text in self.lines:
            on_line(text)
        return ProcessResult(self.returncode)

    def show_state_doc(self) -> dict[str, Any]:
        return self.state

    def for_settling(self) -> ReplayEngine:
        return self


class FullDiskStore(RecordStore):
    """The local store on a disk that filled up after `running` was written."""

    def write(self, record: OperationRecord, *, stamp: bool = True) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


@dataclass
class Rig:
    root: Path
    target: ModuleTarget

    @property
    def store(self) -> RecordStore:
        return RecordStore(self.root)

    def run(self, command: str, lines: list[str], returncode: int, *, store: RecordStore | None = None,
            state: dict[str, Any] | None = None) -> tuple[Outcome, OperationRecord]:
        """Steps 4-6 of one run over whatever record the store holds: `running` written as
        step 4 writes it, then the stream replayed and the run settled by operation._execute.
        Returns the outcome and the running record."""
        req = ModuleRequest(command=command, target=self.target, runtime=Runtime(self.root),
                                      on_stderr=None)
        previous = self.store.read(req.key)
        run_id = f"{command}-2"
        folder = RunFolder.create(self.root, req.key, run_id)
        meta = RunMeta.start(command, [], self.target, None, run_id, frozenset())
        running = transitions.begin(previous, run_start(command, run_id))
        self.store.write(running)
        one = steps._Run(req, store or self.store, previous, RunLife(folder, meta, req.key), meta)
        engine = ReplayEngine(self.target.directory, lines, returncode, state or dict(EMPTY_STATE))
        outcome = steps._execute(one, engine, running, EventLog(folder))  # type: ignore[arg-type]
        return outcome, running

    def stored(self) -> dict[str, Any] | None:
        return self.store.read_raw(REF)


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    module = tmp_path / "mod"
    module.mkdir()
    return Rig(tmp_path / "rt", ModuleTarget(module, REF))


# --- (a) destroy over a lost state: state_missing, never destroyed -------------------------------


def test_an_empty_state_while_the_record_knows_live_ids_no_delete_removed_is_state_missing() -> None:
    running = transitions.begin(applied_record(), run_start("destroy", "destroy-2"))
    known = resources_after_run(running.resources, {}, {})  # the run deleted nothing

    rec = transitions.destroy_verified(running, known)

    assert rec.status is Status.ERROR
    assert rec.failed_command == "destroy"
    assert (rec.last_error or "").startswith("state_missing")
    assert rec.outputs == {"network_id": "net-1"} and rec.previous_outputs is None  # nothing moved aside
    assert rec.resources is not None
    assert {a: (e.status, e.id) for a, e in rec.resources.items()} == {
        NET: (ResourceStatus.COMPLETE, "net-1"), VM: (ResourceStatus.COMPLETE, "vm-1")}


def test_a_destroy_over_a_lost_state_settles_error_state_missing_and_exits_1(rig: Rig) -> None:
    rig.store.write(applied_record())

    outcome, _running = rig.run("destroy", [], 0)  # the engine found nothing to destroy

    assert outcome.exit_code == ExitCode.FAILED
    stored = rig.stored()
    assert stored is not None and stored["status"] == "error"
    assert stored["failed_command"] == "destroy" and stored["last_error"].startswith("state_missing")
    assert stored["resources"][NET]["id"] == "net-1" and stored["resources"][VM]["id"] == "vm-1"


def test_a_destroy_whose_stream_shows_every_delete_complete_settles_destroyed(rig: Rig) -> None:
    """The control for the two tests above: the same empty state, reached by the run's deletes."""
    rig.store.write(applied_record())
    lines = [planned(VM, "delete"), planned(NET, "delete"),
             started(VM, "delete", "vm-1"), completed(VM, "delete"),
             started(NET, "delete", "net-1"), completed(NET, "delete")]

    outcome, _running = rig.run("destroy", lines, 0)

    assert outcome.exit_code == ExitCode.OK
    stored = rig.stored()
    assert stored is not None and stored["status"] == "destroyed"
    assert stored["previous_outputs"] == {"network_id": "net-1"} and "outputs" not in stored


def test_a_destroy_that_forgets_an_object_on_purpose_is_retained_with_it_released_and_exits_0(rig: Rig) -> None:
    """`lifecycle { destroy = false }` (Terraform 1.16, OpenTofu 1.12; issue 47, item 6): the
    engine forgets the network, deletes the vm, and the state is empty. The network lives: the
    record lists it released and says retained, never destroyed, and the run is no failure."""
    rig.store.write(applied_record())
    lines = [planned(VM, "delete"), planned(NET, "forget"), started(VM, "delete", "vm-1"), completed(VM, "delete")]

    outcome, _running = rig.run("destroy", lines, 0)

    assert outcome.exit_code == ExitCode.OK
    stored = rig.stored()
    assert stored is not None and stored["status"] == "retained"
    assert [(r["address"], r["id"]) for r in stored["released"]] == [(NET, "net-1")]
    assert "failed_command" not in stored


# --- (b) an engine refusal restores the previous record ------------------------------------------


def test_an_engine_refusal_gives_back_the_previous_record_with_the_attempt_noted() -> None:
    previous = failed_record()
    running = transitions.begin(previous, run_start("apply", "apply-2"))

    rec = transitions.engine_refused(previous, running, command="apply", error="invalid value", exit_code=2)

    assert rec is not None
    assert rec.status is Status.ERROR and rec.run_id == "apply-1"
    assert (rec.failed_command, rec.last_error) == ("apply", "sim_vm.v: create failed")
    assert rec.outputs == previous.outputs and rec.resources == previous.resources
    assert rec.suspect_orphans == previous.suspect_orphans
    assert rec.active_command is None and rec.owner is None
    assert rec.last_attempt is not None
    assert (rec.last_attempt.run_id, rec.last_attempt.command, rec.last_attempt.exit_code,
            rec.last_attempt.error) == ("apply-2", "apply", 2, "invalid value")


def test_an_engine_refusal_of_a_first_run_leaves_no_record() -> None:
    running = transitions.begin(None, run_start("apply", "apply-1"))

    assert transitions.engine_refused(None, running, command="apply", error="invalid value", exit_code=2) is None


def test_a_run_the_engine_refused_before_any_change_puts_the_previous_record_back(rig: Rig) -> None:
    rig.store.write(failed_record())
    before = rig.stored()
    assert before is not None

    outcome, running = rig.run("apply", [planned(VM, "create"), error_diagnostic("Invalid value")], 1)

    assert outcome.exit_code == ExitCode.USAGE
    after = rig.stored()
    assert after is not None
    assert without_bookkeeping(after) == without_bookkeeping(before)
    assert LastAttempt.from_dict(after["last_attempt"]).run_id == running.run_id


def test_a_first_run_the_engine_refused_leaves_no_record_behind(rig: Rig) -> None:
    outcome, _running = rig.run("apply", [planned(NET, "create"), error_diagnostic("Invalid value")], 1)

    assert outcome.exit_code == ExitCode.USAGE
    assert outcome.record is None
    assert rig.stored() is None


# --- (c) a stream that shows a started change is never a refusal ---------------------------------


def _reader(tmp_path: Path, lines: list[str]) -> StreamReader:
    folder = RunFolder.create(tmp_path / "rt", REF, "apply-2")
    reader = StreamReader(None, folder, EventLog(folder))
    for text in lines:
        reader(text)
    return reader


@pytest.mark.parametrize("change", [
    [started(NET, "create")],
    [started(NET, "create"), completed(NET, "create", "net-2")],
    [started(NET, "create"), line("apply_errored", NET, action="create")],
    [started(NET, "delete", "net-1")],
], ids=["started", "completed", "errored", "delete-started"])
def test_an_engine_failure_after_a_change_started_is_never_taken_for_a_refusal(
    tmp_path: Path, change: list[str]
) -> None:
    req = ModuleRequest(command="apply", target=ModuleTarget(tmp_path, REF), runtime=Runtime(tmp_path))
    lines = [planned(NET, "create"), planned(VM, "create"), *change, error_diagnostic("boom")]

    assert steps._refused_by_engine(req, _reader(tmp_path, lines), ProcessResult(1)) is False


def test_an_engine_failure_with_every_change_still_pending_is_a_refusal(tmp_path: Path) -> None:
    """The control for the test above."""
    req = ModuleRequest(command="apply", target=ModuleTarget(tmp_path, REF), runtime=Runtime(tmp_path))
    lines = [planned(NET, "create"), planned(VM, "create"), error_diagnostic("Invalid provider config")]

    assert steps._refused_by_engine(req, _reader(tmp_path, lines), ProcessResult(1)) is True


def test_a_failed_run_that_started_a_create_settles_error_with_its_suspect_not_the_old_record(
    rig: Rig,
) -> None:
    rig.store.write(applied_record())
    lines = [planned(NET, "update"), planned("sim_vm.w", "create"), started("sim_vm.w", "create"),
             error_diagnostic("create failed")]

    outcome, running = rig.run("apply", lines, 1)

    assert outcome.exit_code == ExitCode.FAILED
    stored = rig.stored()
    assert stored is not None and stored["status"] == "error" and stored["run_id"] == running.run_id
    assert stored["failed_command"] == "apply" and "last_attempt" not in stored
    assert [o["address"] for o in stored["suspect_orphans"]] == ["sim_vm.w"]


# --- (d) the uncertain-outcome guard holds apply, never destroy ----------------------------------


def stale_running() -> OperationRecord:
    return OperationRecord(module_ref=REF, status=Status.RUNNING, run_id="apply-1", active_command="apply")


def with_orphans() -> OperationRecord:
    return failed_record()


UNCERTAIN = {"stale-running": stale_running, "suspect-orphans": with_orphans}


def _req(tmp_path: Path, command: str, **kw: Any) -> ModuleRequest:
    return ModuleRequest(command=command, target=ModuleTarget(tmp_path, REF), runtime=Runtime(tmp_path), **kw)


@pytest.mark.parametrize("previous", list(UNCERTAIN))
@pytest.mark.parametrize("command", ["destroy", "refresh", "import"])
def test_destroy_refresh_and_import_are_never_held_by_the_uncertain_outcome_guard(
    tmp_path: Path, command: str, previous: str
) -> None:
    guards.guard(_req(tmp_path, command), UNCERTAIN[previous]())


@pytest.mark.parametrize("previous", list(UNCERTAIN))
def test_apply_over_an_uncertain_outcome_is_refused_unless_allowed(tmp_path: Path, previous: str) -> None:
    """The control for the test above: the same records do hold an apply."""
    with pytest.raises(RefusedError) as refused:
        guards.guard(_req(tmp_path, "apply"), UNCERTAIN[previous]())
    assert refused.value.exit_code == ExitCode.REFUSED

    guards.guard(_req(tmp_path, "apply", allow_uncertain=True), UNCERTAIN[previous]())


# --- (e) a settle write that fails exits 1 and leaves `running` ----------------------------------


def test_a_settled_record_that_cannot_be_written_exits_1_and_leaves_running(rig: Rig) -> None:
    rig.store.write(applied_record())
    lines = [planned(VM, "delete"), planned(NET, "delete"),
             started(VM, "delete", "vm-1"), completed(VM, "delete"),
             started(NET, "delete", "net-1"), completed(NET, "delete")]

    outcome, running = rig.run("destroy", lines, 0, store=FullDiskStore(rig.root))

    assert outcome.exit_code == ExitCode.FAILED
    assert outcome.record is running
    stored = rig.stored()
    assert stored is not None and stored["status"] == "running" and stored["run_id"] == running.run_id
    result = steps._result(outcome, running)
    assert result.to_json()["outcome"] == "running"


def test_a_restored_record_that_cannot_be_written_after_a_refusal_exits_1_and_leaves_running(rig: Rig) -> None:
    rig.store.write(applied_record())

    outcome, running = rig.run("apply", [planned(VM, "update"), error_diagnostic("Invalid value")], 1,
                               store=FullDiskStore(rig.root))

    assert outcome.exit_code == ExitCode.FAILED
    assert outcome.record is running
    stored = rig.stored()
    assert stored is not None and stored["status"] == "running" and stored["run_id"] == running.run_id


def test_a_confirmed_empty_state_leaves_no_data_source_entry_in_a_destroyed_record() -> None:
    """The corpus found a destroyed record keeping a data source's `complete` entry (a read the
    apply stream reported) while the state held nothing: a destroyed record lists no live entry."""
    running = applied_record()
    resources = {"data.null_data_source.x": ResourceEntry(status=ResourceStatus.COMPLETE, action="read",
                                                          id="static"),
                 "null_resource.a": ResourceEntry(status=ResourceStatus.DESTROYED, action="delete", id="1")}

    rec = transitions.confirmed_empty(running, resources, Status.DESTROYED)

    assert rec.status is Status.DESTROYED
    assert list(rec.resources or {}) == ["null_resource.a"]
