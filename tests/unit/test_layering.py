"""The package's layers, read from its imports (issue #14): cli -> core -> engine.

- engine (hybridops_tf/engine/**) imports only the engine: it runs the engine and reads its
  output, and knows nothing of records, stacks or the CLI;
- the core (everything else but cli/ and sim/) imports the core and the engine, never the
  CLI and never the sim (the sim's engine environment reaches it through engine_hooks);
- sim (hybridops_tf/sim/**, the simulated cloud's provider) imports only the sim;
- cli (hybridops_tf/cli/**) may import anything: it composes the rest.

Every import counts, at module level or inside a function, relative ones resolved.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "hybridops_tf"
PACKAGE_DIR = Path(__file__).resolve().parents[2] / PACKAGE

# layer -> the layers it may import
ALLOWED = {
    "cli": frozenset({"cli", "core", "engine", "sim"}),
    "core": frozenset({"core", "engine"}),
    "engine": frozenset({"engine"}),
    "sim": frozenset({"sim"}),
}


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
    return {"cli": "cli", "engine": "engine", "sim": "sim"}.get(parts[1] if len(parts) > 1 else "", "core")


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
            if layer_of(edge.target) not in ALLOWED[layer_of(edge.source)]]


def test_every_import_in_the_package_follows_the_layers() -> None:
    found = violations(PACKAGE_DIR.parent)

    assert not found, "imports against the layering (cli -> core -> engine; sim alone):\n" + "\n".join(found)


def test_the_checker_reads_the_real_package() -> None:
    edges = list(package_edges(PACKAGE_DIR.parent))

    assert any(layer_of(e.source) == "core" and layer_of(e.target) == "engine" for e in edges)
    assert any(layer_of(e.source) == "cli" and layer_of(e.target) == "sim" for e in edges)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_each_import_against_the_layers_is_named_with_its_file_line_and_edge(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "errors.py": "class E(Exception): ...\n",
        "store.py": "from hybridops_tf.engine import run\n",  # core -> engine: allowed
        "cli/__init__.py": "",
        "cli/main.py": "import hybridops_tf.sim.cloud\nfrom hybridops_tf import store\n",  # allowed
        "engine/__init__.py": "",
        "engine/run.py": ("from hybridops_tf.engine import parse\n\n\n"
                          "def go():\n    from hybridops_tf.errors import E\n    return E\n"),
        "engine/parse.py": "from ..errors import E\n",
        "sim/__init__.py": "",
        "sim/cloud.py": "from hybridops_tf import store\n",
        "reconcile/__init__.py": "from . import sim_bits\n",
        "reconcile/sim_bits.py": "from ..sim import cloud\nfrom ..cli.main import x\n",
    })

    found = violations(root)

    assert found == [
        "hybridops_tf/engine/parse.py:1: engine -> core (hybridops_tf.engine.parse imports hybridops_tf.errors)",
        "hybridops_tf/engine/run.py:5: engine -> core (hybridops_tf.engine.run imports hybridops_tf.errors)",
        "hybridops_tf/reconcile/sim_bits.py:1: core -> sim "
        "(hybridops_tf.reconcile.sim_bits imports hybridops_tf.sim.cloud)",
        "hybridops_tf/reconcile/sim_bits.py:2: core -> cli "
        "(hybridops_tf.reconcile.sim_bits imports hybridops_tf.cli.main)",
        "hybridops_tf/sim/cloud.py:1: sim -> core (hybridops_tf.sim.cloud imports hybridops_tf.store)",
    ]


def test_a_package_imported_by_its_relative_name_resolves_to_itself(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "engine/__init__.py": "from . import files\n",
                            "engine/files.py": ""})

    edges = [(e.source, e.target) for e in package_edges(root)]

    assert edges == [("hybridops_tf.engine", "hybridops_tf.engine.files")]


def test_the_engine_errors_below_the_core_keep_their_exit_codes() -> None:
    from hybridops_tf import errors
    from hybridops_tf.engine import errors as engine_errors

    assert errors.EngineError is engine_errors.EngineError
    assert errors.HyopsError is engine_errors.HyopsError
    assert engine_errors.HyopsError.exit_code == errors.ExitCode.FAILED
    assert engine_errors.EngineError.exit_code == errors.ExitCode.FAILED
    assert engine_errors.EngineNotFound.exit_code == errors.ExitCode.USAGE  # a set-up error
    assert engine_errors.EngineNotStarted.exit_code == errors.ExitCode.FAILED
    assert issubclass(errors.UsageError, engine_errors.HyopsError)


def test_exit_codes_are_an_int_enum_with_the_documented_values() -> None:
    from hybridops_tf.errors import ExitCode

    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0, "FAILED": 1, "USAGE": 2, "INCONSISTENT": 3, "REFUSED": 4, "INTERRUPTED": 130}
    assert isinstance(ExitCode.USAGE, int)
