"""One context per command: the CLI builds the `Runtime` (runtime/root.py) once and passes it
down; every room reads and writes through its one store. So no module outside runtime/root.py
turns a root path back into a store, and only the CLI (cli/settings.py) builds a Runtime.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "hybridops_tf"

# the callable -> the only modules (relative to the package) that may call it
ONLY_IN = {
    "open_store": {"runtime/root.py", "store/__init__.py"},
    "local_root": {"runtime/transfer.py", "store/__init__.py"},
    "Runtime": {"cli/settings.py"},
}


def calls_out_of_place(package_dir: Path) -> list[str]:
    """`file:line name` of each call of a name in ONLY_IN made where it is not allowed."""
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in ONLY_IN and rel not in ONLY_IN[name]:
                found.append(f"{rel}:{node.lineno} {name}")
    return found


def test_only_the_cli_builds_a_runtime_and_only_the_runtime_opens_the_store() -> None:
    assert calls_out_of_place(PACKAGE_DIR) == []


def test_the_check_names_a_room_that_opens_the_store_from_a_root_path(tmp_path: Path) -> None:
    room = tmp_path / "stack" / "report.py"
    room.parent.mkdir()
    room.write_text("from hybridops_tf.store import open_store\n\n"
                    "def read(root):\n    return store.open_store(root).read('k')\n", encoding="utf-8")
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "settings.py").write_text("x = Runtime(root)\n", encoding="utf-8")
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "saved.py").write_text("engine = Runtime(root).engine_for()\n", encoding="utf-8")

    assert calls_out_of_place(tmp_path) == ["plan/saved.py:1 Runtime", "stack/report.py:4 open_store"]
