"""The package's layers, read from its imports: each folder of hybridops_tf is one layer, and
a layer imports only itself and the layers below it (LAYERS names the ones right below;
what those may import, it may too):

    cli -> picture -> reconcile | plan -> stack -> operation -> runtime -> store -> record -> engine -> base
                                                               runtime -> inputs -> base
    sim: alone (the simulated cloud's provider; its engine environment reaches the core
    through runtime.hooks, registered by the CLI)

The package's top holds only __init__.py (the version, which any layer may read). No two
modules import each other, directly or through others. Every import counts, at module
level or inside a function, relative ones resolved.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "hybridops_tf"
PACKAGE_DIR = Path(__file__).resolve().parents[2] / PACKAGE

# layer -> the layers right below it
LAYERS: dict[str, tuple[str, ...]] = {
    "base": (),
    "engine": ("base",),
    "inputs": ("base",),
    "record": ("engine",),
    "store": ("record",),
    "runtime": ("store", "inputs"),
    "operation": ("runtime",),
    "stack": ("operation",),
    "plan": ("stack",),
    "reconcile": ("stack",),
    "picture": ("reconcile",),
    "cli": ("picture", "plan", "sim"),
    "sim": (),
}
TOP = "top"  # hybridops_tf/__init__.py


def _allowed(layer: str) -> frozenset[str]:
    below = {layer, TOP}
    for lower in LAYERS[layer]:
        below |= _allowed(lower)
    return frozenset(below)


ALLOWED = {layer: _allowed(layer) for layer in LAYERS} | {TOP: frozenset({TOP})}


@dataclass(frozen=True, slots=True)
class Edge:
    path: Path
    line: int
    source: str  # the importing module
    target: str  # the module imported, resolved

    def describe(self, root: Path) -> str:
        return (f"{self.path.relative_to(root)}:{self.line}: {layer_of(self.source)} -> "
                f"{layer_of(self.target)} ({self.source} imports {self.target})")


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else TOP


def module_name(path: Path, root: Path) -> str:
    """`root/hybridops_tf/engine/binary.py` -> `hybridops_tf.engine.binary` (root holds the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _base(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an ImportFrom names, with `from .` / `from ..` resolved."""
    if not node.level:
        return node.module or ""
    package = source.split(".") if is_package else source.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def imported_modules(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file: the whole tree, not only the top level."""
    source = module_name(path, root)
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(source, is_package, node)
            for alias in node.names:  # `from pkg import mod` imports pkg.mod when it is a module
                sub = f"{base}.{alias.name}"
                yield node.lineno, sub if _is_module(sub, root) else base


def _is_module(name: str, root: Path) -> bool:
    where = root.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def package_edges(root: Path, package: str = PACKAGE) -> Iterator[Edge]:
    """Every import from a module of `package` (below `root`) of a module of the same package."""
    for path in sorted((root / package).rglob("*.py")):
        source = module_name(path, root)
        for line, target in imported_modules(path, root):
            if target == package or target.startswith(f"{package}."):
                yield Edge(path, line, source, target)


def violations(root: Path, package: str = PACKAGE) -> list[str]:
    return [edge.describe(root) for edge in package_edges(root, package)
            if layer_of(edge.target) not in ALLOWED.get(layer_of(edge.source), frozenset())]


def circles(root: Path, package: str = PACKAGE) -> list[list[str]]:
    """Every set of modules that import each other (strongly connected, more than one), sorted."""
    graph: dict[str, set[str]] = {}
    for edge in package_edges(root, package):
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_every_import_in_the_package_follows_the_layers() -> None:
    found = violations(PACKAGE_DIR.parent)

    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_no_modules_import_each_other() -> None:
    assert circles(PACKAGE_DIR.parent) == []


def test_the_package_top_holds_only_its_face_and_every_folder_is_a_layer() -> None:
    top = sorted(p.name for p in PACKAGE_DIR.glob("*.py"))
    folders = sorted(p.name for p in PACKAGE_DIR.iterdir() if (p / "__init__.py").is_file())

    assert top == ["__init__.py"]
    assert folders == sorted(LAYERS)


def test_the_checker_reads_the_real_package() -> None:
    edges = list(package_edges(PACKAGE_DIR.parent))

    assert any(layer_of(e.source) == "operation" and layer_of(e.target) == "engine" for e in edges)
    assert any(layer_of(e.source) == "cli" and layer_of(e.target) == "sim" for e in edges)
    assert layer_of("hybridops_tf") == TOP and layer_of("hybridops_tf.record.model") == "record"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_each_import_against_the_layers_is_named_with_its_file_line_and_edge(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "base/__init__.py": "",
        "base/errors.py": "class E(Exception): ...\n",
        "store/__init__.py": "from hybridops_tf.engine import run\n",  # store -> engine: allowed
        "cli/__init__.py": "",
        "cli/main.py": "import hybridops_tf.sim.cloud\nfrom hybridops_tf import store\n",  # allowed
        "engine/__init__.py": "",
        "engine/run.py": ("from hybridops_tf.engine import parse\n\n\n"
                          "def go():\n    from hybridops_tf.store import E\n    return E\n"),
        "engine/parse.py": "from ..base.errors import E\n",  # allowed
        "engine/bad.py": "from ..record import model\n",
        "record/__init__.py": "",
        "record/model.py": "",
        "sim/__init__.py": "",
        "sim/cloud.py": "from hybridops_tf import store\n",
        "reconcile/__init__.py": "from . import sim_bits\n",
        "reconcile/sim_bits.py": "from ..sim import cloud\nfrom ..cli.main import x\n",
    })

    found = violations(root)

    assert found == [
        "hybridops_tf/engine/bad.py:1: engine -> record (hybridops_tf.engine.bad imports hybridops_tf.record.model)",
        "hybridops_tf/engine/run.py:5: engine -> store (hybridops_tf.engine.run imports hybridops_tf.store)",
        "hybridops_tf/reconcile/sim_bits.py:1: reconcile -> sim "
        "(hybridops_tf.reconcile.sim_bits imports hybridops_tf.sim.cloud)",
        "hybridops_tf/reconcile/sim_bits.py:2: reconcile -> cli "
        "(hybridops_tf.reconcile.sim_bits imports hybridops_tf.cli.main)",
        "hybridops_tf/sim/cloud.py:1: sim -> store (hybridops_tf.sim.cloud imports hybridops_tf.store)",
    ]


def test_modules_that_import_each_other_are_found_as_one_circle(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "stack/__init__.py": "",
        "stack/model.py": "def load():\n    from hybridops_tf.stack.loader import L\n",
        "stack/loader.py": "from hybridops_tf.stack import model\n",
        "stack/graph.py": "from hybridops_tf.stack import model\n",
    })

    assert circles(root) == [["hybridops_tf.stack.loader", "hybridops_tf.stack.model"]]


