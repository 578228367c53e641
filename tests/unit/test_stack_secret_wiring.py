"""Issue 10 case 8: a sensitive upstream output may only be wired (`inputs_from`) into a
variable declared `sensitive = true`; otherwise the stack is refused at validation (exit 2),
one line per problem naming member, input and output. No engine; the real-engine sequence
is tests/integration/test_stack_secrets.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, OperationFailed, UsageError
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.loader import load_stack
from hybridops_tf.stack.wiring import Wiring
from tests.stackfiles import DEMO, write_stack

SIM = Path(__file__).resolve().parents[2] / "modules" / "sim"

# health2 takes config's sensitive api_token_echo in target_id; watch2 does the same in name.
TWO_SECRET_WIRES = DEMO + """\
  - name: health2
    path: health
    workspace: second
    depends_on: [config]
    inputs_from: {target_id: config.api_token_echo}
  - name: health3
    path: health
    workspace: third
    depends_on: [config, vm]
    inputs_from: {name: config.api_token_echo, target_id: vm.vm_id}
"""


@pytest.fixture
def stack_dir(tmp_path: Path) -> Path:
    root = tmp_path / "stack"
    for name in ("network", "vm", "config", "health"):
        shutil.copytree(SIM / name, root / name, ignore=shutil.ignore_patterns(
            ".terraform", ".terraform.lock.hcl", "*.tfstate*"))
    return root


def test_each_sensitive_output_wired_into_a_plain_variable_is_one_line_naming_member_input_output(
    stack_dir: Path,
) -> None:
    with pytest.raises(UsageError) as info:
        load_stack(write_stack(stack_dir, TWO_SECRET_WIRES))

    assert info.value.exit_code == ExitCode.USAGE
    lines = [line for line in info.value.message.splitlines() if "is sensitive" in line]
    assert len(lines) == 2, info.value.message
    first, second = sorted(lines)
    assert "member 'health2': inputs_from.target_id: upstream output config.api_token_echo" in first
    assert "member 'health3': inputs_from.name: upstream output config.api_token_echo" in second
    for line in lines:
        assert "declare it `sensitive = true`" in line
    assert "vm.vm_id" not in info.value.message  # a plain output into a plain variable is fine


def test_the_same_wire_into_a_variable_declared_sensitive_loads(stack_dir: Path) -> None:
    (stack_dir / "health" / "override.tf").write_text(
        'variable "target_id" {\n  sensitive = true\n}\nvariable "name" {\n  sensitive = true\n}\n')

    stack = load_stack(write_stack(stack_dir, TWO_SECRET_WIRES))

    assert stack.member("health2").inputs_from["target_id"].sensitive is True
    assert stack.member("health3").inputs_from["name"].sensitive is True
    assert stack.member("health3").inputs_from["target_id"].sensitive is False


def test_apply_refuses_a_secret_the_record_marks_for_a_plain_variable(
    stack_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An output the HCL calls plain but the upstream's record holds as sensitive (the
    engine's word wins) is not handed to a plain variable either; nothing is read or run."""
    stack = load_stack(write_stack(stack_dir, DEMO))
    wiring = Wiring(stack, Runtime(tmp_path / "runtime"))
    monkeypatch.setattr(Wiring, "_secret", lambda self, wire: pytest.fail("state was read"))

    with pytest.raises(OperationFailed, match=r"network\.network_id is sensitive.*'network_id'.*'vm'"):
        wiring.for_apply(stack.member("vm"), {"network": {"network_id": {"sensitive": True}}})
