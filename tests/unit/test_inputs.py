"""Inputs: variable discovery with python-hcl2, source precedence, validation, secrets."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.inputs import declarations
from hybridops_tf.inputs.values import (
    EPHEMERAL,
    REDACTED,
    CliInput,
    InputLayer,
    VariableSpec,
    dump_yaml,
    load_inputs_file,
    module_layers,
    parse_var_option,
    parse_var_options,
    read_outputs,
    read_variables,
    redact_argv,
    resolve_inputs,
    split_engine_flags,
)

MODULE_TF = """
variable "network_id" {
  type        = string
  description = "Network to attach to"
}
variable "size" {
  type    = string
  default = "small"
}
variable "tags" {
  type    = map(string)
  default = null
}
variable "password" {
  type      = string
  sensitive = true
}
variable "ports" {
  type    = list(number)
  default = [22, 443]
}
variable "ratio" { default = 1e3 }
output "vm_id" { value = "x" }
output "secret" {
  value     = var.password
  sensitive = true
}
"""


def write_module(directory: Path, files: dict[str, str] | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in ({"main.tf": MODULE_TF} if files is None else files).items():
        (directory / name).write_text(text)
    return directory


def spec(name: str, *, required: bool = False, default: Any = None, sensitive: bool = False,
         type_expr: str | None = "string") -> VariableSpec:
    return VariableSpec(name, required, default, sensitive, type_expr)


@pytest.fixture
def module(tmp_path: Path) -> Path:
    return write_module(tmp_path / "vm")


# --- reading variables -------------------------------------------------------------------

def test_variable_without_default_is_required(module: Path) -> None:
    specs = read_variables(module)
    assert specs["network_id"].required and specs["password"].required
    assert not specs["size"].required and specs["size"].default == "small"


def test_null_default_is_optional_with_none_default(module: Path) -> None:
    tags = read_variables(module)["tags"]
    assert tags.required is False and tags.default is None


def test_sensitive_flag_type_and_description_are_read_unquoted(module: Path) -> None:
    specs = read_variables(module)
    assert specs["password"].sensitive and not specs["size"].sensitive
    assert [specs[n].type_expr for n in ("size", "tags", "ports")] == [
        "string", "map(string)", "list(number)"]
    assert specs["network_id"].description == "Network to attach to"
    assert specs["ports"].default == [22, 443] and specs["ratio"].default == 1000


def test_every_top_level_tf_file_is_read_but_not_subdirectories(tmp_path: Path) -> None:
    root = write_module(tmp_path / "m", {"a.tf": 'variable "a" {}', "b.tf": 'variable "b" {}',
                                         "notes.txt": 'variable "c" {}'})
    write_module(root / "nested", {"x.tf": 'variable "nested" {}'})
    assert sorted(read_variables(root)) == ["a", "b"]


def test_variable_declared_in_two_files_is_usage_error(tmp_path: Path) -> None:
    root = write_module(tmp_path / "m", {"a.tf": 'variable "x" {}', "b.tf": 'variable "x" {}'})
    with pytest.raises(UsageError, match=r"variable 'x' is declared twice \(a.tf and b.tf"):
        read_variables(root)


def test_override_file_merges_into_base_declaration(tmp_path: Path) -> None:
    root = write_module(tmp_path / "m", {
        "a_override.tf": 'variable "x" {\n  default = "over"\n}',
        "main.tf": 'variable "x" {\n  type = string\n}'})
    x = read_variables(root)["x"]
    assert (x.required, x.default, x.type_expr) == (False, "over", "string")


def test_hcl_syntax_error_names_the_file_on_one_line(tmp_path: Path) -> None:
    root = write_module(tmp_path / "m", {"ok.tf": 'variable "a" {}',
                                         "broken.tf": 'variable "x" {\n  default = \n'})
    with pytest.raises(UsageError) as caught:
        read_variables(root)
    assert str(root / "broken.tf") in caught.value.message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("make_dir", [lambda p: p / "missing", lambda p: write_module(p / "e", {})])
def test_directory_without_tf_files_is_usage_error(tmp_path: Path, make_dir: Any) -> None:
    with pytest.raises(UsageError, match="module directory"):
        read_variables(make_dir(tmp_path))


def test_read_outputs_reports_sensitive_flag(module: Path) -> None:
    outputs = read_outputs(module)
    assert {name: o.sensitive for name, o in outputs.items()} == {"vm_id": False, "secret": True}


def test_unquoted_labels_from_older_python_hcl2_are_accepted(
        module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old_shape = {"variable": [{"region": {"type": "${string}", "default": "eu"}},
                              {"key": {"sensitive": True}}]}
    monkeypatch.setattr(declarations, "_parse_hcl", lambda path: old_shape)
    specs = read_variables(write_module(module.parent / "old", {"main.tf": "# old"}))
    assert specs["region"] == VariableSpec("region", False, "eu", False, "string")
    assert specs["key"].required and specs["key"].sensitive


def test_an_ephemeral_variable_is_read_and_its_default_is_kept_off_the_disk_cache(tmp_path: Path) -> None:
    root = write_module(tmp_path / "m", {"main.tf": 'variable "tok" {\n  ephemeral = true\n  default = "d-9f"\n}\n'
                                                    'variable "plain" {}\n'})
    cache = tmp_path / "cache"
    specs = read_variables(root, cache)
    declarations.remember(root, cache)

    assert specs["tok"].ephemeral and not specs["plain"].ephemeral
    assert all("d-9f" not in f.read_text() for f in cache.iterdir())
    declarations._CACHE.clear()
    again = read_variables(root, cache)
    assert again["tok"].ephemeral and again["tok"].default == EPHEMERAL


# --- cache --------------------------------------------------------------------------------

@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = declarations._parse_hcl

    def counting(path: Path) -> dict[str, Any]:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(declarations, "_parse_hcl", counting)
    return calls


def test_unchanged_module_is_parsed_once(module: Path, parse_calls: list[Path]) -> None:
    read_variables(module)
    read_outputs(module)
    read_variables(module)
    assert parse_calls == [module.resolve() / "main.tf"]


def test_changed_file_invalidates_the_cache(module: Path, parse_calls: list[Path]) -> None:
    assert "added" not in read_variables(module)
    tf = module / "main.tf"
    tf.write_text(MODULE_TF + 'variable "added" {}\n')
    stat = tf.stat()
    os.utime(tf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert "added" in read_variables(module)
    assert len(parse_calls) == 2


# --- --var and --inputs -------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("size=large", ("size", "large")),
    ("count=3", ("count", 3)),
    ("enabled=true", ("enabled", True)),
    ("ports=[22, 443]", ("ports", [22, 443])),
    ("tags={a: b}", ("tags", {"a": "b"})),
    ('zone="3"', ("zone", "3")),
    ("note=", ("note", "")),
    ("url=http://x/?a=b", ("url", "http://x/?a=b")),
    ("day=2024-01-02", ("day", "2024-01-02")),
])
def test_var_option_value_is_read_as_yaml(text: str, expected: tuple[str, Any]) -> None:
    assert parse_var_option(text) == expected


@pytest.mark.parametrize("text", ["size", "=large", "1size=x", "my size=x", "tags={a: b"])
def test_bad_var_option_is_usage_error_naming_the_option(text: str) -> None:
    with pytest.raises(UsageError, match="--var"):
        parse_var_option(text)


def test_bad_var_option_never_echoes_the_value() -> None:
    with pytest.raises(UsageError) as caught:
        parse_var_option("password=[hunter2")
    assert "hunter2" not in caught.value.message


def test_inputs_file_is_read_as_mapping(tmp_path: Path) -> None:
    path = tmp_path / "in.yml"
    path.write_text("size: large\ntags: {a: b}\n")
    assert load_inputs_file(path) == {"size": "large", "tags": {"a": "b"}}
    path.write_text("")
    assert load_inputs_file(path) == {}


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "cannot read inputs file"),
    ("size: [large\n", "is not valid YAML"),
    ("- size\n- large\n", "must be a YAML mapping"),
    ("1: one\n", "key 1 is not a string"),
])
def test_bad_inputs_file_is_usage_error_naming_the_file(
        tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "in.yml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError) as caught:
        load_inputs_file(path)
    assert fragment in caught.value.message and str(path) in caught.value.message


# --- resolution ---------------------------------------------------------------------------

SPECS = {n: spec(n, default=f"default-{n}") for n in ("a", "b", "c", "d")}


def test_later_sources_win_over_earlier_ones() -> None:
    resolved = resolve_inputs(SPECS, stack_inputs={"b": "stack", "c": "stack", "d": "stack"},
                              inputs_file={"c": "file", "d": "file"}, var_options={"d": "var"})
    assert resolved.values == {"a": "default-a", "b": "stack", "c": "file", "d": "var"}
    assert resolved.explicit == {"b": "stack", "c": "file", "d": "var"}


@pytest.mark.parametrize("source", ["stack_inputs", "var_options"])
def test_unknown_input_from_a_var_or_the_stack_is_usage_error(source: str) -> None:
    labels = {"stack_source": "stack member vm", "inputs_file_source": "--inputs in.yml",
              "var_source": "--var"}
    label = {"stack_inputs": "stack member vm", "inputs_file": "--inputs in.yml",
             "var_options": "--var"}[source]
    with pytest.raises(UsageError) as caught:
        resolve_inputs(SPECS, **{source: {"x": 1}}, **labels)  # type: ignore[arg-type]
    assert caught.value.message == f"unknown input 'x' in {label} (module declares: a, b, c, d)"


def test_unknown_input_in_a_file_is_a_warning_and_not_passed_on_as_the_engine_does() -> None:
    resolved = resolve_inputs(SPECS, inputs_file={"x": 1, "a": "file"}, inputs_file_source="--inputs in.yml",
                              module_dir="mod")
    assert resolved.explicit == {"a": "file"}
    assert resolved.warnings == ("--inputs in.yml sets 'x', which mod does not declare: ignored, as the engine does",)


def test_missing_required_input_says_how_to_pass_it(module: Path) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_inputs(read_variables(module), module_dir=module, var_options={"password": "p"})
    assert caught.value.message == (f"missing required input 'network_id' for {module}: "
                                    "pass --var network_id=... or add it to --inputs")


def test_redacted_placeholder_is_refused_as_a_value() -> None:
    with pytest.raises(UsageError, match="placeholder"):
        resolve_inputs({"pw": spec("pw", sensitive=True)}, inputs_file={"pw": REDACTED})


@pytest.mark.parametrize(("type_expr", "value"), [("string", [1]), ("string", {"a": "b"}),
                                                  ("number", [1]), ("bool", {})])
def test_a_collection_for_a_primitive_variable_is_refused_before_the_engine(type_expr: str, value: Any) -> None:
    with pytest.raises(UsageError, match="the engine would refuse it"):
        resolve_inputs({"v": spec("v", type_expr=type_expr)}, inputs_file={"v": value})


@pytest.mark.parametrize(("type_expr", "value"), [(None, [1]), (None, {"a": "b"}), ("string", None), (None, None)])
def test_values_a_var_file_carries_as_typed_are_accepted(type_expr: str | None, value: Any) -> None:
    resolved = resolve_inputs({"v": spec("v", type_expr=type_expr)}, inputs_file={"v": value})
    assert resolved.explicit == {"v": value}


# --- the engine's own sources and the command line's order --------------------------------

def test_sources_rank_as_the_engine_ranks_them(tmp_path: Path) -> None:
    """default < TF_VAR_ < terraform.tfvars < terraform.tfvars.json < *.auto.tfvars(.json) in
    lexical order < explicit; only explicit values go into hyops's var file."""
    names = ("a", "b", "c", "d", "e", "f", "g")
    specs = {n: spec(n, default=f"default-{n}") for n in names}
    (tmp_path / "terraform.tfvars").write_text('b = "tfvars"\nc = "tfvars"\nd = "tfvars"\nz = 1\n')
    (tmp_path / "terraform.tfvars.json").write_text('{"c": "tfvars.json", "d": "tfvars.json"}')
    (tmp_path / "b.auto.tfvars.json").write_text('{"d": "b.auto.json", "e": "b.auto.json"}')
    (tmp_path / "a.auto.tfvars").write_text('d = "a.auto"\ne = "a.auto"\n')
    env = {"TF_VAR_a": "env", "TF_VAR_b": "env", "TF_VAR_undeclared": "x"}
    layers = module_layers(tmp_path, specs, env)
    assert [layer.source for layer in layers] == [
        "env", "terraform.tfvars", "terraform.tfvars.json", "a.auto.tfvars", "b.auto.tfvars.json"]
    resolved = resolve_inputs(specs, base_layers=layers, layers=[
        InputLayer("--var", {"f": "var", "e": "var"}), InputLayer("--inputs x.yml", {"f": "file"}, strict=False)])
    assert resolved.values == {"a": "env", "b": "tfvars", "c": "tfvars.json", "d": "b.auto.json",
                               "e": "var", "f": "file", "g": "default-g"}
    assert dict(resolved.sources) == {"a": "env", "b": "terraform.tfvars", "c": "terraform.tfvars.json",
                                      "d": "b.auto.tfvars.json", "e": "--var", "f": "--inputs x.yml"}
    assert resolved.overridden["d"] == ("terraform.tfvars", "terraform.tfvars.json", "a.auto.tfvars")
    assert resolved.explicit == {"e": "var", "f": "file"}
    assert resolved.warnings == ()  # the engine itself warns about z in terraform.tfvars


