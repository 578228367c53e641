"""Hostile engine event streams: parsing and folding never raise, whatever the engine prints.

A line may be cut short by a kill, come from a newer engine, or be any text at all; the
run that reads it must never crash on it (the raw line is already in events.jsonl).
"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from hybridops_tf.base.redact import redact_event_line
from hybridops_tf.engine.events import (
    Event,
    GarbageLine,
    Message,
    iter_events,
    parse_event,
    summarize_diagnostics,
)
from hybridops_tf.engine.progress import ResourceTracker
from tests.reliability.figures import FUZZ, note
from tests.reliability.strategies import PURE, deep, dumps, engine_messages, json_values


def _fold(events: list[Event]) -> None:
    tracker = ResourceTracker().feed_all(events)
    for progress in tracker.resources.values():
        assert isinstance(progress.address, str) and progress.address
    assert isinstance(summarize_diagnostics(events), str)


@PURE
@given(st.text())
@example("")
@example("{")
@example('{"type": "apply_start", "hook": ')  # a line cut short by a kill
@example(deep(100_000))
@example("\x00\udcff")
def test_any_text_line_parses_without_raising(line: str) -> None:
    note(FUZZ, target="parse_event(text)")
    event = parse_event(line)
    assert isinstance(event, (Message, GarbageLine))
    _fold([event])


@PURE
@given(st.binary())
@example(b"\xff\xfe{}")
def test_any_bytes_line_parses_without_raising(line: bytes) -> None:
    note(FUZZ, target="parse_event(bytes)")
    assert isinstance(parse_event(line), (Message, GarbageLine))


@PURE
@given(st.lists(st.one_of(engine_messages.map(dumps), json_values.map(dumps), st.text(max_size=40)),
                max_size=25))
def test_any_stream_folds_into_resources_without_raising(lines: list[str]) -> None:
    note(FUZZ, target="event stream fold")
    events = list(iter_events(lines))
    assert len(events) == sum(1 for line in lines if line.strip())
    _fold(events)


@PURE
@given(engine_messages)
def test_engine_shaped_message_parses_to_its_type_or_unknown(doc: dict) -> None:
    note(FUZZ, target="parse_event(engine-shaped JSON)")
    event = parse_event(json.dumps(doc))
    assert isinstance(event, Message)
    assert event.type == (doc.get("type") if isinstance(doc.get("type"), str) else "")


@PURE
@given(st.one_of(engine_messages.map(dumps), st.text()))
@example('{"type":"outputs","outputs":{"t":{"sensitive":true,"value":"S3CRET"}}}')
@example('{"type":"outputs","outputs":{"t":{"sensitive":true,"value":{"a":["S3CRET"]}}}}')
def test_event_line_redaction_never_raises_and_never_keeps_a_sensitive_output(line: str) -> None:
    note(FUZZ, target="redact_event_line")
    kept = redact_event_line(line)
    assert isinstance(kept, str)
    try:
        doc = json.loads(kept)
    except ValueError:
        return
    outputs = doc.get("outputs") if isinstance(doc, dict) else None
    for out in (outputs.values() if isinstance(outputs, dict) else []):
        if isinstance(out, dict) and out.get("sensitive") is True and "value" in out:
            assert out["value"] == "<redacted>"


def test_deeply_nested_sensitive_outputs_line_is_redacted_without_raising() -> None:
    note(FUZZ, target="redact_event_line (deep)")
    line = '{"type":"outputs","outputs":{"t":{"sensitive":true,"value":' + deep(100_000) + "}}}"
    assert isinstance(redact_event_line(line), str)
