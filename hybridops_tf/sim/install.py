"""Make the engine find the sim provider offline, as it finds any registry provider.

The engine gets a CLI config with a `filesystem_mirror` holding one launcher script, plus
`direct { exclude = [...] }` so `init` never asks a registry about hybridops.dev.
(`dev_overrides` is not enough: `init` still tries the registry and fails offline.)

The launcher's bytes are identical on every machine, so the `h1:` hash that `init` records
in `.terraform.lock.hcl` stays valid when the lock file is committed; the Python to run
comes from HYOPS_SIM_PYTHON at run time instead of being baked into the script.
A user's own TF_CLI_CONFIG_FILE is not replaced but combined: the engine gets a derived
file, theirs plus the sim mirror (hybridops_tf.sim.cliconfig).
The CLI imports this module at start (it registers SIM_ENVIRONMENT, see the end): keep it
free of heavy imports (cliconfig.py, the user's file's parser, is imported where it is used).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from hybridops_tf.sim.names import CLI_CONFIG_ENV, SIM_SOURCE, CliConfigError

SIM_ROOT_ENV = "HYOPS_SIM_ROOT"  # same name as sim.store.SIM_ROOT_ENV; store is imported lazily

SIM_VERSION = "0.1.0"
SIM_PYTHON_ENV = "HYOPS_SIM_PYTHON"

LAUNCHER_TEXT = f"""#!/bin/sh
# Launcher for the hybridops-tf simulated cloud provider ({SIM_SOURCE} {SIM_VERSION}).
# Identical on every machine so the h1: hash in .terraform.lock.hcl stays valid;
# hyops sets HYOPS_SIM_PYTHON to the Python that has hybridops_tf installed.
exec "${{{SIM_PYTHON_ENV}:-python3}}" -m hybridops_tf.sim "$@"
"""

# The provider's one third-party package (the `[sim]` extra). Without it the launcher dies on
# `import pyvider` and the engine only says "Unrecognized remote plugin message": hyops checks first.
SIM_PACKAGE = "pyvider"
SIM_EXTRA = "pip install 'hybridops-tf[sim]'"


def sim_extra_missing(python: str) -> str:
    """The one line hyops (exit 2) and the launcher (run by hand) say when `python` cannot
    import the sim provider's package."""
    return (f"the simulated cloud's provider needs the Python package `{SIM_PACKAGE}`, which "
            f"{python} cannot import: {SIM_EXTRA}")


class SimExtraMissing(ModuleNotFoundError):
    """The Python that will run the launcher lacks `pyvider`. A ModuleNotFoundError, so the core
    (runtime/root.Runtime.engine_env: a hook's missing requirement) reports it as a set-up error, nothing run."""

    def __init__(self, python: str) -> None:
        super().__init__(sim_extra_missing(python), name=SIM_PACKAGE)


def check_sim_python(python: str) -> None:
    """SimExtraMissing when `python`, the launcher's interpreter, cannot import `pyvider`.

    Cheap: asked of this process when `python` is this interpreter (what hyops hands the
    launcher); another interpreter is not started to ask it (a Python start per module)."""
    if python != sys.executable:
        return
    from importlib.util import find_spec

    try:
        found = find_spec(SIM_PACKAGE) is not None
    except (ImportError, ValueError):  # a broken or half-imported package: the launcher fails too
        found = False
    if not found:
        raise SimExtraMissing(python)


_SIM_RESOURCE = re.compile(r"""(?m)^\s*(resource|data)\s+"?sim_[A-Za-z0-9_]*"?\s""")


def engine_platform() -> str:
    """The engine's platform name (`linux_amd64` on CI): the launcher fits every platform,
    but the mirror layout must name the one the engine runs on."""
    import platform  # here, not at the top: the CLI imports this module for every command

    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    return f"{platform.system().lower()}_{arch}"


def sim_dir(runtime_root: Path) -> Path:
    """`<runtime_root>/sim`: everything hyops keeps for the simulated cloud."""
    return Path(runtime_root).absolute() / "sim"


def mirror_dir(runtime_root: Path) -> Path:
    return sim_dir(runtime_root) / "mirror"


def launcher_path(runtime_root: Path) -> Path:
    """Where the unpacked-layout mirror keeps the provider executable."""
    host, namespace, name = SIM_SOURCE.split("/")
    return (
        mirror_dir(runtime_root)
        / host
        / namespace
        / name
        / SIM_VERSION
        / engine_platform()
        / f"terraform-provider-{name}_v{SIM_VERSION}"
    )


def cli_config_path(runtime_root: Path) -> Path:
    return sim_dir(runtime_root) / "terraform.rc"


def default_sim_root(runtime_root: Path) -> Path:
    """Where the sim cloud's objects live when HYOPS_SIM_ROOT is not set."""
    return sim_dir(runtime_root) / "cloud"