@pytest.mark.parametrize("where", ["env", "terraform.tfvars", "x.auto.tfvars", "terraform.tfvars.json"])
def test_a_required_variable_set_only_where_the_engine_reads_it_is_not_missing(tmp_path: Path, where: str) -> None:
    specs = {"r": spec("r", required=True)}
    env = {"TF_VAR_r": "from-env"} if where == "env" else {}
    if where != "env":
        (tmp_path / where).write_text('{"r": "v"}' if where.endswith(".json") else 'r = "v"\n')
    resolved = resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, env))
    assert resolved.sources["r"] == where and resolved.var_file() is None


def test_tf_var_text_is_read_as_the_engine_reads_it(tmp_path: Path) -> None:
    """As written for primitive and untyped variables, an HCL expression for the others,
    so a rerun that carries it in the var file gives the engine the same value."""
    specs = {"s": spec("s"), "u": spec("u", type_expr=None), "m": spec("m", type_expr="map(string)"),
             "bad": spec("bad", type_expr="list(string)")}
    env = {"TF_VAR_s": "[1]", "TF_VAR_u": "{a = 1}", "TF_VAR_m": '{ k = "v" }', "TF_VAR_bad": "[oops"}
    (layer,) = module_layers(tmp_path, specs, env)
    assert dict(layer.values) == {"s": "[1]", "u": "{a = 1}", "m": {"k": "v"}, "bad": "[oops"}


