"""stack/report.py and the runner's exit codes: the run report document, `stack status`
before and after a run, and how member outcomes become one exit code (docs/contract.md: Stacks, Exit codes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.record import layout
from hybridops_tf.record.lifecycle import MemberStatus, Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.report import MemberEntry, StackReport, read_report, write_report
from hybridops_tf.stack.runner import MemberResult, exit_code_of
from hybridops_tf.stack.status import status_document
from hybridops_tf.store.local import RecordStore

STACK = Stack("demo", Path("/s/stack.yml"), tuple(
    Member(name=n, directory=Path("/s") / n, module_ref=f"demo/{n}") for n in ("network", "vm", "config")
))


def report(*members: MemberEntry) -> StackReport:
    return StackReport("demo", "/s/stack.yml", "stack-apply-20240101T000000Z-00000000", "apply",
                       "2024-01-01T00:00:00Z", "2024-01-01T00:00:09Z", list(members))


def test_a_pending_member_carries_blocked_by_and_no_run_or_error() -> None:
    entry = MemberEntry("config", "demo/config", "pending", blocked_by="vm")

    assert entry.to_dict() == {"name": "config", "module_ref": "demo/config", "status": "pending",
                               "blocked_by": "vm"}


def test_the_report_is_written_where_the_contract_says(tmp_path: Path) -> None:
    doc = report(MemberEntry("network", "demo/network", "ok", run_id="apply-1"))

    path = write_report(Runtime(tmp_path), doc)

    assert path == tmp_path / "stacks" / "demo" / "latest.json"
    stored = json.loads(path.read_text())
    assert stored["schema_version"] == 1
    assert list(stored) == ["schema_version", "stack", "stack_file", "run_id", "command",
                            "started_at", "finished_at", "members"]
    assert path.stat().st_mode & 0o777 == 0o600


def test_status_before_any_run_shows_each_record_or_none(tmp_path: Path) -> None:
    RecordStore(tmp_path).write(OperationRecord("demo/network", Status.OK, "apply-1"))

    doc = status_document(STACK, Runtime(tmp_path))

    assert doc["run_id"] is None and doc["command"] is None
    assert [(m["name"], m["status"]) for m in doc["members"]] == [
        ("network", "ok"), ("vm", "none"), ("config", "none")]


def test_status_prints_the_report_as_stored_and_adds_members_it_lacks(tmp_path: Path) -> None:
    stored = report(MemberEntry("network", "demo/network", "ok", run_id="apply-1"),
                    MemberEntry("vm", "demo/vm", "error", run_id="apply-2", error="boom"))
    write_report(Runtime(tmp_path), stored)

    doc = status_document(STACK, Runtime(tmp_path))

    assert doc["members"][:2] == stored.to_dict()["members"]
    assert doc["members"][2] == {"name": "config", "module_ref": "demo/config", "status": "none"}
    assert {k: v for k, v in doc.items() if k not in ("members", "state")} == {
        k: v for k, v in stored.to_dict().items() if k != "members"}
    assert doc["state"] == "finished"


def test_an_unreadable_report_is_refused_and_kept(tmp_path: Path) -> None:
    path = layout.stack_report(tmp_path, "demo")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")

    with pytest.raises(UsageError):
        read_report(Runtime(tmp_path), "demo")
    assert path.read_text() == "{not json"


def test_counts_follow_the_vocabulary_order() -> None:
    doc = report(MemberEntry("a", "demo/a", "pending"), MemberEntry("b", "demo/b", "ok"),
                 MemberEntry("c", "demo/c", "error"))

    assert list(doc.counts()) == ["ok", "error", "pending"]


def result(status: MemberStatus, **kw: object) -> MemberResult:
    return MemberResult(status, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("interrupted", "results", "code"), [
    (False, {"a": result(MemberStatus.OK), "b": result(MemberStatus.SKIPPED)}, 0),
    (False, {"a": result(MemberStatus.OK), "b": result(MemberStatus.ERROR)}, 1),
    (False, {"a": result(MemberStatus.ERROR, refused=True, changed=False)}, 4),
    (False, {"a": result(MemberStatus.OK), "b": result(MemberStatus.ERROR, refused=True, changed=False)}, 1),
    (True, {"a": result(MemberStatus.ERROR)}, 130),
    (False, {"a": result(MemberStatus.DESTROYED), "b": result(MemberStatus.RETAINED)}, 0),
])
def test_member_outcomes_become_one_exit_code(interrupted: bool, results: dict[str, MemberResult],
                                              code: int) -> None:
    assert exit_code_of(interrupted, results) == code
