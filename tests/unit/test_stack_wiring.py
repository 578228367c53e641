"""stack/wiring.py: which values a member's run receives (docs/contract.md: Inputs, Stacks). Apply takes only
the outputs of upstreams that succeeded; a sensitive one is marked so it is redacted;
destroy takes what the member was built with, then its upstreams' recorded outputs, and
never invents a value. No engine: the records and rerun files are written here."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import OperationFailed
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.stack.model import Member, Stack, Wire
from hybridops_tf.stack.wiring import Wiring
from hybridops_tf.store.local import RecordStore

SIM = Path(__file__).resolve().parents[2] / "modules" / "sim"


@pytest.fixture
def stack(tmp_path: Path) -> Stack:
    for name in ("network", "vm"):
        shutil.copytree(SIM / name, tmp_path / name, ignore=shutil.ignore_patterns(".terraform*", "*.tfstate*"))
    return Stack("demo", tmp_path / "stack.yml", (
        Member(name="network", directory=tmp_path / "network", module_ref="demo/network"),
        Member(name="vm", directory=tmp_path / "vm", module_ref="demo/vm", depends_on=("network",),
               inputs={"size": "small"}, inputs_from={"network_id": Wire("network", "network_id")}),
    ))


@pytest.fixture
def wiring(stack: Stack, tmp_path: Path) -> Wiring:
    return Wiring(stack, Runtime(tmp_path / "runtime"))


def record(root: Path, ref: str, status: Status, **fields: Any) -> None:
    rec = OperationRecord(ref, status, "apply-1")
    for key, value in fields.items():
        setattr(rec, key, value)
    RecordStore(root).write(rec)


def test_apply_wires_the_upstream_output_and_keeps_stack_inputs(wiring: Wiring, stack: Stack) -> None:
    wired = wiring.for_apply(stack.member("vm"), {"network": {"network_id": "net-1", "cidr": "x"}})

    assert wired.values == {"size": "small", "network_id": "net-1"}
    assert wired.sensitive == frozenset()


def test_apply_refuses_when_the_upstream_reported_no_such_output(wiring: Wiring, stack: Stack) -> None:
    with pytest.raises(OperationFailed, match="finished without output 'network_id'"):
        wiring.for_apply(stack.member("vm"), {"network": {}})


def test_a_sensitive_upstream_output_is_not_taken_from_the_report_but_fetched_and_marked_sensitive(
    wiring: Wiring, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fetch itself (the upstream's state, through the engine) is stood in for here; the
    # real read is tests/integration/test_stack_secrets.py
    monkeypatch.setattr(Wiring, "_secret", lambda self, wire: "fetched")
    (stack.member("vm").directory / "override.tf").write_text(
        'variable "network_id" {\n  sensitive = true\n}\n')

    wired = wiring.for_apply(stack.member("vm"), {"network": {"network_id": {"sensitive": True}}})

    assert wired.values["network_id"] == "fetched"
    assert wired.sensitive == frozenset({"network_id"})


def test_destroy_wires_from_the_upstream_record(wiring: Wiring, stack: Stack, tmp_path: Path) -> None:
    record(tmp_path / "runtime", "demo/network", Status.OK, outputs={"network_id": "net-live"})

    assert wiring.for_destroy(stack.member("vm")).values == {"size": "small", "network_id": "net-live"}


def test_destroy_uses_previous_outputs_of_a_destroyed_upstream(wiring: Wiring, stack: Stack,
                                                               tmp_path: Path) -> None:
    record(tmp_path / "runtime", "demo/network", Status.DESTROYED, previous_outputs={"network_id": "net-old"})

    assert wiring.for_destroy(stack.member("vm")).values["network_id"] == "net-old"


def test_destroy_prefers_what_the_member_was_built_with(wiring: Wiring, stack: Stack, tmp_path: Path) -> None:
    root = tmp_path / "runtime"
    record(root, "demo/network", Status.OK, outputs={"network_id": "net-new"})
    rerun = Runtime(root).rerun_inputs_path("demo/vm")
    rerun.parent.mkdir(parents=True)
    rerun.write_text("network_id: net-built\nsize: large\nremoved_variable: 1\nname: <redacted>\n")

    values = wiring.for_destroy(stack.member("vm")).values

    assert values == {"network_id": "net-built", "size": "large"}


def test_destroy_never_invents_a_required_input(wiring: Wiring, stack: Stack) -> None:
    with pytest.raises(OperationFailed) as info:
        wiring.for_destroy(stack.member("vm"))

    assert "no value for required input(s) network_id" in info.value.message
    assert "the record of 'network' holds no output 'network_id'" in info.value.message
