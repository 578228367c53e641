"""A set input in canonical form: sorted and de-duplicated at any depth (inputs/types.py), so the
same set written in another order is the same record and the same inputs digest."""

from __future__ import annotations

import pytest

from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.types import canonical, parse_type
from hybridops_tf.inputs.values import resolve_inputs

KEY = b"k" * 32


@pytest.mark.parametrize(("type_expr", "value", "expected"), [
    ("set(string)", ["b", "a", "b"], ["a", "b"]),
    ("list(string)", ["b", "a", "b"], ["b", "a", "b"]),
    ("map(set(number))", {"x": [3, 1, 2]}, {"x": [1, 2, 3]}),
    ("object({size = string, zones = set(string), o = optional(list(string), [])})",
     {"size": "s", "zones": ["z2", "z1"], "o": ["b", "a"]}, {"size": "s", "zones": ["z1", "z2"], "o": ["b", "a"]}),
    ("tuple([string, set(number)])", ["x", [2, 1]], ["x", [1, 2]]),
    ("list(object({x = set(string)}))", [{"x": ["b", "a"]}], [{"x": ["a", "b"]}]),
    ("set(object({a = number}))", [{"a": 2}, {"a": 1}], [{"a": 1}, {"a": 2}]),
    ("any", ["b", "a"], ["b", "a"]),
    ("not a type (", ["b", "a"], ["b", "a"]),
])
def test_sets_are_sorted_and_deduplicated_wherever_the_type_puts_them(type_expr: str, value: object,
                                                                      expected: object) -> None:
    assert canonical(value, parse_type(type_expr)) == expected


def test_the_inputs_digest_is_the_same_for_one_set_or_map_written_in_another_order() -> None:
    specs = {"zones": VariableSpec("zones", required=True, type_expr="set(string)"),
             "tags": VariableSpec("tags", required=True, type_expr="map(string)")}

    one = resolve_inputs(specs, var_options={"zones": ["a", "b"], "tags": {"x": "1", "y": "2"}})
    other = resolve_inputs(specs, var_options={"zones": ["b", "a", "a"], "tags": {"y": "2", "x": "1"}})

    assert one.digest(KEY) == other.digest(KEY)
    assert one.values["zones"] == other.values["zones"] == ["a", "b"]
