"""The record's `config_digest`: what the engine reads on its own for a module, digested,
so `stack apply --resume` skips a member only when none of it changed since its `ok` apply
(docs/stacks.md: Resume).

What counts, all of it read as the engine reads it:
- the configuration files of the root module and of every local child module it calls
  (`source = "./..."` or `"../..."`): `*.tf`, `*.tf.json`, `*.tofu`, `*.tofu.json`, minus
  the names the engine ignores (engine/module_tree.py);
- the root's dependency lock file `.terraform.lock.hcl` (which provider versions `init`
  installs);
- the root's var files the engine reads by itself: terraform.tfvars(.json) and
  *.auto.tfvars(.json) (inputs/values.py module_var_files);
- the caller's `TF_VAR_` values of declared variables that no explicit input overrides.
Var files given on the command line (`--var-file`, `--inputs`) and stack inputs are not
here: hyops reads them and passes their values itself, so they are the explicit inputs the
record's `inputs_digest` covers.

What must not count, because it changes without the configuration changing: `.terraform/`
(init's copies of providers and remote modules, which the lock file and the configuration's
`version` pins decide), state files (`terraform.tfstate`, its `.backup`, `errored.tfstate`,
`terraform.tfstate.d/`: every apply rewrites them), saved plans, hidden files and editor
backups (`.#main.tf`, `main.tf~`, `#main.tf#`, swap files), files of subdirectories no
`source` calls, and anything else in the folder (README, tests). A remote module source
without a pinned version can change upstream unseen; the plan `reconcile --stack` runs
for an `ok` member is what catches that.

How: each file is named by its path relative to the root module directory (so a checkout
elsewhere digests alike) and hashed whole (sha256); the sorted list of (path, hash) and the
environment values are digested with HMAC-SHA256 under the runtime root's inputs digest key
(a var file or TF_VAR_ may hold a secret, so it is keyed like `inputs_digest`). Reading the
files is the only I/O; `listing` and `digest_of` are pure.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.engine.module_tree import config_files, module_tree
from hybridops_tf.inputs.values import module_var_files
from hybridops_tf.record.applied import LOCK_FILE

if TYPE_CHECKING:
    from hybridops_tf.inputs.values import ResolvedInputs

PREFIX = "hmac-sha256:config-v1:"  # a new scheme gets a new prefix: an older digest never matches



def module_files(module_dir: Path) -> list[Path]:
    """Every file the engine reads as the module's configuration (see the module docstring)."""
    root = module_dir.resolve()
    files = [path for directory in module_tree(root) for path in config_files(directory)]
    files += [root / name for name in module_var_files(root)]
    if (root / LOCK_FILE).is_file():
        files.append(root / LOCK_FILE)
    return list(dict.fromkeys(files))


def listing(root: Path, contents: Iterable[tuple[Path, bytes | None]]) -> list[tuple[str, str]]:
    """(path relative to root, sha256 of the content) per file, sorted by path; a file that
    could not be read (None) is listed as such, so it never matches a readable one."""
    out = []
    for path, content in contents:
        name = Path(os.path.relpath(path, root)).as_posix()
        out.append((name, hashlib.sha256(content).hexdigest() if content is not None else "unreadable"))
    return sorted(out)


def digest_of(files: Iterable[tuple[str, str]], env_values: Mapping[str, Any], key: bytes) -> str:
    """The digest of a listing and the environment's values, under `key`."""
    text = json.dumps({"files": [list(f) for f in files], "env": env_values}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, default=str)
    return PREFIX + hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def config_digest(module_dir: Path, env_values: Mapping[str, Any], key: bytes) -> str:
    """The module's configuration digest now: its files read, then digest_of."""
    root = module_dir.resolve()
    return digest_of(listing(root, ((p, _read(p)) for p in module_files(root))), env_values, key)


def env_values(resolved: ResolvedInputs) -> dict[str, Any]:
    """The values the engine takes from the caller's TF_VAR_ (no explicit input overrides them)."""
    return {name: value for name, value in resolved.values.items() if resolved.source_of(name) == "env"}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def lock_file_missing(module_dir: Path) -> bool:
    """Whether the module has no dependency lock file here (a checkout where it was not committed)."""
    return not (Path(module_dir) / LOCK_FILE).is_file()
