"""`hyops report --html` after a red stack apply, read as a person reads it: rendered by headless
Chromium with networking off (a dead proxy, every host unresolvable), screenshotted, and its DOM
checked: every member and resource with its status, the timeline's bars in time order with the
stop line at the failure, nothing fetched by the page, no secret anywhere.

The stack: network -> vm -> config (owned by the vm, given a secret api_token) -> health, and an
alert on the health check. The cloud fails the health check's create, so network, vm and config
are ok, health is error and alert never starts (pending).

Chromium is Debian's `chromium` (.ci/run installs it when missing); without it the test skips,
saying so. The screenshot is kept in the test's tmp folder (and under HYOPS_REPORT_SHOTS when
set, to look at it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.integration.stacks import StackEnv, statuses
from tests.stackfiles import DEMO

pytestmark = pytest.mark.integration

SECRET = "s3cr3t-report-token-9f2c"
STACK = DEMO.replace("    owned_by: vm\n", f"    owned_by: vm\n    inputs: {{api_token: {SECRET}}}\n") + """\
  - name: alert
    path: alert
    depends_on: [health]
    inputs_from: {target_id: health.health_id}
"""
HEALTH_FAILS = [{"type": "sim_health_check", "name": "demo-health", "op": "create", "mode": "fail_after_create",
                 "times": 1}]
# Networking off: every request goes to a proxy nobody listens on, and no name resolves.
OFFLINE = ["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-background-networking",
           "--no-first-run", "--disable-sync", "--disable-component-update"]


class Dom(HTMLParser):
    """Each element (tag, attributes) and the text of the whole page, as Chromium serialised it."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k.replace("_", "-")) == v
                                                                 for k, v in attrs.items())]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Debian's `chromium` is not installed (apt-get install chromium; .ci/run does it when it can)")
    return found


def render(browser: str, page: Path, shot: Path, netlog: Path) -> str:
    """The page's DOM as Chromium built it, with a screenshot and the network log of the visit."""
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *OFFLINE,
         f"--log-net-log={netlog}", "--window-size=1200,1500", f"--screenshot={shot}", "--dump-dom",
         page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def page_requests(netlog: Path) -> list[str]:
    """URLs the page asked the network for. Chromium's own background requests (its updater,
    clock) carry the initiator "not an origin"; a page's carry the page's origin ("null" for a
    file)."""
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    starts = [e.get("params", {}) for e in log["events"] if e["type"] == start]
    return [p["url"] for p in starts if "url" in p and p.get("initiator") != "not an origin"]


def test_the_report_of_a_red_stack_shows_every_member_resource_and_the_stop_offline(
    stack_env: StackEnv, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    browser = chromium()
    stack_env.module("alert", "health")
    stack_env.write(STACK)
    faults_file(HEALTH_FAILS)
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 1
    report = tmp_path / "artifacts" / "hyops-report.html"

    written = stack_env.hyops("report", "stack/stack.yml", "--html", str(report))

    assert written.returncode == 0, written.stderr
    assert written.stdout.strip() == f"report: {report}"
    expected = {m["name"]: m["status"] for m in json.loads(
        stack_env.stack("status", "stack/stack.yml", "--json").stdout)["members"]}
    assert expected == statuses(stack_env.report())
    assert expected == {"network": "ok", "vm": "ok", "config": "ok", "health": "error", "alert": "pending"}
    html_text = report.read_text(encoding="utf-8")
    shot, netlog = tmp_path / "report.png", tmp_path / "netlog.json"
    dom = Dom(render(browser, report, shot, netlog))

    # every member, in the graph and as a card, with the status `stack status --json` gives
    assert {a["data-member"]: a["data-status"] for a in dom.having("g", **{"class": "node"})} == expected
    assert {a["data-member"]: a["data-status"] for a in dom.having("article")} == expected
    # every resource of every record, with its recorded status, in its member's card
    records = {name: stack_env.hyops.record(f"demo/{name}") for name in expected}
    shown = {(a["data-address"], a["data-status"]) for a in dom.having("tr") if a.get("data-address")}
    recorded = {(addr, r["status"]) for rec in records.values() if rec for addr, r in rec["resources"].items()}
    assert recorded and recorded <= shown
    assert ("sim_health_check.this", "error") in shown
    # the timeline: a bar per change in time order, the failed one where the stop line is,
    # and alert after it, never started
    bars = dom.having("rect", **{"class": "bar"})
    assert [(b["data-lane"], b["data-address"], b["data-outcome"]) for b in bars] == [
        ("network", "sim_network.this", "complete"), ("vm", "sim_vm.this", "complete"),
        ("config", "sim_config.this", "complete"), ("health", "sim_health_check.this", "error")]
    starts = [float(b["data-start"]) for b in bars]
    assert starts == sorted(starts)
    (stop,) = dom.having("line", **{"class": "stop"})
    assert float(stop["data-at"]) == float(bars[-1]["data-end"])
    assert [w["data-lane"] for w in dom.having("li") if w.get("data-lane")] == ["alert"]
    # nothing fetched, nothing secret, a picture taken
    assert page_requests(netlog) == []
    assert SECRET not in html_text and SECRET not in "".join(dom.text)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if os.environ.get("HYOPS_REPORT_SHOTS"):
        shutil.copy(shot, Path(os.environ["HYOPS_REPORT_SHOTS"]) / "red-stack-report.png")

    # the check of page requests is not blind: a page that loads from the network is caught
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://example.invalid/x.png"></body></html>')
    render(browser, control, tmp_path / "control.png", tmp_path / "control.json")
    assert page_requests(tmp_path / "control.json") == ["http://example.invalid/x.png"]

