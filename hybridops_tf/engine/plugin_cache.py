"""One provider plugin cache for every module a runtime root runs, and inits that take turns on it.

Without a cache each module's `init` unpacks its own copy of every provider into its
`.terraform` (a cloud provider is 100-600 MB): a 50-member stack over one provider unpacks it
50 times. With `TF_PLUGIN_CACHE_DIR` the engine unpacks a provider version once into the cache
and links it into each module's `.terraform`, honouring each module's lock file as usual.

- The user's own cache wins: `TF_PLUGIN_CACHE_DIR` in the environment (set empty, it turns the
  cache off, as for the engine) or `plugin_cache_dir` in the CLI config the engine reads
  (TF_CLI_CONFIG_FILE, else ~/.terraformrc or ~/.tofurc). hyops then adds nothing.
- Else hyops gives the engine its runtime root's cache (`<root>/cache/plugins`, record/layout.py).
- The engine's cache is not safe for a writer beside readers: an `init` that may install a
  provider into it replaces that provider's folder there, and every other module links its
  `.terraform` to that folder. Terraform >= 1.4 does so whenever the module's lock file does not
  vouch for the cached package (no lock file, or hashes that do not include the package's
  `h1:`): a plan that starts the provider meanwhile fails with "Required plugins are not
  installed". So every engine command that may use the cache takes a turn on it (`turn`, the
  cache's lock `.hyops-cache.lock`): an init that may write takes it alone, every other command
  (a plan, an apply, a read, an init that can only link) shares it. An init waits for the
  commands already running and new ones wait for it, so a stack whose members commit their lock
  files unpacks each provider once and links it everywhere in parallel; members without lock
  files init one at a time, each when no other member's engine is running.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hybridops_tf.base import notices
from hybridops_tf.base.files import atomic_write_text, ensure_dir

CACHE_ENV = "TF_PLUGIN_CACHE_DIR"
CLI_CONFIG_ENV = "TF_CLI_CONFIG_FILE"
LOCK_NAME = ".hyops-cache.lock"  # an SQLite file (filelock.ReadWriteLock): shared and alone turns
HASHES_NAME = ".hyops-hashes"  # each cached package's h1: hash, under its files' marks (known_hash)
# How long an init that may write the cache waits for the engine commands that use it (other
# modules' plans and applies, which may be long); a wait this long is said and nothing is run.
# Every other command waits for an init as long as it takes: inits unpack and link, seconds each.
WAIT_SECONDS = 4 * 3600.0
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


_PIN = re.compile(r'(?ms)^provider[ \t]+"([^"]+)"[ \t]*\{(.*?)^\}')
_VERSION = re.compile(r'(?m)^[ \t]*version[ \t]*=[ \t]*"([^"]+)"')
_HASH = re.compile(r'"(h1:[A-Za-z0-9+/=]+)"')
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386", "i686": "386",
         "armv7l": "arm"}


def _platform() -> str:
    """The engine's platform name (`linux_amd64`) for this machine."""
    system, machine = os.uname().sysname.lower(), os.uname().machine.lower()
    return f"{system}_{_ARCH.get(machine, machine)}"


def _files(package: Path) -> list[tuple[str, Path]]:
    """The package's files by name (slash-separated, relative to it), sorted as Go sorts them."""
    root = package.resolve()
    names: list[tuple[str, Path]] = []
    for folder, _, files in os.walk(root):
        names += [(Path(folder, f).relative_to(root).as_posix(), Path(folder, f)) for f in files]
    return sorted(names)


def package_hash(package: Path) -> str:
    """The engine's `h1:` hash of an unpacked provider package (Go's dirhash Hash1: the
    SHA-256 of one `HEX  NAME` line per file, by name), which a lock file lists for the
    platforms it was made on."""
    whole = hashlib.sha256()
    for name, path in _files(package):
        with path.open("rb") as handle:
            whole.update(f"{hashlib.file_digest(handle, 'sha256').hexdigest()}  {name}\n".encode())
    return "h1:" + base64.b64encode(whole.digest()).decode()


