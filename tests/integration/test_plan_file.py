"""`hyops plan --out FILE` then `hyops apply FILE` on the real engine (issue 13, item 1).

The saved plan is applied exactly, under the full contract; a plan made for another module
or workspace, or whose state moved on, is refused with exit 4 before anything runs.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

SECRET = "s3cr3t-saved-plan-4711"

SECRET_TF = SIM_HEADER + """variable "token" {
  type      = string
  sensitive = true
}
variable "name" {
  type = string
}
resource "sim_network" "net" {
  name = var.name
}
output "token_echo" {
  value     = var.token
  sensitive = true
}
"""


def _run_events(hyops: Hyops, ref: str, run_id: str) -> list[dict]:
    path = hyops.runtime_root / "runs" / ref / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_saved_plan_is_applied_exactly_as_planned_under_the_contract(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    plan = hyops("plan", "modules/network", "--var", "name=planned-net", "--out", "net.tfplan")
    assert plan.returncode == 0, plan.stderr
    plan_file = hyops.workdir / "net.tfplan"
    assert stat.S_IMODE(plan_file.stat().st_mode) == 0o600
    assert hyops.sim_objects() == [] and hyops.record("network") is None  # a plan changes nothing

    applied = hyops("apply", "net.tfplan")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    record = hyops.record("network")
    assert record is not None and record["status"] == "ok"
    assert len(hyops.sim_objects()) == 1
    assert "planned-net" in json.dumps(hyops.sim_objects())
    types = [e.get("type") for e in _run_events(hyops, "network", record["run_id"])]
    assert "planned_change" in types and "apply_start" in types
    assert types.index("planned_change") < types.index("apply_start")  # creates known before mutation
    resolved = (hyops.runtime_root / "runs" / "network" / record["run_id"] / "resolved.inputs.yml").read_text()
    assert "planned-net" in resolved


def test_a_saved_plan_with_a_secret_keeps_it_out_of_the_sidecar_and_the_record(
    hyops: Hyops, tmp_path: Path
) -> None:
    module = tmp_path / "modules" / "secret"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(SECRET_TF)
    plan = hyops("plan", "modules/secret", "--var", f"token={SECRET}", "--var", "name=s-net", "--out", "s.tfplan")
    assert plan.returncode == 0, plan.stderr
    sidecar = (hyops.workdir / "s.tfplan.hyops.json").read_text()
    assert SECRET not in sidecar and json.loads(sidecar)["inputs"] == {"name": "--var", "token": "--var"}

    applied = hyops("apply", "s.tfplan")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert SECRET not in applied.stdout + applied.stderr
    written = [p for p in hyops.runtime_root.rglob("*") if p.is_file()]
    assert written and not any(SECRET.encode() in p.read_bytes() for p in written)
    assert hyops.record("secret")["status"] == "ok"


def test_a_stale_plan_is_refused_with_exit_4_and_the_record_unchanged(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network", "--var", "name=first", "--out", "old.tfplan").returncode == 0
    assert hyops("apply", "modules/network", "--var", "name=second").returncode == 0
    before, objects = hyops.record("network"), hyops.sim_objects()

    stale = hyops("apply", "old.tfplan")

    assert stale.returncode == 4, stale.stdout + stale.stderr
    assert "Saved plan is stale" in stale.stderr
    assert hyops.record("network") == before
    assert hyops.sim_objects() == objects


def test_a_second_plan_made_from_no_state_is_stale_once_the_first_is_applied(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    """The engine skips its check for a plan made from no state; hyops does not (it would
    create everything a second time)."""
    module_copy("network")
    assert hyops("plan", "modules/network", "--out", "a.tfplan").returncode == 0
    assert hyops("plan", "modules/network", "--out", "b.tfplan").returncode == 0
    assert hyops("apply", "a.tfplan").returncode == 0

    second = hyops("apply", "b.tfplan")

    assert second.returncode == 4, second.stdout + second.stderr
    assert "Saved plan is stale" in second.stderr
    assert len(hyops.sim_objects()) == 1


@pytest.mark.parametrize("other", [["--ref", "elsewhere"], ["--workspace", "staging"]], ids=["module", "workspace"])
def test_a_plan_made_for_another_module_or_workspace_is_refused(
    hyops: Hyops, module_copy: Callable[[str], Path], other: list[str]
) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network", "--out", "net.tfplan").returncode == 0

    refused = hyops("apply", "net.tfplan", *other)

    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert "was made for" in refused.stderr
    assert hyops.sim_objects() == []
    assert hyops.record("network") is None and hyops.record("elsewhere") is None


def test_a_plan_file_without_its_sidecar_or_with_inputs_is_a_usage_error(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network", "--out", "net.tfplan").returncode == 0
    with_inputs = hyops("apply", "net.tfplan", "--var", "name=x")
    (hyops.workdir / "net.tfplan.hyops.json").unlink()
    without = hyops("apply", "net.tfplan")

    assert with_inputs.returncode == 2 and "carries its inputs" in with_inputs.stderr
    assert without.returncode == 2 and "hyops plan MODULE_DIR --out FILE" in without.stderr
    assert hyops.sim_objects() == []


def test_a_changed_plan_file_is_refused(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network", "--var", "name=one", "--out", "one.tfplan").returncode == 0
    assert hyops("plan", "modules/network", "--var", "name=two", "--out", "two.tfplan").returncode == 0
    (hyops.workdir / "one.tfplan").write_bytes((hyops.workdir / "two.tfplan").read_bytes())

    refused = hyops("apply", "one.tfplan")

    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert hyops.sim_objects() == []


def test_plan_format_markdown_is_a_table_that_parses_back(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network", "--var", "name=old").returncode == 0

    out = hyops("plan", "modules/network", "--var", "name=new", "--format", "markdown")

    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ")]
    header, *body = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    assert header == ["resource", "action", "changed attributes"]
    (row,) = body
    assert row[0] == "`sim_network.this`" and row[1].startswith("replace")
    assert "`name" in row[2]
    assert "1 to add, 0 to change, 1 to destroy" in out.stdout.splitlines()[-1]


def test_plan_lock_timeout_is_passed_in_a_spelling_the_engine_accepts(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    out = hyops("plan", "modules/network", "--lock-timeout", "2.5")
    assert out.returncode == 0, out.stderr
