"""Which files in a module directory the engine reads as configuration, and which it prefers.

The engine loads, per module directory, the files named `*.tf` and `*.tf.json`; OpenTofu also
`*.tofu` and `*.tofu.json`, and where `NAME.tofu` (`NAME.tofu.json`) sits beside `NAME.tf`
(`NAME.tf.json`) OpenTofu reads the `.tofu` one and ignores the other (so a module can hold
an OpenTofu-only variant of a file; Terraform never reads `.tofu` files). Both skip the names
their loader ignores although the suffix matches: hidden ones (a leading `.`: an editor's
`.#main.tf` lock or `.main.tf.swp`), editor backups ending in `~`, and `#...#` auto-saves.

Here, below every room, so that the engine's module walk (engine/module_tree.py), the
declarations reader (inputs/declarations.py) and the module checks (record/address.py,
stack/loader.py) read one rule.
"""

from __future__ import annotations

from pathlib import Path

TERRAFORM_SUFFIXES = (".tf", ".tf.json")
TOFU_SUFFIXES = (".tofu", ".tofu.json")
CONFIG_SUFFIXES = TERRAFORM_SUFFIXES + TOFU_SUFFIXES
_TOFU_TWIN = {".tofu": ".tf", ".tofu.json": ".tf.json"}


def ignored(name: str) -> bool:
    """A name the engine's configuration loader skips although its suffix matches."""
    return name.startswith(".") or name.endswith("~") or (name.startswith("#") and name.endswith("#"))


def is_config_file(name: str, tofu: bool | None = None) -> bool:
    """A file name the engine reads as configuration in a module directory: for OpenTofu
    (`tofu`), Terraform (not `tofu`) or either (None)."""
    suffixes = CONFIG_SUFFIXES if tofu is None or tofu else TERRAFORM_SUFFIXES
    return name.endswith(suffixes) and not ignored(name)


def suffix_of(name: str) -> str:
    """The configuration suffix of a file name ("" when none): `.tf.json` before `.json`."""
    return next((s for s in (".tf.json", ".tofu.json", ".tf", ".tofu") if name.endswith(s)), "")


def engine_reads(names: list[str], tofu: bool) -> list[str]:
    """Of the configuration file names of one directory, those the engine reads, sorted:
    Terraform's `.tf`/`.tf.json`; OpenTofu's with a `.tofu`/`.tofu.json` file taking the
    place of the `.tf`/`.tf.json` file of the same name."""
    chosen = [n for n in names if is_config_file(n, tofu)]
    if tofu:
        shadowed = {n[: -len(suffix_of(n))] + _TOFU_TWIN[suffix_of(n)] for n in chosen if suffix_of(n) in _TOFU_TWIN}
        chosen = [n for n in chosen if n not in shadowed]
    return sorted(chosen)


def holds_configuration(directory: Path) -> bool:
    """The directory holds a configuration file some engine reads (OSError when unreadable)."""
    return any(is_config_file(p.name) and p.is_file() for p in directory.iterdir())