def known_hash(cache: Path, package: Path) -> str:
    """`package_hash`, remembered in the cache (`.hyops-hashes/`) under its files' names, sizes,
    times and inodes: a stack's inits hash a 200 MB provider once, not once each. A package
    the engine unpacked again is hashed again."""
    marks = []
    for name, path in _files(package):
        st = path.stat()
        marks.append([name, st.st_size, st.st_mtime_ns, st.st_ino])
    memo = cache / HASHES_NAME / (hashlib.sha256(str(package.resolve()).encode()).hexdigest()[:32] + ".json")
    try:
        doc = json.loads(memo.read_text(encoding="utf-8"))
        if doc["files"] == marks and isinstance(doc["h1"], str):
            return doc["h1"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = package_hash(package)
    try:
        ensure_dir(memo.parent)
        atomic_write_text(memo, json.dumps({"files": marks, "h1": found}), durable=False)
    except OSError:  # a cache hyops cannot write: hashed again next time
        pass
    return found


def only_links(module_dir: Path, cache: Path) -> bool:
    """Whether an init of `module_dir` can only link from `cache`: its lock file pins at least
    one provider, and for each the cache holds the pinned version for this platform, a package
    whose `h1:` hash the lock file lists (else the engine installs it into the cache anew)."""
    lock_file = module_dir / ".terraform.lock.hcl"
    if not lock_file.is_file():  # none, or not a regular file (a pipe is never opened here: it would wait)
        return False
    try:
        pins = _PIN.findall(lock_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    if not pins:
        return False
    for source, body in pins:
        version = _VERSION.search(body)
        package = cache.joinpath(*source.split("/"), version.group(1) if version else "", _platform())
        if version is None or not package.is_dir():
            return False
        try:
            if known_hash(cache, package) not in _HASH.findall(body):
                return False
        except OSError:  # unreadable: the engine would install it again
            return False
    return True


@contextmanager
def turn(env: Mapping[str, str], module_dir: Path, *, init: bool = False) -> Iterator[None]:
    """Hold the cache's turn for one engine command in `module_dir` (`env`: the engine's
    environment over hyops's own): alone for an `init` that may write the cache, shared for
    every other command; nothing when no cache is used or its lock cannot be made there (a
    read-only cache: no init of hyops's writes it either)."""
    cache = user_cache({**os.environ, **env})
    if not cache or not Path(cache).is_dir():
        yield  # no cache, or one the engine will complain of itself
        return
    folder = Path(cache)
    alone = init and not only_links(module_dir, folder)
    lock = _held(folder, alone=alone)
    if lock is not None and alone and only_links(module_dir, folder):  # the init before this one filled it
        lock.close()
        lock = _held(folder, alone=False)
    try:
        yield
    finally:
        if lock is not None:
            lock.close()


def _held(cache: Path, *, alone: bool) -> Any:
    """The cache's lock, taken alone or shared (waiting, and saying so, while another holds
    it otherwise); None when it cannot be made there."""
    import sqlite3

    from filelock import ReadWriteLock, Timeout

    from hybridops_tf.base.errors import EngineInitFailed

    try:
        lock = ReadWriteLock(str(cache / LOCK_NAME), is_singleton=False)
        take = lock.acquire_write if alone else lock.acquire_read
        try:
            take(blocking=False)
            return lock
        except Timeout:
            pass
        notices.note(f"waiting for the provider cache {cache}: "
                     + ("the engine commands of other modules use it and this init may install into it"
                        if alone else "another module's init is installing into it"))
        try:
            take(timeout=WAIT_SECONDS if alone else -1)
        except Timeout:
            lock.close()
            raise EngineInitFailed(f"the provider cache {cache} stayed in use by other engine commands for "
                                   f"{WAIT_SECONDS:g}s (its lock {LOCK_NAME} there): this init did not run") from None
        return lock
    except (OSError, ValueError, sqlite3.Error) as err:
        notices.warning(f"the provider cache {cache} is used without taking turns ({err}): "
                        "parallel inits may disturb each other")
        return None
