"""The engine's `query -json` stream, typed (Terraform >= 1.14: `terraform query`).

`query -json` prints one JSON message a line: `list_start`, one `list_resource_found` per
object a `list` block found (its `identity`, and with `include_resource = true` its attributes
as `resource_object`), `list_complete`, and `diagnostic`s. Each becomes a typed message here;
what a lookup makes of them is reconcile's (reconcile/lookup/query.py). As every reader of the
engine's streams, this one skips what is not a JSON object and message types it does not know.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# The engine's summary when the provider has no list resource for the type (Terraform 1.14, 1.15)
NO_LIST_RESOURCE = "Invalid list resource"


@dataclass(frozen=True, slots=True)
class Found:
    """`list_resource_found`: one object a `list` block's address found."""

    address: str
    identity: Mapping[str, Any] | None
    resource_object: Mapping[str, Any] | None
    display_name: str | None = None


@dataclass(frozen=True, slots=True)
class Complete:
    """`list_complete`: the listing of `address` ended."""

    address: str


@dataclass(frozen=True, slots=True)
class Problem:
    """An error `diagnostic`; `no_list_resource` when the provider cannot list the type at all."""

    summary: str
    detail: str = ""
    no_list_resource: bool = field(default=False)


QueryMessage = Found | Complete | Problem


def _documents(stdout: str) -> Iterator[dict[str, Any]]:
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            yield doc


def messages(stdout: str) -> list[QueryMessage]:
    """The stream's messages this reader knows, in order (warnings and unknown types skipped)."""
    out: list[QueryMessage] = []
    for doc in _documents(stdout):
        kind = doc.get("type")
        body = doc.get(kind) if isinstance(kind, str) else None
        if not isinstance(body, dict):
            continue
        if kind == "diagnostic" and body.get("severity") == "error":
            summary = str(body.get("summary", ""))
            out.append(Problem(summary, str(body.get("detail", "")), summary == NO_LIST_RESOURCE))
        elif kind == "list_resource_found" and isinstance(body.get("address"), str):
            identity, obj = body.get("identity"), body.get("resource_object")
            shown = body.get("display_name")
            out.append(Found(body["address"], identity if isinstance(identity, dict) else None,
                             obj if isinstance(obj, dict) else None, shown if isinstance(shown, str) else None))
        elif kind == "list_complete" and isinstance(body.get("address"), str):
            out.append(Complete(body["address"]))
    return out
