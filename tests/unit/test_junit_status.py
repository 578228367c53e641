"""JUnit of a queued run and `stack status --junit FILE`: the run as `stack status` shows it,
each member naming the worker that ran it; the run's state and uncertain members fail.
Records and reports are written by hand (no engine, no store)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack import junit
from hybridops_tf.stack.report import MemberEntry, StackReport, write_report
from hybridops_tf.store.local import RecordStore

T0, T1, T2 = "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:10+00:00", "2026-01-01T00:00:20+00:00"


def queued_report(finished: str | None = T2) -> StackReport:
    return StackReport("demo", "stack.yml", "stack-apply-q", "apply", T0, finished, [
        MemberEntry("net", "demo/net", "ok", run_id="apply-n", worker="runner-1", started_at=T0, finished_at=T1),
        MemberEntry("vm", "demo/vm", "error", run_id="apply-v", error="sim fault", worker="runner-2",
                    started_at=T1, finished_at=T2),
        MemberEntry("cfg", "demo/cfg", "pending", blocked_by="vm"),
        MemberEntry("dns", "demo/dns", "queued"),
        MemberEntry("web", "demo/web", "waiting"),
    ], queue=True)


def cases(text: str) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in ET.fromstring(text).iter("testcase")}


def worker_of(case: ET.Element) -> str | None:
    found = [p.get("value") for p in case.iter("property") if p.get("name") == "worker"]
    return found[0] if found else None


def test_each_member_of_a_queued_run_names_its_worker_and_when() -> None:
    found = cases(junit.report_xml(queued_report()))

    assert worker_of(found["net"]) == "runner-1" and worker_of(found["vm"]) == "runner-2"
    assert f"on worker runner-1 ({T0} to {T1})" in (found["net"].findtext("system-out") or "")
    assert "on worker runner-2" in (found["vm"].find("failure").text or "")
    assert worker_of(found["cfg"]) is None


def test_members_no_worker_took_are_skipped_not_passed() -> None:
    root = ET.fromstring(junit.report_xml(queued_report()))
    found = cases(junit.report_xml(queued_report()))

    assert found["dns"].find("skipped").get("message") == "queued: no worker took it yet"
    assert found["web"].find("skipped").get("message") == "waiting for its upstreams"
    assert found["cfg"].find("skipped").get("message") == "blocked by vm"
    (suite,) = root.iter("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "1", "3")


def test_a_queued_run_without_an_end_says_its_workers_go_on() -> None:
    found = cases(junit.report_xml(queued_report(finished=None)))

    failure = found[junit.UNFINISHED].find("failure")
    assert failure.get("type") == "unfinished"
    assert "its workers (`hyops stack work`) go on with it" in failure.get("message")
    assert "--junit FILE` writes it again" in failure.get("message")


def status_doc(state: str, **extra: Any) -> dict[str, Any]:
    doc = queued_report(finished=T2 if state == "finished" else None).to_dict()
    return {**doc, "state": state, **extra}


def test_a_finished_run_as_status_shows_it_has_no_run_case() -> None:
    found = cases(junit.status_xml(status_doc("finished")))

    assert list(found) == ["net", "vm", "cfg", "dns", "web"]
    assert worker_of(found["vm"]) == "runner-2" and found["vm"].find("failure").get("message") == "sim fault"


@pytest.mark.parametrize("state, kind, words", [
    ("running", "running", "goes on with its workers"),
    ("interrupted", "interrupted", "did not finish"),
])
def test_a_run_that_still_runs_or_was_interrupted_fails_its_run_case(state: str, kind: str, words: str) -> None:
    doc = status_doc(state)
    if state == "interrupted":
        doc.pop("queue")  # a local run whose runner is gone

    failure = cases(junit.status_xml(doc))[junit.UNFINISHED].find("failure")

    assert failure.get("type") == kind and words in failure.get("message")


def test_a_stack_never_run_fails_its_run_case_and_shows_the_records() -> None:
    doc = {"stack": "demo", "stack_file": "stack.yml", "run_id": None, "command": None, "started_at": None,
           "finished_at": None, "state": "never_run",
           "members": [{"name": "net", "module_ref": "demo/net", "status": "none"}]}

    root = ET.fromstring(junit.status_xml(doc))

    found = {c.get("name"): c for c in root.iter("testcase")}
    assert found[junit.UNFINISHED].find("failure").get("type") == "never_run"
    assert found["net"].find("failure") is None and root.get("name") == "hyops stack status demo"


def test_an_uncertain_member_fails_whatever_its_status() -> None:
    doc = status_doc("finished")
    doc["members"][0]["uncertain"] = ["its record says running (run apply-n) and nothing holds its lock"]

    root = ET.fromstring(junit.status_xml(doc))

    failure = {c.get("name"): c for c in root.iter("testcase")}["net"].find("failure")
    assert failure.get("type") == "uncertain" and "nothing holds its lock" in failure.get("message")
    assert root.get("failures") == "2"  # net (uncertain) and vm (error)


# --- the commands ------------------------------------------------------------------------------


@pytest.fixture
def stack_file(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("net", "vm"):
        (root / name).mkdir(parents=True)
        (root / name / "main.tf").write_text('output "id" {\n  value = "x"\n}\n')
    (root / "stack.yml").write_text("stack: demo\nmodules:\n  - {name: net, path: net}\n"
                                    "  - {name: vm, path: vm, depends_on: [net]}\n")
    return root / "stack.yml"


def hyops(root: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--runtime-root", str(root), "--engine", "/nonexistent/tofu", *args])


def test_stack_status_writes_the_queued_run_as_shown_with_its_workers(tmp_path: Path, stack_file: Path) -> None:
    root = tmp_path / "rt"
    records = RecordStore(root)
    records.write(OperationRecord("demo/net", Status.OK, "apply-n"))
    records.write(OperationRecord("demo/vm", Status.ERROR, "apply-v"))
    write_report(Runtime(root), StackReport("demo", "stack.yml", "stack-apply-q", "apply", T0, T2, [
        MemberEntry("net", "demo/net", "ok", run_id="apply-n", worker="runner-1", started_at=T0, finished_at=T1),
        MemberEntry("vm", "demo/vm", "error", run_id="apply-v", error="boom", worker="runner-2",
                    started_at=T1, finished_at=T2)], queue=True))
    out = tmp_path / "reports" / "junit.xml"

    result = hyops(root, "stack", "status", str(stack_file), "--junit", str(out))

    assert result.exit_code == 0, result.output
    found = cases(out.read_text())
    assert {name: worker_of(c) for name, c in found.items()} == {"net": "runner-1", "vm": "runner-2"}
    assert found["vm"].find("failure").get("message") == "boom"


def test_stack_status_junit_of_a_stale_member_fails_it_and_exits_3(tmp_path: Path, stack_file: Path) -> None:
    root = tmp_path / "rt"
    RecordStore(root).write(OperationRecord("demo/net", Status.RUNNING, "apply-n"))  # no lock held: stale
    out = tmp_path / "junit.xml"

    result = hyops(root, "stack", "status", str(stack_file), "--junit", str(out))

    assert result.exit_code == 3, result.output
    found = cases(out.read_text())
    assert found["net"].find("failure").get("type") == "uncertain"
    assert found[junit.UNFINISHED].find("failure").get("type") == "never_run"


def test_stack_status_whose_junit_file_cannot_be_written_exits_1(tmp_path: Path, stack_file: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("a file where the folder should be")

    result = hyops(tmp_path / "rt", "stack", "status", str(stack_file), "--junit", str(blocker / "junit.xml"))

    assert result.exit_code == 1, result.output
    assert "could not write the JUnit file" in result.stderr


@pytest.mark.parametrize("command", ["apply", "destroy"])
def test_queue_with_junit_but_no_wait_is_a_usage_error_that_names_both_ways(
    tmp_path: Path, stack_file: Path, command: str,
) -> None:
    out = tmp_path / "junit.xml"

    result = hyops(tmp_path / "rt", "stack", command, str(stack_file), "--queue", "--junit", str(out))

    assert result.exit_code == 2, result.output
    assert "--junit with --queue needs --wait" in result.stderr
    # the command as the one builder prints it: the global options typed, then the stack's status
    assert (f"hyops --runtime-root {tmp_path / 'rt'} --engine /nonexistent/tofu stack status {stack_file} "
            f"--junit {out}") in result.stderr
    assert not out.exists() and not (tmp_path / "rt").exists()  # nothing queued, nothing written
