"""Whether a module's configuration may still declare an action: the I/O half of carrying an
unfinished action forward (record/actions.py carried_forward).

An action's address ends in `action.TYPE.NAME` (inside `module.x[...]` for a child module's).
Its block is looked for as text in every configuration file the engine reads for the module:
the root and its local child modules (engine/module_tree.py), and the modules `init` installed
under `.terraform/modules`. Unsure means yes: a row is dropped only when no file holds a block
of that type and name, so an undone action is never forgotten on a guess.
"""

from __future__ import annotations

import re
from pathlib import Path

from hybridops_tf.engine.module_tree import config_files, is_config_file, module_tree

_ADDRESS = re.compile(r'(?:^|\.)action\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$')
INSTALLED = Path(".terraform") / "modules"


def may_declare(module_dir: Path, address: str) -> bool:
    """False only when no configuration file of the module's tree declares `address`'s action."""
    match = _ADDRESS.search(address)
    if match is None:
        return True
    kind, name = match.groups()
    block = re.compile(rf'\baction\s+"{re.escape(kind)}"\s+"{re.escape(name)}"')
    for path in _files(module_dir):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return True
        if block.search(text) or (path.name.endswith(".json") and f'"{kind}"' in text and f'"{name}"' in text):
            return True
    return False


def _files(module_dir: Path) -> list[Path]:
    files = [path for directory in module_tree(module_dir) for path in config_files(directory)]
    installed = module_dir / INSTALLED
    if installed.is_dir():
        files += [path for path in sorted(installed.rglob("*")) if is_config_file(path.name) and path.is_file()]
    return files
