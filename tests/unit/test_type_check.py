"""hyops's own type check of an input against its variable's type (inputs/type_check.py): each
conversion rule where it alone decides, the sources whose value is certainly the engine's, and
the one promise: never refused where the engine converts. The same table against the real
engine: tests/integration/test_type_check_engine.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.type_check import Outcome, check, null_verdict, refused_inputs
from hybridops_tf.inputs.values import ResolvedInputs
from tests.type_conversions import CASES, Case, fitting_values, type_exprs, typed_pairs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_each_conversion_rule_alone_decides_its_case(case: Case) -> None:
    assert check(case.value, case.type_expr).outcome is case.outcome


def test_a_refusal_says_the_engines_words_and_where_in_the_value() -> None:
    verdict = check({"a": [True, "no"]}, "map(list(bool))")

    assert verdict.why == "a bool is required"
    assert verdict.at == ('key "a"', "element 1")


@pytest.mark.parametrize(("value", "type_expr", "why"), [
    ("large", "number", "a number is required"),
    (True, "number", "number required"),
    (1, "bool", "bool required"),
    ("True", "bool", 'a bool is required; to convert from string, use lowercase "true"'),
    (["a"], "string", "string required"),
    ({"a": 1}, "list(string)", "list of string required"),
    ({"a": 1}, "list(any)", "list of any single type required"),
    (["a"], "tuple([string, number])", "tuple required"),
    ({}, "object({a = number})", 'attribute "a" is required'),
    (["a"], "object({a = number})", "object required"),
])
def test_a_refusal_is_worded_as_the_engine_words_it(value: Any, type_expr: str, why: str) -> None:
    assert check(value, type_expr).why == why


@pytest.mark.parametrize("type_expr", ["list", "map", "foo", "list(", "optional(string)"])
def test_a_type_expression_not_read_is_left_to_the_engine(type_expr: str) -> None:
    assert check("x", type_expr).outcome is Outcome.UNSURE


def test_a_null_for_the_whole_variable_is_left_to_its_nullable() -> None:
    assert check(None, "number").outcome is Outcome.UNSURE


@pytest.mark.parametrize(("spec", "outcome"), [
    (VariableSpec("size", required=True, type_expr="number", nullable=False), Outcome.REFUSED),
    (VariableSpec("size", required=False, default=3, type_expr="number", nullable=False), Outcome.FITS),
    (VariableSpec("size", required=False, default=None, type_expr="number", nullable=False), Outcome.UNSURE),
    (VariableSpec("size", required=True, type_expr="number"), Outcome.UNSURE),
])
def test_a_null_for_a_variable_that_is_not_nullable_is_refused_only_without_a_default(
        spec: VariableSpec, outcome: Outcome) -> None:
    """`nullable = false`: the engine uses the default for a null, and with no default refuses
    it in these words (Terraform >= 1.1); a nullable variable is the engine's to judge."""
    verdict = null_verdict(spec)

    assert verdict.outcome is outcome
    if verdict.refused:
        assert verdict.why == "required variable may not be set to null"


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_value_every_rule_takes_is_never_refused(data: st.DataObject) -> None:
    type_expr = data.draw(type_exprs(modern=True))
    value = data.draw(fitting_values(type_expr))

    assert not check(value, type_expr).refused, (type_expr, value)


@settings(max_examples=200, deadline=None)
@given(typed_pairs(modern=True))
def test_any_value_for_any_type_gets_a_verdict_and_a_refusal_its_words(pair: tuple[str, Any]) -> None:
    verdict = check(pair[1], pair[0])

    assert verdict.outcome in Outcome
    assert verdict.refused == bool(verdict.why and verdict.outcome is Outcome.REFUSED)


SPECS = {
    "size": VariableSpec("size", required=True, type_expr="number"),
    "zones": VariableSpec("zones", required=True, type_expr="list(string)"),
    "spare": VariableSpec("spare", required=False, default="x", type_expr="number"),
}


def _resolved(values: dict[str, Any], sources: dict[str, str], explicit: tuple[str, ...] = ()) -> ResolvedInputs:
    return ResolvedInputs(values=values, explicit={n: values[n] for n in explicit}, sensitive_names=frozenset(),
                          sources=sources)


def test_an_explicit_input_is_checked_as_hyops_hands_it_to_the_engine() -> None:
    resolved = _resolved({"size": "large"}, {"size": "--var-file mine.tfvars"}, explicit=("size",))

    assert [name for name, _ in refused_inputs(SPECS, resolved)] == ["size"]


def test_the_callers_tf_var_text_of_a_primitive_variable_is_checked() -> None:
    resolved = _resolved({"size": "large"}, {"size": "env"})

    assert [name for name, _ in refused_inputs(SPECS, resolved)] == ["size"]


def test_tf_var_text_hyops_could_not_read_as_a_literal_is_left_to_the_engine() -> None:
    """hyops keeps TF_VAR_ text of a list variable as written when it is no HCL literal (a `for`
    expression, say): the engine evaluates what hyops only holds as text."""
    unread = _resolved({"zones": '[for z in ["a"] : z]'}, {"zones": "env"})
    read = _resolved({"zones": {"a": "b"}}, {"zones": "env"})

    assert refused_inputs(SPECS, unread) == []
    assert [name for name, _ in refused_inputs(SPECS, read)] == ["zones"]


def test_a_module_tfvars_value_holding_a_template_is_left_to_the_engine() -> None:
    template = _resolved({"size": "${1 + 1}"}, {"size": "terraform.tfvars"})
    literal = _resolved({"size": "one"}, {"size": "terraform.tfvars"})

    assert refused_inputs(SPECS, template) == []
    assert [name for name, _ in refused_inputs(SPECS, literal)] == ["size"]


def test_a_null_given_for_a_required_variable_that_is_not_nullable_is_refused() -> None:
    specs = {**SPECS, "size": VariableSpec("size", required=True, type_expr="number", nullable=False)}

    assert [name for name, _ in refused_inputs(specs, _resolved({"size": None}, {"size": "terraform.tfvars"}))] == [
        "size"]
    assert refused_inputs(SPECS, _resolved({"size": None}, {"size": "terraform.tfvars"})) == []


def test_a_default_is_the_modules_own_never_an_input() -> None:
    assert refused_inputs(SPECS, _resolved({"spare": "x"}, {})) == []
