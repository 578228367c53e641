"""The files the engine reads as a module's configuration: the root's and every local child
module's configuration files, found as the engine finds them.

The engine loads, per module directory, the files named `*.tf` and `*.tf.json` (OpenTofu
also `*.tofu` and `*.tofu.json`) and ignores the names its own loader ignores: hidden ones
(a leading `.`, e.g. an editor's `.#main.tf` lock or `.main.tf.swp`), editor backups ending
in `~`, and `#...#` auto-saves. Subdirectories are not read, except those a `module` block
calls with a local `source = "./..."` or `"../..."` (registry and remote sources are copied
under `.terraform/modules` by `init`, pinned by their `version` in the configuration).

Both engine/initcheck.py (is `init` due again?) and operation/config_digest.py (has the
configuration changed since a run?) walk the tree through this one module.
"""

from __future__ import annotations

import re
from pathlib import Path

CONFIG_SUFFIXES = (".tf", ".tf.json", ".tofu", ".tofu.json")
# `source = "./x"` in HCL, `"source": "./x"` in JSON: a call of a local child module
_LOCAL_SOURCE = re.compile(r'"?\bsource"?\s*[=:]\s*"(\.\.?/[^"]*)"')
MAX_DIRS = 256  # bound on the local module tree walk


def ignored(name: str) -> bool:
    """A name the engine's configuration loader skips although its suffix matches."""
    return name.startswith(".") or name.endswith("~") or (name.startswith("#") and name.endswith("#"))


def is_config_file(name: str) -> bool:
    """A file name the engine reads as configuration in a module directory."""
    return name.endswith(CONFIG_SUFFIXES) and not ignored(name)


def config_files(directory: Path) -> list[Path]:
    """The configuration files of one module directory, sorted by name ([] if unreadable)."""
    try:
        return sorted(p for p in directory.iterdir() if is_config_file(p.name) and p.is_file())
    except OSError:
        return []


def local_sources(text: str) -> list[str]:
    """The local child-module sources (`./net`, `../shared`) one configuration file calls."""
    return _LOCAL_SOURCE.findall(text)


def module_tree(module_dir: Path) -> list[Path]:
    """The root and every local child module directory it calls, recursively, each once,
    in the order found (the root first)."""
    pending = [module_dir.resolve()]
    seen: list[Path] = []
    while pending and len(seen) < MAX_DIRS:
        directory = pending.pop(0)
        if directory in seen or not directory.is_dir():
            continue
        seen.append(directory)
        for path in config_files(directory):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            pending.extend((directory / src).resolve() for src in local_sources(text))
    return seen
