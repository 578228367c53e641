"""`stack apply|destroy --junit FILE`: the run report as JUnit XML, read back with xml.etree;
the stack runner writes it whatever the run's outcome."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, HyopsError
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack import junit, runner
from hybridops_tf.stack.model import Member, Stack
from hybridops_tf.stack.report import MemberEntry, StackReport
from hybridops_tf.stack.runner import StackRequest


def red_report() -> StackReport:
    return StackReport("demo", "stack/stack.yml", "stack-apply-1", "apply", "2026-01-01T00:00:00+00:00",
                       "2026-01-01T00:01:30+00:00", [
                           MemberEntry("network", "demo/network", "ok", run_id="apply-n"),
                           MemberEntry("vm", "demo/vm", "error", run_id="apply-v",
                                       error="apply failed: sim fault \x1b[31mfail_after_create\x1b[0m <&>"),
                           MemberEntry("config", "demo/config", "pending", blocked_by="vm"),
                           MemberEntry("health", "demo/health", "pending"),
                           MemberEntry("dns", "demo/dns", "skipped", run_id="apply-d"),
                       ])


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in root.iter("testcase")}


def test_each_member_is_a_test_case_of_the_stack() -> None:
    root = ET.fromstring(junit.report_xml(red_report()))

    found = cases(root)
    assert list(found) == ["network", "vm", "config", "health", "dns"]
    assert {c.get("classname") for c in found.values()} == {"demo"}
    (suite,) = root.iter("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "demo", "5", "1", "2")
    assert root.get("failures") == "1" and root.get("tests") == "5"
    assert float(suite.get("time")) == 90.0
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"command": "apply", "run_id": "stack-apply-1", "stack_file": "stack/stack.yml"}


def test_an_error_fails_with_its_error_and_ok_and_skipped_pass() -> None:
    found = cases(ET.fromstring(junit.report_xml(red_report())))

    (failure,) = found["vm"].findall("failure")
    assert failure.get("message") == "apply failed: sim fault \\x1b[31mfail_after_create\\x1b[0m <&>"
    assert "demo/vm: error (run apply-v)" in (failure.text or "")
    for name in ("network", "dns"):
        assert found[name].find("failure") is None and found[name].find("skipped") is None


def test_pending_is_skipped_with_what_blocked_it() -> None:
    found = cases(ET.fromstring(junit.report_xml(red_report())))

    assert found["config"].find("skipped").get("message") == "blocked by vm"
    assert found["health"].find("skipped").get("message") == "not started: the run was interrupted"
    assert found["config"].find("failure") is None


def test_a_destroy_run_passes_destroyed_absent_and_retained() -> None:
    report = StackReport("demo", "s.yml", "stack-destroy-1", "destroy", "2026-01-01T00:00:00Z",
                         "2026-01-01T00:00:09Z", [
        MemberEntry("vm", "demo/vm", "destroyed"), MemberEntry("net", "demo/net", "absent"),
        MemberEntry("db", "demo/db", "retained", error="retained, but its last apply failed: x")])

    root = ET.fromstring(junit.report_xml(report))

    assert root.get("name") == "hyops stack destroy demo" and root.get("failures") == "0"
    assert all(c.find("failure") is None and c.find("skipped") is None for c in root.iter("testcase"))
    assert "its last apply failed" in (cases(root)["db"].findtext("system-out") or "")


def test_a_run_refused_before_any_member_ran_is_one_failing_case() -> None:
    root = ET.fromstring(junit.refusal_xml("demo", "apply", "s.yml", "member vm: lock busy"))

    (case,) = root.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("demo", junit.PREFLIGHT)
    assert case.find("failure").get("message") == "member vm: lock busy"
    assert root.get("failures") == "1"


def test_the_file_is_written_whole_and_private(tmp_path: Path) -> None:
    path = tmp_path / "reports" / "junit.xml"

    junit.write(path, junit.report_xml(red_report()))

    assert ET.parse(path).getroot().tag == "testsuites"
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["junit.xml"]  # no temp file left


def _request(tmp_path: Path, junit_path: Path, engine: str) -> StackRequest:
    stack = Stack("demo", tmp_path / "stack.yml", (Member("net", tmp_path / "net", "demo/net"),))
    return StackRequest(stack=stack, command="apply", runtime=Runtime(tmp_path / ".hyops", engine),
                        junit=junit_path)


def test_a_stack_run_refused_before_any_member_ran_still_writes_its_junit_file(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"

    with pytest.raises(HyopsError) as refused:
        runner.run_stack(_request(tmp_path, path, engine=str(tmp_path / "no-such-engine")))

    (case,) = ET.parse(path).getroot().iter("testcase")
    assert case.get("name") == junit.PREFLIGHT
    assert case.find("failure").get("message") == refused.value.message


def test_an_ok_stack_run_whose_junit_file_cannot_be_written_exits_1_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    ok = runner.StackResult(red_report(), ExitCode.OK)
    monkeypatch.setattr(runner, "_run_stack", lambda req: ok)

    result = runner.run_stack(_request(tmp_path, blocker / "junit.xml", engine="terraform"))

    assert result.exit_code == ExitCode.FAILED
    assert f"hyops: ERROR: could not write the JUnit file {blocker / 'junit.xml'}:" in capsys.readouterr().err
