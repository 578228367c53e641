"""Numbers keep their decimal text through every parse and dump hyops does (issue 55, item 1;
base/numbers.py): generated numbers (long decimals, huge and tiny exponents, -0, integers past
2^53) come back from each path with the same type and the same text, never rounded to float64.
The engine's side is tests/integration/test_numbers_as_text.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridops_tf.base import numbers
from hybridops_tf.base.numbers import Number, from_engine_text
from hybridops_tf.base.redact import redact_event_line
from hybridops_tf.engine.events import OutputsMessage, parse_event
from hybridops_tf.engine.state import parse_state
from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.hcl_values import parse_values
from hybridops_tf.inputs.types import canonical, parse_type
from hybridops_tf.inputs.values import load_inputs_file, module_layers, parse_var_options, resolve_inputs
from tests.generated_values import numbers as generated_numbers

KEY = b"k" * 32
ANY = {"n": VariableSpec("n", required=False, type_expr="any")}
NUMBER = {"n": VariableSpec("n", required=False, type_expr="number")}
ISSUE = ["3.14159265358979323846264338327950288", "123456789012345678901234567890.125", "1e400", "1E+5", "-0",
         "-0.0", "1e-400", "12345678901234567890123", "9007199254740993"]


def same(a: Any, b: Any) -> bool:
    """Equal, and every number of the same type with the same text (== compares by value)."""
    if isinstance(a, Number) or isinstance(b, Number):
        return type(a) is type(b) and a.text == b.text
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def as_hcl_reads(values: list[Any]) -> list[Any]:
    """HCL reads `-0` as the operator `-` on 0, which is 0 (so does the engine: its state says 0)."""
    return [0 if isinstance(v, Number) and v.text == "-0" else v for v in values]


def text_of(value: Any) -> str:
    return value.text if isinstance(value, Number) else str(value)


lists = st.lists(generated_numbers, min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(values=lists)
def test_json_keeps_every_numbers_text(values: list[Any]) -> None:
    text = numbers.dumps({"n": values})

    assert same(numbers.loads(text)["n"], values)
    assert text == '{"n": [' + ", ".join(text_of(v) for v in values) + "]}"


@settings(max_examples=300, deadline=None)
@given(values=lists)
def test_yaml_keeps_every_numbers_text(values: list[Any]) -> None:
    assert same(numbers.yaml_load(numbers.yaml_dump({"n": values}))["n"], values)


@settings(max_examples=300, deadline=None)
@given(values=lists)
def test_a_tfvars_number_is_its_text(values: list[Any]) -> None:
    text = "n = [" + ", ".join(text_of(v) for v in values) + "]\nm = " + text_of(values[0]) + "\n"

    parsed = parse_values(text, "gen.tfvars")

    assert same(parsed["n"], as_hcl_reads(values)) and same(parsed["m"], as_hcl_reads(values)[0])


@settings(max_examples=300, deadline=None)
@given(values=lists)
def test_the_engines_var_file_prints_every_numbers_text(values: list[Any]) -> None:
    resolved = resolve_inputs(ANY, var_options={"n": values})

    assert resolved.var_file() == "n = [" + ", ".join(text_of(v) for v in values) + "]\n"
    assert same(parse_values(resolved.var_file() or "", "var file")["n"], as_hcl_reads(values))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=lists)
def test_rerun_inputs_read_back_as_the_same_numbers(tmp_path: Path, values: list[Any]) -> None:
    path = tmp_path / "rerun.inputs.yml"
    path.write_text(resolve_inputs(ANY, var_options={"n": values}).rerun_yaml("gen"), encoding="utf-8")

    assert same(load_inputs_file(path)["n"], values)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=lists)
def test_a_tfvars_json_file_keeps_every_numbers_text(tmp_path: Path, values: list[Any]) -> None:
    path = tmp_path / "gen.tfvars.json"
    path.write_text('{"n": [' + ", ".join(text_of(v) for v in values) + "]}", encoding="utf-8")

    assert same(load_inputs_file(path)["n"], values)


@settings(max_examples=200, deadline=None)
@given(value=generated_numbers)
def test_var_and_tf_var_for_a_number_variable_keep_the_text(value: Any) -> None:
    text = text_of(value)

    assert same(parse_var_options([f"n={text}"], NUMBER)["n"], value)
    layers = module_layers(Path("/nonexistent"), NUMBER, environ={"TF_VAR_n": text})
    assert same(layers[0].values["n"], value)


@settings(max_examples=200, deadline=None)
@given(values=lists)
def test_state_and_output_events_keep_every_numbers_text(values: list[Any]) -> None:
    listed = "[" + ", ".join(text_of(v) for v in values) + "]"
    state = parse_state('{"format_version": "1.0", "values": {"outputs": {"n": {"sensitive": false, '
                        f'"value": {listed}}}}}, "root_module": {{}}}}}}')
    event = parse_event('{"type": "outputs", "@level": "info", "@message": "Outputs: 1", '
                        f'"outputs": {{"n": {{"sensitive": false, "value": {listed}}}}}}}')

    assert same(state.outputs["n"].value, values)
    assert isinstance(event, OutputsMessage) and same(event.outputs["n"].value, values)


def test_a_redacted_outputs_line_keeps_the_other_outputs_numbers() -> None:
    line = ('{"type":"outputs","outputs":{"s":{"sensitive":true,"value":"x"},'
            '"n":{"sensitive":false,"value":3.14159265358979323846264338327950288}}}')

    assert "3.14159265358979323846264338327950288" in redact_event_line(line)


def test_the_issues_numbers_reach_the_var_file_as_written() -> None:
    values = as_hcl_reads([Number(t) if any(c in t for c in ".eE") or t == "-0" else int(t) for t in ISSUE])
    parsed = parse_values(f"n = [{', '.join(ISSUE)}]\n", "t.tfvars")

    written = ", ".join("0" if t == "-0" else t for t in ISSUE)  # HCL's `-0` is the operator on 0: 0

    assert resolve_inputs(ANY, var_options=parsed).var_file() == f"n = [{written}]\n"
    assert same(parsed["n"], values)


def test_the_digest_sees_the_thirtieth_digit() -> None:
    one = resolve_inputs(ANY, var_options={"n": Number("3.14159265358979323846264338327950288")})
    two = resolve_inputs(ANY, var_options={"n": Number("3.14159265358979323846264338327950289")})

    assert one.digest(KEY) != two.digest(KEY)


def test_a_set_of_numbers_is_one_number_per_value() -> None:
    got = canonical([Number("1.0"), 1, Number("1e0"), Number("0.30000000000000000001"), Number("0.3")],
                    parse_type("set(number)"))

    assert len(got) == 3


def test_constant_arithmetic_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "t.tfvars"
    path.write_text("n = 0.1 + 0.2\nm = 123456789012345678901234567890.125 * 2\nk = -1e400\n", encoding="utf-8")
    parsed = load_inputs_file(path)

    assert same(parsed["n"], Number("0.3"))
    assert same(parsed["m"], Number("246913578024691357802469135780.25"))
    assert same(parsed["k"], Number("-1e400"))


# What Terraform 1.0.3 and 1.15.5 do with `-var one=TEXT` for a `number` variable (measured)
@pytest.mark.parametrize(("text", "number"), [
    (".5", Number("0.5")), ("+5", 5), ("5.", 5), ("0755", 755), ("1e400", Number("1e400")),
    ("-0", Number("-0")),
    ("2.718281828459045235360287471352662497757", Number("2.718281828459045235360287471352662497757")),
    ("0x10", None), (" 5", None), ("1_000", None), ("Inf", None), ("", None), (".", None), ("~", None),
])
def test_a_number_variables_text_is_read_as_the_engine_reads_it(text: str, number: Any) -> None:
    got = from_engine_text(text)

    assert same(got, number)


@pytest.mark.parametrize("text", ["0x10", "1_000", " 5", "Inf", "~"])
def test_var_text_the_engine_refuses_for_a_number_is_refused_before_anything_runs(text: str) -> None:
    from hybridops_tf.base.errors import UsageError

    with pytest.raises(UsageError) as caught:
        parse_var_options([f"n={text}"], NUMBER)
    assert caught.value.exit_code == 2


def test_an_infinite_yaml_number_is_refused_naming_the_file(tmp_path: Path) -> None:
    from hybridops_tf.base.errors import UsageError

    path = tmp_path / "in.yml"
    path.write_text("n: .inf\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_inputs_file(path)
    assert str(path) in str(caught.value)


def test_old_rerun_files_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "rerun.inputs.yml"
    path.write_text("n: 1.2345678901234568e+29\nm: 3\ns: '1.5'\n", encoding="utf-8")

    assert same(load_inputs_file(path), {"n": Number("1.2345678901234568e+29"), "m": 3, "s": "1.5"})


def test_json_refuses_what_the_engines_json_refuses() -> None:
    for text in ('{"n": NaN}', '{"n": Infinity}', '{"n": -Infinity}'):
        with pytest.raises(ValueError):
            numbers.loads(text)
    assert json.loads(numbers.dumps({"n": Number("1.5")})) == {"n": 1.5}


def test_a_quotient_decimal_cannot_hold_is_the_engines() -> None:
    from hybridops_tf.inputs.constants import evaluate

    # Terraform 1.0.3's state for `[1 / 3, 10 / 7]` in a .tfvars (512-bit binary, shortest decimal)
    third = "0." + "3" * 154 + "5"
    seventh = "1." + "428571" * 25 + "4286"

    assert evaluate("1 / 3") == (True, Number(third))
    assert evaluate("10 / 7") == (True, Number(seventh))
    assert evaluate("1 / 8") == (True, Number("0.125"))
