"""The engine's `query -json` stream read into typed messages (engine/query_stream.py): what
each message carries, and what a reader of the engine's streams skips."""

from __future__ import annotations

import json

from hybridops_tf.engine import query_stream
from hybridops_tf.engine.query_stream import Complete, Found, Problem


def _lines(*docs: object) -> str:
    return "\n".join(d if isinstance(d, str) else json.dumps(d) for d in docs)


def test_each_known_message_is_typed_and_unknown_ones_are_skipped() -> None:
    stdout = _lines(
        {"type": "version", "terraform": "1.15.5"},
        {"type": "list_start", "list_start": {"address": "list.sim_vm.hyops"}},
        {"type": "list_resource_found", "list_resource_found": {
            "address": "list.sim_vm.hyops", "display_name": "web", "identity": {"id": "vm-1"},
            "resource_object": {"id": "vm-1", "name": "web"}}},
        "not json at all",
        {"type": "diagnostic", "diagnostic": {"severity": "warning", "summary": "careful"}},
        {"type": "diagnostic", "diagnostic": {"severity": "error", "summary": "Boom", "detail": "why"}},
        {"type": "a_message_of_a_later_engine", "a_message_of_a_later_engine": {"x": 1}},
        {"type": "list_complete", "list_complete": {"address": "list.sim_vm.hyops", "total": 1}},
    )

    assert query_stream.messages(stdout) == [
        Found("list.sim_vm.hyops", {"id": "vm-1"}, {"id": "vm-1", "name": "web"}, "web"),
        Problem("Boom", "why"),
        Complete("list.sim_vm.hyops"),
    ]


def test_the_providers_missing_list_resource_is_told_apart_from_other_errors() -> None:
    stdout = _lines({"type": "diagnostic", "diagnostic": {
        "severity": "error", "summary": query_stream.NO_LIST_RESOURCE, "detail": "no sim_thing"}})

    (problem,) = query_stream.messages(stdout)

    assert isinstance(problem, Problem) and problem.no_list_resource


def test_a_found_object_of_the_wrong_shape_keeps_what_is_well_formed() -> None:
    stdout = _lines({"type": "list_resource_found", "list_resource_found": {
        "address": "list.sim_vm.hyops", "identity": ["not", "a", "map"], "resource_object": None}})

    assert query_stream.messages(stdout) == [Found("list.sim_vm.hyops", None, None, None)]
