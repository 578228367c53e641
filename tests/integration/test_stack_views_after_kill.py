"""Stack views read the last run with every member's record now (issue 38, item 3). Real
engine, sim cloud: a `stack apply` whose runner is SIGKILLed mid-member (as a CI runner does on
cancel) is shown as interrupted, its member uncertain, and `stack status` exits 3; before, the
views showed the previous, finished run in green and exited 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.gates import Gate
from tests.integration.hyops_cli import HYOPS, engine_processes, wait_for
from tests.integration.stacks import StackEnv, statuses
from tests.readers import parse_mermaid

pytestmark = pytest.mark.integration


@pytest.fixture
def vm_update_parked(applied: StackEnv, faults_file: Callable[..., Path], tmp_path: Path
                     ) -> Iterator[tuple[subprocess.Popen[bytes], Gate]]:
    """`stack apply --resume --junit` of the applied demo stack with vm's size changed, its
    vm update parked on a gate: network is skipped, vm runs, config and health wait."""
    applied.write(applied.directory.joinpath("stack.yml").read_text().replace("size: small", "size: large"))
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_vm", op="update")])
    out = tmp_path / "hyops.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen([HYOPS, "stack", "apply", "stack/stack.yml", "--resume", "--junit", "junit.xml"],
                                cwd=applied.hyops.workdir, env=applied.hyops.env(), stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True)  # as under a CI runner
    try:
        gate.wait_started(proc, output=out)
        yield proc, gate
    finally:
        gate.release()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


def status(env: StackEnv, *args: str) -> tuple[int, str]:
    done = env.hyops("stack", "status", "stack/stack.yml", *args)
    return done.returncode, done.stdout


def members(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in doc["members"]}


def test_a_sigkilled_stack_run_is_shown_interrupted_with_its_member_uncertain(
    applied: StackEnv, vm_update_parked: tuple[subprocess.Popen[bytes], Gate]
) -> None:
    proc, _gate = vm_update_parked
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and everything in its group
    proc.wait(timeout=30)
    wait_for(lambda: not engine_processes(applied.directory / "vm"), what="the vm's engine to stop")

    code, out = status(applied, "--json")
    doc = json.loads(out)

    assert code == 3, out
    assert doc["state"] == "interrupted" and doc["finished_at"] is None
    assert statuses(doc) == {"network": "skipped", "vm": "running", "config": "pending", "health": "pending"}
    assert "hyops stopped mid-apply" in members(doc)["vm"]["uncertain"][0]
    assert members(doc)["vm"]["run_id"] == applied.hyops.record("demo/vm")["run_id"]

    code, text = status(applied)
    assert code == 3
    assert text.splitlines()[0].endswith("each member below is as its record says now")
    assert "did not finish" in text.splitlines()[0]
    assert text.splitlines()[1].startswith("uncertain: vm: its record says running")

    flow = parse_mermaid(applied.hyops("stack", "graph", "stack/stack.yml", "--status", "--format",
                                       "mermaid").stdout.splitlines())
    kinds = {flow["nodes"][node][0]: kind for node, kind in flow["classes"].items()}
    assert kinds["vm"] == "stale" and kinds["network"] == "skipped"

    code, markdown = status(applied, "--format", "markdown")
    assert code == 3
    lines = markdown.splitlines()
    assert "did not finish" in lines[2] and lines[4].startswith("**uncertain**: vm: ")


def test_the_report_names_what_is_uncertain_before_anything_green(
    applied: StackEnv, vm_update_parked: tuple[subprocess.Popen[bytes], Gate], tmp_path: Path
) -> None:
    proc, _gate = vm_update_parked
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    wait_for(lambda: not engine_processes(applied.directory / "vm"), what="the vm's engine to stop")
    page = tmp_path / "report.html"

    done = applied.hyops("report", "stack/stack.yml", "--html", str(page), "--no-reconcile")

    assert done.returncode == 0, done.stdout + done.stderr
    html = page.read_text()
    story = html[html.index('<p class="story'):]
    story = story[:story.index("</p>")]
    assert story.startswith('<p class="story red">')
    assert story.index("did not finish") < story.index("Uncertain") < story.index("skipped: network")
    junit = ET.parse(applied.hyops.workdir / "junit.xml").getroot()  # the file the killed run left
    failed = {c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None}
    assert failed == {"(run)", "vm"}


def test_a_run_in_progress_is_shown_running_and_its_report_follows_it(
    applied: StackEnv, vm_update_parked: tuple[subprocess.Popen[bytes], Gate]
) -> None:
    proc, gate = vm_update_parked

    code, out = status(applied, "--json")
    doc = json.loads(out)
    assert code == 0, out
    assert doc["state"] == "running"
    assert statuses(doc) == {"network": "skipped", "vm": "running", "config": "pending", "health": "pending"}
    assert "uncertain" not in members(doc)["vm"]

    gate.release()
    assert proc.wait(timeout=120) == 0
    code, out = status(applied, "--json")
    assert code == 0 and json.loads(out)["state"] == "finished"
    assert statuses(json.loads(out)) == {"network": "skipped", "vm": "ok", "config": "skipped", "health": "skipped"}
    junit = ET.parse(applied.hyops.workdir / "junit.xml").getroot()
    assert junit.get("failures") == "0"
