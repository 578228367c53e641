"""Runs the engine refused, and runs that touched only part of the configuration (issue 11,
items 3 and 4), on the real engine and the sim cloud.

A refusal by the engine before any resource change started is not a failed mutation: the
record keeps the status it had. A `-target`/`-replace`/`-refresh-only` apply never claims the
whole configuration converged unless a plan without those flags shows no change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

VALIDATED_TF = SIM_HEADER + """variable "name" {
  type    = string
  default = "net-long-enough"
  validation {
    condition     = length(var.name) > 5
    error_message = "The name must be longer than 5 characters."
  }
}
resource "sim_network" "net" {
  name = var.name
}
output "network_id" {
  value = sim_network.net.id
}
"""


def _validated(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "validated"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(VALIDATED_TF)
    return module


def _assert_unchanged_ok(hyops: Hyops, ref: str, before: dict, result) -> None:
    after = hyops.record(ref)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert after["status"] == "ok"
    assert (after["run_id"], after["outputs"], after["resources"]) == (
        before["run_id"], before["outputs"], before["resources"])
    assert "failed_command" not in after and "last_error" not in after
    attempt = after["last_attempt"]
    assert attempt["run_id"] != before["run_id"] and attempt["exit_code"] == 2
    runs = hyops.runtime_root / "runs" / ref.replace("/", "__") / attempt["run_id"]
    assert json.loads((runs / "result.json").read_text())["outcome"] == "refused"


def test_an_unknown_engine_flag_keeps_an_ok_record_ok(hyops: Hyops, pair: Path) -> None:
    """Sequence: apply ok, then `hyops apply mod -- -bogus-flag`: the engine refused its own
    argv, and the healthy `ok` record became `error` (exit 1)."""
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record("pair")

    result = hyops("apply", "modules/pair", "--", "-bogus-flag")

    _assert_unchanged_ok(hyops, "pair", before, result)


def test_an_engine_refusal_names_the_run_the_record_is_from_and_keeps_its_updated_time(
        hyops: Hyops, pair: Path) -> None:
    """The refusal said "(still ok, run <the refused attempt>)", naming a run that settled
    nothing as the record's, and the record's `updated_at` moved although its status did not."""
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record("pair")
    before["updated_at"] = "2020-01-02T03:04:05Z"  # an apply long ago: a refusal the same second shows nothing
    hyops.write_record("pair", before)

    result = hyops("apply", "modules/pair", "--", "-bogus-flag")

    after = hyops.record("pair")
    attempt = after["last_attempt"]["run_id"]
    assert result.returncode == 2, result.stderr
    assert after["updated_at"] == before["updated_at"]
    assert f"still ok, from run {before['run_id']}; this attempt was run {attempt})" in result.stderr


def test_a_failing_variable_validation_keeps_an_ok_record_ok(hyops: Hyops, tmp_path: Path) -> None:
    """Sequence: apply ok, then an apply whose value fails the variable's validation block."""
    _validated(tmp_path)
    assert hyops("apply", "modules/validated").returncode == 0
    before = hyops.record("validated")

    result = hyops("apply", "modules/validated", "--var", "name=abc")

    _assert_unchanged_ok(hyops, "validated", before, result)
    assert "longer than 5" in hyops.record("validated")["last_attempt"]["error"]


def test_a_provider_that_cannot_be_configured_keeps_an_ok_record_ok(
    hyops: Hyops, pair: Path, tmp_path: Path
) -> None:
    """Sequence: apply ok, then an apply whose provider refuses to configure (a faults file
    that does not exist): no resource change started."""
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record("pair")

    result = hyops("apply", "modules/pair", env={"HYOPS_SIM_FAULTS": str(tmp_path / "missing.yml")})

    _assert_unchanged_ok(hyops, "pair", before, result)


def test_a_refused_destroy_keeps_the_record_and_the_objects(hyops: Hyops, pair: Path) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record("pair")

    result = hyops("destroy", "modules/pair", "--", "-bogus-flag")

    _assert_unchanged_ok(hyops, "pair", before, result)
    assert len(hyops.sim_objects()) == 1


def test_a_refused_first_run_leaves_no_record(hyops: Hyops, pair: Path) -> None:
    result = hyops("apply", "modules/pair", "--", "-bogus-flag")

    assert result.returncode == 2, result.stderr
    assert hyops.record("pair") is None
    assert hyops.sim_objects() == []


def test_a_failure_after_a_change_started_is_still_error(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path]
) -> None:
    """The other side: a provider error on create is a failed mutation (exit 1, `error`)."""
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_before_create", "times": 1}])

    result = hyops("apply", "modules/pair")

    assert result.returncode == 1, result.stderr
    assert hyops.record("pair")["status"] == "error"


def test_a_targeted_apply_is_not_ok_until_the_whole_configuration_converged(hyops: Hyops, pair: Path) -> None:
    """Sequence: `hyops apply mod --var with_vm=true -- -target=sim_network.net` settled `ok`
    although a plan still showed the vm to create, so reconcile said consistent and
    `stack apply --resume` would have skipped the module."""
    targeted = hyops("apply", "modules/pair", "--var", "with_vm=true", "--", "-target=sim_network.net")

    assert targeted.returncode == 0, targeted.stderr
    record = hyops.record("pair")
    assert record["status"] == "error"
    assert record["last_error"].startswith("not converged:")
    assert "1 to add" in record["last_error"]
    assert [o["type"] for o in hyops.sim_objects()] == ["sim_network"]

    full = hyops("apply", "modules/pair", "--var", "with_vm=true")

    assert full.returncode == 0, full.stderr
    assert hyops.record("pair")["status"] == "ok"


def test_a_targeted_apply_that_leaves_nothing_undone_is_ok(hyops: Hyops, pair: Path) -> None:
    result = hyops("apply", "modules/pair", "--", "-target=sim_network.net")

    assert result.returncode == 0, result.stderr
    assert hyops.record("pair")["status"] == "ok"
