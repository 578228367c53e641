"""The streams of every engine: what Terraform 1.12-1.15 print (captured, tests/fixtures/
terraform-<version>/), what Terraform 1.10+ and 1.14+ add and OpenTofu names its own way
(written, tests/fixtures/written/, named as such), and what no engine ships yet: every line
parses, ephemeral operations and actions are never objects, and what hyops does not know is
ignored and counted (engine/census.py), in the run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.engine.census import CENSUS_FILE, StreamCensus
from hybridops_tf.engine.events import (
    ActionMessage,
    ApplyComplete,
    ChangeSummary,
    EphemeralOp,
    Event,
    GarbageLine,
    PlannedChange,
    UnknownEvent,
    VersionMessage,
    parse_event,
)
from hybridops_tf.engine.progress import ResourceTracker
from hybridops_tf.engine.vocabulary import Progress, is_ephemeral_address
from hybridops_tf.operation.stream import StreamReader
from hybridops_tf.runtime.run_folder import RunFolder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WRITTEN = FIXTURES / "written"
TODAY = ("1.12.2", "1.13.5", "1.14.9", "1.15.5")
CAPTURED_TODAY = [FIXTURES / f"terraform-{version}" for version in TODAY]
EVERY_CAPTURED = sorted(p for p in FIXTURES.glob("terraform-*") if p.is_dir())


def read(path: Path, census: StreamCensus | None = None) -> list[Event]:
    return [parse_event(line, census) for line in path.read_text().splitlines() if line.strip()]


def census_of(paths: list[Path]) -> StreamCensus:
    census = StreamCensus()
    for path in paths:
        read(path, census)
    return census


# --- captured: today's engines ------------------------------------------------------------------


@pytest.mark.parametrize("folder", CAPTURED_TODAY, ids=lambda p: p.name)
def test_todays_engines_were_captured(folder: Path) -> None:
    assert (folder / "apply_ok.jsonl").is_file(), "run scripts/capture_fixtures.py --engine .engines/V/bin/terraform"


@pytest.mark.parametrize("folder", EVERY_CAPTURED, ids=lambda p: p.name)
def test_every_captured_stream_parses_with_nothing_unknown(folder: Path) -> None:
    streams = sorted(folder.glob("*.jsonl"))
    census = census_of(streams)
    events = [e for path in streams for e in read(path)]
    assert not [e for e in events if isinstance(e, (GarbageLine, UnknownEvent))]
    assert not census, census.to_json()


@pytest.mark.parametrize(("version", "ui"), [("1.12.2", "1.2"), ("1.13.5", "1.2"), ("1.14.9", "1.2"),
                                             ("1.15.5", "1.3")])
def test_the_version_message_names_the_engine_and_its_ui(version: str, ui: str) -> None:
    first = read(FIXTURES / f"terraform-{version}" / "apply_ok.jsonl")[0]
    assert isinstance(first, VersionMessage)
    assert (first.engine, first.version, first.ui) == ("terraform", version, ui)


@pytest.mark.parametrize("folder", CAPTURED_TODAY, ids=lambda p: p.name)
def test_todays_engines_fold_the_partial_apply_as_1_0_3_does(folder: Path) -> None:
    def fold(path: Path) -> dict[str, tuple[Progress, bool]]:
        tracker = ResourceTracker().feed_all(read(path))
        return {addr: (p.status, p.id_value is not None) for addr, p in tracker.resources.items()}

    assert fold(folder / "apply_partial.jsonl") == fold(FIXTURES / "terraform-1.0.3" / "apply_partial.jsonl")
    assert fold(folder / "apply_ok.jsonl") == fold(FIXTURES / "terraform-1.0.3" / "apply_ok.jsonl")


# --- written: Terraform 1.14 actions --------------------------------------------------------------


def test_written_terraform_1_14_actions_parse_with_their_error_text() -> None:
    events = read(WRITTEN / "terraform-1.14-actions.jsonl")
    actions = [e for e in events if isinstance(e, ActionMessage)]
    assert [a.type for a in actions] == ["planned_action_invocation", "action_start", "action_progress",
                                         "action_errored", "action_start", "action_complete"]
    assert {a.action_addr for a in actions} == {"action.sim_reboot.now"}
    assert [a.trigger_addr for a in actions] == ["sim_vm.web"] * 4 + [None, None]
    errored = next(a for a in actions if a.type == "action_errored")
    assert errored.error == "the vm did not come back"


def test_written_terraform_1_14_change_summary_counts_actions() -> None:
    summaries = [e for e in read(WRITTEN / "terraform-1.14-actions.jsonl") if isinstance(e, ChangeSummary)]
    assert [(s.operation, s.change, s.action_invocation, s.action_fail) for s in summaries] == [
        ("plan", 1, 1, None), ("apply", 1, 1, 1)]


def test_written_terraform_1_14_actions_are_never_objects() -> None:
    tracker = ResourceTracker().feed_all(read(WRITTEN / "terraform-1.14-actions.jsonl"))
    assert {addr: (p.status, p.id_value) for addr, p in tracker.resources.items()} == {
        "sim_vm.web": (Progress.COMPLETE, "vm-1")}


# --- written: ephemeral resources, Terraform's and OpenTofu's names ----------------------------------


@pytest.mark.parametrize("name", ["terraform-1.10-ephemeral.jsonl", "opentofu-ephemeral-forget.jsonl"])
def test_written_ephemeral_operations_parse_and_are_never_objects(name: str) -> None:
    events = read(WRITTEN / name)
    ops = [e for e in events if isinstance(e, EphemeralOp)]
    assert ops and all(is_ephemeral_address(op.addr) for op in ops)
    assert not [e for e in events if isinstance(e, (UnknownEvent, GarbageLine))]
    tracker = ResourceTracker().feed_all(events)
    assert [(addr, p.status) for addr, p in tracker.resources.items() if p.status is not Progress.PENDING] == [
        ("sim_vm.web", Progress.COMPLETE)]


def test_written_terraform_ephemeral_operations_keep_their_action() -> None:
    ops = [e for e in read(WRITTEN / "terraform-1.10-ephemeral.jsonl") if isinstance(e, EphemeralOp)]
    assert [(op.type, op.action) for op in ops][:3] == [
        ("ephemeral_op_start", "open"), ("ephemeral_op_progress", "open"), ("ephemeral_op_complete", "open")]
    assert ops[1].elapsed_seconds == 10.0


def test_written_opentofu_ephemeral_names_and_forget_count_parse() -> None:
    events = read(WRITTEN / "opentofu-ephemeral-forget.jsonl")
    assert {e.type for e in events if isinstance(e, EphemeralOp)} == {"ephemeral_action_started",
                                                                       "ephemeral_action_complete"}
    assert [(s.operation, s.add, s.forget) for s in events if isinstance(s, ChangeSummary)] == [
        ("plan", 1, 1), ("apply", 1, 1)]
    assert [c.action for c in events if isinstance(c, PlannedChange)] == ["forget", "create"]


@pytest.mark.parametrize("name", sorted(p.name for p in WRITTEN.glob("*.jsonl") if "future" not in p.name))
def test_written_streams_of_documented_names_count_nothing_unknown(name: str) -> None:
    census = census_of([WRITTEN / name])
    assert not census, census.to_json()


def test_a_planned_change_of_an_ephemeral_address_is_never_an_object() -> None:
    line = ('{"type":"apply_complete","hook":{"resource":{"addr":"module.a.ephemeral.sim_token.t"},'
            '"action":"create","id_value":"tok-1"}}')
    tracker = ResourceTracker()
    assert tracker.feed(parse_event(line)) is None
    assert dict(tracker.resources) == {}


@pytest.mark.parametrize(("addr", "ephemeral"), [
    ("ephemeral.t.n", True), ("module.a.ephemeral.t.n", True), ('module.a["x.y"].ephemeral.t.n', True),
    ("module.ephemeral.sim_vm.x", False), ("sim_vm.ephemeral", False), ("data.t.n", False),
    ("module.a[0].sim_vm.x", False)])
def test_an_ephemeral_address_is_told_by_its_mode_not_its_names(addr: str, ephemeral: bool) -> None:
    assert is_ephemeral_address(addr) is ephemeral


# --- what no engine ships yet: ignored and counted ----------------------------------------------------


def test_unknown_types_and_fields_are_ignored_and_counted() -> None:
    census = StreamCensus()
    events = read(WRITTEN / "terraform-future-unknown.jsonl", census)
    assert [e.type for e in events if isinstance(e, UnknownEvent)] == ["hologram_start", "hologram_start"]
    assert census.to_json() == {
        "unknown_types": {"hologram_start": 2},
        "unknown_fields": {"apply_complete.hook.identity": 1, "change_summary.changes.teleported": 1,
                           "planned_change.change.identity_hint": 1, "planned_change.future_top": 1},
    }
    done = next(e for e in events if isinstance(e, ApplyComplete))
    assert (done.addr, done.id_value) == ("sim_vm.web", "vm-9")
    tracker = ResourceTracker().feed_all(events)
    assert tracker.resources["sim_vm.web"].status is Progress.COMPLETE


def test_a_stream_reader_writes_the_counts_in_the_run_folder(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path, "apply-1")
    reader = StreamReader(None, folder, log=None)  # type: ignore[arg-type]  # no journal asked of it
    for line in (WRITTEN / "terraform-future-unknown.jsonl").read_text().splitlines():
        reader(line)
    reader.write_census()
    counts = json.loads((tmp_path / CENSUS_FILE).read_text())
    assert counts["unknown_types"] == {"hologram_start": 2}
    assert reader.tracker().resources["sim_vm.web"].id_value == "vm-9"


def test_a_run_folder_gets_no_counts_when_everything_was_known(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path, "apply-1")
    reader = StreamReader(None, folder, log=None)  # type: ignore[arg-type]
    for line in (FIXTURES / "terraform-1.15.5" / "apply_ok.jsonl").read_text().splitlines():
        reader(line)
    reader.write_census()
    assert not (tmp_path / CENSUS_FILE).exists()
