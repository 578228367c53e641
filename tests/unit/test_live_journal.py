"""runtime/live_journal.py, store/localdocs.py and stack/report.LiveReport: a run in progress
journals each member's start and end instead of rewriting its whole report, and a reader folds what a
killed run journaled into its report (docs/stacks.md: the report of a run in progress)."""

from __future__ import annotations

import json
from pathlib import Path

from hybridops_tf.record import layout
from hybridops_tf.record.lifecycle import MemberStatus
from hybridops_tf.runtime import live_journal
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.report import LiveReport, MemberEntry, StackReport, read_report

RUN = "stack-apply-20240101T000000Z-00000000"
NAMES = ("network", "vm", "config")


def unfinished(run_id: str = RUN) -> StackReport:
    return StackReport("demo", "/s/stack.yml", run_id, "apply", "2024-01-01T00:00:00Z", None,
                       [MemberEntry(n, f"demo/{n}", "pending") for n in NAMES])


def statuses(doc: dict | None) -> dict[str, str]:
    assert doc is not None
    return {m["name"]: m["status"] for m in doc["members"]}


def test_a_member_update_appends_a_line_and_leaves_the_report_file_as_the_run_wrote_it(tmp_path: Path) -> None:
    live = LiveReport(Runtime(tmp_path), unfinished())
    live.start()
    path = layout.stack_report(tmp_path, "demo")
    written = path.read_bytes()

    live.member("network", MemberStatus.RUNNING, "apply-1")
    live.member("network", MemberStatus.OK, "apply-1")
    live.member("vm", MemberStatus.RUNNING, "apply-2")

    assert path.read_bytes() == written  # never rewritten whole between the run's first and last writes
    assert len(live_journal.journal_path(path).read_text().splitlines()) == 3
    assert statuses(read_report(Runtime(tmp_path), "demo")) == {"network": "ok", "vm": "running", "config": "pending"}
    vm = next(m for m in read_report(Runtime(tmp_path), "demo")["members"] if m["name"] == "vm")
    assert vm["run_id"] == "apply-2"


def test_a_half_written_line_and_another_runs_lines_are_not_folded(tmp_path: Path) -> None:
    live = LiveReport(Runtime(tmp_path), unfinished())
    live.start()
    live.member("network", MemberStatus.OK, "apply-1")
    path = layout.stack_report(tmp_path, "demo")
    with live_journal.journal_path(path).open("a") as f:
        f.write(json.dumps({"run": "stack-apply-older", "name": "vm", "status": "ok", "run_id": "x", "error": None})
                + "\n" + '{"run": "' + RUN + '", "name": "config", "sta')

    assert statuses(read_report(Runtime(tmp_path), "demo")) == {"network": "ok", "vm": "pending", "config": "pending"}


def test_a_new_run_starts_its_journal_empty(tmp_path: Path) -> None:
    first = LiveReport(Runtime(tmp_path), unfinished())
    first.start()
    first.member("network", MemberStatus.ERROR, "apply-1", "boom")  # killed here: the journal stays

    second = LiveReport(Runtime(tmp_path), unfinished("stack-apply-20240102T000000Z-11111111"))
    second.start()

    assert statuses(read_report(Runtime(tmp_path), "demo")) == {n: "pending" for n in NAMES}


def test_a_new_runs_start_empties_the_journal_file_a_killed_run_left(tmp_path: Path) -> None:
    first = LiveReport(Runtime(tmp_path), unfinished())
    first.start()
    first.member("network", MemberStatus.ERROR, "apply-1", "boom")  # killed here: the journal stays

    LiveReport(Runtime(tmp_path), unfinished("stack-apply-20240102T000000Z-11111111")).start()

    # the reader would skip the first run's line anyway (another run's): the file itself is gone
    assert not live_journal.journal_path(layout.stack_report(tmp_path, "demo")).exists()


def test_the_finished_report_drops_the_journal_and_is_read_as_written(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path)
    live = LiveReport(runtime, unfinished())
    live.start()
    live.member("network", MemberStatus.ERROR, "apply-1", "boom")
    path = layout.stack_report(tmp_path, "demo")

    live.finish(written=False)  # the finished report could not be written: the journal is the run's last word
    assert live_journal.journal_path(path).exists()
    live.finish(written=True)

    assert not live_journal.journal_path(path).exists()


def test_a_finished_report_is_never_folded(tmp_path: Path) -> None:
    path = tmp_path / "latest.json"
    live_journal.journal_path(path).write_text(
        json.dumps({"run": RUN, "name": "vm", "status": "running", "run_id": "x", "error": None}) + "\n")
    doc = {"run_id": RUN, "finished_at": "2024-01-01T00:00:09Z",
           "members": [{"name": "vm", "module_ref": "demo/vm", "status": "ok"}]}

    assert live_journal.fold(doc, path)["members"][0]["status"] == "ok"


def test_an_end_clears_what_the_start_said_and_keeps_the_error(tmp_path: Path) -> None:
    path = tmp_path / "latest.json"
    lines = [{"run": RUN, "name": "vm", "status": "running", "run_id": "apply-2", "error": None},
             {"run": RUN, "name": "vm", "status": "error", "run_id": "apply-2", "error": "boom"}]
    live_journal.journal_path(path).write_text("".join(json.dumps(x) + "\n" for x in lines))
    doc = {"run_id": RUN, "finished_at": None,
           "members": [{"name": "vm", "module_ref": "demo/vm", "status": "pending", "blocked_by": "network"}]}

    assert live_journal.fold(doc, path)["members"] == [
        {"name": "vm", "module_ref": "demo/vm", "status": "error", "run_id": "apply-2", "error": "boom"}]
