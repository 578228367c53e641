"""Run-folder facts read back after a crash (runs.py): did the engine start, was its plan read."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridops_tf.engine.events import iter_events
from hybridops_tf.engine.progress import plan_was_read
from hybridops_tf.runs import RunFolder, may_hold_unseen_creates

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


def _run(tmp_path: Path, *, engine_started: bool) -> RunFolder:
    folder = RunFolder.create(tmp_path, REF, "apply-1")
    if engine_started:
        folder.stderr_path.write_text("")
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
    _run(tmp_path, engine_started=started)
    events = list(iter_events(apply_lines() if lines is None else lines))

    assert may_hold_unseen_creates(tmp_path, REF, "apply-1", command, events) is expected


def test_a_missing_run_folder_proves_nothing_so_creates_stay_possible(tmp_path: Path) -> None:
    assert may_hold_unseen_creates(tmp_path, REF, "apply-gone", "apply", [])


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
