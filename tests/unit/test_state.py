"""`show -json` state and `output -json` parsers, and sensitive-value redaction (of states and plans), on
hand-written OpenTofu samples and on documents captured from a real engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.redact import REDACTED
from hybridops_tf.engine.sensitive import redact_sensitive
from hybridops_tf.engine.state import (
    OutputValue,
    StateFormatError,
    outputs_plain,
    parse_outputs,
    parse_state,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TOFU = FIXTURES / "opentofu"
TF103 = FIXTURES / "terraform-1.0.3"
CAPTURED = sorted(
    p for p in FIXTURES.glob("*-*") if p.is_dir() and (p / "show_state.json").exists()
)
ALL_DIRS = [TOFU, *CAPTURED]
TOFU_SECRETS = (
    "hunter2",
    "hunter3",
    "tok-123",
    "tok-456",
    "tok-old",
    "tok-default",
    "old-pass",
    "p@ss",
    "s3cr3t-literal",
    "child-default-secret",
    '"k1"',
    '"k2"',
    '"k00"',
)
DUMMY = "fixture-dummy-token"


def doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


# --- state ------------------------------------------------------------------------------------


def test_state_walks_nested_child_modules_in_order() -> None:
    state = parse_state(doc(TOFU / "show_state.json"))
    assert state.addresses() == [
        "data.sim_image.base",
        "sim_network.main",
        "sim_vm.web",
        'module.app.sim_config.app["web"]',
        "module.app.module.health.sim_health_check.hc[0]",
    ]
    hc = state.get("module.app.module.health.sim_health_check.hc[0]")
    assert hc is not None
    assert (hc.module_address, hc.index, hc.type, hc.name) == (
        "module.app.module.health",
        0,
        "sim_health_check",
        "hc",
    )
    assert state.get('module.app.sim_config.app["web"]').index == "web"  # type: ignore[union-attr]


def test_state_tainted_and_deposed_objects_share_an_address() -> None:
    state = parse_state(doc(TOFU / "show_state.json"))
    web = [r for r in state.resources if r.address == "sim_vm.web"]
    assert [(r.tainted, r.deposed_key, r.values["id"]) for r in web] == [
        (True, None, "vm-new"),
        (False, "0a1b2c3d", "vm-old"),
    ]
    assert [r.address for r in state.tainted] == ["sim_vm.web"]
    assert [r.deposed_key for r in state.deposed] == ["0a1b2c3d"]
    assert state.get("sim_vm.web").values["id"] == "vm-new"  # type: ignore[union-attr]
    assert state.get("nope") is None


def test_state_resource_fields() -> None:
    state = parse_state(doc(TOFU / "show_state.json"))
    data, net = state.resources[0], state.resources[1]
    assert (data.mode, data.is_managed) == ("data", False)
    assert net.provider_name == "registry.opentofu.org/hybridops/sim"
    assert net.values["cidr"] == "10.0.0.0/16" and net.sensitive_values == {"tags": {}}
    assert (net.tainted, net.deposed_key, net.index, net.module_address) == (False, None, None, "")


def test_real_terraform_partial_state_has_tainted_vm_and_no_lost_vm() -> None:
    state = parse_state(doc(TF103 / "show_state_partial.json"))
    assert state.format_version == "0.2" and state.terraform_version == "1.0.3"
    assert [r.address for r in state.tainted] == ["module.vm_a.sim_vm.this"]
    assert "module.vm_b.sim_vm.this" not in state.addresses()
    assert state.get("sim_network.edge[0]").index == 0  # type: ignore[union-attr]
    assert not state.is_empty


def test_real_terraform_state_lists_child_module_resources() -> None:
    state = parse_state(doc(TF103 / "show_state.json"))
    assert set(state.addresses()) == {
        "sim_network.edge[0]",
        "module.config.sim_config.this",
        "module.health.sim_health_check.this",
        "module.network.sim_network.this",
        "module.vm_a.sim_vm.this",
        "module.vm_b.sim_vm.this",
    }
    cfg = state.get("module.config.sim_config.this")
    assert cfg is not None and cfg.sensitive_values == {"secret": True}


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_empty_state_document_parses_as_empty(fixture_dir: Path) -> None:
    state = parse_state(doc(fixture_dir / "show_state_empty.json"))
    assert state.is_empty and state.addresses() == [] and state.outputs == {}


@pytest.mark.parametrize(
    "document",
    [
        {"format_version": "0.2"},
        {"format_version": "1.0", "values": {}},
        {"format_version": "1.0", "values": {"root_module": {}}},
        {
            "format_version": "0.1",
            "values": {
                "root_module": {"resources": [], "child_modules": [{"address": "module.x"}]}
            },
        },
    ],
)
def test_state_without_resources_is_empty(document: dict[str, Any]) -> None:
    assert parse_state(document).is_empty


def test_only_data_sources_left_counts_as_empty_but_outputs_are_kept() -> None:
    state = parse_state(
        {
            "format_version": "1.0",
            "values": {
                "outputs": {"o": {"sensitive": False, "value": 1}},
                "root_module": {
                    "resources": [{"address": "data.x.y", "mode": "data", "type": "x", "name": "y"}]
                },
            },
        }
    )
    assert (
        state.is_empty and state.addresses() == ["data.x.y"] and state.outputs_plain() == {"o": 1}
    )


@pytest.mark.parametrize("version", ["0.1", "0.2", "1.0", "1.2", "1.99"])
def test_supported_format_versions_are_accepted(version: str) -> None:
    assert parse_state({"format_version": version}).format_version == version


@pytest.mark.parametrize("version", ["2.0", "10.1"])
def test_newer_major_format_is_refused_clearly(version: str) -> None:
    with pytest.raises(StateFormatError, match=f"format_version {version} is newer"):
        parse_state({"format_version": version})


@pytest.mark.parametrize(
    "bad", ["not json", "[]", '"x"', {}, {"format_version": 1}, {"format_version": "v1"}, []]
)
def test_unreadable_documents_raise_state_format_error(bad: Any) -> None:
    with pytest.raises(StateFormatError):
        parse_state(bad)
    assert issubclass(StateFormatError, ValueError)


def test_state_parses_from_a_string_too() -> None:
    text = (TOFU / "show_state.json").read_text()
    assert parse_state(text) == parse_state(json.loads(text))


# --- outputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_output_json_marks_sensitive_and_keeps_types(fixture_dir: Path) -> None:
    outputs = parse_outputs(doc(fixture_dir / "output.json"))
    assert outputs["network_id"] == OutputValue(
        sensitive=False, value=outputs["network_id"].value, type="string"
    )
    assert outputs["network_id"].value.startswith("net-")
    secret = next(o for o in outputs.values() if o.sensitive)
    assert secret.value is not None  # `output -json` prints sensitive values


@pytest.mark.parametrize("fixture_dir", ALL_DIRS, ids=lambda p: p.name)
def test_outputs_plain_never_carries_a_sensitive_value(fixture_dir: Path) -> None:
    plain = outputs_plain(parse_outputs(doc(fixture_dir / "output.json")))
    state_plain = parse_state(doc(fixture_dir / "show_state.json")).outputs_plain()
    for values in (plain, state_plain):
        assert {"sensitive": True} in values.values()
        text = json.dumps(values)
        assert DUMMY not in text and "hunter2" not in text
    assert plain == state_plain


def test_empty_output_json_and_odd_entries() -> None:
    assert parse_outputs("{}") == {}
    assert parse_outputs({"x": "not an object"}) == {"x": OutputValue(sensitive=False)}
    with pytest.raises(StateFormatError):
        parse_outputs("[]")


# --- redaction --------------------------------------------------------------------------------


def assert_no_secret(document: Any, secrets: tuple[str, ...]) -> None:
    text = json.dumps(document)
    leaked = [s for s in secrets if s in text]
    assert not leaked, leaked


def test_redacting_opentofu_state_removes_every_sensitive_value_and_nothing_else() -> None:
    original = doc(TOFU / "show_state.json")
    kept = copy.deepcopy(original)
    red = redact_sensitive(original)
    assert original == kept  # input untouched
    assert_no_secret(red, TOFU_SECRETS)
    web = red["values"]["root_module"]["resources"][2]["values"]
    assert web["admin_password"] == REDACTED
    assert web["disks"] == [
        {"size": 10, "encryption_key": REDACTED},
        {"size": 20, "encryption_key": REDACTED},
    ]
    assert web["metadata"] == {"owner": "ops", "token": REDACTED}
    hc = red["values"]["root_module"]["child_modules"][0]["child_modules"][0]["resources"][0]
    assert hc["values"]["secret"] == REDACTED  # sensitive_values {"secret": true}: whole attribute
    assert hc["values"]["target_id"] == "vm-new"
    assert red["values"]["outputs"]["admin_password"]["value"] == REDACTED
    assert red["values"]["outputs"]["tags"]["value"] == {"env": "dev"}
    assert parse_state(red).addresses() == parse_state(original).addresses()


def test_redacting_opentofu_plan_covers_every_place_a_secret_appears() -> None:
    original = doc(TOFU / "show_plan.json")
    assert all(s in json.dumps(original) for s in TOFU_SECRETS)  # the sample does hold them
    red = redact_sensitive(original)
    assert_no_secret(red, TOFU_SECRETS)
    web = red["resource_changes"][2]["change"]
    assert (
        web["before"]["admin_password"] == REDACTED and web["after"]["admin_password"] == REDACTED
    )
    assert web["after"]["disks"][1]["size"] == 20 and web["after"]["name"] == "web"
    assert red["output_changes"]["admin_password"]["before"] == REDACTED
    assert red["output_changes"]["network_id"]["after"] == "net-1a2b"
    assert red["variables"] == {
        "name": {"value": "web"},
        "admin_password": {"value": REDACTED},
        "api_token": {"value": REDACTED},
    }
    cfg = red["configuration"]["root_module"]
    assert cfg["outputs"]["static_secret"]["expression"]["constant_value"] == REDACTED
    assert cfg["variables"]["name"]["default"] == "web"
    assert red["resource_drift"][0]["change"]["after"]["tags"] == {"env": "prod"}
    assert red["planned_values"]["outputs"]["network_id"]["value"] == "net-1a2b"


@pytest.mark.parametrize(
    "name",
    ["show_state.json", "show_state_partial.json", "show_plan.json", "show_plan_refresh_only.json"],
)
def test_redacting_real_terraform_documents_removes_the_dummy_secret(name: str) -> None:
    original = doc(TF103 / name)
    assert DUMMY in json.dumps(original)
    assert_no_secret(redact_sensitive(original), (DUMMY,))


def test_output_changes_in_the_documented_wrapped_form_are_read_and_redacted_too() -> None:
    wrapped = {
        "format_version": "1.2",
        "output_changes": {
            "pw": {
                "change": {
                    "actions": ["create"],
                    "before": None,
                    "after": "s3cr3t",
                    "after_unknown": False,
                    "before_sensitive": False,
                    "after_sensitive": True,
                }
            }
        },
    }
    assert_no_secret(redact_sensitive(wrapped), ("s3cr3t",))


def test_a_whole_sensitive_value_and_shape_mismatches_redact_the_whole_value() -> None:
    change = {
        "actions": ["update"],
        "before": {"a": [1, 2], "b": "x"},
        "after": {"a": "flat"},
        "before_sensitive": True,
        "after_sensitive": {"a": [True, False]},
    }
    red = redact_sensitive({"format_version": "1.0", "resource_changes": [{"change": change}]})
    got = red["resource_changes"][0]["change"]
    assert got["before"] == REDACTED
    assert got["after"] == {"a": REDACTED}  # tree says list, value is a string: mask it all
    res = {
        "address": "x.y",
        "values": {"m": ["k", "v"], "n": None},
        "sensitive_values": {"m": {"k": True}, "n": {"k": True}},
    }
    red = redact_sensitive(
        {"format_version": "1.0", "values": {"root_module": {"resources": [res]}}}
    )
    assert red["values"]["root_module"]["resources"][0]["values"] == {"m": REDACTED, "n": None}


def test_sensitivity_tree_naming_missing_keys_or_indexes_is_harmless() -> None:
    res = {
        "address": "x.y",
        "values": {"l": [1], "m": {}},
        "sensitive_values": {"gone": True, "l": [False, True], "m": {"k": True}, "n": {}},
    }
    red = redact_sensitive(
        {"format_version": "1.0", "values": {"root_module": {"resources": [res]}}}
    )
    assert red["values"]["root_module"]["resources"][0]["values"] == {"l": [1], "m": {}}


def test_non_sensitive_and_false_markers_leave_values_alone() -> None:
    res = {
        "address": "x.y",
        "values": {"l": ["a", "b"], "m": {"k": "v"}},
        "sensitive_values": {"l": [False, False], "m": {}},
    }
    document = {"format_version": "1.0", "values": {"root_module": {"resources": [res]}}}
    assert redact_sensitive(document) == document
