"""The accepted survivors of `make mutation` (scripts/mutation-survivors.toml) still name code.

scripts/mutation.py runs mutmut over the rule modules (minutes, outside `make test`) and
reports an accepted survivor that no longer matches as stale. This keeps the file honest on
every test run, cheaply: each entry names a module the script mutates and a function that
module still defines, says why in words, and is listed once; and each module's test files
exist. Whether the changed line itself still exists is the script's to say: other work
rewrites these modules, and a line that moved is a stale entry, not a failing build.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
KEYS = {"module", "function", "old", "new", "why"}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", REPO / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _defined(path: Path) -> set[str]:
    """The functions of a module, `name` at the top and `Class.name` for methods."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef))
    return names


def _entries() -> list[dict[str, str]]:
    return tomllib.loads((REPO / "scripts" / "mutation-survivors.toml").read_text(encoding="utf-8"))["survivor"]


def test_every_accepted_survivor_names_a_mutated_module_and_a_function_it_defines() -> None:
    modules = _script().MODULES
    wrong = []
    for entry in _entries():
        if set(entry) != KEYS:
            wrong.append(f"{entry}: keys {sorted(entry)}, not {sorted(KEYS)}")
        elif entry["module"] not in modules:
            wrong.append(f"{entry['module']}: not a module scripts/mutation.py mutates")
        elif entry["function"] not in _defined(REPO / entry["module"]):
            wrong.append(f"{entry['module']}: defines no function {entry['function']}")
    assert wrong == []


def test_every_accepted_survivor_says_why_and_is_listed_once() -> None:
    entries = _entries()
    keys = [(e["module"], e["function"], e["old"], e["new"]) for e in entries]
    assert [e for e in entries if len(e["why"].strip()) < 20 or "TODO" in e["why"]] == []
    assert len(keys) == len(set(keys))


def test_every_mutated_module_and_its_test_files_exist() -> None:
    """A test may be named by its node id (`FILE::test`): its file must exist, and the test in it."""
    missing = [p for module, tests in _script().MODULES.items() for p in (module, *tests)
               if not (REPO / p.partition("::")[0]).is_file()
               or ("::" in p and f"def {p.partition('::')[2]}(" not in (REPO / p.partition("::")[0]).read_text())]
    assert missing == []
