"""When a module needs `init` again, as a careful user would run it.

`init` installs what a configuration calls: child modules, providers, the backend. A raw
user re-runs it after changing any of those; hyops does the same on its own. After each
successful init it keeps a stamp: the fingerprint of the module tree's files (names, mtimes,
sizes: a stat per file, no parse) and a projection of what init acts on (module calls with
their source and version, required providers, backend). While the files are unchanged, no
parse happens; once they change, python-hcl2 reads the projection again and only a changed
projection triggers init. A module no stamp covers (first hyops run, or initialised by raw
tofu) gets one init, so that the stamp describes a configuration hyops saw initialised.
In the engine layer: Engine.ensure_init asks it, and it knows only the engine's files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hybridops_tf.base.files import atomic_write_text
from hybridops_tf.engine.module_tree import config_files, module_tree

STAMP_VERSION = 1


def _stamp_path(marker_dir: Path, module_dir: Path) -> Path:
    return marker_dir / (hashlib.sha256(str(module_dir.resolve()).encode()).hexdigest()[:32] + ".init.json")


def files_fingerprint(module_dir: Path) -> str:
    parts = []
    for directory in module_tree(module_dir):
        for path in [*config_files(directory), directory / ".terraform.lock.hcl"]:
            try:
                st = path.stat()
            except OSError:
                continue
            parts.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def requirements(module_dir: Path) -> str:
    """A digest of what init acts on across the local module tree (parsed with python-hcl2).

    A file that does not parse makes the digest unique, so init runs and the engine reports
    the syntax error itself."""
    projection: list[Any] = []
    for directory in module_tree(module_dir):
        for path in config_files(directory):
            try:
                doc = _parse(path)
            except Exception as err:  # noqa: BLE001 - any parse failure: let init and the engine say why
                projection.append([str(path), "unparsable", repr(err)[:200]])
                continue
            projection.append([str(path.relative_to(module_dir.resolve()) if path.is_relative_to(
                module_dir.resolve()) else path), _project(doc)])
    text = json.dumps(projection, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _parse(path: Path) -> Any:
    """One configuration file as python-hcl2 (or json, for .tf.json/.tofu.json) reads it;
    raises on any syntax the parser does not take."""
    if path.name.endswith(".json"):
        return json.loads(path.read_text(encoding="utf-8"))
    import hcl2

    with path.open(encoding="utf-8") as fh:
        return hcl2.load(fh)


def _project(doc: Any) -> dict[str, Any]:
    """Only the parts of one file that init installs from: module calls and terraform blocks."""
    if not isinstance(doc, dict):
        return {}
    modules: list[Any] = []
    for block in _blocks(doc.get("module")):
        for name, body in block.items():
            body = body if isinstance(body, dict) else {}
            modules.append([name, body.get("source"), body.get("version")])
    terraform = []
    for block in _blocks(doc.get("terraform")):
        terraform.append({key: block.get(key) for key in ("required_providers", "backend", "cloud")
                          if key in block})
    return {"module": modules, "terraform": terraform}


def _blocks(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


NOT_INITIALISED = "the module is not initialised"
NOT_BY_HYOPS = "the module was never initialised by hyops"


def init_reason(module_dir: Path, marker_dir: Path, *, write: bool = True) -> str | None:
    """Why `init` must run before the engine is used on module_dir, or None. With write,
    a stamp whose files changed without touching what init installs is brought up to date."""
    stamp = _read_stamp(marker_dir, module_dir)
    has_dot_terraform = (module_dir / ".terraform").is_dir()
    if stamp is None:
        return NOT_BY_HYOPS if has_dot_terraform else NOT_INITIALISED
    if stamp.get("dot_terraform") and not has_dot_terraform:
        return "the module's .terraform directory is gone"
    if has_dot_terraform and _provider_link_gone(module_dir):
        return "a provider its .terraform links to is gone (a provider cache was removed)"
    fingerprint = files_fingerprint(module_dir)
    if stamp.get("files") == fingerprint:
        return None
    if stamp.get("requirements") != requirements(module_dir):
        return "its child-module sources or provider requirements changed since the last init"
    if write:
        _write_stamp(marker_dir, module_dir, {**stamp, "files": fingerprint})
    return None


def _provider_link_gone(module_dir: Path) -> bool:
    """A link in `.terraform/providers` (HOST/NS/TYPE/VERSION/PLATFORM) whose target is gone: the
    engine linked it from a provider cache (engine/plugin_cache.py) or an unpacked mirror that
    was removed since, and would fail to start that provider."""
    providers = module_dir / ".terraform" / "providers"
    try:
        platforms = list(providers.glob("*/*/*/*/*"))
    except OSError:
        return False
    return any(p.is_symlink() and not p.exists() for p in platforms)


def remember_init(module_dir: Path, marker_dir: Path) -> None:
    """Stamp a successful init. Losing the stamp only costs another init next time."""
    _write_stamp(marker_dir, module_dir, {
        "files": files_fingerprint(module_dir),
        "requirements": requirements(module_dir),
        "dot_terraform": (module_dir / ".terraform").is_dir(),
    })


def _read_stamp(marker_dir: Path, module_dir: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(_stamp_path(marker_dir, module_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema_version") != STAMP_VERSION:
        return None
    return doc


def _write_stamp(marker_dir: Path, module_dir: Path, doc: dict[str, Any]) -> None:
    try:
        atomic_write_text(_stamp_path(marker_dir, module_dir),
                          json.dumps({"schema_version": STAMP_VERSION, **doc}) + "\n",
                          durable=False)  # a cache: a stamp lost is an `init` run again
    except OSError:
        pass


def backend_type(module_dir: Path) -> str | None:
    """The backend the root module declares (`backend "pg" {}` -> "pg"), None for none or
    when its files do not parse (init and the engine then say why)."""
    for path in config_files(module_dir):
        try:
            if "backend" not in path.read_text(encoding="utf-8", errors="replace"):
                continue  # the parser costs ~0.1 s to load: only files that may declare one
            doc = _parse(path)
        except Exception:  # noqa: BLE001 - any parse failure: the engine reports it at init
            return None
        for block in _blocks(doc.get("terraform") if isinstance(doc, dict) else None):
            for backend in _blocks(block.get("backend")):
                for name in backend:
                    if not str(name).startswith("__"):  # python-hcl2's own markers
                        return str(name).strip('"')
    return None
