"""`--format markdown` on status, stack status and reconcile: GitHub tables a person reads in
a PR comment or $GITHUB_STEP_SUMMARY, checked by parsing them back into cells."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli import markdown
from hybridops_tf.cli.main import cli
from hybridops_tf.reconcile.model import Action, ActionKind, Alternative, Code, Finding, ModuleReport, Report
from hybridops_tf.record.advice import Commands
from tests.readers import code_spans, parse_table, plain

NASTY = "a | b\nsecond line with `ticks`, *stars*, _under_, [link](x), <id> and a \\ backslash"


def test_a_cell_keeps_pipes_newlines_and_markup_as_written_on_one_row() -> None:
    lines = markdown.table(("Module", "Why"), [(markdown.text("m"), markdown.text(NASTY))])

    assert len(lines) == 3  # header, delimiter, one row: the newline did not split it
    (row,) = parse_table(lines)
    assert plain(row["Module"]) == "m"
    assert plain(row["Why"]) == NASTY


@pytest.mark.parametrize("command", [
    "hyops reconcile modules/sim/vm --ref demo/vm --write",
    "hyops reconcile m --import 'sim_vm.a[\"k|v\"]=vm-1'",
    "echo `date`",
    "tofu -chdir=x state push errored.tfstate\\|",
])
def test_a_command_cell_shows_the_command_exactly(command: str) -> None:
    (row,) = parse_table(markdown.table(("Next action",), [(markdown.code(command),)]))

    assert plain(row["Next action"]) == command


def test_a_short_row_is_padded_to_the_header() -> None:
    (row,) = parse_table(markdown.table(("A", "B", "C"), [("x",)]))

    assert row == {"A": "x", "B": "", "C": ""}


# --- hyops status -----------------------------------------------------------------------------

def write_record(root: Path, ref: str, **fields: object) -> None:
    doc = {"schema_version": 1, "module_ref": ref, "run_id": "apply-1", "updated_at": "2026-01-01T00:00:00Z",
           **fields}
    path = root / "state" / "modules" / ref.replace("/", "__") / "latest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))


def invoke(root: Path, *args: str):
    return CliRunner().invoke(cli, ["--runtime-root", str(root), *args])


def test_status_all_markdown_has_a_row_per_record_with_why_and_next_action(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    write_record(root, "demo/net", status="ok", module_dir=str(tmp_path / "net"))
    write_record(root, "demo/vm", status="error", module_dir=str(tmp_path / "vm"), failed_command="apply",
                 last_error="apply failed | sim fault\nsecond line", workspace="dev")

    result = invoke(root, "status", "--all", "--format", "markdown")

    assert result.exit_code == 0, result.output
    rows = {plain(r["Module"]): r for r in parse_table(result.stdout.splitlines())}
    assert set(rows) == {"demo/net", "demo/vm"}
    assert plain(rows["demo/net"]["Status"]) == "ok"
    assert (rows["demo/net"]["Why"], rows["demo/net"]["Next action"]) == ("", "")
    assert plain(rows["demo/vm"]["Status"]) == "error"
    assert plain(rows["demo/vm"]["Why"]) == "apply failed | sim fault\nsecond line"
    assert code_spans(rows["demo/vm"]["Next action"]) == [
        f"hyops --runtime-root {root} reconcile {tmp_path / 'vm'} --ref demo/vm --workspace dev"]


def test_status_markdown_of_a_missing_record_keeps_exit_3(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text("")

    result = invoke(tmp_path / "rt", "status", str(module), "--ref", "m", "--format", "markdown")

    assert result.exit_code == 3, result.output
    (row,) = parse_table(result.stdout.splitlines())
    assert (plain(row["Module"]), plain(row["Status"]), plain(row["Why"])) == ("m", "none", "no record")


def test_format_json_is_json_and_json_with_markdown_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    write_record(root, "demo/net", status="ok")

    as_flag = invoke(root, "status", "--all", "--json")
    as_format = invoke(root, "status", "--all", "--format", "json")
    both = invoke(root, "status", "--all", "--json", "--format", "markdown")

    assert as_flag.exit_code == as_format.exit_code == 0
    assert json.loads(as_format.stdout) == json.loads(as_flag.stdout)
    assert both.exit_code == 2
    assert "--json and --format markdown cannot be combined" in both.output


def test_status_text_is_unchanged_by_the_new_option(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    write_record(root, "demo/net", status="ok")

    assert invoke(root, "status", "--all").stdout == invoke(root, "status", "--all", "--format", "text").stdout


# --- hyops stack status -----------------------------------------------------------------------

RED_RUN = {
    "schema_version": 1, "stack": "demo", "stack_file": "stack.yml", "run_id": "stack-apply-1",
    "command": "apply", "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z",
    "members": [
        {"name": "network", "module_ref": "demo/network", "status": "ok", "run_id": "apply-n"},
        {"name": "vm", "module_ref": "demo/vm", "status": "error", "run_id": "apply-v",
         "error": "sim fault: fail_after_create | tainted"},
        {"name": "config", "module_ref": "demo/config", "status": "pending", "blocked_by": "vm"},
        {"name": "extra", "module_ref": "demo/extra", "status": "none"},
    ],
}


def stack_rows(doc: dict, now: dict[str, str], stack_file: str = "stacks/my stack.yml") -> dict[str, dict[str, str]]:
    lines = markdown.stack_status(doc, now, stack_file)
    return {plain(r["Member"]): r for r in parse_table(lines)}


def test_stack_status_markdown_says_why_and_the_next_command_per_member() -> None:
    rows = stack_rows(RED_RUN, {"network": "ok", "vm": "error", "config": "none", "extra": "none"})

    assert {m: plain(r["Status"]) for m, r in rows.items()} == {
        "network": "ok", "vm": "error", "config": "pending", "extra": "none"}
    assert plain(rows["network"]["Why"]) == "run apply-n" and rows["network"]["Next action"] == ""
    assert plain(rows["vm"]["Why"]) == "sim fault: fail_after_create | tainted\nrun apply-v"
    resume = "hyops stack apply 'stacks/my stack.yml' --resume"
    assert code_spans(rows["vm"]["Next action"]) == [resume, "hyops reconcile --stack 'stacks/my stack.yml'"]
    assert plain(rows["config"]["Why"]) == "blocked by vm (error)"
    assert code_spans(rows["config"]["Next action"]) == [resume]
    assert code_spans(rows["extra"]["Next action"]) == ["hyops stack apply 'stacks/my stack.yml'"]


def test_stack_status_markdown_commands_carry_the_global_options_typed() -> None:
    cmd = Commands("hyops --runtime-root '/ci/my root'")
    lines = markdown.stack_status(RED_RUN, {}, "stacks/my stack.yml", cmd)
    rows = {plain(r["Member"]): r for r in parse_table(lines)}

    spans = [span for r in rows.values() for span in code_spans(r["Next action"])]
    assert spans and all(shlex.split(span)[:3] == ["hyops", "--runtime-root", "/ci/my root"] for span in spans)


def test_stack_status_markdown_names_a_record_that_moved_on_since_the_run() -> None:
    rows = stack_rows(RED_RUN, {"network": "ok", "vm": "ok", "config": "none", "extra": "none"})

    assert plain(rows["vm"]["Why"]).splitlines()[-1] == "record now: ok"
    assert "record now" not in plain(rows["config"]["Why"])


def test_a_failed_destroy_points_at_destroy_again() -> None:
    doc = {**RED_RUN, "command": "destroy", "members": [
        {"name": "vm", "module_ref": "demo/vm", "status": "error", "error": "x"},
        {"name": "network", "module_ref": "demo/network", "status": "pending", "blocked_by": "vm"}]}

    rows = stack_rows(doc, {}, "stack.yml")

    assert code_spans(rows["vm"]["Next action"])[0] == "hyops stack destroy stack.yml"
    assert code_spans(rows["network"]["Next action"]) == ["hyops stack destroy stack.yml"]


# --- hyops reconcile --------------------------------------------------------------------------

def test_reconcile_markdown_has_a_row_per_finding_with_its_steps_and_choices() -> None:
    drift = Finding(Code.DRIFT, "demo/vm", "sim_vm.this changed | outside the engine",
                    next_actions=("hyops reconcile vm --ref demo/vm --write", "hyops apply vm --ref demo/vm"))
    orphan = Finding(Code.NO_RECORD, "demo/vm", "live and untracked", alternatives=(
        Alternative("hyops apply vm --ref demo/vm", "to keep them"),
        Alternative("hyops destroy vm --ref demo/vm", "to remove them")))
    report = Report((
        ModuleReport("demo/net", "ok", "net"),
        ModuleReport("demo/vm", "error", "vm", findings=(drift, orphan),
                     actions=(Action(ActionKind.SETTLE, "error -> error"),)),
        ModuleReport("demo/db", "ok", "db", unchecked=("the engine failed: exit 1",)),
    ))

    lines = markdown.reconcile(report)

    rows = parse_table(lines)
    by_why = {plain(r["Why"]).split(":")[0]: r for r in rows}
    assert [plain(r["Module"]) for r in rows] == ["demo/net", "demo/vm", "demo/vm", "demo/vm", "demo/db"]
    assert plain(by_why["consistent"]["Module"]) == "demo/net" and by_why["consistent"]["Next action"] == ""
    assert plain(by_why["drift"]["Why"]) == "drift: sim_vm.this changed | outside the engine"
    assert plain(by_why["drift"]["Status"]) == "error"
    assert plain(by_why["drift"]["Next action"]).splitlines() == [
        "1. hyops reconcile vm --ref demo/vm --write", "2. hyops apply vm --ref demo/vm"]
    assert code_spans(by_why["no_record"]["Next action"]) == [
        "hyops apply vm --ref demo/vm", "hyops destroy vm --ref demo/vm"]
    assert "one of" in plain(by_why["no_record"]["Next action"])
    assert plain(by_why["done"]["Why"]) == "done: settle: error -> error"
    assert plain(by_why["could_not_check"]["Why"]) == "could_not_check: the engine failed: exit 1"
    assert lines[-1] == "2 finding(s) in 3 module(s); 1 module(s) could not be fully checked"


def test_reconcile_markdown_of_a_consistent_run_says_so() -> None:
    lines = markdown.reconcile(Report((ModuleReport("demo/net", "ok", "net"),)))

    assert lines[-1] == "consistent: 1 module(s) checked, nothing to do"
    assert [plain(r["Status"]) for r in parse_table(lines)] == ["ok"]


def test_reconcile_all_markdown_with_no_records_keeps_exit_3(tmp_path: Path) -> None:
    result = invoke(tmp_path / "rt", "reconcile", "--all", "--format", "markdown")

    assert result.exit_code == 3, result.output
    assert "no modules to reconcile" in result.stdout
    assert "| Module" not in result.stdout


def test_reconcile_refuses_json_with_markdown(tmp_path: Path) -> None:
    result = invoke(tmp_path / "rt", "reconcile", "--all", "--json", "--format", "markdown")

    assert result.exit_code == 2
    assert "--json and --format markdown cannot be combined" in result.output
