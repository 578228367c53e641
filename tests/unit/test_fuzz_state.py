"""Hostile `show -json` / `output -json` documents: parse tolerantly or refuse with
StateFormatError, never anything else; redaction never raises and never keeps a value the
engine marked sensitive."""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.base.errors import EngineError
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.runner import Engine
from hybridops_tf.engine.sensitive import redact_sensitive
from hybridops_tf.engine.state import (
    StateFormatError,
    parse_outputs,
    parse_state,
)
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import PURE, deep, json_values, keys, shaped_values

_STATE_KEYS = ["format_version", "terraform_version", "values", "root_module", "child_modules",
               "resources", "outputs", "address", "mode", "type", "name", "index",
               "provider_name", "sensitive_values", "tainted", "deposed_key", "resource_changes",
               "resource_drift", "prior_state", "planned_values", "output_changes", "change",
               "actions", "before", "after", "before_sensitive", "after_sensitive", "errored",
               "configuration", "variables", "sensitive", "value"]
state_keys = st.one_of(st.sampled_from(_STATE_KEYS), keys)
state_shaped = st.recursive(
    st.one_of(shaped_values, st.sampled_from(["1.0", "0.2", "9.9", "x.y", "managed"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(state_keys, inner, max_size=5)),
    max_leaves=40,
)
state_docs = st.one_of(
    json_values,
    st.builds(lambda fv, body: {**body, "format_version": fv},
              st.one_of(st.sampled_from(["1.0", "0.2", "1.2", "2.0", "x"]), json_values),
              st.dictionaries(state_keys, state_shaped, max_size=6)),
)


@PURE
@given(st.one_of(state_docs, state_docs.map(json.dumps), st.text(max_size=50)))
@example(deep(100_000))
@example('{"format_version": "1.0", "values": ' + deep(100_000) + "}")
def test_state_and_outputs_parse_or_refuse_cleanly(doc: object) -> None:
    note(FUZZ, target="parse_state/parse_outputs")
    for parser in (parse_state, parse_outputs):
        try:
            parser(doc)  # type: ignore[arg-type]
        except StateFormatError:
            pass


def _resource(values: dict, sensitive: dict) -> dict:
    return {"address": "sim_config.c", "mode": "managed", "type": "sim_config", "name": "c",
            "values": values, "sensitive_values": sensitive}


@PURE
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5), st.data())
def test_redaction_masks_every_value_marked_sensitive_and_leaves_the_input_alone(
    values: dict, data: st.DataObject
) -> None:
    note(FUZZ, target="redact_sensitive")
    marked = data.draw(st.lists(st.sampled_from(sorted(values)), unique=True) if values else st.just([]))
    doc = {"format_version": "1.0",
           "values": {"root_module": {"resources": [_resource(values, {k: True for k in marked})]}},
           "prior_state": data.draw(state_docs), "planned_values": data.draw(state_shaped)}
    original = copy.deepcopy(doc)
    out = redact_sensitive(doc)
    assert doc == original
    got = out["values"]["root_module"]["resources"][0]["values"]
    for key in marked:
        assert got[key] == "<redacted>"


@PURE
@given(st.dictionaries(state_keys, state_shaped, max_size=6))
def test_redaction_of_any_plan_shaped_document_never_raises(doc: dict) -> None:
    note(FUZZ, target="redact_sensitive (plan-shaped)")
    assert isinstance(redact_sensitive(doc), dict)


def _fake_engine(tmp_path: Path, stdout_file: Path) -> Engine:
    script = tmp_path / "fake-engine"
    script.write_text(f"#!/bin/sh\ncat {stdout_file}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Engine(EngineInfo(script, "1.0.3", "terraform"), tmp_path, {})


@pytest.mark.parametrize("text", ["", "null", "[]", "{", "\x00", '{"format_version":'],
                         ids=["empty", "null", "list", "open", "nul", "cut"])
def test_engine_printing_garbage_json_is_an_engine_error(tmp_path: Path, text: str) -> None:
    note(FUZZ, target="Engine.capture_json (garbage)")
    out = tmp_path / "out.json"
    out.write_text(text)
    engine = _fake_engine(tmp_path, out)
    try:
        engine.show_state_doc()
    except EngineError:
        return
    # "" reads as {} (an engine that printed nothing for an empty state)
    assert text == ""


def test_engine_printing_deeply_nested_json_is_an_engine_error(tmp_path: Path) -> None:
    note(FUZZ, target="Engine.capture_json (deep)")
    out = tmp_path / "out.json"
    out.write_text('{"format_version": "1.0", "values": {"outputs": {"x": {"value": '
                   + deep(100_000) + "}}}}")
    engine = _fake_engine(tmp_path, out)
    with pytest.raises(EngineError):
        engine.show_state_doc()
    assert os.path.exists(out)
