"""`hyops plan` prints a reviewable diff and honours `--detailed-exitcode` (issue 13, item 1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridops_tf.cli.plan_render import FORCES
from tests.integration.hyops_cli import Hyops


def _lines(out: str) -> list[str]:
    return out.splitlines()


def _head(lines: list[str], address: str) -> str:
    return next(line for line in lines if line.split()[1:2] == [address])


def test_a_pending_create_shows_the_create_and_its_attribute_values(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    out = hyops("plan", "modules/network", "--var", "name=web-net")
    assert out.returncode == 0, out.stderr
    lines = _lines(out.stdout)
    assert _head(lines, "sim_network.this").split()[0] == "+"
    assert '      name: "web-net"' in lines
    assert '      cidr: "10.0.0.0/16"' in lines
    assert "      id: (known after apply)" in lines
    assert "1 to add, 0 to change, 0 to destroy" in lines[-1]


def test_a_changed_network_name_shows_a_replace_with_the_old_and_new_name(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network", "--var", "name=old").returncode == 0
    out = hyops("plan", "modules/network", "--var", "name=new")
    assert out.returncode == 0, out.stderr
    lines = _lines(out.stdout)
    assert _head(lines, "sim_network.this").split()[0] in ("-/+", "+/-")
    (name_line,) = [line for line in lines if line.startswith('      name: "old" -> "new"')]
    (plan_json,) = (hyops.runtime_root / "runs" / "network").glob("plan-*/plan.json")
    (change,) = json.loads(plan_json.read_text())["resource_changes"]
    if change["change"].get("replace_paths"):  # Terraform >= 1.0 and OpenTofu say which forces it
        assert name_line.endswith(FORCES)
    assert any(line.startswith("      id: ") and line.endswith("-> (known after apply)") for line in lines)
    assert "1 to add, 0 to change, 1 to destroy" in lines[-1]


def test_sensitive_input_prints_as_sensitive_and_never_in_clear(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("config")
    secret = "s3cr3t-plan-review-77"
    out = hyops("plan", "modules/config", "--var", "vm_id=vm-12345678", "--var", f"api_token={secret}")
    assert out.returncode == 0, out.stderr
    assert "      secret: (sensitive)" in _lines(out.stdout)
    assert secret not in out.stdout + out.stderr


@pytest.mark.parametrize("spelling", [["--detailed-exitcode"], ["--", "-detailed-exitcode"]])
def test_detailed_exitcode_is_2_with_changes_and_0_without(
    hyops: Hyops, module_copy: Callable[[str], Path], spelling: list[str]
) -> None:
    module_copy("network")
    pending = hyops("plan", "modules/network", *spelling)
    assert pending.returncode == 2, pending.stdout + pending.stderr
    assert _head(_lines(pending.stdout), "sim_network.this").split()[0] == "+"
    assert hyops("apply", "modules/network").returncode == 0
    clean = hyops("plan", "modules/network", *spelling)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "No changes." in _lines(clean.stdout)


def test_without_detailed_exitcode_pending_changes_exit_0(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network").returncode == 0


def test_detailed_exitcode_is_1_when_the_provider_cannot_be_configured(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    module_copy("network")
    faults_file(text="- {type: sim_vm, op: create, mode: explode}\n")
    out = hyops("plan", "modules/network", "--detailed-exitcode")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_detailed_exitcode_is_1_for_an_error_hyops_reports_as_usage(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    plain = hyops("plan", "modules/network", "--var", "nosuchvar=1")
    detailed = hyops("plan", "modules/network", "--var", "nosuchvar=1", "--detailed-exitcode")
    assert plain.returncode == 2, plain.stdout + plain.stderr  # a usage error, as documented
    assert detailed.returncode == 1, detailed.stdout + detailed.stderr
    assert len(detailed.stderr.strip().splitlines()) == 1
