"""stack/loader.py: every invalid stack is exit 2 naming the line, member and field, before
anything runs; a valid one becomes a typed Stack (docs/contract.md: Stacks). No engine needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.stack.loader import load_stack
from hybridops_tf.stack.model import Stack, Wire
from tests.stackfiles import DEMO as VALID
from tests.stackfiles import write_stack

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "modules" / "sim"


@pytest.fixture
def stack_dir(tmp_path: Path) -> Path:
    root = tmp_path / "stack"
    for name in ("network", "vm", "config", "health"):
        shutil.copytree(SIM / name, root / name, ignore=shutil.ignore_patterns(
            ".terraform", ".terraform.lock.hcl", "*.tfstate*"))
    return root


def invalid(stack_dir: Path, text: str) -> str:
    with pytest.raises(UsageError) as info:
        load_stack(write_stack(stack_dir, text))
    assert info.value.exit_code == ExitCode.USAGE
    return info.value.message


def test_a_valid_stack_loads_with_refs_wires_and_ownership(stack_dir: Path) -> None:
    stack = load_stack(write_stack(stack_dir, VALID))

    assert isinstance(stack, Stack)
    assert stack.names == ["network", "vm", "config", "health"]
    vm = stack.member("vm")
    assert vm.module_ref == "demo/vm"
    assert vm.directory == (stack_dir / "vm").resolve()
    assert vm.inputs == {"size": "small"}
    assert vm.inputs_from == {"network_id": Wire("network", "network_id", sensitive=False)}
    assert stack.member("config").owned_by == "vm"


def test_the_example_stack_in_the_repo_is_valid() -> None:
    stack = load_stack(SIM / "stack.yml")

    assert stack.name == "demo"
    assert stack.names == ["network", "vm", "config", "health"]


def test_a_wire_from_a_sensitive_output_is_marked_sensitive(stack_dir: Path) -> None:
    (stack_dir / "health" / "override.tf").write_text('variable "target_id" {\n  sensitive = true\n}\n')
    stack = load_stack(write_stack(stack_dir, VALID + """\
  - name: health2
    path: health
    workspace: second
    depends_on: [config]
    inputs_from: {target_id: config.api_token_echo}
