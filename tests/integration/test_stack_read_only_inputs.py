"""Read-only stack commands report a stack whose required input comes only from the workers'
environment (issue 45, item 3): the CI recipe's report job has no deployment secret, and its
`stack status --junit`, `report --html`, `stack graph` and `reconcile --stack` exited 2 on
"required input(s) 'token' set by neither inputs nor inputs_from". They now say which inputs they
could not resolve and go on; `stack apply` still refuses without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

TOKEN_TF = SIM_HEADER + """variable "token" {
  type      = string
  sensitive = true
}
resource "sim_network" "net" {
  name = "token-net"
}
output "id" { value = sim_network.net.id }
"""

STACK = """stack: secrets
modules:
  - name: net
    path: net
"""


@pytest.fixture
def stack_file(tmp_path: Path) -> Path:
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "main.tf").write_text(TOKEN_TF)
    path = tmp_path / "stack.yml"
    path.write_text(STACK)
    return path


def test_read_only_stack_commands_report_without_the_workers_secret(hyops: Hyops, stack_file: Path) -> None:
    applied = hyops("stack", "apply", str(stack_file), "--auto-approve", env={"TF_VAR_token": "s3cret"})
    assert applied.returncode == 0, applied.stdout + applied.stderr

    status = hyops("stack", "status", str(stack_file), "--junit", "report.xml")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "'token'" in status.stderr and (hyops.workdir / "report.xml").is_file()
    page = hyops("report", str(stack_file), "--html", "report.html")
    assert page.returncode == 0, page.stdout + page.stderr
    assert (hyops.workdir / "report.html").is_file()
    assert hyops("stack", "graph", str(stack_file)).returncode == 0
    reconciled = hyops("reconcile", "--stack", str(stack_file), "--json")
    assert reconciled.returncode == 1, reconciled.stdout + reconciled.stderr  # loaded; its plan needs the secret
    assert "'token'" in reconciled.stdout
    assert "s3cret" not in status.stderr + page.stderr + reconciled.stdout + reconciled.stderr


def test_reconcile_takes_a_secret_from_tf_var_as_the_run_did(hyops: Hyops, stack_file: Path) -> None:
    """Issue 45, item 5: rerun.inputs.yml holds the secret as <redacted>; reconcile took that over
    the caller's TF_VAR_ and then advised passing the secret with --var (shell history, CI logs)."""
    secret = {"TF_VAR_token": "s3cret"}
    assert hyops("stack", "apply", str(stack_file), "--auto-approve", env=secret).returncode == 0

    reconciled = hyops("reconcile", "--stack", str(stack_file), env=secret)

    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    assert "--var" not in reconciled.stdout and "s3cret" not in reconciled.stdout + reconciled.stderr


def test_a_stack_apply_without_a_required_input_is_still_refused(hyops: Hyops, stack_file: Path) -> None:
    refused = hyops("stack", "apply", str(stack_file), "--auto-approve")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "'token'" in refused.stderr