def cli_config_text(mirror: Path) -> str:
    """The CLI config: our provider from the mirror, every other provider as usual."""
    source = json.dumps(SIM_SOURCE)
    return (
        "# Written by hybridops-tf: install the sim provider from a local mirror.\n"
        "provider_installation {\n"
        "  filesystem_mirror {\n"
        f"    path    = {json.dumps(str(mirror))}\n"
        f"    include = [{source}]\n"
        "  }\n"
        "  direct {\n"
        f"    exclude = [{source}]\n"
        "  }\n"
        "}\n"
    )


def _ensure_dirs(path: Path, top: Path) -> None:
    """Create `path` and its parents below `top` with mode 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    current = path
    while current != top and top in current.parents:
        if stat.S_IMODE(current.stat().st_mode) != 0o700:
            current.chmod(0o700)
        current = current.parent


def _write_if_changed(path: Path, text: str, mode: int) -> None:
    try:
        same = path.read_text(encoding="utf-8") == text
    except (FileNotFoundError, UnicodeDecodeError):
        same = False
    if not same:
        from hybridops_tf.sim.store import atomic_write_text

        atomic_write_text(path, text, mode=mode)
    if stat.S_IMODE(path.stat().st_mode) != mode:
        path.chmod(mode)


def write_cli_config(runtime_root: Path) -> Path:
    """Lay the mirror launcher and write `<runtime_root>/sim/terraform.rc`; return its path.

    Idempotent: files are rewritten (atomically) only when their contents differ.
    """
    root = Path(runtime_root).absolute()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    launcher = launcher_path(root)
    _ensure_dirs(launcher.parent, root)
    _write_if_changed(launcher, LAUNCHER_TEXT, 0o700)
    config = cli_config_path(root)
    _write_if_changed(config, cli_config_text(mirror_dir(root)), 0o600)
    return config


def derived_cli_config_path(runtime_root: Path, user_file: Path) -> Path:
    """Where the user's file combined with the mirror goes: one file per user file (named by
    a digest of its path), so runs with different files never share one."""
    import hashlib

    digest = hashlib.sha256(str(user_file).encode()).hexdigest()[:12]
    return sim_dir(runtime_root) / f"terraform-{digest}.rc"


def write_derived_cli_config(runtime_root: Path, user_file: Path) -> Path | None:
    """The user's CLI config plus the sim mirror, written (0600, atomically, only when the
    user's file or the mirror changed) beside hyops's own config; return its path.

    None when the user's file is to be used as it is: one of hyops's own configs of this
    runtime root, or a file that installs the sim from a mirror of its own. CliConfigError
    when it cannot be read or combined. The mirror's launcher must be laid already
    (write_cli_config).
    """
    root = Path(runtime_root).absolute()
    user_file = Path(user_file).expanduser().absolute()
    if user_file.resolve().parent == sim_dir(root).resolve():
        return None  # `eval "$(hyops sim install)"` exported one of ours
    from hybridops_tf.sim import cliconfig

    try:
        text = user_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise CliConfigError(f"cannot read your {CLI_CONFIG_ENV} {user_file}: {why}; hyops adds the "
                             f"sim provider's mirror to it: fix it, or unset {CLI_CONFIG_ENV}") from None
    target = derived_cli_config_path(root, user_file)
    mark = cliconfig.stamp(text, str(user_file), mirror_dir(root))
    try:
        unchanged = target.read_text(encoding="utf-8").startswith(mark)
    except (OSError, UnicodeDecodeError):
        unchanged = False
    if unchanged:  # neither the user's file nor the mirror changed: no new parse
        if stat.S_IMODE(target.stat().st_mode) != 0o600:
            target.chmod(0o600)
        return target
    combined = cliconfig.combine(text, str(user_file), mirror_dir(root))
    if combined is None:
        return None
    _write_if_changed(target, combined, 0o600)
    return target


def engine_cli_config(runtime_root: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The CLI config the engine gets for a sim module, its files written: hyops's own, or,
    when the user set a TF_CLI_CONFIG_FILE of their own, that file combined with the mirror
    (or theirs as it is, when it installs the sim itself). CliConfigError when theirs
    cannot be combined."""
    env = os.environ if environ is None else environ
    own = write_cli_config(runtime_root)  # lays the launcher every config points at
    user = _user_cli_config(env)
    if user is None:
        return own
    theirs = Path(user).expanduser()
    return write_derived_cli_config(runtime_root, theirs) or theirs


def _user_cli_config(environ: Mapping[str, str]) -> str | None:
    """The user's own TF_CLI_CONFIG_FILE, if it names a file that exists.

    A variable pointing at a missing file configures nothing (the engine only warns), so
    it does not count as the user's choice and hyops supplies its own config instead.
    """
    value = environ.get(CLI_CONFIG_ENV, "")
    return value if value and Path(value).expanduser().is_file() else None


