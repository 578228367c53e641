"""What the sim provider was asked: its calls.jsonl, for tests that count provider calls."""

from __future__ import annotations

import json
from typing import Any

from hybridops_tf.sim.store import SimStore


def read_calls(store: SimStore) -> list[dict[str, Any]]:
    """Every recorded provider call, oldest first."""
    try:
        lines = store.calls_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.strip()]
