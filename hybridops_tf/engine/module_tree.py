"""The files the engine reads as a module's configuration: the root's and every local child
module's configuration files, found as the engine finds them.

Which names the engine reads is base/config_names.py's rule (`*.tf`, `*.tf.json`; OpenTofu's
`*.tofu`, `*.tofu.json`; hidden files, backups and auto-saves skipped). Subdirectories are
not read, except those a `module` block calls with a local `source = "./..."` or `"../..."`
(registry and remote sources are copied under `.terraform/modules` by `init`, pinned by their
`version` in the configuration).

Both engine/initcheck.py (is `init` due again?) and operation/config_digest.py (has the
configuration changed since a run?) walk the tree through this one module.
"""

from __future__ import annotations

import re
from pathlib import Path

from hybridops_tf.base.config_names import CONFIG_SUFFIXES, ignored, is_config_file

__all__ = ["CONFIG_SUFFIXES", "config_files", "ignored", "is_config_file", "local_sources", "module_tree"]

# `source = "./x"` in HCL, `"source": "./x"` in JSON: a call of a local child module
_LOCAL_SOURCE = re.compile(r'"?\bsource"?\s*[=:]\s*"(\.\.?/[^"]*)"')
MAX_DIRS = 256  # bound on the local module tree walk


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
