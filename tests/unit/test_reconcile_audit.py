"""The audit run folder of a record-changing reconcile (reconcile/audit.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, OperationFailed, RefusedError
from hybridops_tf.reconcile import audit
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime


def test_an_unwritable_runs_folder_is_a_refusal_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("a file where the runs folder should be")

    with pytest.raises(RefusedError, match="nothing was changed") as info:
        audit.open_run(Runtime(tmp_path), "demo/vm", "/w/vm", "reconcile-1", "forget-orphan", ["reconcile"])

    assert info.value.exit_code == ExitCode.REFUSED


def test_the_audit_names_who_and_redacts_every_var_value(tmp_path: Path) -> None:
    folder, meta = audit.open_run(Runtime(tmp_path), "demo/vm", "/w/vm", "reconcile-1", "write",
                                  ["reconcile", "--var", "token=s3cr3t", "--var=size=large"])

    written = json.loads((folder.path / "meta.json").read_text())
    assert written["user"] and written["host"] and written["pid"] == meta.pid
    assert "s3cr3t" not in json.dumps(written) and "large" not in json.dumps(written)


def test_the_audit_meta_names_the_action_then_its_details_then_its_end(tmp_path: Path) -> None:
    folder, meta = audit.open_run(Runtime(tmp_path), "demo/vm", "/w/vm", "reconcile-1", "forget-orphan",
                                  ["reconcile"], address="sim_vm.a")
    audit.close_run(Runtime(tmp_path), folder, meta, ExitCode.OK, {"outcome": "forgotten"})

    written = json.loads((folder.path / "meta.json").read_text())
    assert list(written) == ["schema_version", "command", "action", "argv", "module_ref", "module_dir", "run_id",
                             "started_at", "hyops_version", "pid", "host", "user", "address", "finished_at",
                             "exit_code"]
    assert (written["command"], written["action"], written["address"]) == ("reconcile", "forget-orphan", "sim_vm.a")
    assert json.loads((folder.path / "result.json").read_text())["outcome"] == "forgotten"


def test_a_record_write_that_fails_closes_the_audit_run_failed_and_says_the_address_is_still_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Runtime(tmp_path)

    def no_space(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(runtime.store), "write", no_space)
    folder, meta = audit.open_run(runtime, "demo/vm", "/w/vm", "reconcile-1", "forget-orphan", ["reconcile"])

    with pytest.raises(OperationFailed, match="sim_vm.a is still listed"):
        audit.write_record(runtime, "demo__vm", folder, meta, OperationRecord("demo/vm", Status.OK, "r"), "sim_vm.a",
                           {"outcome": "forgotten"}, before=OperationRecord("demo/vm", Status.OK, "r"))

    result = json.loads((folder.path / "result.json").read_text())
    assert result["outcome"] == "failed" and "No space left on device" in result["error"]
    assert json.loads((folder.path / "meta.json").read_text())["exit_code"] == ExitCode.FAILED
