"""Every mutant of scripts/mutants.py still names code that exists, once.

`make mutants` refuses a mutant whose text no longer matches, but it is not part of `make
test`: a refactor that moves a guarded rule would leave its mutant stale until someone ran it.
This keeps the texts in step with the code on every test run (the mutants themselves, each a
scratch copy and a test run, stay in `make mutants`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutants_script", REPO / "scripts" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _stale(mutants: Iterable[Any]) -> list[str]:
    stale = []
    for mutant in mutants:
        count = (REPO / mutant.path).read_text(encoding="utf-8").count(mutant.old)
        if count != 1:
            stale.append(f"{mutant.name}: {mutant.path} holds its text {count} times")
    return stale


def test_every_mutant_text_occurs_exactly_once_in_its_file() -> None:
    assert _stale(_mutants().MUTANTS) == []


def test_a_mutant_whose_text_is_gone_or_repeated_is_reported() -> None:
    script = _mutants()
    planted = [script.Mutant("gone", "hybridops_tf/operation/places.py", "no such line\n", "", ()),
               script.Mutant("repeated", "hybridops_tf/operation/places.py", "return", "", ())]

    assert [line.split(":")[0] for line in _stale(planted)] == ["gone", "repeated"]


def test_every_mutant_names_a_known_area_and_the_five_areas_hold_at_least_forty() -> None:
    script = _mutants()
    assert {m.area for m in script.MUTANTS} <= {*script.AREAS, ""}
    assert len([m for m in script.MUTANTS if m.area]) >= 40  # issue 46: signals, lookups, queue, stack, store


def test_the_summary_says_caught_of_total_per_area_and_names_each_survivor() -> None:
    script = _mutants()
    held = script.Mutant("held", "a.py", "x", "y", (), script.QUEUE)
    survivor = script.Mutant("a rule no test holds", "b.py", "x", "y", (), script.QUEUE)
    other = script.Mutant("other", "c.py", "x", "y", ())

    lines = script.summary([held, survivor, other], [survivor]).splitlines()

    assert "2/3" in lines[0]
    assert [line.split(":")[1].strip() for line in lines[1:3]] == ["1/2", "1/1"]
    assert any("a rule no test holds" in line and "b.py" in line for line in lines[3:])
