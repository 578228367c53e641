"""Constant expressions of a var file, evaluated as the engine evaluates them (inputs/constants.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hybridops_tf.base.numbers import Number
from hybridops_tf.inputs.constants import evaluate


@pytest.mark.parametrize(("text", "value"), [
    ("1 + 2", 3),
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 / 4", Number("2.5")),
    ("6 / 2", 3),
    ("-7 % 3", -1),  # the sign of the left operand, as in Go
    ("7 % -3", 1),
    ("-(2 + 3)", -5),
    ("1.5 * 2", 3),
    ("2e3 + 1", 2001),
    ("1 < 2 && 2 >= 2", True),
    ("!true || false", False),
    ("1 == 1.0", True),
    ('"a" == "a"', True),
    ('1 == "1"', False),
    ('3 > 2 ? "big" : "small"', "big"),
    ("false ? 1 : true ? 2 : 3", 2),
    ("null", None),
    ('"tab\\there"', "tab\there"),
])
def test_a_constant_expression_evaluates_as_the_engine_does(text: str, value: Any) -> None:
    assert evaluate(text) == (True, value)
    assert type(evaluate(text)[1]) is type(value)


@pytest.mark.parametrize("text", [
    "max(1, 2)", "var.x", "local.y", '"a${1}"', '"%{if true}x%{endif}"', '"a" + "b"', "1 + true",
    "1 / 0", "5 % 0", "1 <", "(1 + 2", "1 2", "true ? 1", '1 ? "a" : "b"', "[1, 2]", "{a = 1}",
    "1" + " + 1" * 2000,
])
def test_anything_else_is_left_to_the_caller_to_refuse(text: str) -> None:
    assert evaluate(text) == (False, None)
