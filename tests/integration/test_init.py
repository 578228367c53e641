"""init like the engine (issue 11, item 5), on the real engine and the sim cloud."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

SUB_TF = """
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
resource "sim_network" "sub" {
  name = "sub-net"
}
output "id" {
  value = sim_network.sub.id
}
"""

CALL_SUB_TF = """
module "sub" {
  source = "./sub"
}
output "sub_id" {
  value = module.sub.id
}
"""


def test_a_child_module_added_after_the_first_init_applies(hyops: Hyops, pair: Path) -> None:
    """Sequence: apply (init runs), then a `module "sub" { source = "./sub" }` is added. The
    next apply failed with `Module not installed`: hyops ran init only when .terraform was
    missing."""
    assert hyops("apply", "modules/pair").returncode == 0
    (pair / "sub").mkdir()
    (pair / "sub" / "main.tf").write_text(SUB_TF)
    (pair / "calls.tf").write_text(CALL_SUB_TF)

    result = hyops("apply", "modules/pair")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "child-module sources or provider requirements changed" in result.stderr
    record = hyops.record("pair")
    assert record["status"] == "ok"
    assert record["outputs"]["sub_id"].startswith("net-")
    assert "module.sub.sim_network.sub" in record["resources"]


def test_an_edit_that_changes_no_requirement_does_not_rerun_init(hyops: Hyops, pair: Path) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    main = pair / "main.tf"
    main.write_text(main.read_text().replace('name = "pair-net"', 'name = "pair-net-2"'))

    result = hyops("apply", "modules/pair")

    assert result.returncode == 0, result.stderr
    assert "running `init`" not in result.stderr
    run = hyops.runtime_root / "runs" / "pair" / hyops.record("pair")["run_id"]
    assert not (run / "init.log").exists()


def test_hyops_init_passes_engine_flags_and_keeps_the_record(hyops: Hyops, pair: Path) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record_path("pair").read_bytes()

    result = hyops("init", "modules/pair", "--", "-upgrade")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "init of pair: ok" in result.stdout
    assert hyops.record_path("pair").read_bytes() == before
    assert json.loads(hyops.record_path("pair").read_text())["status"] == "ok"


def test_hyops_init_failure_is_exit_1(hyops: Hyops, pair: Path) -> None:
    result = hyops("init", "modules/pair", "--", "-bogus-flag")

    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
