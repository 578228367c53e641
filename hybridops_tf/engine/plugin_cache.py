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

from hybridops_tf.base import notices
from hybridops_tf.base.files import atomic_write_text, ensure_dir
from hybridops_tf.base.flock import LockFile
from hybridops_tf.base.interrupts import INTERRUPTS

CACHE_ENV = "TF_PLUGIN_CACHE_DIR"
CLI_CONFIG_ENV = "TF_CLI_CONFIG_FILE"
LOCK_NAME = ".hyops-cache.lock"  # flock(2): shared by every engine command, alone for an init that writes
INIT_LOCK_NAME = ".hyops-init.lock"  # inits that may write the cache, one at a time
HASHES_NAME = ".hyops-hashes"  # each cached package's h1: hash, under its files' marks (known_hash)
OWN_CACHE_NAME = "hyops-providers"  # in a module's .terraform: where its init installs when the cache is in use
# How long an init waits for another init's turn, and an engine command for an init that holds
# the cache alone: inits unpack and link, seconds each; a wait this long means a hung init.
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
def turn(env: Mapping[str, str], module_dir: Path, *, init: bool = False,
         reinstalls: bool = True) -> Iterator[Mapping[str, str]]:
    """One engine command's turn on the cache in `module_dir` (`env`: the engine's environment
    over hyops's own); yields the environment to run it with.

    Every command that may start a provider from the cache shares it (flock LOCK_SH on its
    lock file), and so does an `init` that can only link (`only_links`). An init that may write
    the cache first takes its turn among inits (INIT_LOCK_NAME, waiting up to WAIT_SECONDS),
    then holds the cache alone if no other module's engine uses it right now (only where the
    engine installs anew what the lock file does not vouch for, `reinstalls`: Terraform >= 1.4,
    OpenTofu; an older engine links what the cache holds and shares it); if one does,
    it never waits for it (an apply may run for hours): it installs into the module's own
    cache instead (`own_cache`), as without a shared cache, and says so. Nothing is held when
    no cache is used, or when its lock file cannot be made there (a read-only cache)."""
    merged = {**os.environ, **env}
    cache = user_cache(merged)
    if not cache or not Path(cache).is_dir():
        yield env  # no cache, or one the engine will complain of itself
        return
    folder = Path(cache)
    if not init or only_links(module_dir, folder):
        with _shared(folder):
            yield env
        return
    with _init_turn(folder):
        if not reinstalls or only_links(module_dir, folder):  # it links what the cache holds, or the
            with _shared(folder):  # init before this one filled it; it may add a folder, never rewrite one
                yield env
            return
        took, alone = _alone_now(folder)
        if not took:  # another module's engine may be starting a provider from the cache
            try:
                own = own_cache(merged, module_dir)
            except OSError as err:
                from hybridops_tf.base.errors import EngineInitFailed

                raise EngineInitFailed(f"another module's engine is using the provider cache {folder}, and this "
                                       f"init's own cache could not be made ({err.strerror or err}): nothing was "
                                       "run; run it again when the other has finished") from None
            notices.note(f"another module's engine is using the provider cache {folder}: this init installs "
                         f"into {own} instead, so nothing is replaced under it")
            yield {**env, CACHE_ENV: str(own)}
            return
        try:
            yield env
        finally:
            if alone is not None:
                alone.close()


def own_cache(environ: Mapping[str, str], module_dir: Path) -> Path:
    """The module's own provider cache, inside its engine data folder (`.terraform`, or
    TF_DATA_DIR, which the engine reads relative to the module's folder)."""
    folder = Path(module_dir) / (environ.get("TF_DATA_DIR") or ".terraform") / OWN_CACHE_NAME
    ensure_dir(folder)
    return folder


_SAID_WITHOUT_TURNS: set[Path] = set()  # caches this process has warned of: one warning each


def _without_turns(cache: Path, err: OSError) -> None:
    """Say once per process that `cache` is used without turns (its lock files cannot be made
    there: a read-only cache baked into a CI image, say), not once per engine command."""
    if cache in _SAID_WITHOUT_TURNS:
        return
    _SAID_WITHOUT_TURNS.add(cache)
    notices.warning(f"the provider cache {cache} is used without taking turns ({err.strerror or err}): "
                    "an init writing it may disturb another module's engine")


def _open_lock(cache: Path, name: str = LOCK_NAME) -> LockFile | None:
    try:
        return LockFile(cache / name)
    except OSError as err:
        _without_turns(cache, err)
        return None


def _alone_now(cache: Path) -> tuple[bool, LockFile | None]:
    """(True, the cache's lock file held alone), or (True, None) when no lock file can be made
    there (nothing to hold), or (False, None) when another engine holds it shared now."""
    lock = _open_lock(cache)
    if lock is None:
        return True, None
    if lock.take():
        return True, lock
    lock.close()
    return False, None


def _signalled() -> bool:
    """A signal came: the caller starts no engine now (engine/process.py), so it waits no longer."""
    return INTERRUPTS.received is not None


@contextmanager
def _shared(cache: Path) -> Iterator[None]:
    """The cache's lock file held shared while the engine runs: waits (saying so) while an
    init holds it alone, up to WAIT_SECONDS, then runs anyway with a warning (an init that
    long is hung, or frozen)."""
    lock = _open_lock(cache)
    if lock is None:
        yield
        return
    with lock:
        if not lock.take(shared=True):
            notices.note(f"waiting for the provider cache {cache}: another module's init is installing into it")
            if not lock.wait(WAIT_SECONDS, shared=True, stop=_signalled) and not _signalled():
                notices.warning(f"the provider cache {cache} stayed held by an init for {WAIT_SECONDS:g}s: "
                                "running without waiting longer")
        yield


@contextmanager
def _init_turn(cache: Path) -> Iterator[None]:
    """Inits that may write the cache, one at a time (INIT_LOCK_NAME), waiting up to WAIT_SECONDS."""
    from hybridops_tf.base.errors import EngineInitFailed

    lock = _open_lock(cache, INIT_LOCK_NAME)  # None: a cache hyops cannot write in, which no init of hyops's writes
    if lock is None:
        yield
        return
    with lock:
        if not lock.wait(WAIT_SECONDS):
            raise EngineInitFailed(f"another init held the provider cache {cache} for {WAIT_SECONDS:g}s "
                                   f"(its lock {INIT_LOCK_NAME} there): nothing was run")
        yield