def sim_engine_env(runtime_root: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment additions hyops gives the engine for a module that uses the sim provider.

    - TF_CLI_CONFIG_FILE: our mirror config (written here, idempotently); when the user set
      their own existing one, that file combined with the mirror (engine_cli_config), or
      nothing when theirs installs the sim itself. CliConfigError when it cannot be combined.
    - HYOPS_SIM_PYTHON: this interpreter, which has hybridops_tf importable.
    - HYOPS_SIM_ROOT: `<runtime_root>/sim/cloud` unless already set.
    - HYOPS_SIM_ROOT / HYOPS_SIM_FAULTS made absolute when given relative.
    SimExtraMissing, before anything is written, when this interpreter cannot import `pyvider`.
    """
    check_sim_python(sys.executable)
    env = os.environ if environ is None else environ
    additions: dict[str, str] = {SIM_PYTHON_ENV: sys.executable}
    config = str(engine_cli_config(runtime_root, env))
    if _user_cli_config(env) is None or config != str(Path(env[CLI_CONFIG_ENV]).expanduser()):
        additions[CLI_CONFIG_ENV] = config
    if not env.get(SIM_ROOT_ENV):
        additions[SIM_ROOT_ENV] = str(default_sim_root(runtime_root))
    # the provider runs in the module directory (-chdir): a relative path means the caller's cwd
    for name in (SIM_ROOT_ENV, "HYOPS_SIM_FAULTS"):  # the latter is sim.faults' FAULTS_ENV
        value = env.get(name, "").strip()
        if value and not os.path.isabs(value):
            additions[name] = str(Path(value).absolute())
    return additions


# `source = "./sub"` / `"../shared"`: a local module call (a false positive, e.g. a file
# provisioner's source, only costs a directory scan). Registry and git sources are read from
# the engine's own `.terraform/modules/modules.json` once `init` has fetched them.
_LOCAL_SOURCE = re.compile(r'\bsource\s*=\s*"(\.\.?/[^"]*)"')
_MAX_MODULE_DIRS = 256  # a bound on the module tree scan: no loop, no runaway


def module_uses_sim(module_dir: Path) -> bool:
    """True when the module, or any module it calls, uses a `sim_` type or the sim source.

    A cheap text scan (no HCL parser): hyops only needs to know whether to add the
    mirror config, and a false positive costs nothing. The tree is the local module calls
    (`source = "./..."` or `"../..."`, followed recursively) plus the modules the engine
    installed (`.terraform/modules/modules.json`), each directory once, at most
    _MAX_MODULE_DIRS of them; an unreadable file or directory is skipped.
    """
    root = Path(module_dir)
    pending = [root, *_installed_module_dirs(root)]
    seen: set[Path] = set()
    while pending and len(seen) < _MAX_MODULE_DIRS:
        directory = pending.pop(0)  # breadth first: the root's own files first
        try:
            real = directory.resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if real in seen:
            continue
        seen.add(real)
        texts = _tf_texts(real)
        if any(SIM_SOURCE in text or _SIM_RESOURCE.search(text) for text in texts):
            return True
        for text in texts:
            pending.extend(real / source for source in _LOCAL_SOURCE.findall(text))
    return False


def _tf_texts(directory: Path) -> list[str]:
    """The text of every `*.tf` file directly in directory; unreadable ones are skipped."""
    texts: list[str] = []
    try:
        paths = sorted(directory.glob("*.tf"))
    except OSError:
        return texts
    for path in paths:
        try:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return texts


def _installed_module_dirs(root: Path) -> list[Path]:
    """The module directories `init` recorded in `.terraform/modules/modules.json`."""
    try:
        doc = json.loads((root / ".terraform" / "modules" / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = doc.get("Modules") if isinstance(doc, dict) else None
    dirs = []
    for entry in entries if isinstance(entries, list) else []:
        where = entry.get("Dir") if isinstance(entry, dict) else None
        if isinstance(where, str) and where and "\0" not in where:
            dirs.append(root / where)
    return dirs


class SimEnvironment:
    """The sim provider's engine environment as the core asks for it: the shape of
    hybridops_tf.runtime.hooks.EnvironmentHook (structural: the sim imports nothing of the core).
    The CLI registers SIM_ENVIRONMENT; the core then gives every sim module its mirror."""

    # what engine_env raises when the user's own setup rules it out: a usage error (exit 2)
    usage_errors: tuple[type[Exception], ...] = (CliConfigError,)

    def applies(self, module_dir: Path) -> bool:
        return module_uses_sim(module_dir)

    def guarded_path(self, runtime_root: Path) -> Path:
        return launcher_path(runtime_root)  # the engine executes what it finds there

    def engine_env(self, runtime_root: Path) -> dict[str, str]:
        return sim_engine_env(runtime_root)


SIM_ENVIRONMENT = SimEnvironment()
