"""One provider plugin cache for every module a runtime root runs, and inits that take turns on it.

Without a cache each module's `init` unpacks its own copy of every provider into its
`.terraform` (a cloud provider is 100-600 MB): a 50-member stack over one provider unpacks it
50 times. With `TF_PLUGIN_CACHE_DIR` the engine unpacks a provider version once into the cache
and links it into each module's `.terraform`, honouring each module's lock file as usual.

- The user's own cache wins: `TF_PLUGIN_CACHE_DIR` in the environment (set empty, it turns the
  cache off, as for the engine) or `plugin_cache_dir` in the CLI config the engine reads
  (TF_CLI_CONFIG_FILE, else ~/.terraformrc or ~/.tofurc). hyops then adds nothing.
- Else hyops gives the engine its runtime root's cache (`<root>/cache/plugins`, record/layout.py).
- The engine's cache is not safe for concurrent writers (two inits unpacking one provider into
  it at once), so an `init` that may write the cache takes its turn on the cache's lock file
  (`.hyops-init.lock` in the cache folder). One that cannot write it runs at once, in parallel
  with the others: the module's lock file pins every provider it uses and the cache already
  holds each pinned version for this platform, so the engine only links them. An init that
  waited its turn checks again when its turn comes: the init before it may have filled the
  cache. So a stack whose members commit their lock files unpacks each provider once, under
  the lock, and links it everywhere else in parallel; members without lock files init one at
  a time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hybridops_tf.base import notices
from hybridops_tf.base.files import ensure_dir

CACHE_ENV = "TF_PLUGIN_CACHE_DIR"
CLI_CONFIG_ENV = "TF_CLI_CONFIG_FILE"
LOCK_NAME = ".hyops-init.lock"
# How long an init waits for another's turn: inits of a stack's members unpack a provider once
# and link it after, seconds each; a turn this long means an init that hangs, said as such.
WAIT_SECONDS = 900.0
_SETTING = re.compile(r'(?m)^[ \t]*plugin_cache_dir[ \t]*=[ \t]*"((?:[^"\\\n]|\\.)*)"')


def _cli_config_files(environ: Mapping[str, str]) -> list[Path]:
    named = environ.get(CLI_CONFIG_ENV)
    if named:
        return [Path(named)]
    home = environ.get("HOME")
    return [Path(home) / ".terraformrc", Path(home) / ".tofurc"] if home else []


def _expand(value: str, environ: Mapping[str, str]) -> str:
    """`$HOME/...` and `~/...` as the engine expands them in a CLI config."""
    value = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: environ.get(m.group(1) or m.group(2), m.group(0)), value)
    home = environ.get("HOME")
    return home + value[1:] if value.startswith("~/") and home else value


def user_cache(environ: Mapping[str, str]) -> str | None:
    """The cache the user set for the engine (the empty string: none, on purpose), else None."""
    if CACHE_ENV in environ:
        return environ[CACHE_ENV]
    for path in _cli_config_files(environ):
        if path.exists() and not path.is_file():  # a pipe (never opened here: it would wait) or
            return ""  # a folder: what it sets is unknown, so hyops leaves the engine's cache alone
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):  # unreadable: the engine says so, on its own terms
            continue
        found = _SETTING.findall(text)
        if found:
            return _expand(found[-1], environ)
    return None


def cache_env(own: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """What to add to the engine's environment: `own` as its cache, unless the user set one."""
    if user_cache(environ) is not None:
        return {}
    try:  # every folder made here is private, whatever the umask; one another process (or a thread
        ensure_dir(own)  # of a parallel reconcile) makes at the same instant is simply used
    except OSError as err:  # a symlinked folder inside the runtime root (never followed), or unwritable
        notices.warning(f"the provider cache {own} is not used ({err}): each module's init keeps its own copy")
        return {}
    return {CACHE_ENV: str(own)}


_PINNED = re.compile(r'(?m)^provider[ \t]+"([^"]+)"[ \t]*\{[^}]*?^[ \t]*version[ \t]*=[ \t]*"([^"]+)"', re.S)
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386", "i686": "386",
         "armv7l": "arm"}


def _platform() -> str:
    """The engine's platform name (`linux_amd64`) for this machine."""
    system, machine = os.uname().sysname.lower(), os.uname().machine.lower()
    return f"{system}_{_ARCH.get(machine, machine)}"


def only_links(module_dir: Path, cache: Path) -> bool:
    """Whether an init of `module_dir` can only link from `cache`: its lock file pins at least
    one provider, and the cache holds every pinned version for this platform."""
    lock_file = module_dir / ".terraform.lock.hcl"
    if not lock_file.is_file():  # none, or not a regular file (a pipe is never opened here: it would wait)
        return False
    try:
        pinned = _PINNED.findall(lock_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    return bool(pinned) and all(cache.joinpath(*source.split("/"), version, _platform()).is_dir()
                                for source, version in pinned)


@contextmanager
def init_turn(env: Mapping[str, str], module_dir: Path) -> Iterator[None]:
    """Hold the cache's lock for one `init` of `module_dir` that may write the cache (the
    engine's environment `env` over hyops's own); nothing for one that uses no cache or can
    only link from it."""
    cache = user_cache({**os.environ, **env})
    if not cache or not Path(cache).is_dir() or only_links(module_dir, Path(cache)):
        yield  # no cache, one the engine will complain of itself, or nothing to write
        return
    from filelock import FileLock, Timeout

    from hybridops_tf.base.errors import EngineInitFailed

    lock = FileLock(str(Path(cache) / LOCK_NAME), mode=0o600)
    try:
        lock.acquire(timeout=WAIT_SECONDS)
    except Timeout:
        raise EngineInitFailed(f"another init held the provider cache {cache} for {WAIT_SECONDS:g}s "
                               f"(its lock {LOCK_NAME} there): nothing was run") from None
    if only_links(module_dir, Path(cache)):  # the init before this one filled it
        lock.release()
        yield
        return
    try:
        yield
    finally:
        lock.release()