def test_a_tf_var_expression_hyops_cannot_read_is_not_kept_for_a_rerun_as_a_string(tmp_path: Path) -> None:
    """TF_VAR_zones='[for z in ["a"] : z]': the engine evaluates it; hyops holds only its text,
    which a rerun's var file would hand the engine as a string (list of string required, exit
    2 on the next destroy). The rerun names it to be given again instead; a literal is kept."""
    specs = {"zones": spec("zones", required=True, type_expr="list(string)"),
             "tags": spec("tags", required=True, type_expr="map(string)"),
             "anything": spec("anything", required=True, type_expr="any")}
    env = {"TF_VAR_zones": '[for z in ["a"] : z]', "TF_VAR_tags": '{ k = "v" }', "TF_VAR_anything": '"x"'}
    resolved = resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, env))

    assert resolved.unevaluated == {"zones"} and resolved.values["zones"] == '[for z in ["a"] : z]'
    assert resolved.rerun_names() == ["anything", "tags"]
    assert "zones: from TF_VAR_zones, an expression hyops does not evaluate" in resolved.rerun_yaml()
    given = resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, env), var_options={"zones": ["b"]})
    assert given.unevaluated == frozenset() and "zones" in given.rerun_names()


def test_a_module_tfvars_hyops_cannot_parse_disables_the_missing_check(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text("r = = 1\n")
    specs = {"r": spec("r", required=True)}
    resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, {}))  # the engine decides