"""))

    assert stack.member("health2").inputs_from["target_id"].sensitive is True


def test_an_explicit_ref_is_used(stack_dir: Path) -> None:
    stack = load_stack(write_stack(stack_dir, """\
        stack: demo
        modules:
          - {name: network, path: network, ref: platform/network}
    """))

    assert stack.member("network").module_ref == "platform/network"


def test_an_unknown_depends_on_names_the_member_field_and_line(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("depends_on: [network]", "depends_on: [netwerk]"))

    assert "line 7: member 'vm': depends_on names unknown member 'netwerk'" in message
    assert "nothing was run" in message


def test_a_cycle_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("    path: network\n",
                                               "    path: network\n    depends_on: [health]\n"))

    assert "depends_on forms a cycle" in message
    assert "network" in message and "health" in message


def test_a_missing_path_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("path: health", "path: healthz"))

    assert "line 16: member 'health': path 'healthz'" in message
    assert "does not exist" in message


def test_an_output_the_upstream_does_not_declare_is_refused_with_its_line(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("network.network_id", "network.net_id"))

    assert ("line 9: member 'vm': inputs_from.network_id: upstream 'network' declares no output "
            "'net_id' (it declares: cidr, network_id)") in message


def test_a_wire_from_a_member_not_in_depends_on_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("inputs_from: {target_id: vm.vm_id}",
                                               "inputs_from: {target_id: network.network_id}"))

    assert "member 'health': inputs_from.target_id: 'network' must also be in depends_on" in message


def test_an_input_the_module_does_not_declare_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("{size: small}", "{sise: small}"))

    assert "member 'vm': inputs.sise: the module declares no variable 'sise'" in message


def test_a_required_input_nobody_sets_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("    inputs_from: {vm_id: vm.vm_id}\n", ""))

    assert "member 'config': required input(s) 'vm_id' set by neither inputs nor inputs_from" in message


def test_a_value_the_engine_would_misread_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("{size: small}", "{size: [small]}"))

    assert "input 'size'" in message and "is a list" in message


def test_duplicate_names_are_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID + "  - {name: vm, path: vm, workspace: two, "
                      "depends_on: [network], inputs_from: {network_id: network.network_id}}\n")

    assert "member 'vm': duplicate name (first at line 5)" in message


def test_two_members_on_one_directory_need_distinct_workspaces(stack_dir: Path) -> None:
    text = VALID + "  - {name: network2, path: network%s}\n"

    message = invalid(stack_dir, text % "")
    stack = load_stack(write_stack(stack_dir, text % ", workspace: blue"))

    assert "member 'network2': same module directory as 'network' without a distinct `workspace:`" in message
    assert stack.member("network2").workspace == "blue"


@pytest.mark.parametrize("path", ["../elsewhere", "network/../../x", "/etc", "~/modules"])
def test_paths_that_leave_the_stack_directory_are_refused(stack_dir: Path, path: str) -> None:
    message = invalid(stack_dir, VALID.replace("path: network\n", f"path: {path!r}\n", 1))

    assert f"member 'network': path {path!r} must" in message


def test_a_symlink_out_of_the_stack_directory_is_refused(stack_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(stack_dir / "network", outside)
    (stack_dir / "escape").symlink_to(outside)

    message = invalid(stack_dir, VALID.replace("path: network\n", "path: escape\n", 1))

    assert "member 'network': path 'escape' leads outside the stack file's directory" in message


def test_a_symlink_inside_the_stack_directory_is_allowed(stack_dir: Path) -> None:
    (stack_dir / "net-link").symlink_to(stack_dir / "network")

    stack = load_stack(write_stack(stack_dir, VALID.replace("path: network\n", "path: net-link\n", 1)))

    assert stack.member("network").directory == (stack_dir / "network").resolve()


def test_an_invalid_ref_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("path: network\n", "path: network\n    ref: Bad/../Ref\n", 1))

    assert "invalid module ref 'Bad/../Ref'" in message


def test_two_members_with_one_ref_are_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("path: network\n", "path: network\n    ref: demo/vm\n", 1))

    assert "ref 'demo/vm' is also member" in message


def test_owned_by_must_be_an_upstream(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("owned_by: vm", "owned_by: network"))

    assert "member 'config': owned_by 'network' must also be in depends_on" in message


def test_an_unknown_field_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("depends_on: [network]", "depend_on: [network]"))

    assert "member 'vm': unknown field 'depend_on'" in message


def test_a_key_written_twice_is_refused(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("    path: vm\n", "    path: vm\n    path: vm\n"))

    assert "path: written twice in one mapping" in message


def test_every_problem_is_reported_at_once(stack_dir: Path) -> None:
    message = invalid(stack_dir, VALID.replace("[network]", "[netwerk]").replace("path: health",
                                                                                 "path: nope"))

    assert "netwerk" in message and "'nope'" in message


@pytest.mark.parametrize(("text", "expected"), [
    ("stack: demo\nmodules: [\n", "is not valid YAML"),
    ("- just\n- a list\n", "must be a mapping"),
    ("stack: demo\nmodules: []\n", "a non-empty list of members"),
    ("stack: Demo!\nmodules:\n  - {name: network, path: network}\n", "stack: a name is required"),
    ("stack: demo\nmodules:\n  - {path: network}\n", "name is required"),
    ("stack: demo\nmodules:\n  - {name: network}\n", "path is required"),
    ("stack: demo\nextra: 1\nmodules:\n  - {name: network, path: network}\n", "unknown top-level field"),
])
def test_malformed_stack_files_are_refused(stack_dir: Path, text: str, expected: str) -> None:
    assert expected in invalid(stack_dir, text)


@pytest.mark.parametrize("name", ["..", "."])
def test_a_stack_name_of_only_dots_is_refused(stack_dir: Path, name: str) -> None:
    # explicit refs, so only the name itself can refuse: its report would land at
    # <root>/stacks/<name>/latest.json, i.e. outside <root>/stacks/
    message = invalid(stack_dir, f'stack: "{name}"\nmodules:\n'
                                 "  - {name: network, path: network, ref: demo/network}\n")

    assert "stack: a name is required" in message


def test_a_missing_stack_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        load_stack(tmp_path / "stack.yml")

    assert "cannot read stack file" in info.value.message


@pytest.mark.parametrize("text", [
    "stack: demo\nmodules:\n  - {name: vm, path: vm, inputs: {password: *hunter2secret}}\n",
    "stack: demo\nmodules:\n  - {name: vm, path: vm, inputs: {password: !hunter2secret x}}\n",
])
def test_a_yaml_error_never_quotes_what_it_read(stack_dir: Path, text: str) -> None:
    message = invalid(stack_dir, text)

    assert "is not valid YAML" in message and "line 3" in message
    assert "hunter2secret" not in message
