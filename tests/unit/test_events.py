"""The -json UI stream parser and the per-resource fold, on hand-written OpenTofu samples and
on streams captured from a real engine (tests/fixtures/<engine>-<version>/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.engine.events import (
    ApplyComplete,
    ApplyProgress,
    ApplyStart,
    ChangeSummary,
    Diagnostic,
    GarbageLine,
    Message,
    OutputsMessage,
    PlannedChange,
    RefreshComplete,
    ResourceDrift,
    UnknownEvent,
    VersionMessage,
    iter_events,
    parse_event,
    summarize_diagnostics,
)
from hybridops_tf.engine.progress import ResourceProgress, ResourceTracker
from hybridops_tf.engine.vocabulary import Progress

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TOFU = FIXTURES / "opentofu"
CAPTURED = sorted(p for p in FIXTURES.glob("*-*") if p.is_dir() and (p / "apply_ok.jsonl").exists())
ALL_DIRS = [TOFU, *CAPTURED]
TF103 = FIXTURES / "terraform-1.0.3"


def load(path: Path) -> list:
    return list(iter_events(path.read_text().splitlines()))


def by_type(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def test_captured_fixtures_exist() -> None:
    assert CAPTURED, "run scripts/capture_fixtures.py to capture real engine streams"


# --- parse_event: never raises ----------------------------------------------------------------


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_every_fixture_line_parses_to_its_own_type(fixture_dir: Path) -> None:
    for path in sorted(fixture_dir.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            event = parse_event(line)
            try:
                raw = json.loads(line)
            except ValueError:
                assert isinstance(event, GarbageLine) and event.raw == line
                continue
            assert event.type == raw.get("type", ""), (path.name, line[:120])
            assert isinstance(event, Message)
            assert event.timestamp == raw["@timestamp"]
            assert event.level == raw["@level"]


@pytest.mark.parametrize(
    "line",
    ["not json", '{"@level":"info","@message":"cut sho', "[1, 2]", '"a string"', "42", "null", ""],
)
def test_non_object_lines_become_garbage_line_with_raw_text(line: str) -> None:
    event = parse_event(line)
    assert event == GarbageLine(raw=line)


def test_deeply_nested_json_is_garbage_not_a_crash() -> None:
    line = "[" * 100_000 + "]" * 100_000
    assert isinstance(parse_event(line), GarbageLine)


def test_bytes_lines_are_decoded_and_invalid_utf8_is_garbage() -> None:
    event = parse_event(b'{"type":"log","@message":"hi"}')
    assert event.type == "log" and event.message == "hi"
    assert isinstance(parse_event(b"\xff\xfe{"), GarbageLine)


def test_unknown_type_keeps_common_fields_and_the_raw_object() -> None:
    raw = {
        "@level": "info",
        "@message": "Opening",
        "@module": "tofu.ui",
        "@timestamp": "t",
        "type": "ephemeral_open_start",
        "hook": {"x": 1},
    }
    event = parse_event(json.dumps(raw))
    assert isinstance(event, UnknownEvent)
    assert (event.type, event.message, event.module) == (
        "ephemeral_open_start",
        "Opening",
        "tofu.ui",
    )
    assert event.raw == raw


@pytest.mark.parametrize("number", ["1" + "0" * 400, "1e999", "-1e999", "NaN"])
def test_an_out_of_range_number_reads_as_absent_and_keeps_the_message(number: str) -> None:
    done = parse_event('{"type":"apply_complete","hook":{"resource":{"addr":"a.b"},"action":"create",'
                       f'"elapsed_seconds":{number}}}}}')
    summary = parse_event(f'{{"type":"change_summary","changes":{{"add":{number},"operation":"apply"}}}}')
    assert isinstance(done, ApplyComplete) and (done.addr, done.elapsed_seconds) == ("a.b", 0.0)
    assert isinstance(summary, ChangeSummary) and (summary.add, summary.operation) == (0, "apply")


def test_object_without_type_is_unknown_event_with_empty_type() -> None:
    event = parse_event('{"@level":"info","@message":"wrapped ui line"}')
    assert (
        isinstance(event, UnknownEvent) and event.type == "" and event.message == "wrapped ui line"
    )


def test_opentofu_only_types_in_sample_stay_unknown() -> None:
    unknown = {e.type for e in by_type(load(TOFU / "apply_partial.jsonl"), UnknownEvent)}
    assert unknown == {
        "provision_start",
        "provision_complete",
        "ephemeral_open_start",
        "init_output",
        "",
    }


def test_missing_fields_take_defaults_instead_of_raising() -> None:
    event = parse_event('{"type":"apply_complete"}')
    assert isinstance(event, ApplyComplete)
    assert (event.addr, event.action, event.id_value, event.elapsed_seconds) == ("", "", None, 0.0)
    assert event.level == event.message == event.timestamp == ""


def test_wrongly_typed_payloads_are_tolerated() -> None:
    event = parse_event('{"type":"apply_start","hook":"oops","@message":7}')
    assert isinstance(event, ApplyStart) and event.addr == "" and event.message == ""
    event = parse_event(
        '{"type":"apply_progress","hook":{"resource":{"addr":"a.b"},'
        '"elapsed_seconds":"ten","action":["create"]}}'
    )
    assert isinstance(event, ApplyProgress)
    assert (event.addr, event.elapsed_seconds, event.action) == ("a.b", 0.0, "")


def test_extra_fields_are_ignored() -> None:
    line = (
        '{"type":"planned_change","new_top":1,"change":{"resource":{"addr":"x.y",'
        '"resource_type":"x","resource_name":"y","future":true},"action":"create",'
        '"importing":{"id":"i-1"},"generated_config":"..."}}'
    )
    event = parse_event(line)
    assert isinstance(event, PlannedChange)
    assert (event.addr, event.resource_type, event.resource_name, event.action) == (
        "x.y",
        "x",
        "y",
        "create",
    )


# --- Terraform 1.0 vs OpenTofu shapes ---------------------------------------------------------


def test_version_message_reads_tofu_key() -> None:
    v = load(TOFU / "apply_ok.jsonl")[0]
    assert isinstance(v, VersionMessage)
    assert (v.engine, v.version, v.ui, v.module) == ("tofu", "1.8.3", "1.2", "tofu.ui")


def test_version_message_reads_terraform_key_of_real_1_0_3() -> None:
    v = load(TF103 / "apply_ok.jsonl")[0]
    assert isinstance(v, VersionMessage)
    assert (v.engine, v.version, v.ui, v.module) == ("terraform", "1.0.3", "0.1.0", "terraform.ui")


def test_elapsed_seconds_int_in_terraform_and_float_in_tofu_both_read_as_float() -> None:
    tf = by_type(load(TF103 / "apply_ok.jsonl"), ApplyComplete)[0]
    tofu = by_type(load(TOFU / "apply_partial.jsonl"), ApplyComplete)[0]
    assert isinstance(tf.elapsed_seconds, float) and tf.elapsed_seconds == 0.0
    assert tofu.elapsed_seconds == pytest.approx(0.412)


def test_change_summary_import_is_optional() -> None:
    tf = by_type(load(TF103 / "apply_ok.jsonl"), ChangeSummary)
    tofu = by_type(load(TOFU / "apply_ok.jsonl"), ChangeSummary)
    assert [(s.operation, s.add, s.import_count) for s in tf] == [
        ("plan", 6, None),
        ("apply", 6, None),
    ]
    assert [(s.operation, s.add, s.import_count, s.forget) for s in tofu] == [
        ("plan", 2, 0, 0),
        ("apply", 2, 0, 0),
    ]


def test_outputs_message_sensitive_value_absent_in_tofu_present_in_terraform_1_0() -> None:
    tofu = by_type(load(TOFU / "apply_ok.jsonl"), OutputsMessage)[0].outputs
    assert tofu["admin_password"].sensitive and tofu["admin_password"].value is None
    assert tofu["tags"].type == ["map", "string"] and tofu["tags"].value == {"env": "dev"}
    tf = by_type(load(TF103 / "apply_ok.jsonl"), OutputsMessage)[0].outputs
    assert tf["api_token_echo"].sensitive
    assert tf["api_token_echo"].value == "fixture-dummy-token"  # Terraform 1.0 prints it
    assert tf["vm_ips"].type[0] == "object"


def test_planned_change_carries_reason_and_resource_key() -> None:
    changes = {e.addr: e for e in by_type(load(TOFU / "apply_partial.jsonl"), PlannedChange)}
    assert changes["sim_vm.tainted"].reason == "tainted"
    assert changes["sim_vm.web"].reason is None
    assert changes['module.app.sim_config.app["web"]'].resource.resource_key == "web"
    assert changes['module.app.sim_config.app["web"]'].resource.module == "module.app"
    assert changes["sim_health_check.web[0]"].resource.resource_key == 0


def test_diagnostic_fields_and_missing_range() -> None:
    diags = by_type(load(TOFU / "apply_partial.jsonl"), Diagnostic)
    err, warn = diags
    assert (err.severity, err.is_error, err.address, err.filename, err.start_line) == (
        "error",
        True,
        "sim_vm.web",
        "main.tf",
        12,
    )
    assert warn.severity == "warning" and not warn.is_error and warn.address is None
    bare = parse_event('{"type":"diagnostic","diagnostic":{"severity":"error","summary":"x"}}')
    assert isinstance(bare, Diagnostic) and bare.filename is None and bare.start_line is None


def test_refresh_and_drift_messages() -> None:
    events = load(TOFU / "plan_refresh_only.jsonl")
    assert by_type(events, RefreshComplete)[0].id_value == "net-1a2b"
    drift = [(e.addr, e.action) for e in by_type(events, ResourceDrift)]
    assert drift == [("sim_network.main", "update"), ("sim_vm.web", "delete")]
    tf = [
        (e.addr, e.action) for e in by_type(load(TF103 / "plan_refresh_only.jsonl"), ResourceDrift)
    ]
    assert sorted(tf) == [
        ("module.health.sim_health_check.this", "delete"),
        ("module.network.sim_network.this", "update"),
    ]


def test_iter_events_skips_blank_lines_and_is_lazy() -> None:
    def lines():
        yield '{"type":"log"}'
        yield ""
        yield "   \n"
        raise AssertionError("read too far")

    it = iter_events(lines())
    assert next(it).type == "log"


def test_truncated_last_line_is_garbage() -> None:
    events = load(TOFU / "apply_interrupted.jsonl")
    assert isinstance(events[-1], GarbageLine)
    assert not any(isinstance(e, GarbageLine) for e in events[:-1])


# --- the fold -----------------------------------------------------------------------------------

S = Progress


def ev(type_: str, addr: str, **hook: object) -> str:
    """One stream line about `addr`; planned_change/resource_drift use `change`, others `hook`."""
    key = "change" if type_ in ("planned_change", "resource_drift") else "hook"
    return json.dumps({"type": type_, key: {"resource": {"addr": addr}, **hook}})


def fold(*lines: str) -> ResourceTracker:
    return ResourceTracker().feed_all(iter_events(lines))


def with_status(tracker: ResourceTracker, status: Progress) -> list[ResourceProgress]:
    return [p for p in tracker.resources.values() if p.status is status]


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_successful_apply_leaves_every_resource_complete_with_an_id(fixture_dir: Path) -> None:
    progress = dict(ResourceTracker().feed_all(load(fixture_dir / "apply_ok.jsonl")).resources)
    assert progress
    assert {p.status for p in progress.values()} == {S.COMPLETE}
    assert all(p.id_value for p in progress.values())


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_destroy_leaves_every_planned_resource_destroyed(fixture_dir: Path) -> None:
    tracker = ResourceTracker().feed_all(load(fixture_dir / "destroy.jsonl"))
    assert tracker.resources
    assert {p.status for p in tracker.resources.values()} == {S.DESTROYED}
    assert not with_status(tracker, S.PENDING) and not with_status(tracker, S.STARTED)


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_refresh_only_plan_tracks_nothing(fixture_dir: Path) -> None:
    assert dict(ResourceTracker().feed_all(load(fixture_dir / "plan_refresh_only.jsonl")).resources) == {}


def test_partial_apply_opentofu_sample() -> None:
    tracker = ResourceTracker().feed_all(load(TOFU / "apply_partial.jsonl"))
    got = {a: (p.status, p.action) for a, p in tracker.resources.items()}
    assert got == {
        "sim_vm.old": (S.DESTROYED, "delete"),
        "sim_vm.tainted": (S.COMPLETE, "create"),
        "sim_vm.web": (S.ERROR, "create"),
        'module.app.sim_config.app["web"]': (S.PENDING, "create"),
        "sim_health_check.web[0]": (S.PENDING, "create"),
    }
    assert [p.address for p in with_status(tracker, S.ERROR)] == ["sim_vm.web"]
    assert [p.address for p in with_status(tracker, S.PENDING)] == [
        'module.app.sim_config.app["web"]',
        "sim_health_check.web[0]",
    ]
    assert with_status(tracker, S.STARTED) == []
    assert tracker.resources["sim_vm.tainted"].id_value == "vm-t42"  # the new object, not vm-t41
    assert tracker.resources["sim_vm.tainted"].planned_action == "replace"
    assert tracker.resources["sim_vm.old"].reason == "delete_because_no_resource_config"


def test_partial_apply_real_terraform_1_0_3() -> None:
    tracker = ResourceTracker().feed_all(load(TF103 / "apply_partial.jsonl"))
    got = {a: p.status for a, p in tracker.resources.items()}
    assert got == {
        "sim_network.edge[0]": S.COMPLETE,
        "module.network.sim_network.this": S.COMPLETE,
        "module.vm_a.sim_vm.this": S.ERROR,  # fail_after_create: object exists, tainted in state
        "module.vm_b.sim_vm.this": S.ERROR,  # lose_response: object exists, not in state
        "module.health.sim_health_check.this": S.PENDING,
        "module.config.sim_config.this": S.PENDING,
    }
    assert with_status(tracker, S.STARTED) == []


def test_create_started_and_never_completed_is_reported() -> None:
    tracker = ResourceTracker().feed_all(load(TOFU / "apply_interrupted.jsonl"))
    started = with_status(tracker, S.STARTED)
    assert [(p.address, p.action, p.elapsed_seconds) for p in started] == [
        ("sim_network.main", "create", 20.0)
    ]
    assert [p.address for p in with_status(tracker, S.PENDING)] == ["sim_vm.web"]


def test_pending_never_started_stays_pending_with_planned_action() -> None:
    tracker = fold(ev("planned_change", "a.b", action="update"))
    (p,) = with_status(tracker, S.PENDING)
    assert (p.address, p.status, p.action, p.planned_action) == (
        "a.b",
        S.PENDING,
        "update",
        "update",
    )


def test_delete_complete_is_destroyed_and_keeps_the_old_id() -> None:
    t = fold(
        ev("planned_change", "a.b", action="delete"),
        ev("apply_start", "a.b", action="delete", id_key="id", id_value="x-1"),
        ev("apply_complete", "a.b", action="delete", elapsed_seconds=1),
    )
    p = t.resources["a.b"]
    assert (p.status, p.action, p.id_value) == (S.DESTROYED, "delete", "x-1")


def test_delete_that_errors_is_error_not_destroyed() -> None:
    t = fold(
        ev("apply_start", "a.b", action="delete", id_value="x-1"),
        ev("apply_errored", "a.b", action="delete"),
    )
    assert t.resources["a.b"].status is S.ERROR and t.resources["a.b"].id_value == "x-1"


def test_create_before_destroy_replace_ends_complete_not_destroyed() -> None:
    t = fold(
        ev("planned_change", "a.b", action="replace", reason="cannot_update"),
        ev("apply_start", "a.b", action="create"),
        ev("apply_complete", "a.b", action="create", id_value="new"),
        ev("apply_start", "a.b", action="delete", id_value="old"),
        ev("apply_complete", "a.b", action="delete"),
    )
    p = t.resources["a.b"]
    assert (p.status, p.action, p.id_value, p.planned_action) == (S.COMPLETE, "create", "new", "replace")
    assert p.deleted_ids == ("old",)


def test_create_before_destroy_replace_whose_old_delete_fails_leaves_the_new_object_complete() -> None:
    t = fold(
        ev("planned_change", "a.b", action="replace", reason="cannot_update"),
        ev("apply_start", "a.b", action="create"),
        ev("apply_complete", "a.b", action="create", id_value="new"),
        ev("apply_start", "a.b", action="delete", id_value="old"),
        ev("apply_progress", "a.b", action="delete"),
        ev("apply_errored", "a.b", action="delete"),
    )
    p = t.resources["a.b"]
    assert (p.status, p.action, p.id_value, p.deleted_ids, p.deleting_ids) == (
        S.COMPLETE, "create", "new", (), ("old",))


def test_replace_whose_create_never_completes_is_in_flight() -> None:
    t = fold(
        ev("planned_change", "a.b", action="replace"),
        ev("apply_start", "a.b", action="delete", id_value="old"),
        ev("apply_complete", "a.b", action="delete"),
        ev("apply_start", "a.b", action="create"),
    )
    (p,) = with_status(t, S.STARTED)
    assert (p.action, p.id_value) == ("create", None)  # the old id no longer names anything


def test_planned_change_never_downgrades_a_started_resource() -> None:
    t = fold(
        ev("apply_start", "a.b", action="create"), ev("planned_change", "a.b", action="create")
    )
    assert t.resources["a.b"].status is S.STARTED


def test_late_progress_tick_does_not_reopen_a_finished_resource() -> None:
    t = fold(
        ev("apply_start", "a.b", action="create"),
        ev("apply_complete", "a.b", action="create", id_value="i"),
        ev("apply_progress", "a.b", action="create", elapsed_seconds=10),
    )
    assert t.resources["a.b"].status is S.COMPLETE


def test_progress_without_start_counts_as_started() -> None:
    t = fold(
        ev("planned_change", "a.b", action="create"),
        ev("apply_progress", "a.b", action="create", elapsed_seconds=10),
    )
    assert [p.address for p in with_status(t, S.STARTED)] == ["a.b"]


def test_events_without_address_and_non_resource_events_are_ignored() -> None:
    t = fold(
        '{"type":"apply_start","hook":{"action":"create"}}',
        "garbage",
        '{"type":"log"}',
        ev("refresh_complete", "a.b", id_value="1"),
    )
    assert t.resources == {}


def test_feed_returns_the_new_progress_and_resources_is_read_only() -> None:
    t = ResourceTracker()
    p = t.feed(parse_event(ev("apply_start", "a.b", action="create")))
    assert p is not None and p.status is S.STARTED
    assert t.feed(parse_event('{"type":"log"}')) is None
    with pytest.raises(TypeError):
        t.resources["x"] = p  # type: ignore[index]


def _synthetic_stream(n: int) -> list[str]:
    lines = [ev("planned_change", f"sim_vm.v[{i}]", action="create") for i in range(n)]
    for i in range(n):
        a = f"sim_vm.v[{i}]"
        lines += [
            ev("apply_start", a, action="create"),
            ev("apply_progress", a, action="create", elapsed_seconds=10),
            ev("apply_complete", a, action="create", id_value=f"vm-{i}", elapsed_seconds=11),
        ]
    return lines


def test_a_stream_of_10000_resources_folds_every_resource_to_its_outcome() -> None:
    # How long this takes at 1k and 10k resources (it grows linearly) is bench_reconcile's
    # "fold events s" column, not a timed test.
    lines = _synthetic_stream(10_000)
    progress = ResourceTracker().feed_all(iter_events(lines)).resources
    assert len(progress) == 10_000
    assert {p.status for p in progress.values()} == {S.COMPLETE}
    assert progress["sim_vm.v[9999]"].id_value == "vm-9999"
    assert summarize_diagnostics(iter_events(lines)) == ""  # no error diagnostic in the stream


# --- diagnostics summary ----------------------------------------------------------------------


def diag(severity: str, summary: str, detail: str = "", **extra: object) -> str:
    return json.dumps(
        {
            "type": "diagnostic",
            "diagnostic": {"severity": severity, "summary": summary, "detail": detail, **extra},
        }
    )


def test_summary_uses_errors_only_with_address_summary_and_first_detail_line() -> None:
    text = summarize_diagnostics(load(TOFU / "apply_partial.jsonl"))
    assert text == (
        "sim_vm.web: Failed to create VM: sim: injected fault fail_after_create for sim_vm.web"
    )
    assert "deprecated" not in text


def test_summary_of_real_partial_apply_names_both_failed_vms() -> None:
    text = summarize_diagnostics(load(TF103 / "apply_partial.jsonl"))
    assert "module.vm_a.sim_vm.this: sim: injected fault fail_after_create" in text
    assert "module.vm_b.sim_vm.this: sim: injected fault lose_response" in text
    assert "\n" not in text


def test_summary_is_empty_without_errors() -> None:
    assert summarize_diagnostics(load(TF103 / "apply_ok.jsonl")) == ""
    assert summarize_diagnostics(iter_events([diag("warning", "meh")])) == ""


def test_summary_falls_back_to_file_and_line_and_skips_blank_detail_lines() -> None:
    line = diag(
        "error",
        "Unsupported argument",
        "\n\n  An argument named x is not expected.\nmore",
        range={"filename": "main.tf", "start": {"line": 7}},
    )
    assert summarize_diagnostics(iter_events([line])) == (
        "main.tf line 7: Unsupported argument: An argument named x is not expected."
    )


def test_summary_drops_duplicates_and_caps_the_list() -> None:
    lines = [diag("error", "same")] * 3 + [diag("error", f"e{i}") for i in range(7)]
    text = summarize_diagnostics(iter_events(lines))
    assert text == "same; e0; e1; e2; e3; and 3 more error(s)"


def test_summary_caps_length() -> None:
    text = summarize_diagnostics(iter_events([diag("error", "x" * 5000)]))
    assert len(text) <= 1000 and text.endswith("...")
