"""The lookups file: which file, and what it declares (docs/contract.md: The lookups file).

```yaml
lookups:
  barcloud_thing:                    # resource type
    command: [python3, lookup.py]    # argv, no shell; run in the file's folder
    match: [name]                    # planned attributes a candidate must equal
    complete: true                   # it lists every object of the type that could match
    timeout: 30                      # seconds (default 30)
  sim_vm:
    source: query                    # instead of `command`: the engine's own listing
    match: [name]                    # (`terraform query`, Terraform >= 1.14: lookup/query.py)
    complete: true
```

Exactly one of `command` and `source: query`; `match`, `complete` and `timeout` mean the same
for both.

Which file: `--lookups FILE`, else `HYOPS_LOOKUPS`, else `hyops.lookups.yml` in the project's
top (the folder that holds the runtime root) when there is one; else no lookups, and
reconcile advises as it always did. A file that is named but missing, or that is not
valid, is a usage error (exit 2) before anything runs, naming the file and the key.

The command runs in the file's folder, so relative paths in it (`lookup.py`, `./bin/x`) are
the file's neighbours; a first word without a `/` is found on PATH, and `hyops` means this
very hyops (`[hyops, sim, lookup]` works wherever hyops is installed).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import UsageError

LOOKUPS_ENV = "HYOPS_LOOKUPS"
DEFAULT_NAME = "hyops.lookups.yml"
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
HYOPS_WORD = "hyops"  # a command's first word that means this hyops
_KEYS = ("command", "source", "match", "complete", "timeout")
QUERY_SOURCE = "query"  # `source: query`: the engine's listing (lookup/query.py), no command
_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class LookupSpec:
    """How to ask the provider about one resource type."""

    type: str
    command: tuple[str, ...]  # empty for the query source
    match: tuple[str, ...] = ()
    complete: bool = False
    timeout: float = DEFAULT_TIMEOUT
    folder: Path = Path(".")  # where the command runs: the lookups file's folder
    source: str = ""  # the lookups file, as named in findings
    query: bool = False  # `source: query`: the engine lists the type (`terraform query`), no command

    def argv(self) -> list[str]:
        """The argv to spawn: `hyops` is this hyops; a relative path is the file's neighbour."""
        first, rest = self.command[0], list(self.command[1:])
        if first == HYOPS_WORD:
            return [sys.executable, "-m", "hybridops_tf.cli.main", *rest]
        if "/" in first:
            return [str((self.folder / first) if not os.path.isabs(first) else Path(first)), *rest]
        return [first, *rest]

    def describe(self) -> str:
        how = "`source: query` (the engine's `terraform query`)" if self.query else " ".join(self.command)
        return f"{how} ({self.source}, type {self.type})"


@dataclass(frozen=True)
class Lookups:
    """The lookups in effect for one reconcile: the file (None: no file) and its specs."""

    path: Path | None = None
    specs: Mapping[str, LookupSpec] | None = None

    def for_type(self, type_name: str) -> LookupSpec | None:
        return (self.specs or {}).get(type_name)

    def __bool__(self) -> bool:
        return bool(self.specs)


NONE = Lookups()


def chosen_file(named: Path | None, project_top: Path | None) -> Path | None:
    """The lookups file: the one named (`--lookups`, or HYOPS_LOOKUPS through the CLI), else
    the project top's hyops.lookups.yml when it is a file, else None."""
    if named is not None:
        return named
    if project_top is not None and (project_top / DEFAULT_NAME).is_file():
        return project_top / DEFAULT_NAME
    return None


def load_chosen(named: Path | None, project_top: Path | None) -> Lookups:
    """The lookups in effect (NONE when no file applies); UsageError when the file is bad,
    or named and missing."""
    path = chosen_file(named, project_top)
    if path is None:
        return NONE
    if not path.is_file():
        raise UsageError(f"lookups file {path.absolute()} (named by --lookups or {LOOKUPS_ENV}) is not a file: "
                         "fix the path, or leave it out to reconcile without lookups; nothing was run")
    return load(path)


def load(path: Path) -> Lookups:
    """Read and validate a lookups file; UsageError naming the file and the key."""
    import yaml

    shown = path.absolute()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"lookups file {shown}: cannot be read ({getattr(err, 'strerror', None) or err}); "
                         "nothing was run") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"lookups file {shown}: not valid YAML{where}; nothing was run") from None
    return Lookups(path, parse(doc, shown))


