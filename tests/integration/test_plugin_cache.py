"""Every module of a runtime root shares one provider cache (engine/plugin_cache.py): a stack's
members unpack a provider once, and link it into each member's `.terraform`. Proven on
HashiCorp's null provider installed from a packed mirror (a zip per provider version, the shape
of a registry download: without a cache the engine unpacks it into every module)."""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from hybridops_tf.engine import plugin_cache
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import (
    NULL_VERSION,
    cli_config_text,
    engine_platform,
    engine_release,
    null_provider_binary,
)

pytestmark = pytest.mark.integration

SOURCE = "registry.terraform.io/hashicorp/null"
MEMBERS = ("a", "b", "c")


@pytest.fixture(scope="module")
def packed_mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A filesystem mirror holding the null provider as its registry zip."""
    mirror = tmp_path_factory.mktemp("packed-mirror")
    folder = mirror.joinpath(*SOURCE.split("/"))
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / f"terraform-provider-null_{NULL_VERSION}_{engine_platform()}.zip", "w") as z:
        z.write(null_provider_binary(), f"terraform-provider-null_v{NULL_VERSION}")
    return mirror


def _packed(hyops: Hyops, mirror: Path, tmp_path: Path) -> Hyops:
    config = tmp_path / "packed.rc"
    config.write_text(cli_config_text(mirror, [SOURCE]))
    return replace(hyops, extra_env={**hyops.extra_env, "TF_CLI_CONFIG_FILE": str(config)})


@pytest.fixture
def packed_hyops(hyops: Hyops, packed_mirror: Path, tmp_path: Path) -> Hyops:
    return _packed(hyops, packed_mirror, tmp_path)


@pytest.fixture
def any_packed_hyops(any_hyops: Hyops, packed_mirror: Path, tmp_path: Path) -> Hyops:
    """`packed_hyops` on the bundled engine, then on the modern one: Terraform >= 1.4 installs a
    provider into the cache anew for a module whose lock file does not vouch for it."""
    return _packed(any_hyops, packed_mirror, tmp_path)


def _stack(tmp_path: Path, null_module: Callable[[str, str], Path]) -> Path:
    for name in MEMBERS:
        null_module(name, 'resource "null_resource" "x" {}\n')
    listed = "".join(f"  - name: {name}\n    path: modules/{name}\n" for name in MEMBERS)
    (tmp_path / "stack.yml").write_text(f"stack: cached\nmodules:\n{listed}")
    return tmp_path / "stack.yml"


def _provider(module: Path) -> Path:
    return module.joinpath(".terraform", "providers", *SOURCE.split("/"), NULL_VERSION, engine_platform())


def _bytes_under(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def test_a_stack_unpacks_its_provider_once_into_the_roots_cache_and_links_it_into_each_member(
    any_packed_hyops: Hyops, null_module: Callable[[str, str], Path], tmp_path: Path
) -> None:
    # No member has a lock file at first. On Terraform >= 1.4 each such init installs the provider
    # into the cache anew, which a member's plan beside it met as "Required plugins are not
    # installed" (or the init as "text file busy"): such an init holds the cache alone, or, while
    # another member's engine runs, installs into its own cache. Once the lock files exist, every
    # member links the one package.
    hyops = any_packed_hyops
    stack = _stack(tmp_path, null_module)
    cache = hyops.runtime_root / "cache" / "plugins"
    reinstalls = (engine_release(hyops.engine) or (0,)) >= (1, 4)

    first = hyops("stack", "apply", str(stack), "--parallelism", "3")

    assert first.returncode == 0, first.stdout + first.stderr
    for name in MEMBERS:
        member = tmp_path / "modules" / name
        own = member / ".terraform" / plugin_cache.OWN_CACHE_NAME
        assert _provider(member).is_symlink(), name
        where = _provider(member).resolve()
        assert where.is_relative_to(cache.resolve()) or (reinstalls and where.is_relative_to(own.resolve())), name
    unpacked = [p for p in cache.rglob(f"terraform-provider-null_v{NULL_VERSION}") if not p.is_symlink()]
    assert len(unpacked) == 1, unpacked

    for name in MEMBERS:  # a fresh checkout with the lock files committed
        shutil.rmtree(tmp_path / "modules" / name / ".terraform")
    again = hyops("stack", "apply", str(stack), "--parallelism", "3")

    assert again.returncode == 0, again.stdout + again.stderr
    for name in MEMBERS:
        member = tmp_path / "modules" / name
        assert _provider(member).resolve().is_relative_to(cache.resolve()), name
        assert _bytes_under(member / ".terraform") < null_provider_binary().stat().st_size // 10, name
        assert plugin_cache.only_links(member, cache), name
    # the hash hyops computes to decide that an init only links is the one the engine locked
    package = unpacked[0].parent
    assert plugin_cache.package_hash(package) in (tmp_path / "modules" / "a" / ".terraform.lock.hcl").read_text()


def test_the_users_own_cache_wins_over_the_roots(
    packed_hyops: Hyops, null_module: Callable[[str, str], Path], tmp_path: Path
) -> None:
    null_module("solo", 'resource "null_resource" "x" {}\n')
    mine = tmp_path / "my-cache"
    mine.mkdir()

    done = packed_hyops("apply", "modules/solo", env={"TF_PLUGIN_CACHE_DIR": str(mine)})

    assert done.returncode == 0, done.stdout + done.stderr
    assert _provider(tmp_path / "modules" / "solo").resolve().is_relative_to(mine.resolve())
    assert not (packed_hyops.runtime_root / "cache" / "plugins").exists()


def test_a_removed_cache_gets_the_module_initialised_again_not_a_provider_that_fails_to_start(
    packed_hyops: Hyops, null_module: Callable[[str, str], Path], tmp_path: Path
) -> None:
    module = null_module("solo", 'resource "null_resource" "x" {}\n')
    assert packed_hyops("apply", "modules/solo").returncode == 0
    shutil.rmtree(packed_hyops.runtime_root / "cache" / "plugins")
    assert not os.path.exists(_provider(module))  # the link dangles

    done = packed_hyops("apply", "modules/solo")

    assert done.returncode == 0, done.stdout + done.stderr
    assert _provider(module).exists()
