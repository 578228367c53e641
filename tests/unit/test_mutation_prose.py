"""The one category of mutmut survivor scripts/mutation.py accepts by rule (prose_wording): only
the wording of a plain sentence fragment, never a command, an option, an identifier, a key or a
comparison (CONTRIBUTING.md: Mutation testing by a tool)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_prose_script", REPO / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


prose_wording = _script().prose_wording


@pytest.mark.parametrize(("old", "new"), [
    ('"to remove what is left of the module")])', '"XXto remove what is left of the moduleXX")])'),
    ('"to remove what is left of the module")])', '"TO REMOVE WHAT IS LEFT OF THE MODULE")])'),
    ('detail += (". Evidence: the state holds no"', 'detail += (". evidence: the state holds no"'),
    ('place = ev.where.display_dir or "its module directory"',
     'place = ev.where.display_dir or "ITS MODULE DIRECTORY"'),
    ('Alternative(cmd.apply(ev.where), "to keep them: the apply records them"),',
     'Alternative(cmd.apply(ev.where), "XXto keep them: the apply records themXX"),'),
])
def test_the_wording_of_a_plain_sentence_fragment_is_prose(old: str, new: str) -> None:
    assert prose_wording(old, new)


@pytest.mark.parametrize(("old", "new"), [
    # a command, an option, an identifier or a code name in the literal
    ('"`--write` records it as absent"),', '"`--WRITE` RECORDS IT AS ABSENT"),'),
    ('"hold, delete or --import each, then --forget-orphan"',
     '"XXhold, delete or --import each, then --forget-orphanXX"'),
    ('"the lookup matched (orphan_found), then records"', '"THE LOOKUP MATCHED (ORPHAN_FOUND), THEN RECORDS"'),
    ('"with a moved { from = OLD } block each"', '"with a moved { from = old } block each"'),
    # too short to be a sentence: a word, a key, a separator
    ('if command == "destroy":', 'if command == "XXdestroyXX":'),
    ('command = rec.active_command or "a mutation"', 'command = rec.active_command or "A MUTATION"'),
    ('shown = ", ".join(parts)', 'shown = "XX, XX".join(parts)'),
    # compared, a key, or a method's object or argument, however many words
    ('if reason == "no state was found":', 'if reason == "XXno state was foundXX":'),
    ('if "no state was found" in text:', 'if "NO STATE WAS FOUND" in text:'),
    ('doc = {"the three words": 1}', 'doc = {"XXthe three wordsXX": 1}'),
    ('ok = text.startswith("the state is empty")', 'ok = text.startswith("XXthe state is emptyXX")'),
    ('"the state is empty".join(parts)', '"XXthe state is emptyXX".join(parts)'),
    # not mutmut's string operator, or more than the literal changed
    ('"to remove what is left"', '"to remove what is right"'),
    ('x = "to remove what is left" + a', 'x = "XXto remove what is leftXX" - a'),
    ('f"to remove {what} is left"', 'f"XXto remove {what} is leftXX"'),
    ('"""to remove what is left"""', '"""XXto remove what is leftXX"""'),
])
def test_a_command_key_comparison_or_other_change_is_never_prose(old: str, new: str) -> None:
    assert not prose_wording(old, new)
