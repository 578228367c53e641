"""Hostile stack files: a clean exit 2 (UsageError) naming the problem, never a traceback,
never a write; what loads is confined to the stack's directory and acyclic."""

from __future__ import annotations

import graphlib
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.main import cli
from hybridops_tf.record.address import validate_ref
from hybridops_tf.stack.loader import load_stack
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import CLI, PURE, deep, json_values

NET_TF = 'variable "name" {\n  type = string\n  default = "n"\n}\n' \
         'resource "terraform_data" "n" {\n  input = var.name\n}\n' \
         'output "network_id" {\n  value = terraform_data.n.id\n}\n'
VM_TF = 'variable "network_id" {\n  type = string\n}\n' \
        'variable "size" {\n  type = string\n  default = "s"\n}\n' \
        'resource "terraform_data" "v" {\n  input = var.network_id\n}\n' \
        'output "vm_id" {\n  value = terraform_data.v.id\n}\n'

NAMES = ["net", "vm", "cfg", "Net", "", "a/b", "net"]
PATHS = ["net", "vm", "./net", "net/", "../outside", "/etc", "~root", "missing", "link-out",
         "empty", "a\x00b", "net/../vm", "."]
member = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.sampled_from(NAMES), json_values),
    "path": st.one_of(st.sampled_from(PATHS), json_values),
    "ref": st.one_of(st.sampled_from(["s/net", "s/vm", "../x", "s/net", "a_/b", "a/_b"]), json_values),
    "depends_on": st.one_of(st.lists(st.sampled_from(NAMES), max_size=3), json_values),
    "inputs": st.one_of(st.dictionaries(st.sampled_from(["size", "name", "nope", "network_id"]),
                                        json_values, max_size=2), json_values),
    "inputs_from": st.one_of(st.dictionaries(st.sampled_from(["network_id", "size", "x"]),
                                             st.sampled_from(["net.network_id", "vm.vm_id", "net.",
                                                              ".x", "nope.y", "net.missing"]),
                                             max_size=2), json_values),
    "owned_by": st.one_of(st.sampled_from(NAMES), json_values),
    "retain_on_destroy": st.one_of(st.booleans(), json_values),
    "workspace": st.one_of(st.sampled_from(["w1", "w2", "../w", ""]), json_values),
    "bogus": json_values,
})
stack_docs = st.one_of(
    st.fixed_dictionaries({"stack": st.one_of(st.sampled_from(["s", "S", "", "a/b"]), json_values),
                           "modules": st.one_of(st.lists(member, max_size=4), json_values)},
                          optional={"extra": json_values}),
    json_values,
)
stack_texts = st.one_of(
    stack_docs.map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.text(max_size=80),
    st.sampled_from(["stack: s\nmodules: [&m {name: net, path: net}, *m]\n",
                     "stack: s\nstack: t\nmodules: []\n", "---\n---\n", "modules: !!set {a}\n"]),
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stackdir")
    for name, text in (("net", NET_TF), ("vm", VM_TF)):
        (root / name).mkdir()
        (root / name / "main.tf").write_text(text)
    (root / "empty").mkdir()
    outside = tmp_path_factory.mktemp("outside")
    (outside / "main.tf").write_text(NET_TF)
    (root / "link-out").symlink_to(outside)
    return root


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (os.lstat(p).st_ino, os.lstat(p).st_mtime_ns) for p in root.rglob("*")}


def _check_loaded(stack, base: Path) -> None:  # noqa: ANN001
    real_base = base.resolve()
    for m in stack.members:
        assert validate_ref(m.module_ref) == m.module_ref
        assert m.directory.resolve().is_relative_to(real_base), m.directory
    graphlib.TopologicalSorter(stack.dependencies()).prepare()
    assert len({m.module_ref for m in stack.members}) == len(stack.members)


@PURE
@given(stack_texts)
@example("stack: s\nmodules:\n  - {name: net, path: net}\n  - {name: vm, path: vm, depends_on: [net],"
         " inputs_from: {network_id: net.network_id}}\n")
@example("stack: s\nmodules: " + deep(50) + "\n")
def test_stack_file_loads_confined_or_is_refused_with_usage_error(base: Path, text: str) -> None:
    note(FUZZ, target="load_stack")
    path = base / "stack.yml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = _tree(base)
    try:
        stack = load_stack(path)
    except UsageError as err:
        assert err.exit_code == 2 and str(path) in err.message
    else:
        _check_loaded(stack, base)
    assert _tree(base) == before, "loading a stack file wrote something"


def test_member_path_with_a_nul_character_is_refused_with_usage_error(base: Path) -> None:
    note(FUZZ, target="load_stack (NUL in path)")
    path = base / "nul-stack.yml"
    path.write_text('stack: s\nmodules:\n  - {name: net, path: "a\\0b"}\n')
    with pytest.raises(UsageError):
        load_stack(path)


def test_stack_file_with_a_control_character_is_refused_with_usage_error(base: Path) -> None:
    note(FUZZ, target="load_stack (control character)")
    path = base / "ctrl-stack.yml"
    path.write_text("stack: s\x1f\nmodules: []\n")
    with pytest.raises(UsageError):
        load_stack(path)


def test_deeply_nested_stack_file_is_refused_with_usage_error(base: Path) -> None:
    note(FUZZ, target="load_stack (deep)")
    path = base / "deep-stack.yml"
    path.write_text("stack: s\nmodules: " + deep(5000) + "\n")
    with pytest.raises(UsageError):
        load_stack(path)


@CLI
@given(stack_texts)
def test_cli_stack_apply_refuses_a_hostile_stack_with_exit_2_and_writes_nothing(
    base: Path, tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    path = base / "cli-stack.yml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_stack(path)
        valid = True
    except UsageError:
        valid = False
    note(FUZZ, target="CLI stack apply/destroy/status/graph", valid=valid)
    if valid:
        return  # it would go on to run members: not this test's business
    root = tmp_path_factory.mktemp("rt")
    before = _tree(root)
    runner = CliRunner()
    for command in (["stack", "apply"], ["stack", "destroy"], ["stack", "status"], ["stack", "graph"]):
        result = runner.invoke(cli, ["--runtime-root", str(root), "--engine", "/nonexistent",
                                     *command, str(path)])
        assert result.exit_code == 2, (command, result.output, result.exc_info)
        assert isinstance(result.exception, SystemExit), result.exc_info
    assert {k: v for k, v in _tree(root).items() if "/cache/" not in k} == \
        {k: v for k, v in before.items() if "/cache/" not in k}
