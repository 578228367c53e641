"""The reconcile evidence builders (reconcile_builders.py) build what the engine's parsers build."""

from __future__ import annotations

from tests.unit.reconcile_builders import state


def test_the_state_builder_gives_what_the_show_json_parser_gives() -> None:
    snap = state("sim_network.this", "sim_vm.vm[0]", tainted=["sim_vm.vm[0]"], outputs={"id": "n-1"})

    assert snap.addresses() == ["sim_network.this", "sim_vm.vm[0]"]
    assert [r.address for r in snap.tainted] == ["sim_vm.vm[0]"]
    assert snap.outputs_plain() == {"id": "n-1"}
    assert not snap.is_empty and state().is_empty