def test_rerun_inputs_hold_explicit_and_env_values_but_not_module_tfvars(tmp_path: Path) -> None:
    specs = {n: spec(n, required=True) for n in ("a", "b", "c")}
    (tmp_path / "terraform.tfvars").write_text('b = "tfvars"\n')
    resolved = resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, {"TF_VAR_a": "env"}),
                              var_options={"c": "var"})
    assert resolved.rerun_inputs() == {"a": "env", "c": "var"}
    text = resolved.rerun_yaml("rerun.inputs.yml of x")
    assert "# a: from env\na: env\n" in text and "# c: from --var\nc: var\n" in text
    path = tmp_path / "rerun.inputs.yml"
    path.write_text(text)
    assert load_inputs_file(path) == {"a": "env", "c": "var"}  # still a plain --inputs file


def test_resolved_yaml_names_each_value_its_source_and_what_it_overrode(tmp_path: Path) -> None:
    import yaml

    specs = {"cidr": spec("cidr"), "pw": spec("pw", required=True, sensitive=True)}
    (tmp_path / "terraform.tfvars").write_text('cidr = "10.1.0.0/16"\n')
    resolved = resolve_inputs(specs, base_layers=module_layers(tmp_path, specs, {}),
                              var_options={"cidr": "10.40.0.0/16", "pw": SECRET})
    text = resolved.resolved_yaml("run x")
    assert SECRET not in text
    assert yaml.safe_load(text) == {
        "cidr": {"value": "10.40.0.0/16", "source": "--var", "overrides": ["terraform.tfvars"]},
        "pw": {"value": REDACTED, "source": "--var"}}


