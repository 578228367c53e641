"""The provider cache's rules (engine/plugin_cache.py): the user's own cache wins, hyops's is
the runtime root's, an init holds the cache's lock while the engine writes it, and a module
whose provider link dangles is initialised again (engine/initcheck.py)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from hybridops_tf.engine import initcheck, plugin_cache
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.runner import Engine


def test_hyops_gives_the_engine_the_roots_cache_made_private_when_the_user_set_none(tmp_path: Path) -> None:
    own = tmp_path / "root" / "cache" / "plugins"

    env = plugin_cache.cache_env(own, {"HOME": str(tmp_path / "home")})

    assert env == {"TF_PLUGIN_CACHE_DIR": str(own)}
    assert stat.S_IMODE(own.stat().st_mode) == 0o700


def test_a_cache_folder_another_process_makes_at_the_same_instant_is_used_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = tmp_path / "root" / "cache" / "plugins"
    real_mkdir = Path.mkdir

    def the_other_runner_is_first(self: Path, *args: object, **kwargs: object) -> None:
        real_mkdir(self, mode=0o700)  # the other process wins the race for every level
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", the_other_runner_is_first)
    env = plugin_cache.cache_env(own, {"HOME": str(tmp_path / "home")})

    assert env == {"TF_PLUGIN_CACHE_DIR": str(own)}
    assert own.is_dir()


def test_a_symlinked_cache_folder_inside_the_runtime_root_is_never_followed(tmp_path: Path) -> None:
    from hybridops_tf.base.files import register_private_root

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "cache").symlink_to(elsewhere, target_is_directory=True)
    register_private_root(root)

    assert plugin_cache.cache_env(root / "cache" / "plugins", {"HOME": str(tmp_path / "home")}) == {}
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("value", ["/elsewhere", ""])  # empty: the user turned the engine's cache off
def test_the_users_environment_cache_wins_even_empty(tmp_path: Path, value: str) -> None:
    own = tmp_path / "plugins"

    assert plugin_cache.cache_env(own, {"TF_PLUGIN_CACHE_DIR": value}) == {}
    assert not own.exists()


def test_a_cache_set_in_the_users_cli_config_wins_and_is_expanded_as_the_engine_does(tmp_path: Path) -> None:
    config = tmp_path / "my.rc"
    config.write_text('# mine\nplugin_cache_dir = "$HOME/.terraform.d/plugin-cache"\ndisable_checkpoint = true\n')
    environ = {"TF_CLI_CONFIG_FILE": str(config), "HOME": "/home/me"}

    assert plugin_cache.user_cache(environ) == "/home/me/.terraform.d/plugin-cache"
    assert plugin_cache.cache_env(tmp_path / "plugins", environ) == {}


def test_the_default_cli_config_in_home_counts_when_no_file_is_named(tmp_path: Path) -> None:
    (tmp_path / ".terraformrc").write_text('plugin_cache_dir = "~/cache"\n')

    assert plugin_cache.user_cache({"HOME": str(tmp_path)}) == f"{tmp_path}/cache"


LOCK_FILE = """provider "registry.terraform.io/hashicorp/null" {
  version = "2.1.2"
  hashes = [
    "h1:abc=",
  ]
}
"""


def _lock_while_engine_ran(tmp_path: Path, cache: Path) -> str:
    """Run an Engine's init whose engine records whether the cache's lock was free or held."""
    seen = tmp_path / "seen"
    engine = tmp_path / "terraform"
    probe = (f"import sys, filelock\ntry:\n    filelock.FileLock({str(cache / plugin_cache.LOCK_NAME)!r})"
             f".acquire(timeout=0)\n    open({str(seen)!r}, 'w').write('free')\nexcept filelock.Timeout:\n"
             f"    open({str(seen)!r}, 'w').write('held')\n")
    engine.write_text(f"#!{sys.executable}\n{probe}")
    engine.chmod(0o755)
    runner = Engine(EngineInfo(engine, "1.0.3", "terraform"), tmp_path, {"TF_PLUGIN_CACHE_DIR": str(cache)})
    assert runner.init_capture().returncode == 0
    return seen.read_text()


def test_an_init_that_may_write_the_cache_holds_its_lock_while_the_engine_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (tmp_path / ".terraform.lock.hcl").write_text(LOCK_FILE)  # pins a version the cache lacks

    assert _lock_while_engine_ran(tmp_path, cache) == "held"
    with FileLock(str(cache / plugin_cache.LOCK_NAME)).acquire(timeout=0):  # released after
        pass


def test_an_init_whose_pinned_providers_are_all_cached_runs_at_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.joinpath("registry.terraform.io", "hashicorp", "null", "2.1.2", plugin_cache._platform()).mkdir(parents=True)
    (tmp_path / ".terraform.lock.hcl").write_text(LOCK_FILE)

    with FileLock(str(cache / plugin_cache.LOCK_NAME)).acquire(timeout=0):  # another init's turn
        assert _lock_while_engine_ran(tmp_path, cache) == "held"  # not waited for: it only links


@pytest.mark.parametrize("lock_file", [None, "# pins nothing yet\n"])
def test_without_a_pinned_provider_an_init_may_write_and_takes_its_turn(tmp_path: Path, lock_file: str | None) -> None:
    cache = tmp_path / "cache"
    cache.joinpath("registry.terraform.io", "hashicorp", "null", "2.1.2", plugin_cache._platform()).mkdir(parents=True)
    if lock_file is not None:
        (tmp_path / ".terraform.lock.hcl").write_text(lock_file)

    assert not plugin_cache.only_links(tmp_path, cache)
    assert _lock_while_engine_ran(tmp_path, cache) == "held"


def test_an_init_without_a_cache_takes_no_lock(tmp_path: Path) -> None:
    with plugin_cache.init_turn({"TF_PLUGIN_CACHE_DIR": ""}, tmp_path):
        pass
    with plugin_cache.init_turn({"TF_PLUGIN_CACHE_DIR": str(tmp_path / "gone")}, tmp_path):
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_second_init_on_one_cache_waits_for_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_cache, "WAIT_SECONDS", 0.01)
    with plugin_cache.init_turn({"TF_PLUGIN_CACHE_DIR": str(tmp_path)}, tmp_path):
        with pytest.raises(Exception, match="another init held the provider cache"):
            with plugin_cache.init_turn({"TF_PLUGIN_CACHE_DIR": str(tmp_path)}, tmp_path):
                pass
    with FileLock(str(tmp_path / plugin_cache.LOCK_NAME)).acquire(timeout=0):  # its turn is over: free again
        pass


def test_a_provider_link_into_a_removed_cache_asks_for_init_again(tmp_path: Path) -> None:
    module, marker = tmp_path / "m", tmp_path / "marks"
    module.mkdir()
    (module / "main.tf").write_text("")
    platform = module / ".terraform" / "providers" / "registry.terraform.io" / "hashicorp" / "null" / "2.1.2"
    platform.mkdir(parents=True)
    cached = tmp_path / "cache" / "linux_amd64"
    cached.mkdir(parents=True)
    (platform / "linux_amd64").symlink_to(cached)
    initcheck.remember_init(module, marker)
    assert initcheck.init_reason(module, marker) is None

    cached.rmdir()

    assert initcheck.init_reason(module, marker) is not None


def test_a_cli_config_or_lock_file_that_is_a_pipe_is_never_opened(tmp_path: Path) -> None:
    """Opening a FIFO waits for a writer: hyops would hang before the engine starts. A CLI
    config it cannot read leaves the engine's cache to the engine; a lock file it cannot read
    is no proof of an init that only links."""
    import os

    config, module = tmp_path / "user.rc", tmp_path / "m"
    os.mkfifo(config)
    module.mkdir()
    os.mkfifo(module / ".terraform.lock.hcl")

    assert plugin_cache.cache_env(tmp_path / "plugins", {"TF_CLI_CONFIG_FILE": str(config)}) == {}
    assert not plugin_cache.only_links(module, tmp_path)
