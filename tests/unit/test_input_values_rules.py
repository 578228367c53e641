"""Rules of inputs/values.py that `make mutation` (scripts/mutation.py) found unguarded, each in
the fixture where it alone decides: the value and kind each source gives a variable, what a run's
inputs files hold and in which form, what is withheld, and the one-line refusal of bad input
(naming the source and the fix, never the value)."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.numbers import Number
from hybridops_tf.inputs.sources import MAX_VALUES, plain_value
from hybridops_tf.inputs.values import (
    EPHEMERAL,
    REDACTED,
    InputLayer,
    MissingInputError,
    ResolvedInputs,
    StackInputs,
    VariableSpec,
    dump_yaml,
    load_inputs_file,
    module_layers,
    parse_var_options,
    resolve_inputs,
    split_engine_flags,
)


def _spec(name: str, type_expr: str | None, **kw: Any) -> VariableSpec:
    return VariableSpec(name, required=False, type_expr=type_expr, **kw)


def test_a_var_for_a_collection_is_read_as_hcl_up_to_its_first_equals_sign_and_each_var_counts() -> None:
    specs = {"tags": _spec("tags", "map(string)"), "note": _spec("note", "string")}

    got = parse_var_options(['tags={a = "x=y"}', "note=a=b"], specs)

    assert got == {"tags": {"a": "x=y"}, "note": "a=b"}


def test_a_quoted_number_for_a_number_variable_is_the_number_inside_the_quotes() -> None:
    assert parse_var_options(['n="5"'], {"n": _spec("n", "number")}) == {"n": 5}


def test_the_engines_own_var_of_true_or_false_for_a_bool_variable_is_a_bool_and_other_text_stays_text() -> None:
    specs = {"b": _spec("b", "bool"), "c": _spec("c", "bool")}

    assert parse_var_options(["b=false", "c=NO"], specs, engine_syntax=True) == {"b": False, "c": "NO"}
    assert parse_var_options(["b=true"], specs, engine_syntax=True) == {"b": True}


def test_tf_var_text_is_a_number_only_for_a_number_variable() -> None:
    specs = {"n": _spec("n", "number"), "s": _spec("s", "string"), "t": _spec("t", None)}
    env = {"TF_VAR_n": "1e400", "TF_VAR_s": "007", "TF_VAR_t": "5"}

    [layer] = module_layers(Path("/nonexistent"), specs, environ=env)

    assert isinstance(layer.values["n"], Number) and layer.values["n"].text == "1e400"
    assert layer.values["s"] == "007" and layer.values["t"] == "5"


def test_an_empty_json_inputs_file_gives_no_values(tmp_path: Path) -> None:
    path = tmp_path / "in.tfvars.json"
    path.write_text("  \n")

    assert load_inputs_file(path) == {}


def test_stack_inputs_are_the_values_with_their_sources_apart() -> None:
    sources = {"id": "inputs_from network.id"}
    got = StackInputs({"id": "n-1", "size": 2}, sources)
    sources["size"] = "changed later"

    assert dict(got) == {"id": "n-1", "size": 2} and got.sources == {"id": "inputs_from network.id"}


def test_a_secret_is_withheld_as_redacted_an_ephemeral_value_as_ephemeral_and_others_not() -> None:
    resolved = ResolvedInputs(values={}, explicit={}, sensitive_names=frozenset({"pw"}),
                              ephemeral_names=frozenset({"tok"}))

    assert [resolved.withheld(n) for n in ("pw", "tok", "size")] == [REDACTED, EPHEMERAL, None]


def test_resolved_and_rerun_inputs_files_read_as_written_here() -> None:
    resolved = ResolvedInputs(values={"name": "café", "zones": ["a", "b"], "pw": "hunter2"},
                              explicit={"name": "café", "zones": ["a", "b"], "pw": "hunter2"},
                              sensitive_names=frozenset({"pw"}),
                              sources={"name": "--var", "zones": "--inputs in.yml", "pw": "env"},
                              overridden={"name": ("terraform.tfvars",)})

    assert resolved.resolved_yaml("resolved.inputs.yml of run r-1\n\nsecond") == (
        "# resolved.inputs.yml of run r-1\n"
        "#\n"
        "# second\n"
        "# Each variable: the value the engine used and its source; sources rank, lowest first:\n"
        "#   default < env (TF_VAR_) < terraform.tfvars < terraform.tfvars.json < *.auto.tfvars(.json)\n"
        "#   < stack < inputs_from < recorded < --inputs/--var-file files and --var, in the order given.\n"
        "# Sensitive values are <redacted>, ephemeral ones <ephemeral>.\n"
        "name:\n"
        "  value: café\n"
        "  source: --var\n"
        "  overrides:\n"
        "  - terraform.tfvars\n"
        "pw:\n"
        "  value: <redacted>\n"
        "  source: env\n"
        "zones:\n"
        "  value:\n"
        "  - a\n"
        "  - b\n"
        "  source: --inputs in.yml\n")
    assert resolved.rerun_yaml("rerun.inputs.yml of m\n\n(m)") == (
        "# rerun.inputs.yml of m\n"
        "#\n"
        "# (m)\n"
        "# The inputs a rerun needs: explicit ones and the caller's TF_VAR_ values; the module's\n"
        "# terraform.tfvars and *.auto.tfvars are read again by the engine itself.\n"
        "# Usable as `--inputs`; sensitive values are <redacted> and ephemeral ones <ephemeral>:\n"
        "# pass them with --var.\n"
        "# name: from --var\n"
        "name: café\n"
        "# pw: from env\n"
        "pw: <redacted>\n"
        "# zones: from --inputs in.yml\n"
        "zones:\n"
        "- a\n"
        "- b\n")
    none = ResolvedInputs(values={}, explicit={}, sensitive_names=frozenset())
    assert none.resolved_yaml().splitlines()[0] == "# Each variable: the value the engine used and its source; " \
        "sources rank, lowest first:"
    assert none.resolved_yaml().endswith(".\n{}\n") and none.rerun_yaml().endswith("--var.\n{}\n")
    assert none.rerun_yaml().startswith("# The inputs a rerun needs")
    assert dump_yaml({}) == "{}\n"
    assert dump_yaml({"b": ["ü"], "a": 1}) == "a: 1\nb:\n- ü\n"


def test_the_engines_var_file_escapes_control_characters_and_nothing_else() -> None:
    resolved = ResolvedInputs(values={}, explicit={"v": "a b\x01é"}, sensitive_names=frozenset())

    assert resolved.var_file() == 'v = "a b\\u0001é"\n'


REFUSALS: dict[str, tuple[str, str, str]] = {
    # case: (file name, file text, the whole one-line refusal; {path} is the file)
    "json list": ("in.tfvars.json", "[1]", "inputs file {path} must be a JSON object of variable names to values, "
                  "not a list"),
    "json deep": ("in.tfvars.json", '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
                  "inputs file {path} is nested too deeply"),
    "json invalid": ("in.tfvars.json", '{"n": [1', "inputs file {path} is not valid JSON: "
                     "Expecting ',' delimiter: line 1 column 9 (char 8)"),
    "json nul": ("in.tfvars.json", '{"a": "x\\u0000"}', "inputs file {path}: a string holds a NUL character, which "
                 "no engine can receive"),
    "tfvars expression": ("in.tfvars", 'a = upper("x")\n', "inputs file {path}: the value of 'a' is an expression "
                          "hyops does not evaluate (it evaluates literals and the operators on them, such as `1 + 2`, "
                          "not function calls or templates); write the value it gives"),
    "tfvars nul": ("in.tfvars", 'a = "x\\u0000"\n', "inputs file {path}: a string holds a NUL character, which no "
                   "engine can receive"),
    "yaml list": ("in.yml", "- 1\n", "inputs file {path} must be a YAML mapping of variable names to values, not a "
                  "list: write `name: value` lines"),
    "yaml deep": ("in.yml", "a: " + "[" * 5000 + "\n", "inputs file {path} is nested too deeply"),
    "yaml at": ("in.yml", "a: 1\nb: [\n", "inputs file {path} is not valid YAML: at line 3, column 1"),
    "yaml reader": ("in.yml", "a: \x07\n", "inputs file {path} is not valid YAML: unparsable"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_bad_inputs_file_is_refused_in_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    name, text, refusal = REFUSALS[case]
    path = tmp_path / name
    path.write_text(text)

    with pytest.raises(UsageError) as refused:
        load_inputs_file(path)

    assert refused.value.message == refusal.format(path=path)


@pytest.mark.parametrize(("args", "refusal"), [
    (["-var"], "-var after -- needs a value, e.g. -var name=value"),
    (["-var-file"], "-var-file after -- needs a value, e.g. -var-file prod.tfvars"),
])
def test_an_engine_var_flag_after_the_double_dash_without_its_value_is_refused_with_an_example(
        args: list[str], refusal: str) -> None:
    with pytest.raises(UsageError) as refused:
        split_engine_flags(args)

    assert refused.value.message == refusal


def test_text_the_engine_reads_no_number_in_is_refused_for_a_number_variable_naming_it_never_its_value() -> None:
    with pytest.raises(UsageError) as refused:
        parse_var_options(["n=0x10"], {"n": _spec("n", "number")})

    assert refused.value.message == ("--var n=...: a number is required (variable 'n' has type number, and the "
                                     "engine reads no number in this text): write e.g. 5, -1.5 or 1e400")


@pytest.mark.parametrize(("text", "refusal"), [
    ("1bad=secret", "--var '1bad=...': expected NAME=VALUE with a variable name, e.g. --var size=large"),
    ("novalue", "--var 'novalue': expected NAME=VALUE with a variable name, e.g. --var size=large"),
    ("n=" + "[" * 5000, "--var n=...: value is nested too deeply"),
    ("n=[", "--var n=...: value is not valid YAML (at line 1, column 2); quote it: --var 'n=\"...\"'"),
    ('n="a\\0b"', "--var n: a string holds a NUL character, which no engine can receive"),
])
def test_a_bad_var_is_refused_in_one_line_naming_it_never_its_value(text: str, refusal: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_var_options([text], {})

    assert refused.value.message == refusal


def test_the_engines_own_var_of_a_quoted_number_is_refused_as_the_engine_refuses_it() -> None:
    with pytest.raises(UsageError) as refused:
        parse_var_options(['n="5"'], {"n": _spec("n", "number")}, engine_syntax=True)

    assert refused.value.message.startswith("--var n=...: a number is required")


def test_the_inputs_digest_is_the_keyed_hmac_of_the_explicit_inputs_as_compact_sorted_json() -> None:
    key = b"k" * 32
    resolved = ResolvedInputs(values={}, explicit={"b": "é", "a": [1, 2], "tok": "t-1"}, sensitive_names=frozenset(),
                              ephemeral_names=frozenset({"tok"}))
    canonical = '{"a":[1,2],"b":"é","tok":"<ephemeral>"}'  # the scheme v1 names: a change needs a new prefix

    assert resolved.digest(key) == "hmac-sha256:v1:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()
    with pytest.raises(ValueError, match="^inputs digest key too short$"):
        resolved.digest(b"k" * 31)


def test_an_inputs_file_that_cannot_be_read_is_refused_saying_why(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        load_inputs_file(tmp_path / "gone.yml")

    assert refused.value.message == f"cannot read inputs file {tmp_path / 'gone.yml'}: No such file or directory"


def test_a_value_of_more_than_the_budget_of_values_is_refused_however_it_nests() -> None:
    assert len(plain_value([0] * (MAX_VALUES - 1), "w")) == MAX_VALUES - 1  # the list and its items: the budget
    for bomb in ([0] * MAX_VALUES, {str(n): 0 for n in range(MAX_VALUES)}):
        with pytest.raises(UsageError) as refused:
            plain_value(bomb, "w")
        assert refused.value.message == f"w: more than {MAX_VALUES} values (YAML aliases?); refused"


@pytest.mark.parametrize(("value", "refusal"), [
    (float("inf"), "w: inf is not a finite number, which no engine takes; write a number such as 1.5 or 1e400"),
    (b"x", "w: a YAML bytes cannot be passed to the engine; use a string, number, bool, list or map"),
    ([["x\0"]], "w: a string holds a NUL character, which no engine can receive"),
])
def test_a_value_no_engine_takes_is_refused_naming_where_it_came_from(value: Any, refusal: str) -> None:
    with pytest.raises(UsageError) as refused:
        plain_value(value, "w")

    assert refused.value.message == refusal


@pytest.mark.parametrize(("name", "value", "refusal"), [
    ("a", "x\0", "input 'a' from stack inputs holds a NUL character, which no engine can receive"),
    ("m", {"k\0": 1}, "input 'm' from stack inputs holds a NUL character, which no engine can receive"),
    ("m", ["x\0"], "input 'm' from stack inputs holds a NUL character, which no engine can receive"),
    ("m", {"k": "v\0"}, "input 'm' from stack inputs holds a NUL character, which no engine can receive"),
    ("a", [1], "input 'a' from stack inputs is a list, but variable 'a' has type string, so the engine would refuse "
     "it: pass a plain value or declare a matching type (e.g. type = any)"),
    ("a", {"k": 1}, "input 'a' from stack inputs is a map, but variable 'a' has type string, so the engine would "
     "refuse it: pass a plain value or declare a matching type (e.g. type = any)"),
])
def test_a_stack_input_the_engine_could_not_receive_is_refused_before_anything_runs(name: str, value: Any,
                                                                                    refusal: str) -> None:
    specs = {"a": _spec("a", "string"), "m": _spec("m", "any")}

    with pytest.raises(UsageError) as refused:
        resolve_inputs(specs, stack_inputs={name: value})

    assert refused.value.message == refusal


def test_several_missing_inputs_are_refused_naming_each() -> None:
    specs = {n: VariableSpec(n, required=True) for n in ("b", "a")}

    with pytest.raises(MissingInputError) as refused:
        resolve_inputs(specs)

    assert refused.value.message == ("missing required inputs 'a', 'b' for the module: pass --var NAME=... for each "
                                     "or add them to --inputs")
    assert refused.value.names == ("a", "b")


def test_each_source_is_named_and_the_last_decides_whether_hyops_passes_the_value() -> None:
    specs = {"a": _spec("a", None), "b": _spec("b", None), "c": _spec("c", None)}
    resolved = resolve_inputs(specs, stack_inputs={"a": 1}, stack_sources={"a": "inputs_from x.y"},
                              inputs_file={"b": 2}, layers=[InputLayer("--var", {"c": 3}),
                                                            InputLayer("later", {"c": 4}, explicit=False)])

    assert resolved.sources == {"a": "inputs_from x.y", "b": "--inputs", "c": "later"}
    assert resolved.explicit == {"a": 1, "b": 2}
    with pytest.raises(UsageError) as refused:
        resolve_inputs({}, var_options={"x": 1})
    assert refused.value.message == "unknown input 'x' in --var (module declares: no variables)"


def test_a_resolved_value_shares_nothing_with_its_default_or_its_source() -> None:
    spec = VariableSpec("d", required=False, default=[[1]], type_expr="any")
    given = {"m": [[1]]}
    resolved = resolve_inputs({"d": spec, "m": _spec("m", "any")}, stack_inputs=given)

    resolved.values["d"][0].append(2)
    resolved.values["m"][0].append(2)

    assert spec.default == [[1]] and given == {"m": [[1]]}


def test_a_module_var_file_hyops_cannot_read_is_opaque_and_the_next_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text("a = \n")
    (tmp_path / "z.auto.tfvars").write_text('b = "x"\n')
    specs = {"a": _spec("a", None), "b": _spec("b", None)}

    layers = module_layers(tmp_path, specs, environ={})

    assert [(layer.source, dict(layer.values), layer.opaque) for layer in layers] == [
        ("env", {}, False), ("terraform.tfvars", {}, True), ("z.auto.tfvars", {"b": "x"}, False)]


def test_an_expression_in_a_module_var_file_is_kept_as_written_for_the_engine_to_evaluate(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text('a = upper("x")\n')

    [_, layer] = module_layers(tmp_path, {"a": _spec("a", None)}, environ={})

    assert not layer.opaque and layer.values == {"a": '${upper("x")}'}
