"""The provider cache's rules (engine/plugin_cache.py): the user's own cache wins, hyops's is
the runtime root's, an init that may write the cache holds it alone while every other engine
command shares it, and a module
whose provider link dangles is initialised again (engine/initcheck.py)."""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

from hybridops_tf.base import notices
from hybridops_tf.base.errors import EngineInitFailed
from hybridops_tf.engine import commands, initcheck, plugin_cache
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


def _lock_file(*hashes: str) -> str:
    listed = "".join(f'    "{h}",\n' for h in hashes)
    return (f'provider "registry.terraform.io/hashicorp/null" {{\n  version = "2.1.2"\n  hashes = [\n{listed}  ]\n}}\n')


LOCK_FILE = _lock_file("h1:abc=", "zh:0123")


def _cached(cache: Path, content: bytes = b"a provider") -> Path:
    """The null provider 2.1.2 for this platform in `cache`, unpacked: its package folder."""
    package = cache.joinpath("registry.terraform.io", "hashicorp", "null", "2.1.2", plugin_cache._platform())
    package.mkdir(parents=True)
    (package / "terraform-provider-null_v2.1.2").write_bytes(content)
    return package


def _fake_engine(tmp_path: Path, cache: Path) -> Path:
    """An engine that records how the cache's lock was held while it ran (`alone`: no other
    command could share it; `shared`: another could share it, not hold it alone; `free`) and
    the cache it was given, one per line."""
    seen, engine = tmp_path / "seen", tmp_path / "terraform"
    probe = (f"import fcntl, os\nfd = os.open({str(cache / plugin_cache.LOCK_NAME)!r}, os.O_RDWR | os.O_CREAT)\n"
             "def can(how):\n    try:\n        fcntl.flock(fd, how | fcntl.LOCK_NB)\n"
             "    except BlockingIOError:\n        return False\n    fcntl.flock(fd, fcntl.LOCK_UN)\n    return True\n"
             "word = 'free' if can(fcntl.LOCK_EX) else 'shared' if can(fcntl.LOCK_SH) else 'alone'\n"
             f"open({str(seen)!r}, 'w').write(word + '\\n' + os.environ.get('TF_PLUGIN_CACHE_DIR', ''))\n"
             "print('{}')\n")
    engine.write_text(f"#!{sys.executable}\n{probe}")
    engine.chmod(0o755)
    return engine


def _runner(tmp_path: Path, cache: Path, version: str = "1.15.5") -> Engine:
    # a version that installs anew what the lock file does not vouch for (features.CACHE_REINSTALLS_UNLOCKED)
    return Engine(EngineInfo(_fake_engine(tmp_path, cache), version, "terraform"), tmp_path,
                  {"TF_PLUGIN_CACHE_DIR": str(cache)})


def _seen(tmp_path: Path) -> tuple[str, str]:
    held, given = (tmp_path / "seen").read_text().split("\n")
    return held, given


def _turn_while_init_ran(tmp_path: Path, cache: Path) -> str:
    assert _runner(tmp_path, cache).init_capture().returncode == 0
    held, given = _seen(tmp_path)
    assert given == str(cache)
    return held


@contextmanager
def _held(cache: Path, how: int) -> Iterator[None]:
    """The cache's lock held by another process's engine (`how`: fcntl.LOCK_SH or LOCK_EX)."""
    fd = os.open(cache / plugin_cache.LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)


def test_an_init_that_may_write_the_cache_holds_it_alone_while_the_engine_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (tmp_path / ".terraform.lock.hcl").write_text(LOCK_FILE)  # pins a version the cache lacks

    assert _turn_while_init_ran(tmp_path, cache) == "alone"
    with _held(cache, fcntl.LOCK_EX | fcntl.LOCK_NB):  # released after
        pass


def test_an_init_whose_lock_file_vouches_for_every_cached_package_shares_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    package = _cached(cache)
    (tmp_path / ".terraform.lock.hcl").write_text(_lock_file(plugin_cache.package_hash(package), "zh:0123"))

    assert _turn_while_init_ran(tmp_path, cache) == "shared"  # it only links, beside other commands


def test_an_init_whose_lock_file_lists_no_hash_of_the_cached_package_holds_it_alone(tmp_path: Path) -> None:
    # a lock file made on another platform: the engine installs the package into the cache anew
    cache = tmp_path / "cache"
    _cached(cache)
    (tmp_path / ".terraform.lock.hcl").write_text(LOCK_FILE)

    assert not plugin_cache.only_links(tmp_path, cache)
    assert _turn_while_init_ran(tmp_path, cache) == "alone"


@pytest.mark.parametrize("lock_file", [None, "# pins nothing yet\n"])
def test_without_a_pinned_provider_an_init_may_write_and_holds_it_alone(tmp_path: Path, lock_file: str | None) -> None:
    cache = tmp_path / "cache"
    _cached(cache)
    if lock_file is not None:
        (tmp_path / ".terraform.lock.hcl").write_text(lock_file)

    assert not plugin_cache.only_links(tmp_path, cache)
    assert _turn_while_init_ran(tmp_path, cache) == "alone"


def test_a_cached_packages_hash_is_computed_once_and_again_when_the_engine_unpacks_it_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    package = _cached(cache)
    first = plugin_cache.known_hash(cache, package)
    assert first == plugin_cache.package_hash(package)
    hash_of = plugin_cache.package_hash
    monkeypatch.setattr(plugin_cache, "package_hash", lambda _: pytest.fail("hashed again"))

    assert plugin_cache.known_hash(cache, package) == first  # remembered: another member's init

    (package / "terraform-provider-null_v2.1.2").write_bytes(b"another build")  # unpacked anew
    monkeypatch.setattr(plugin_cache, "package_hash", hash_of)
    assert plugin_cache.known_hash(cache, package) == hash_of(package) != first


