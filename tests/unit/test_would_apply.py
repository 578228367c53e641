"""One function says what an apply would apply now (operation/would_apply.py): the module
apply records it, `stack apply --resume` skips by it and `reconcile --stack` reports
`config_changed` by it. A second builder is how a green resume over a changed member came
about before, so the source is read to keep it one."""

from __future__ import annotations

import re
from pathlib import Path

from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.inputs.values import resolve_inputs
from hybridops_tf.operation.would_apply import applied_from
from hybridops_tf.record.applied import changes
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord, RecordEngine

PACKAGE = Path(__file__).resolve().parents[2] / "hybridops_tf"
KEY = b"k" * 32


def test_only_would_apply_builds_what_an_apply_applies() -> None:
    builders = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                      if re.search(r"\bAppliedFrom\(|config_digest\.config_digest\(", p.read_text(encoding="utf-8")))
    assert builders == ["operation/would_apply.py"]


def test_a_record_of_what_would_apply_now_vouches_for_it_and_a_changed_file_does_not(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('variable "name" {\n  type = string\n}\n')
    (tmp_path / ".terraform.lock.hcl").write_text("# committed\n")
    engine = EngineInfo(binary=Path("/usr/bin/terraform"), version="1.15.5", kind="terraform")
    resolved = resolve_inputs({}, stack_inputs={}, module_dir=str(tmp_path))
    now = applied_from(tmp_path, None, resolved, KEY, engine)
    rec = OperationRecord("m", Status.OK, "apply-1", config_digest=now.config_digest, inputs_digest=now.inputs_digest,
                          engine=RecordEngine.of(engine))

    assert changes(rec, now) == ()
    assert changes(rec, applied_from(tmp_path, "qa", resolved, KEY, engine)) == (
        "its workspace changed (default -> qa)",)
    (tmp_path / "main.tf").write_text('variable "name" {\n  type = number\n}\n')
    assert changes(rec, applied_from(tmp_path, None, resolved, KEY, engine)) == ("its configuration changed",)


def test_only_the_apply_gives_inputs_it_resolved_and_the_comparisons_give_the_member() -> None:
    """--resume and reconcile --stack give would_apply the member's inputs, never inputs they
    resolved their own way: only the apply, which records what it resolved at step 1, calls
    applied_from (tests/integration/test_would_apply_agreement.py holds that they agree)."""
    callers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if re.search(r"\bapplied_from\(", p.read_text(encoding="utf-8")))
    assert callers == ["operation/steps.py", "operation/would_apply.py"]
    comparing = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                       if re.search(r"\bwould_apply\(", p.read_text(encoding="utf-8")))
    assert comparing == ["operation/would_apply.py", "reconcile/members.py", "stack/member.py"]
