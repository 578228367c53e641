"""Reading decoded engine JSON by shape: a field of the wrong type reads as empty.

Why: the engine's documents (`show -json`, `output -json`, the `-json` UI stream) differ
between engines and versions, and a line may be cut short; the parsers in events.py,
state.py and sensitive.py read every field through these, so a missing or wrongly typed
field is a default, never an exception. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_dict(value: Any) -> Mapping[str, Any]:
    """A JSON object, else {}."""
    if type(value) is dict:  # what json.loads makes: skip the slower abstract-class check
        return value
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """A JSON array, else []."""
    return value if isinstance(value, list) else []


def as_str(value: Any, default: str = "") -> str:
    """A JSON string, else `default`."""
    return value if isinstance(value, str) else default


def as_index(value: Any) -> int | str | None:
    """An instance key (`count` index or `for_each` key), else None (a bool is not one)."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None