def parse(doc: Any, shown: Path) -> dict[str, LookupSpec]:
    """The specs of a parsed lookups document (pure but for finding each command)."""
    def bad(key: str, why: str) -> UsageError:
        return UsageError(f"lookups file {shown}: {key}: {why}; nothing was run")

    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise bad("(top)", "expected a mapping with one key, `lookups`")
    unknown = [str(k) for k in doc if k != "lookups"]
    if unknown:
        raise bad(unknown[0], "unknown key (the file holds only `lookups`)")
    entries = doc.get("lookups") or {}
    if not isinstance(entries, dict):
        raise bad("lookups", "expected a mapping of resource type -> {command or source, match, complete, timeout}")
    specs: dict[str, LookupSpec] = {}
    for type_name, body in entries.items():
        key = f"lookups.{type_name}"
        if not isinstance(type_name, str) or not _TYPE.match(type_name):
            raise bad(key, "not a resource type name (e.g. aws_instance)")
        specs[type_name] = _spec(type_name, body, key, shown, bad)
    return specs


def _spec(type_name: str, body: Any, key: str, shown: Path, bad: Any) -> LookupSpec:
    if not isinstance(body, dict):
        raise bad(key, "expected a mapping with `command` or `source: query` (and `match`, `complete`, `timeout`)")
    unknown = [str(k) for k in body if k not in _KEYS]
    if unknown:
        raise bad(f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(_KEYS)})")
    query = _query_source(body, key, bad)
    words = () if query else _command(body.get("command"), key, bad)
    match = body.get("match", [])
    if not isinstance(match, list) or not all(isinstance(m, str) and m for m in match):
        raise bad(f"{key}.match", "must be a list of attribute names, e.g. [name]")
    complete = body.get("complete", False)
    if not isinstance(complete, bool):
        raise bad(f"{key}.complete", f"must be true or false, got {complete!r}")
    timeout = body.get("timeout", DEFAULT_TIMEOUT)
    if (isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_TIMEOUT):
        raise bad(f"{key}.timeout", f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:.0f}, "
                  f"got {timeout!r}")
    spec = LookupSpec(type_name, words, tuple(dict.fromkeys(match)), complete, float(timeout),
                      shown.parent, str(shown), query=query)
    if not query:
        _check_found(spec, f"{key}.command", bad)
    return spec


def _query_source(body: dict[str, Any], key: str, bad: Any) -> bool:
    """Whether the entry asks the engine (`source: query`); exactly one of it and `command`."""
    if "source" not in body:
        if body.get("command") is None:
            raise bad(f"{key}.command", "missing: the argv of the command that lists candidates "
                      f"(or `source: {QUERY_SOURCE}`: the engine lists them, Terraform >= 1.14)")
        return False
    if body["source"] != QUERY_SOURCE:
        raise bad(f"{key}.source", f"must be {QUERY_SOURCE} (the engine's `terraform query`), got {body['source']!r}")
    if "command" in body:
        raise bad(key, f"give `command` or `source: {QUERY_SOURCE}`, not both")
    return True


def _command(command: Any, key: str, bad: Any) -> tuple[str, ...]:
    """The argv words of an entry's `command`."""
    if isinstance(command, str):
        raise bad(f"{key}.command", "must be a list (an argv, run without a shell), e.g. [python3, lookup.py]")
    if (not isinstance(command, list) or not command
            or not all(isinstance(w, str | int | float) and not isinstance(w, bool) for w in command)):
        raise bad(f"{key}.command", "must be a non-empty list of words")
    words = tuple(str(w) for w in command)
    if not words[0] or any("\0" in w for w in words):
        raise bad(f"{key}.command", "holds an empty first word or a NUL byte")
    return words


def _check_found(spec: LookupSpec, key: str, bad: Any) -> None:
    """The command's first word names something that can run: found on PATH, or a file
    (relative to the lookups file's folder) that is executable."""
    first = spec.command[0]
    if first == HYOPS_WORD:
        return
    if "/" not in first:
        if shutil.which(first) is None:
            raise bad(key, f"command {first!r} not found on PATH")
        return
    path = Path(spec.argv()[0])
    if not path.is_file():
        raise bad(key, f"command {first!r} not found ({path} is not a file)")
    if not os.access(path, os.X_OK):
        raise bad(key, f"command {first!r} is not executable ({path}): chmod +x it, or run it with "
                  "its interpreter, e.g. [python3, lookup.py]")