def test_every_other_engine_command_shares_the_cache_while_it_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    runner = _runner(tmp_path, cache)

    runner.capture_json(runner.argv(commands.show_state))
    assert _seen(tmp_path) == ("shared", str(cache))
    result = runner.stream([str(runner.info.binary), "plan"], lambda _: None, None)
    assert result.returncode == 0 and _seen(tmp_path) == ("shared", str(cache))


def test_an_init_that_may_write_installs_into_its_own_cache_while_another_modules_engine_uses_it(
    tmp_path: Path,
) -> None:
    # never replaced under a running plan, never waiting for an apply that may run for hours
    cache = tmp_path / "cache"
    _cached(cache)
    said: list[str] = []
    notices.listen(lambda level, text: said.append(text))
    try:
        with _held(cache, fcntl.LOCK_SH):  # another module's plan, its provider linked from the cache
            assert _runner(tmp_path, cache).init_capture().returncode == 0
    finally:
        notices.listen(None)
    held, given = _seen(tmp_path)
    own = tmp_path / ".terraform" / plugin_cache.OWN_CACHE_NAME
    assert (held, given) == ("shared", str(own)) and own.is_dir()  # the other still holds it: untouched
    assert any("installs into" in s for s in said)
    assert _turn_while_init_ran(tmp_path, cache) == "alone"  # the shared cache again once it is free


def test_an_engine_that_links_what_the_cache_holds_shares_it_for_an_unlocked_init(tmp_path: Path) -> None:
    # Terraform 1.0.3 links a cached package an unlocked init uses; it only adds what is missing
    cache = tmp_path / "cache"
    _cached(cache)

    with _held(cache, fcntl.LOCK_SH):  # another module's plan runs meanwhile: no need to go elsewhere
        assert _runner(tmp_path, cache, version="1.0.3").init_capture().returncode == 0
    assert _seen(tmp_path) == ("shared", str(cache))


def test_an_engine_command_waits_for_an_init_installing_into_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    said: list[str] = []
    waiting = threading.Event()

    def hear(level: object, text: str) -> None:
        said.append(text)
        waiting.set()

    runner = _runner(tmp_path, cache)
    reader = threading.Thread(target=runner.capture_json, args=(runner.argv(commands.show_state),))
    notices.listen(hear)
    try:
        with _held(cache, fcntl.LOCK_EX):  # an init installing into it
            reader.start()
            assert waiting.wait(60), "the command never said it waits"
            assert not (tmp_path / "seen").exists()  # it waits: the engine has not started
    finally:
        reader.join(60)
        notices.listen(None)
    assert "another module's init is installing into it" in said[0]
    assert _seen(tmp_path) == ("shared", str(cache))


def test_a_cache_whose_lock_cannot_be_made_is_used_without_turns_and_said_once(tmp_path: Path) -> None:
    """A read-only cache (one baked into a CI image) is said once per process, not once for
    each of a stack's hundred engine commands."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / plugin_cache.LOCK_NAME).mkdir()  # no lock file can be made there
    said: list[str] = []
    notices.listen(lambda level, text: said.append(text))
    try:
        for init in (True, False, True, False):
            with plugin_cache.turn({"TF_PLUGIN_CACHE_DIR": str(cache)}, tmp_path, init=init):
                pass
    finally:
        notices.listen(None)
    assert len([s for s in said if "without taking turns" in s]) == 1, said


def test_an_init_without_a_cache_takes_no_lock(tmp_path: Path) -> None:
    with plugin_cache.turn({"TF_PLUGIN_CACHE_DIR": ""}, tmp_path):
        pass
    with plugin_cache.turn({"TF_PLUGIN_CACHE_DIR": str(tmp_path / "gone")}, tmp_path):
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_second_init_on_one_cache_waits_for_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_cache, "WAIT_SECONDS", 0.01)
    env = {"TF_PLUGIN_CACHE_DIR": str(tmp_path)}
    with plugin_cache.turn(env, tmp_path, init=True):
        with pytest.raises(EngineInitFailed, match="another init held the provider cache"):
            with plugin_cache.turn(env, tmp_path, init=True):
                pass
    with FileLock(str(tmp_path / plugin_cache.INIT_LOCK_NAME)).acquire(timeout=0):  # its turn is over
        pass
    with _held(tmp_path, fcntl.LOCK_EX | fcntl.LOCK_NB):
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


def test_a_command_waiting_for_an_init_stops_waiting_once_a_signal_came(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybridops_tf.base.interrupts import INTERRUPTS

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(INTERRUPTS, "received", signal.SIGTERM)  # a CI cancel while it waits
    monkeypatch.setattr(plugin_cache, "WAIT_SECONDS", 60.0)
    said: list[str] = []
    notices.listen(lambda level, text: said.append(text))
    try:
        with _held(cache, fcntl.LOCK_EX):  # an init installing, for as long as the test holds it
            with plugin_cache.turn({"TF_PLUGIN_CACHE_DIR": str(cache)}, tmp_path):
                pass  # reached at once: the caller then starts no engine (engine/process.py)
    finally:
        notices.listen(None)
    assert not any("stayed held" in s for s in said)  # it did not wait out the init


def test_an_init_whose_own_cache_cannot_be_made_runs_nothing_and_says_so(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _cached(cache)
    (tmp_path / ".terraform").write_text("not a folder")

    with _held(cache, fcntl.LOCK_SH):
        with pytest.raises(EngineInitFailed, match="could not be made"):
            _runner(tmp_path, cache).init_capture()
    assert not (tmp_path / "seen").exists()
