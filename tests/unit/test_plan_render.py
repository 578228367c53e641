"""cli/plan_render: a `show -json` plan document as lines an engineer reviews."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hybridops_tf.cli.plan_render import FORCES, SENSITIVE, UNKNOWN, render_plan
from hybridops_tf.engine.sensitive import redact_sensitive

FIXTURE = Path(__file__).parent.parent / "fixtures" / "terraform-1.0.3" / "show_plan.json"


def _doc(*changes: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"format_version": "0.2", "terraform_version": "1.0.3",
            "resource_changes": list(changes), "output_changes": outputs or {}}


def _rc(address: str, actions: list[str], before: Any, after: Any, **change: Any) -> dict[str, Any]:
    rtype, name = address.split(".")[-2:]
    extra = {k: v for k, v in change.items() if k in ("action_reason", "deposed", "previous_address")}
    body = {k: v for k, v in change.items() if k not in extra}
    return {"address": address, "mode": "data" if actions == ["read"] else "managed", "type": rtype,
            "name": name, **extra,
            "change": {"actions": actions, "before": before, "after": after, "after_unknown": {},
                       "before_sensitive": {}, "after_sensitive": {}, **body}}


def _block(lines: list[str], address: str) -> list[str]:
    """The head line for `address` and its attribute lines."""
    start = next(i for i, line in enumerate(lines) if line.split()[1:2] == [address])
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("      ")), len(lines))
    return lines[start:end]


def test_fixture_plan_shows_creates_with_values_and_a_tainted_replace_with_unknowns() -> None:
    lines = render_plan(redact_sensitive(json.loads(FIXTURE.read_text())))
    config = _block(lines, "module.config.sim_config.this")
    assert config[0].split()[0] == "+"
    assert '      name: "demo-config"' in config
    assert f"      secret: {SENSITIVE}" in config
    assert f"      vm_id: {UNKNOWN}" in config
    vm = _block(lines, "module.vm_a.sim_vm.this")
    assert vm[0].split()[0] == "-/+"
    assert "tainted" in vm[0]
    assert f'      id: "vm-14a2b35b" -> {UNKNOWN}' in vm
    assert not any("module.network.sim_network.this" in line for line in lines)  # a no-op is not shown
    assert f"  + output.vm_ips: {UNKNOWN}" in lines
    assert all(line.isascii() for line in lines)


def test_replace_names_the_attribute_that_forces_it_and_create_before_destroy() -> None:
    rc = _rc("sim_network.this", ["create", "delete"], {"id": "net-1", "name": "old", "cidr": "10.0.0.0/16"},
             {"name": "new", "cidr": "10.0.0.0/16"}, after_unknown={"id": True}, replace_paths=[["name"]],
             action_reason="replace_because_cannot_update")
    lines = render_plan(_doc(rc))
    assert lines[0].split()[:2] == ["+/-", "sim_network.this"]
    assert "create before destroy" in lines[0]
    assert f'      name: "old" -> "new"  {FORCES}' in lines
    assert f'      id: "net-1" -> {UNKNOWN}' in lines
    assert not any(line.strip().startswith("cidr") for line in lines)  # unchanged: not listed


def test_destroy_first_replace_says_so() -> None:
    rc = _rc("sim_vm.this", ["delete", "create"], {"name": "a"}, {"name": "b"}, replace_paths=[["name"]])
    head = render_plan(_doc(rc))[0]
    assert head.split()[0] == "-/+"
    assert "destroy, then create" in head


def test_update_shows_sensitive_and_unknown_attributes_without_the_secret() -> None:
    rc = _rc("sim_config.this", ["update"],
             {"content": "a\n", "secret": "s3cr3t-old", "vm_id": "vm-1", "tags": {"env": "dev", "team": "x"}},
             {"content": "b\n", "secret": "s3cr3t-new", "tags": {"env": "prd", "team": "x"}},
             before_sensitive={"secret": True}, after_sensitive={"secret": True},
             after_unknown={"vm_id": True})
    for doc in (_doc(rc), redact_sensitive(_doc(rc))):
        lines = render_plan(doc)
        assert lines[0].split()[0] == "~"
        assert '      content: "a\\n" -> "b\\n"' in lines
        assert f'      vm_id: "vm-1" -> {UNKNOWN}' in lines
        assert '      tags.env: "dev" -> "prd"' in lines
        assert not any("team" in line for line in lines)
        assert not any("s3cr3t" in line or "redacted" in line for line in lines)
    assert f"      secret: {SENSITIVE} -> {SENSITIVE}" in render_plan(_doc(rc))


def test_a_value_that_becomes_sensitive_is_shown_as_a_change() -> None:
    rc = _rc("sim_config.this", ["update"], {"secret": "plain"}, {"secret": "plain"},
             after_sensitive={"secret": True})
    assert f'      secret: "plain" -> {SENSITIVE}' in render_plan(_doc(rc))


def test_update_whose_only_change_is_masked_says_it_is_in_sensitive_attributes() -> None:
    rc = _rc("sim_config.this", ["update"], {"secret": "a"}, {"secret": "b"},
             before_sensitive={"secret": True}, after_sensitive={"secret": True})
    lines = render_plan(redact_sensitive(_doc(rc)))
    assert len(lines) == 2
    assert SENSITIVE in lines[1]


def test_sensitive_values_inside_lists_are_never_printed() -> None:
    rc = _rc("sim_vm.this", ["update"], {"keys": ["k1"]}, {"keys": ["k1", "topsecret"]},
             after_sensitive={"keys": [False, True]})
    lines = render_plan(_doc(rc))
    assert not any("topsecret" in line for line in lines)
    assert f'      keys: ["k1"] -> ["k1", {SENSITIVE}]' in lines


def test_delete_and_read_are_one_line_each_with_their_reason() -> None:
    gone = _rc("sim_network.old", ["delete"], {"id": "net-9", "name": "old"}, None,
               action_reason="delete_because_no_resource_config")
    read = _rc("data.sim_network.x", ["read"], None, {"name": "x"}, action_reason="read_because_config_unknown")
    lines = render_plan(_doc(gone, read))
    assert len(lines) == 2
    assert lines[0].split()[:2] == ["-", "sim_network.old"]
    assert "no longer in the configuration" in lines[0]
    assert lines[1].split()[:2] == ["<=", "data.sim_network.x"]


def test_moved_and_deposed_objects_say_so() -> None:
    moved = _rc("sim_network.b", ["update"], {"name": "a"}, {"name": "b"}, previous_address="sim_network.a")
    deposed = _rc("sim_vm.this", ["delete"], {"name": "v"}, None, deposed="00ab12")
    lines = render_plan(_doc(moved, deposed))
    assert "moved from sim_network.a" in lines[0]
    assert "deposed object 00ab12" in lines[2]


def test_a_plan_without_changes_says_no_changes() -> None:
    same = _rc("sim_network.this", ["no-op"], {"name": "a"}, {"name": "a"})
    out = {"network_id": {"actions": ["no-op"], "before": "n", "after": "n"}}
    assert render_plan(_doc(same, outputs=out)) == ["No changes."]


def test_sensitive_output_change_is_not_printed() -> None:
    out = {"token": {"actions": ["update"], "before": "old-tok", "after": "new-tok",
                     "before_sensitive": True, "after_sensitive": True}}
    lines = render_plan(_doc(outputs=out))
    assert f"  ~ output.token: {SENSITIVE} -> {SENSITIVE}" in lines
    assert not any("-tok" in line for line in lines)
