"""Hostile inputs YAML and `--var` values: a clean exit 2 (UsageError), never a traceback,
never a write, never a secret echoed; what is accepted can really reach the engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.main import cli
from hybridops_tf.inputs.values import VariableSpec, load_inputs_file, parse_var_option, resolve_inputs
from hybridops_tf.operation import run_inputs
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.runtime.root import Runtime
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import CLI, PURE, deep, json_values

MODULE_TF = """
variable "size" {
  type = string
}
variable "tags" {
  type    = map(string)
  default = {}
}
variable "token" {
  type      = string
  sensitive = true
  default   = ""
}
resource "terraform_data" "x" {
  input = var.size
}
"""
MARKER = "Zq7S3CRETmarker"

yaml_texts = st.one_of(
    st.text(max_size=80),
    json_values.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
    st.dictionaries(st.sampled_from(["size", "tags", "token", "nope", "Size", "1"]), json_values,
                    max_size=4).map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
    st.sampled_from(["a: &x [1]\nb: *x\n", "!!python/object:os.system x", "a: !!binary AAAA",
                     "? [1, 2]\n: x\n", "size: .nan\n", "size: 2001-12-14\n", "--- 1\n--- 2\n",
                     "size: !!set {a}\n", "%TAG ! x\n---\n", "\ufeffsize: x\n"]),
)


@PURE
@given(st.one_of(yaml_texts, st.binary(max_size=80)))
@example(b"\xff\xfe\x00")
@example("size: [" + deep(50) + "]")
def test_inputs_file_loads_or_refuses_with_usage_error(tmp_path_factory: pytest.TempPathFactory,
                                                       content: str | bytes) -> None:
    note(FUZZ, target="load_inputs_file")
    path = tmp_path_factory.mktemp("inputs") / "in.yml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    try:
        data = load_inputs_file(path)
    except UsageError as err:
        assert err.exit_code == 2 and "Traceback" not in err.message
        return
    assert isinstance(data, dict) and all(isinstance(k, str) for k in data)


@PURE
@given(st.text(max_size=60))
@example("size=" + deep(10))
@example("=x")
@example("size")
@example("size=*alias")
@example("size=!!python/name:os.system")
def test_var_option_parses_or_refuses_with_usage_error(text: str) -> None:
    note(FUZZ, target="parse_var_option")
    try:
        name, _value = parse_var_option(text)
    except UsageError as err:
        assert err.exit_code == 2
        return
    assert name and "=" not in name


@PURE
@given(st.text(max_size=40), st.sampled_from(["", "*", "!", "&", "%", "@", "`", "{", "[", "|", ">",
                                              "'", '"', "? ", "- ", "a: ", "!!str "]))
@example("x", "*")  # one failing example: hypothesis then reports it alone
def test_refused_var_value_never_appears_in_the_message(tail: str, lead: str) -> None:
    note(FUZZ, target="--var error message never echoes the value")
    value = f"{lead}{MARKER}{tail}"
    try:
        parse_var_option(f"token={value}")
    except UsageError as err:
        assert MARKER not in err.message, err.message




@pytest.mark.parametrize("where", ["var", "file"])
def test_deeply_nested_value_is_a_usage_error(tmp_path: Path, where: str) -> None:
    note(FUZZ, target=f"deep {where}")
    with pytest.raises(UsageError):
        if where == "var":
            parse_var_option("tags=" + deep(5000))
        else:
            path = tmp_path / "deep.yml"
            path.write_text("tags: " + deep(5000) + "\n")
            load_inputs_file(path)


SPECS = {
    "size": VariableSpec("size", required=True, type_expr="string"),
    "tags": VariableSpec("tags", required=False, default={}, type_expr="map(string)"),
    "token": VariableSpec("token", required=False, default="", sensitive=True, type_expr="string"),
    "anything": VariableSpec("anything", required=False, type_expr="any"),
}


@PURE
@given(st.dictionaries(st.sampled_from(sorted(SPECS) + ["nope"]), json_values, max_size=4),
       st.dictionaries(st.sampled_from(sorted(SPECS)), json_values, max_size=3))
@example({"size": "a\x00b"}, {})
def test_accepted_inputs_can_travel_to_the_engine_in_the_var_file(file_values: dict, var_values: dict) -> None:
    note(FUZZ, target="resolve_inputs -> var file")
    try:
        resolved = resolve_inputs(SPECS, inputs_file=file_values, var_options=var_values)
    except UsageError:
        return
    text = resolved.var_file()
    assert (text is None) is (not resolved.explicit)
    assert text is None or "\x00" not in text, "control characters are escaped, never raw"
    if "token" in resolved.explicit:
        assert resolved.redacted()["token"] == "<redacted>"




# ----- through the CLI: exit 2, no traceback, runtime root unchanged -----------------------


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for path in [root, *root.rglob("*")]:
        st_ = os.lstat(path)
        out[str(path)] = (st_.st_ino, st_.st_mtime_ns, st_.st_size)
    return out


@pytest.fixture
def cli_module(tmp_path: Path) -> tuple[Path, Path]:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(MODULE_TF)
    root = tmp_path / "runtime"
    run_inputs.resolve(Runtime(root), ModuleTarget(module, "fuzz"), None, ["size=warm"], None)  # warm cache
    return module, root


def _invoke(root: Path, args: list[str]) -> object:
    return CliRunner().invoke(cli, ["--runtime-root", str(root), "--engine", "/nonexistent-engine", *args],
                              catch_exceptions=True)


@CLI
@given(yaml_texts, st.lists(st.text(max_size=30), max_size=3))
@example("size: x\nnope: 1\n", [])
@example("", ["size"])
@example("", [f"token=*{MARKER}"])
def test_cli_refuses_hostile_inputs_with_exit_2_and_writes_nothing(
    cli_module: tuple[Path, Path], tmp_path: Path, content: str, var_values: list[str]
) -> None:
    module, root = cli_module
    inputs = tmp_path / "hostile.yml"
    inputs.write_text(content, encoding="utf-8", errors="surrogatepass")
    try:
        run_inputs.resolve(Runtime(root), ModuleTarget(module, "fuzz"), inputs, var_values, None)
    except UsageError:
        valid = False
    else:
        valid = True
    note(FUZZ, target="CLI apply --inputs/--var", valid=valid)
    if valid:
        return  # it would go on to lock and run the engine: not this test's business
    before = _tree(root)
    args = ["apply", str(module), "--ref", "fuzz", "--inputs", str(inputs)]
    for v in var_values:
        args += ["--var", v]
    result = _invoke(root, args)
    assert result.exit_code == 2, (result.output, result.exception)  # type: ignore[attr-defined]
    assert isinstance(result.exception, SystemExit), result.exc_info  # type: ignore[attr-defined]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]
    assert _tree(root) == before, "a refused input changed the runtime root"


def test_refused_input_on_a_fresh_machine_leaves_no_runtime_root(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text(MODULE_TF)
    root = tmp_path / "fresh-runtime"
    result = _invoke(root, ["apply", str(module), "--ref", "fuzz", "--var", "nope=1"])
    note(FUZZ, target="CLI refused input, fresh runtime root")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert not root.exists(), sorted(str(p) for p in root.rglob("*"))
