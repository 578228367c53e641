"""Hypothesis strategies for hostile input: JSON shaped like the engine's, records, YAML.

Fuzz runs are deterministic in CI (`derandomize=True`) and sized for it: FUZZ_PURE examples
for pure functions, FUZZ_CLI for CliRunner invocations.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ_PURE = int(os.environ.get("HYOPS_FUZZ_PURE", "200"))
FUZZ_CLI = int(os.environ.get("HYOPS_FUZZ_CLI", "40"))

PURE = settings(max_examples=FUZZ_PURE, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=FUZZ_CLI, derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                      HealthCheck.filter_too_much])

ENGINE_TYPES = ["version", "log", "diagnostic", "change_summary", "outputs", "planned_change",
                "resource_drift", "apply_start", "apply_progress", "apply_complete",
                "apply_errored", "refresh_start", "refresh_complete", "provision_start",
                "test_run", "", "unknown_future_type"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=25,
)

# keys the engine's messages really use, so fuzzed objects reach the typed parsers
_KEYS = ["type", "@level", "@message", "@module", "@timestamp", "hook", "change", "changes",
         "diagnostic", "outputs", "resource", "addr", "action", "id_key", "id_value",
         "elapsed_seconds", "severity", "summary", "detail", "address", "range", "start",
         "line", "filename", "resource_key", "resource_type", "resource_name", "add", "remove",
         "operation", "sensitive", "value", "terraform", "tofu", "ui", "reason",
         "previous_resource", "import", "forget"]
keys = st.one_of(st.sampled_from(_KEYS), st.text(max_size=8))
shaped_values = st.recursive(
    st.one_of(scalars, st.sampled_from(["create", "delete", "update", "error", "sim_vm.vm[0]"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)
engine_messages = st.builds(
    lambda t, body: {**body, "type": t} if t is not None else body,
    st.one_of(st.none(), st.sampled_from(ENGINE_TYPES), scalars),
    st.dictionaries(keys, shaped_values, max_size=6),
)


def dumps(doc: Any) -> str:
    return json.dumps(doc, allow_nan=False)


def deep(depth: int, leaf: str = "0") -> str:
    """JSON (and YAML flow) nested `depth` lists deep: beyond Python's recursion limit."""
    return "[" * depth + leaf + "]" * depth
