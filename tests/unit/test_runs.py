"""The run folder (runs.py): its documents' shape (meta first, result last), and the facts
read back after a crash: did the engine start, was its plan read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.events import iter_events
from hybridops_tf.engine.progress import plan_was_read
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.runtime.run_folder import EarlierRun, RunFolder, RunMeta
from hybridops_tf.runtime.run_result import (
    EngineRefusedResult,
    PlannedResult,
    ResultOutcome,
    RunResult,
    SettledResult,
    StoppedResult,
)
from hybridops_tf.store.local import RecordStore

REF = "demo/vm"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "terraform-1.0.3"
VERSION = '{"@level":"info","@message":"Terraform 1.0.3","type":"version","terraform":"1.0.3","ui":"0.1.0"}'


def apply_lines() -> list[str]:
    return (FIXTURES / "apply_ok.jsonl").read_text().splitlines()


def test_a_whole_apply_stream_holds_its_plan() -> None:
    assert plan_was_read(iter_events(apply_lines()))


def test_planned_changes_without_their_summary_are_not_a_whole_plan() -> None:
    lines = [ln for ln in apply_lines() if '"type":"version"' in ln or '"type":"planned_change"' in ln]

    assert lines and not plan_was_read(iter_events(lines))


def test_an_empty_or_version_only_stream_holds_no_plan() -> None:
    assert not plan_was_read([])
    assert not plan_was_read(iter_events([VERSION]))


def _run(tmp_path: Path, *, engine_started: bool, lines: list[str] | None = None) -> RunFolder:
    folder = RunFolder.create(tmp_path, REF, "apply-1")
    if engine_started:
        folder.stderr_path.write_text("")
    if lines:
        folder.events_path.write_text("".join(f"{line}\n" for line in lines))
    return folder


@pytest.mark.parametrize(("command", "started", "lines", "expected"), [
    ("apply", True, [VERSION], True),  # the engine ran, hyops read no plan: it may have created
    ("apply", False, [], False),  # killed before the engine was spawned
    ("apply", True, None, False),  # the plan was read: the events name every create
    ("destroy", True, [], False),  # destroy creates nothing
    (None, True, [], True),  # an unknown command is treated as an apply
])
def test_unseen_creates_are_possible_only_for_a_started_apply_whose_plan_was_not_read(
    tmp_path: Path, command: str | None, started: bool, lines: list[str] | None, expected: bool
) -> None:
    _run(tmp_path, engine_started=started, lines=apply_lines() if lines is None else lines)

    earlier = EarlierRun.read(RecordStore(tmp_path), REF, "apply-1")
    assert earlier.may_hold_unseen_creates(command) is expected and earlier.complete is False


def test_a_missing_run_folder_proves_nothing_so_creates_stay_possible(tmp_path: Path) -> None:
    gone = EarlierRun.read(RecordStore(tmp_path), REF, "apply-gone")
    assert gone.may_hold_unseen_creates("apply") and gone.events == []


@pytest.mark.parametrize(("complete", "expected"), [
    (True, False),  # the journal saw the engine's end: no plan in it, no create
    (False, True),  # lines dropped (a slow or lost store): the run may have created more
])
def test_a_run_known_only_from_a_store_journal_is_cleared_only_by_a_complete_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complete: bool, expected: bool
) -> None:
    from hybridops_tf.store.ports import JournalRead

    journal = JournalRead((VERSION,), engine_started=True, complete=complete)
    store = RecordStore(tmp_path)
    monkeypatch.setattr(store, "journal_lines", lambda ref, run_id: journal)

    earlier = EarlierRun.read(store, REF, "apply-elsewhere")
    assert earlier.may_hold_unseen_creates("apply") is expected and earlier.complete is complete
    assert len(earlier.events) == len(list(iter_events(journal.lines)))


def test_planned_creates_are_named_in_plan_order() -> None:
    from hybridops_tf.engine.progress import planned_creates

    assert planned_creates(iter_events(apply_lines())) == (
        "sim_network.edge[0]", "module.network.sim_network.this", "module.vm_b.sim_vm.this",
        "module.vm_a.sim_vm.this", "module.health.sim_health_check.this", "module.config.sim_config.this")


def test_a_plan_that_counts_more_additions_than_it_names_cannot_name_its_creates() -> None:
    from hybridops_tf.engine.progress import planned_creates

    named_one = [ln for ln in apply_lines() if '"type":"planned_change"' not in ln or "edge[0]" in ln]

    assert planned_creates(iter_events(named_one)) is None
    assert planned_creates(iter_events([VERSION])) == ()


META_KEYS = ["command", "argv", "module_ref", "module_dir", "run_id", "workspace", "started_at",
             "hyops_version", "python", "pid", "host", "user"]


def _meta(tmp_path: Path) -> RunMeta:
    return RunMeta.start("apply", ["apply", "-var=token=s3cret"], ModuleTarget(tmp_path / "mod", REF), None,
                         "apply-1", frozenset({"token"}))


def test_meta_json_keeps_its_key_order_redacts_secrets_and_names_the_engine_once_found(tmp_path: Path) -> None:
    meta = _meta(tmp_path)

    assert list(meta.to_json()) == META_KEYS
    assert meta.to_json()["argv"] == ["apply", "-var=token=<redacted>"]
    assert json.dumps(meta.to_json()["command"]) == '"apply"'

    meta.engine = EngineInfo(Path("/opt/tofu"), "1.6.0", "tofu")
    assert list(meta.to_json()) == [*META_KEYS, "engine"]
    assert meta.to_json()["engine"] == {"binary": "/opt/tofu", "version": "1.6.0"}


def test_a_finished_run_folder_has_meta_with_its_end_and_result_with_run_id_and_exit_code(tmp_path: Path) -> None:
    meta = _meta(tmp_path)
    folder = RunFolder.create(tmp_path, REF, "apply-1")
    folder.write_meta(meta.to_json())
    assert not folder.result_path.exists()  # result.json existing means finished

    folder.finish(meta, 1, SettledResult(Status.ERROR, "boom", {"x.y": {"status": "created"}}, []))

    written = json.loads((folder.path / "meta.json").read_text())
    assert list(written) == ["schema_version", *META_KEYS, "finished_at", "exit_code"]
    assert written["exit_code"] == 1
    result = json.loads(folder.result_path.read_text())
    assert list(result) == ["schema_version", "finished_at", "run_id", "exit_code",
                            "outcome", "error", "resources", "suspect_orphans"]
    assert (result["run_id"], result["outcome"], result["resources"]) == (
        "apply-1", "error", {"x.y": {"status": "created"}})


@pytest.mark.parametrize(("result", "doc"), [
    (StoppedResult(ResultOutcome.REFUSED, "locked"), {"outcome": "refused", "error": "locked"}),
    (StoppedResult(ResultOutcome.FAILED, "plan failed"), {"outcome": "failed", "error": "plan failed"}),
    (EngineRefusedResult("bad flag", None), {"outcome": "refused", "error": "bad flag", "record_status": None}),
    (PlannedResult("1 to add, 0 to change, 0 to destroy", True),
     {"outcome": "planned", "summary": "1 to add, 0 to change, 0 to destroy", "changes_pending": True}),
    (SettledResult(Status.OK, None, {}, []), {"outcome": "ok", "error": None, "resources": {}, "suspect_orphans": []}),
])
def test_each_kind_of_run_result_writes_its_own_keys_in_order(result: RunResult, doc: dict) -> None:
    assert list(result.to_json().items()) == list(doc.items())
    assert json.dumps(result.to_json()) == json.dumps(doc)  # the enums are written as their plain words


def test_a_command_is_written_and_compared_as_its_plain_string() -> None:
    assert Command("destroy") is Command.DESTROY
    assert Command.APPLY == "apply" and f"{Command.REFRESH} of x" == "refresh of x"
    assert json.dumps({"command": Command.IMPORT}) == '{"command": "import"}'


def test_an_earlier_runs_complete_events_say_no_create_went_unseen(tmp_path: Path) -> None:
    folder = _run(tmp_path, engine_started=True, lines=[VERSION])
    (folder.path / "events.complete").write_text("")

    earlier = EarlierRun.read(RecordStore(tmp_path), REF, "apply-1")

    assert earlier.complete and earlier.engine_spawned and not earlier.may_hold_unseen_creates("apply")
