"""What a lookup command gets and must answer (docs/contract.md: Lookups): pure.

In, on stdin, one JSON object:
    {"type", "address", "module_dir", "ref", "planned": {ATTR: VALUE}, "run": {"id", "started_at", "ended_at"}}
Out, on stdout, one JSON document:
    {"candidates": [{"id": "...", "attributes": {...}}]}

`planned` holds the create's planned attribute values known at plan time, never a sensitive
one: an attribute the plan marks sensitive (redacted by engine/sensitive.py) is left out whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridops_tf.base.redact import REDACTED
from hybridops_tf.reconcile.verdict import Candidate

SCHEMA = "hyops.lookup/1"  # what the request calls itself, so a command can check it
MAX_CANDIDATES = 1000  # an answer listing more is refused as garbage (a lookup should filter)


class AnswerError(ValueError):
    """The command's output is not the answer document: the message says why, in one line."""


@dataclass(frozen=True)
class LookupRequest:
    """The question asked about one suspect orphan (or one planned create of the unnamed one)."""

    type: str
    address: str
    module_dir: str | None
    ref: str
    planned: Mapping[str, Any]
    run_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "type": self.type, "address": self.address, "module_dir": self.module_dir,
                "ref": self.ref, "planned": dict(self.planned),
                "run": {"id": self.run_id, "started_at": self.started_at, "ended_at": self.ended_at}}

    def stdin(self) -> bytes:
        return (json.dumps(self.to_dict(), sort_keys=True) + "\n").encode("utf-8")


def _holds_redacted(value: Any) -> bool:
    if value == REDACTED:
        return True
    if isinstance(value, Mapping):
        return any(_holds_redacted(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_redacted(v) for v in value)
    return False


def safe_planned(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """The planned attributes a lookup may see: any holding a redacted (sensitive) part is
    left out whole, as is `id` (the create had none yet)."""
    return {k: v for k, v in (attributes or {}).items() if k != "id" and not _holds_redacted(v)}


def parse_answer(stdout: str) -> tuple[Candidate, ...]:
    """The candidates of an answer; AnswerError when it is not exactly the document."""
    text = stdout.strip()
    if not text:
        raise AnswerError("it printed nothing on stdout")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise AnswerError(f"its stdout is not one JSON document ({err.msg} at line {err.lineno})") from None
    except RecursionError:
        raise AnswerError("its stdout nests too deep to be an answer") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("candidates"), list):
        raise AnswerError('its stdout is not {"candidates": [...]}')
    found = doc["candidates"]
    if len(found) > MAX_CANDIDATES:
        raise AnswerError(f"it listed {len(found)} candidates (at most {MAX_CANDIDATES}): filter by the "
                          "planned attributes it gets on stdin")
    out: list[Candidate] = []
    for i, item in enumerate(found):
        if not isinstance(item, dict):
            raise AnswerError(f"candidates[{i}] is not an object")
        ident = item.get("id")
        if not isinstance(ident, str) or not ident.strip():
            raise AnswerError(f"candidates[{i}].id is not a non-empty string")
        attributes = item.get("attributes", {})
        if not isinstance(attributes, dict):
            raise AnswerError(f"candidates[{i}].attributes is not an object")
        out.append(Candidate(ident.strip(), dict(attributes)))
    first: dict[str, Candidate] = {}
    for candidate in out:
        first.setdefault(candidate.id, candidate)  # one per id: the first listed
    return tuple(first.values())
