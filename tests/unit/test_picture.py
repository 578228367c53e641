"""picture/: the stack as a graph with statuses (model), its Mermaid flowchart read back into
node ids, edges and classes, the run's timeline from real events, and the HTML page's safety
(escaped text, nothing loaded from anywhere). No engine: records and reports are written by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hybridops_tf.engine.events import iter_events
from hybridops_tf.picture import html, mermaid, timeline
from hybridops_tf.picture.collect import ModuleView, ReportData, RunView
from hybridops_tf.picture.model import LOOKS, picture
from hybridops_tf.stack.model import Member, Stack, Wire
from hybridops_tf.stack.view import RecordNow
from tests.readers import parse_mermaid

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

DEMO = Stack("demo", Path("/s/stack.yml"), (
    Member("network", Path("/s/network"), "demo/network"),
    Member("vm", Path("/s/vm"), "demo/vm", depends_on=("network",),
           inputs_from={"network_id": Wire("network", "network_id")}),
    Member("config", Path("/s/config"), "demo/config", depends_on=("vm",), owned_by="vm",
           inputs_from={"vm_id": Wire("vm", "vm_id")}),
    Member("health", Path("/s/health"), "demo/health", depends_on=("vm", "config"),
           inputs_from={"target_id": Wire("vm", "vm_id")}),
))

RED = {"stack": "demo", "run_id": "stack-apply-1", "command": "apply", "finished_at": "2026-01-01T00:00:09Z",
       "members": [
           {"name": "network", "module_ref": "demo/network", "status": "ok", "run_id": "apply-n"},
           {"name": "vm", "module_ref": "demo/vm", "status": "error", "run_id": "apply-v",
            "error": "sim_vm.this: injected fault\nsecond line"},
           {"name": "config", "module_ref": "demo/config", "status": "pending", "blocked_by": "vm"},
           {"name": "health", "module_ref": "demo/health", "status": "pending", "blocked_by": "vm"}]}

# --- Mermaid, read back (tests/readers.py) ------------------------------------------------------


def test_the_mermaid_flowchart_reads_back_as_the_stack_with_each_status_as_a_class() -> None:
    pic = picture(DEMO, RED, {"vm": RecordNow("error")})

    parsed = parse_mermaid(mermaid.to_mermaid(pic))

    ids = mermaid.node_ids(pic)
    assert set(parsed["nodes"]) == set(ids.values())
    assert parsed["classes"] == {ids["network"]: "ok", ids["vm"]: "error", ids["config"]: "pending",
                                 ids["health"]: "pending"}
    assert set(parsed["styles"]) == {"ok", "error", "pending"}
    assert [(f, a, lbl, t) for f, a, lbl, t in parsed["edges"]] == [
        (ids["network"], "-->", "network_id", ids["vm"]),
        (ids["vm"], "==>", "owns · vm_id", ids["config"]),
        (ids["vm"], "-->", "vm_id → target_id", ids["health"]),
        (ids["config"], "-->", "", ids["health"]),
    ]
    assert parsed["nodes"][ids["config"]] == ["config (owned by vm)", "… pending", "blocked by vm (error)"]
    assert parsed["nodes"][ids["vm"]][:2] == ["vm", "✗ error"]
    assert parsed["nodes"][ids["vm"]][2] == "sim_vm.this: injected fault"  # the error's first line


def test_mermaid_ids_and_labels_survive_names_and_errors_that_are_mermaid_syntax() -> None:
    odd = Stack("s", Path("/s/stack.yml"), (
        Member("end", Path("/s/a"), "s/end"),
        Member("a-b", Path("/s/b"), "s/a-b", depends_on=("end",)),
        Member("a_b", Path("/s/c"), "s/a_b", depends_on=("end",)),
    ))
    doc = {"stack": "s", "members": [
        {"name": "end", "module_ref": "s/end", "status": "error", "error": 'x"] --> evil["<b>#1;'},
        {"name": "a-b", "module_ref": "s/a-b", "status": "pending", "blocked_by": "end"},
        {"name": "a_b", "module_ref": "s/a_b", "status": "pending", "blocked_by": "end"}]}
    pic = picture(odd, doc)

    lines = mermaid.to_mermaid(pic)
    parsed = parse_mermaid(lines)

    ids = mermaid.node_ids(pic)
    assert len(set(ids.values())) == 3 and all(re.fullmatch(r"m_\w+", i) for i in ids.values())
    assert parsed["nodes"][ids["end"]][2] == 'x"] --> evil["<b>#1;'
    assert not any('"]' in line and "evil" in line for line in lines)
    assert len(parsed["edges"]) == 2


def test_a_picture_without_statuses_has_no_classes_and_shows_each_ref() -> None:
    parsed = parse_mermaid(mermaid.to_mermaid(picture(DEMO)))

    assert parsed["classes"] == {} and parsed["styles"] == {}
    assert parsed["nodes"]["m_vm"] == ["vm", "demo/vm"]


# --- the model --------------------------------------------------------------------------------

def test_a_running_record_nobody_runs_is_drawn_stale_and_says_so() -> None:
    doc = {"stack": "demo", "members": [{"name": n, "module_ref": f"demo/{n}", "status": "none"}
                                        for n in ("network", "vm", "config", "health")]}
    doc["members"][1]["status"] = "running"

    pic = picture(DEMO, doc, {"vm": RecordNow("running", stale=True)})

    vm = pic.node("vm")
    assert (vm.status, vm.kind) == ("running", "stale")
    assert vm.detail == ("outcome uncertain: hyops stopped",)
    assert pic.node("network").detail == ("never run",)


def test_a_member_whose_record_moved_on_since_the_run_says_what_it_is_now() -> None:
    pic = picture(DEMO, RED, {"network": RecordNow("running", stale=True), "vm": RecordNow("ok")})

    assert pic.node("network").status == "ok"  # what the run said, as `stack status --json` says it
    assert pic.node("network").kind == "stale"  # but never drawn green: its outcome is uncertain now
    assert pic.node("network").detail == ("uncertain: record now running (stale)",)
    assert pic.node("vm").detail[-1] == "record now: ok"


def test_a_member_whose_record_lists_suspect_orphans_says_how_many() -> None:
    pic = picture(DEMO, RED, {"vm": RecordNow("error", "apply-v", orphans=("sim_vm.a", "sim_vm.b"))})

    assert "2 suspect orphan(s)" in pic.node("vm").detail
    assert not any("orphan" in line for line in pic.node("network").detail)


def test_every_status_has_its_own_look_that_differs_in_line_or_glyph_not_only_colour() -> None:
    shapes = {(look.dash, look.width, look.glyph, look.double) for look in LOOKS.values()}

    assert len(shapes) == len(LOOKS)
    assert set(LOOKS) >= {"ok", "error", "pending", "destroyed", "absent", "retained", "skipped", "running",
                          "stale", "none"}


# --- the timeline -----------------------------------------------------------------------------

def events(name: str) -> list[object]:
    return list(iter_events((FIXTURES / "terraform-1.0.3" / name).read_text().splitlines()))


def test_the_timeline_has_a_bar_per_change_in_time_order_and_stops_at_the_first_error() -> None:
    tl = timeline.build([timeline.RunEvents("stack", "apply-1", events("apply_partial.jsonl"))],
                        [timeline.Waiting("later", None, "never started: blocked by stack (error)")])

    assert [(b.address, b.outcome.value) for b in tl.bars] == [
        ("sim_network.edge[0]", "complete"), ("module.network.sim_network.this", "complete"),
        ("module.vm_b.sim_vm.this", "error"), ("module.vm_a.sim_vm.this", "error")]
    starts = [b.start for b in tl.bars]
    assert starts == sorted(starts) and all(b.end >= b.start for b in tl.bars)
    assert tl.stop == tl.bars[2].end  # vm_b errored first
    assert tl.stop_reason == "stack: module.vm_b.sim_vm.this create errored"
    assert [(w.lane, w.address) for w in tl.waiting] == [
        ("stack", "module.health.sim_health_check.this"), ("stack", "module.config.sim_config.this"),
        ("later", None)]


def test_a_change_never_answered_is_unfinished_to_the_runs_last_event() -> None:
    interrupted = list(iter_events((FIXTURES / "opentofu" / "apply_interrupted.jsonl").read_text().splitlines()))

    tl = timeline.build([timeline.RunEvents("m", "apply-1", interrupted)])

    unfinished = [b for b in tl.bars if b.outcome is timeline.Outcome.UNFINISHED]
    assert unfinished and all(b.end == tl.span for b in unfinished)
    if not any(b.outcome is timeline.Outcome.ERROR for b in tl.bars):
        assert tl.stop is not None and "never answered" in (tl.stop_reason or "")


# --- the HTML page ----------------------------------------------------------------------------

def page(error: str = "boom") -> str:
    doc = {**RED, "members": [dict(m) for m in RED["members"]]}
    doc["members"][1]["error"] = error
    pic = picture(DEMO, doc)
    mod = ModuleView(key="demo/vm", module_ref="demo/vm", status="error", member="vm", member_status="error",
                     last_error=error, findings=())
    data = ReportData(title="stack demo", generated_at="2026-01-01T00:00:10Z", source="local runtime root /r",
                      hyops_version="0.1.0", engine="terraform 1.0.3 (/bin/terraform)", picture=pic,
                      run=RunView("apply", "stack-apply-1", "a", "b"),
                      timeline=timeline.build([timeline.RunEvents("vm", "apply-v", events("apply_partial.jsonl"))]),
                      modules=(mod,), reconcile_summary="1 finding(s) in 1 module(s)")
    return html.render(data)


def test_the_page_escapes_what_it_shows_and_loads_nothing() -> None:
    text = page('<script>alert(1)</script> <img src="https://evil.example/x.png">')

    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert "&lt;script&gt;" in text
    assert "default-src 'none'" in text  # the browser itself refuses any load
    tags_that_fetch = re.findall(r"<[a-zA-Z][^<>]*\s(?:src|href|xlink:href|srcset|action)\s*=", text)
    assert tags_that_fetch == []
    assert set(re.findall(r"url\(([^)]*)\)", text)) <= {"#arrow", "#hatch"}  # only the page's own defs
    assert "@import" not in text and "url(http" not in text


def test_the_page_says_where_the_run_stopped_before_anything_else() -> None:
    text = page()

    story = re.search(r'<p class="story red">(.*?)</p>', text)
    assert story is not None
    assert "stopped at <b>vm</b>" in story.group(1)
    assert "config, health" in story.group(1)


@pytest.mark.parametrize("status", sorted(LOOKS))
def test_each_look_gives_the_page_a_css_class(status: str) -> None:
    assert f".k-{status}{{" in page()


def test_the_story_is_red_for_a_run_whose_runner_died_though_every_member_is_ok() -> None:
    # no error, nothing pending or uncertain: only the run's unwritten end makes it red
    doc = {**RED, "finished_at": None, "state": "interrupted", "started_at": "2026-01-01T00:00:00Z",
           "members": [{**m, "status": "ok"} for m in RED["members"]]}
    data = ReportData(title="stack demo", generated_at="2026-01-01T00:00:10Z", source="local runtime root /r",
                      hyops_version="0.1.0", engine="terraform 1.0.3 (/bin/terraform)", picture=picture(DEMO, doc),
                      run=None, timeline=timeline.build([]), modules=(), reconcile_summary=None)

    story = re.search(r'<p class="story (\w+)">', html.render(data))

    assert story is not None and story.group(1) == "red"
