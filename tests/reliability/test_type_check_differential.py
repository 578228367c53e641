"""The long differential run of hyops's own type check (inputs/type_check.py) against the real
engine: many generated batches of types and values (tests/type_conversions.py), each judged by
one `plan` of a module declaring a variable per pair. The check must never refuse what the
engine accepts nor say "fits" where it refuses; a case this run finds becomes a row of CASES.
`make reliability` runs it; tests/integration/test_type_check_engine.py is its quick part."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.type_conversions import engine_refusals, typed_pairs, wrong_verdicts

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

BATCH = st.lists(typed_pairs(), min_size=40, max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=BATCH)
def test_generated_types_and_values_are_judged_as_the_engine_judges_them(
        engine_path: str, tmp_path: Path, pairs: list[tuple[str, object]]) -> None:
    assert wrong_verdicts(pairs, engine_refusals(engine_path, tmp_path, pairs)) == []


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(typed_pairs(modern=True), min_size=40, max_size=40))
def test_generated_types_with_optional_attributes_are_judged_as_the_modern_engine_judges_them(
        modern_engine: str, tmp_path: Path, pairs: list[tuple[str, object]]) -> None:
    assert wrong_verdicts(pairs, engine_refusals(modern_engine, tmp_path, pairs)) == []
