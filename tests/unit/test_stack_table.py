"""`hyops stack status`'s table: a member's error is cut at a word, with an ellipsis (issue 38)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.cli.render import clip
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.report import MemberEntry, StackReport, write_report
from hybridops_tf.store.local import RecordStore

ERROR = ("sim_vm.this: sim: injected fault fail_after_create on sim_vm \"demo-vm\": rule 1 (sim_vm create "
         "fail_after_create) in /ci/faults.yml fired: the object was made, then the call failed")


def test_a_long_error_in_the_stack_table_ends_at_a_word_with_an_ellipsis(tmp_path: Path) -> None:
    (tmp_path / "stack" / "vm").mkdir(parents=True)
    (tmp_path / "stack" / "vm" / "main.tf").write_text('output "id" {\n  value = "x"\n}\n')
    (tmp_path / "stack" / "stack.yml").write_text("stack: cut\nmodules:\n  - name: vm\n    path: vm\n")
    root = tmp_path / "rt"
    RecordStore(root).write(OperationRecord("cut/vm", Status.ERROR, "apply-1"))
    failed = MemberEntry("vm", "cut/vm", "error", run_id="apply-1", error=ERROR)
    write_report(Runtime(root), StackReport("cut", "stack.yml", "stack-apply-1", "apply", "2026-01-01T00:00:00Z",
                                            "2026-01-01T00:00:05Z", [failed]))

    stack_file = tmp_path / "stack" / "stack.yml"
    result = CliRunner().invoke(cli, ["--runtime-root", str(root), "stack", "status", str(stack_file)])

    [row] = [line for line in result.stdout.splitlines() if line.strip().startswith("vm ")]
    why = row.split("apply-1: ", 1)[1]
    assert why.endswith("…"), row
    assert ERROR.startswith(why[:-1]) and ERROR[len(why) - 1] == " ", why  # a whole word, then the cut


def test_clip_keeps_short_text_and_cuts_long_text_at_a_word() -> None:
    assert clip("short enough", 20) == "short enough"
    assert clip("first line\nsecond line", 40) == "first line"
    assert clip("one two three four", 12) == "one two…"
    assert clip("x" * 30, 10) == "x" * 9 + "…"