@pytest.mark.parametrize(("passthrough", "inputs", "rest"), [
    (["-var", "x=1", "-target=a"], [CliInput("--var", "x=1", engine_syntax=True)], ["-target=a"]),
    (["-var=x=1", "--var", "y=2"], [CliInput("--var", "x=1", engine_syntax=True),
                                    CliInput("--var", "y=2", engine_syntax=True)], []),
    (["-var-file=f.tfvars", "-parallelism=2", "--var-file", "g.json"],
     [CliInput("--var-file", "f.tfvars"), CliInput("--var-file", "g.json")], ["-parallelism=2"]),
    (["-variable=x"], [], ["-variable=x"]),
])
def test_engine_var_flags_are_taken_out_of_the_passthrough(passthrough: list[str], inputs: list[CliInput],
                                                           rest: list[str]) -> None:
    assert split_engine_flags(passthrough) == (inputs, rest)


def test_an_engine_var_flag_without_its_value_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="needs a value"):
        split_engine_flags(["-target=a", "-var"])


def test_tfvars_and_tfvars_json_files_are_read_by_their_names(tmp_path: Path) -> None:
    hcl = tmp_path / "prod.tfvars"
    hcl.write_text('name = "a\\nb"\ncount = 3\ntags = { k = "v" }\nports = [1, 2]\nflag = true\n')
    assert load_inputs_file(hcl) == {"name": "a\nb", "count": 3, "tags": {"k": "v"}, "ports": [1, 2], "flag": True}
    js = tmp_path / "prod.tfvars.json"
    js.write_text('{"name": "j", "n": null}')
    assert load_inputs_file(js) == {"name": "j", "n": None}


def test_a_tfvars_file_gives_the_value_of_a_constant_expression(tmp_path: Path) -> None:
    hcl = tmp_path / "consts.tfvars"
    hcl.write_text('n = 1 + 2\nl = [2 * 2, -1]\nm = { on = 1 < 2 }\n')
    assert load_inputs_file(hcl) == {"n": 3, "l": [4, -1], "m": {"on": True}}