def test_a_package_imported_by_its_relative_name_resolves_to_itself(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "base/__init__.py": "from . import files\n",
                            "base/files.py": ""})

    edges = [(e.source, e.target) for e in package_edges(root)]

    assert edges == [("hybridops_tf.base", "hybridops_tf.base.files")]


def test_exit_codes_are_an_int_enum_with_the_documented_values() -> None:
    from hybridops_tf.base.errors import EngineError, EngineNotFound, ExitCode, HyopsError

    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0, "FAILED": 1, "USAGE": 2, "INCONSISTENT": 3, "REFUSED": 4, "INTERRUPTED": 130}
    assert isinstance(ExitCode.USAGE, int)
    assert HyopsError.exit_code == EngineError.exit_code == ExitCode.FAILED
    assert EngineNotFound.exit_code == ExitCode.USAGE  # a set-up error


def room_circles(root: Path, layer: str, package: str = PACKAGE) -> list[list[str]]:
    """Inside one layer, each file and each subfolder is a room: rooms that import each other
    (through any of their modules: an arrow up inside the layer), sorted."""
    prefix = f"{package}.{layer}."

    def room(module: str) -> str | None:
        return module[len(prefix):].split(".")[0] if module.startswith(prefix) else None

    graph: dict[str, set[str]] = {}
    for edge in package_edges(root, package):
        source, target = room(edge.source), room(edge.target)
        if source is not None and target is not None and source != target:
            graph.setdefault(source, set()).add(target)
            graph.setdefault(target, set())

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    found = {tuple(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a)}
    return sorted(list(pair) for pair in found)


LAYERS = sorted(d.name for d in PACKAGE_DIR.iterdir() if (d / "__init__.py").is_file())


@pytest.mark.parametrize("layer", LAYERS)
def test_no_two_rooms_of_a_layer_import_each_other(layer: str) -> None:
    """stack/queue and stack/report once imported each other's insides (three arrows up in
    stack/), reconcile/model.py and reconcile/lookup/ each other's (the lookups' verdicts, now
    reconcile/verdict.py below both): in every layer the rooms import one way only."""
    assert room_circles(PACKAGE_DIR.parent, layer) == []


def test_rooms_that_import_each_other_are_found(tmp_path: Path) -> None:
    files = {"stack/__init__.py": "", "stack/report.py": "def f():\n    from hybridops_tf.stack.queue import view\n",
             "stack/queue/__init__.py": "", "stack/queue/view.py": "from hybridops_tf.stack import report\n",
             "stack/model.py": ""}
    for name, text in files.items():
        (tmp_path / PACKAGE / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / PACKAGE / name).write_text(text)

    assert room_circles(tmp_path, "stack") == [["queue", "report"]]


def test_a_circle_made_only_by_type_checking_imports_is_a_circle(tmp_path: Path) -> None:
    """store/__init__.py once imported store.local and store.postgres for their types, under `if
    TYPE_CHECKING`, while they implemented its protocols: type-only imports count as edges."""
    root = _tree(tmp_path, {
        "__init__.py": "",
        "store/__init__.py": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                              "    from hybridops_tf.store.local import RecordStore\n"),
        "store/local.py": "from hybridops_tf.store import Records\n",
    })

    assert circles(root) == [["hybridops_tf.store", "hybridops_tf.store.local"]]
