"""hyops's own type check (inputs/type_check.py) against the real engine's conversions: on
every row of the fixed table (tests/type_conversions.py: CASES) and on one seeded batch of
generated types and values, the check never refuses what the engine accepts and never says
"fits" where it refuses; where a row says REFUSED the engine refuses too. One module of many
variables and one `plan` judge a whole batch. The long generated run is
tests/reliability/test_type_check_differential.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from hybridops_tf.inputs.type_check import check
from tests.type_conversions import CASES, engine_refusals, typed_pairs, wrong_verdicts

pytestmark = pytest.mark.integration


def _agree(engine: str, workdir: Path, modern: bool) -> None:
    cases = [c for c in CASES if c.modern == modern]
    pairs = [(c.type_expr, c.value) for c in cases]
    said = engine_refusals(engine, workdir, pairs)

    assert [c.rule for c in cases if check(c.value, c.type_expr).outcome is not c.outcome] == []
    assert wrong_verdicts(pairs, said) == []  # so every REFUSED row is refused, every FITS row taken


def test_the_fixed_table_is_judged_as_the_engine_judges_it(engine_path: str, tmp_path: Path) -> None:
    _agree(engine_path, tmp_path, modern=False)


def test_optional_attributes_are_judged_as_the_modern_engine_judges_them(modern_engine: str, tmp_path: Path) -> None:
    _agree(modern_engine, tmp_path, modern=True)


@settings(max_examples=1, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(typed_pairs(), min_size=60, max_size=60))
def test_a_seeded_batch_of_generated_types_and_values_is_never_refused_where_the_engine_takes_it(
        engine_path: str, tmp_path: Path, pairs: list[tuple[str, object]]) -> None:
    assert wrong_verdicts(pairs, engine_refusals(engine_path, tmp_path, pairs)) == []