@pytest.mark.parametrize(("name", "text", "fragment"), [
    ("x.tfvars", "a = = 1\n", "cannot parse"),
    ("x.tfvars", "a = max(1, 2)\n", "an expression hyops does not evaluate"),
    ("x.tfvars.json", "[1]", "must be a JSON object"),
    ("x.tfvars.json", "{", "is not valid JSON"),
])
def test_a_bad_tfvars_file_is_a_usage_error_naming_it(tmp_path: Path, name: str, text: str, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_inputs_file(path)
    assert fragment in caught.value.message and str(path) in caught.value.message


@pytest.mark.parametrize("text", ["a = = 1\n", 'a = "%{if true}x"\n', "a = " + "[" * 5000 + "]" * 5000 + "\n"],
                         ids=["syntax", "unterminated-directive", "too-deep"])
def test_text_python_hcl2_rejects_is_a_syntax_error_to_fix(text: str) -> None:
    from hybridops_tf.inputs.declarations import parse_hcl_text

    with pytest.raises(UsageError) as caught:
        parse_hcl_text(text, "x.tfvars")
    assert "fix the HCL syntax" in caught.value.message and "x.tfvars" in caught.value.message


@pytest.mark.parametrize("failure", [KeyError("rule"), "visit"])
def test_a_python_hcl2_failure_is_not_blamed_on_the_hcl(monkeypatch: pytest.MonkeyPatch, failure: object) -> None:
    import hcl2
    from lark.exceptions import VisitError

    from hybridops_tf.inputs.declarations import parse_hcl_text

    def broken(*args: object, **kwargs: object) -> None:
        raise failure if isinstance(failure, Exception) else VisitError("body", None, AttributeError("x"))

    monkeypatch.setattr(hcl2, "loads", broken)
    with pytest.raises(UsageError) as caught:
        parse_hcl_text("a = 1\n", "x.tfvars")
    assert "python-hcl2" in caught.value.message and "fix the HCL syntax" not in caught.value.message


# --- secrets and encodings ----------------------------------------------------------------

SECRET = "s3cr3t-value"


def test_redacted_and_rerun_inputs_never_contain_the_secret(module: Path) -> None:
    resolved = resolve_inputs(read_variables(module), var_options={
        "network_id": "net-1", "password": SECRET})
    assert resolved.redacted()["password"] == REDACTED
    assert resolved.redacted()["size"] == "small"  # defaults are shown
    assert resolved.rerun_inputs() == {"network_id": "net-1", "password": REDACTED}
    for text in (dump_yaml(resolved.redacted()), dump_yaml(resolved.rerun_inputs())):
        assert SECRET not in text and REDACTED in text


def test_ephemeral_values_are_withheld_like_secrets_and_left_out_of_the_digest() -> None:
    specs = {"tok": VariableSpec("tok", True, ephemeral=True), "pw": spec("pw", sensitive=True), "n": spec("n")}
    first = resolve_inputs(specs, var_options={"tok": SECRET, "pw": "p", "n": "x"})
    rotated = resolve_inputs(specs, var_options={"tok": SECRET + "-next", "pw": "p", "n": "x"})

    assert first.redacted()["tok"] == EPHEMERAL and first.redacted()["pw"] == REDACTED
    assert first.rerun_inputs() == {"tok": EPHEMERAL, "pw": REDACTED, "n": "x"}
    assert SECRET not in first.resolved_yaml() + first.rerun_yaml()
    assert first.digest(b"k" * 32) == rotated.digest(b"k" * 32)  # a new token changes nothing applied
    assert first.var_file(only=first.ephemeral_names) == f'tok = "{SECRET}"\n'
    assert first.set_ephemeral() == ("tok",)
    with pytest.raises(UsageError, match="placeholder '<ephemeral>'"):
        resolve_inputs(specs, inputs_file={"tok": EPHEMERAL, "pw": "p"})


def test_var_file_holds_every_explicit_input_as_hcl_that_parses_back() -> None:
    from hcl2 import loads
    from hcl2.utils import SerializationOptions

    specs = {"s": spec("s"), "m": spec("m", type_expr="any"), "pw": spec("pw", sensitive=True)}
    values = {"s": 'net ${x} %{y} "q"', "m": {"list": [1, 2.5, True, None, "t\tb\b"], "k-1": {"a": "b"}},
              "pw": SECRET}
    resolved = resolve_inputs(specs, var_options=values)
    text = resolved.var_file()
    assert text is not None
    parsed = loads(text, serialization_options=SerializationOptions(strip_string_quotes=True))
    assert parsed["s"] == 'net $${x} %%{y} "q"'  # escaped template markers: the engine reads them literally
    assert parsed["m"] == values["m"] and parsed["pw"] == SECRET
    assert resolve_inputs(specs).var_file() is None


def test_var_file_values_with_escapes_parse_back_to_the_same_value() -> None:
    from hcl2 import loads
    from hcl2.utils import SerializationOptions

    value = {"list": [1, 2.5, True, None, 'tab\t "q" \\ \b\n'], "map": {"k": "v"}}
    resolved = resolve_inputs({"v": spec("v", type_expr="any")}, var_options={"v": value})
    text = resolved.var_file()
    assert text is not None
    assert loads(text, serialization_options=SerializationOptions(strip_string_quotes=True))[
        "v"] == value


def test_digest_ignores_order_and_changes_with_any_value() -> None:
    specs = {"a": spec("a", type_expr="number"), "b": spec("b", type_expr="map(number)")}
    first = resolve_inputs(specs, var_options={"a": 1, "b": {"x": 1, "y": 2}})
    reordered = resolve_inputs(specs, var_options={"b": {"y": 2, "x": 1}, "a": 1})
    changed = resolve_inputs(specs, var_options={"a": 2, "b": {"x": 1, "y": 2}})
    key = b"k" * 32
    assert first.digest(key) == reordered.digest(key) != changed.digest(key)
    assert first.digest(key).startswith("hmac-sha256:v1:") and len(first.digest(key)) == 15 + 64


@pytest.mark.parametrize(("argv", "expected"), [
    (["--var", "password=x", "--var", "size=big"],
     ["--var", f"password={REDACTED}", "--var", "size=big"]),
    (["--var=password=x=y"], [f"--var=password={REDACTED}"]),
    (["--", "-var", "password=x", "-var=password=y", "-target=a"],
     ["--", "-var", f"password={REDACTED}", f"-var=password={REDACTED}", "-target=a"]),
    (["--inputs", "password=x"], ["--inputs", "password=x"]),
])
def test_redact_argv_hides_sensitive_var_values(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv, {"password"}) == expected


def test_redact_argv_withholds_an_ephemeral_value_as_ephemeral() -> None:
    argv = ["--var", "tok=x", "--", "-var=pw=y", "-var", "n=z"]
    assert redact_argv(argv, {"pw", "tok"}, {"tok"}) == [
        "--var", f"tok={EPHEMERAL}", "--", f"-var=pw={REDACTED}", "-var", "n=z"]


def test_redact_every_var_hides_each_var_value_and_nothing_else() -> None:
    from hybridops_tf.base.redact import redact_every_var

    argv = ["reconcile", "--var", "a=1", "--var=b=2", "--inputs", "c=3", "--", "-var", "d = 4", "-var"]
    assert redact_every_var(argv) == ["reconcile", "--var", f"a={REDACTED}", f"--var=b={REDACTED}",
                                      "--inputs", "c=3", "--", "-var", f"d ={REDACTED}", "-var"]


def test_dump_yaml_is_sorted_and_stable() -> None:
    assert dump_yaml({"b": 1, "a": {"d": 2, "c": [1]}}) == "a:\n  c:\n  - 1\n  d: 2\nb: 1\n"


VAR_SPECS = {
    "country": VariableSpec("country", required=True, type_expr="string"),
    "label": VariableSpec("label", required=True),  # untyped: the engine reads text
    "enabled": VariableSpec("enabled", required=True, type_expr="bool"),
    "count": VariableSpec("count", required=True, type_expr="number"),
    "tags": VariableSpec("tags", required=True, type_expr="list(string)"),
}


@pytest.mark.parametrize(("option", "expected"), [
    ("country=NO", "NO"),  # YAML 1.1 would say false
    ("country=0755", "0755"),  # ... 493
    ("country=1e3", "1e3"),
    ("country='yes'", "yes"),  # quoted YAML stays YAML
    ("label=off", "off"),
    ("enabled=yes", True),  # a bool variable keeps YAML's reading
    ("enabled=false", False),
    ("count=0755", 755),  # the engine's reading of the text (YAML 1.1 would say 493)
    ("tags=[a, NO]", ["a", False]),  # collections stay YAML: quote inside them
    ("country=", ""),
    ("country=~", "~"),  # YAML's null: the engine takes the text (issue 43)
    ("label=null", "null"),
    ('tags=["$${x}", "b"]', ["${x}", "b"]),  # HCL, as the engine reads it: the escape decoded
    ('tags=["a"] ', ["a"]),
])
def test_var_text_reaches_string_and_untyped_variables_as_written(option: str, expected: object) -> None:
    name = option.partition("=")[0]

    assert parse_var_options([option], VAR_SPECS) == {name: expected}


@pytest.mark.parametrize(("option", "expected"), [
    ('country="NO"', '"NO"'),  # the engine's -var keeps the quotes
    ("country=~", "~"),
    ("enabled=true", True),
    ("enabled=yes", "yes"),  # the engine converts (and here refuses) the text itself
    ("count=12", 12),
])
def test_the_engines_own_var_after_the_separator_is_read_as_the_engine_reads_it(option: str,
                                                                                 expected: object) -> None:
    name = option.partition("=")[0]

    assert parse_var_options([option], VAR_SPECS, engine_syntax=True) == {name: expected}
