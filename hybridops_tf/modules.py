"""Module addressing (DESIGN §2): directory -> module_ref, validated before anything runs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.errors import UsageError

_SEGMENT = re.compile(r"[a-z0-9_.-]+\Z")  # \Z, not $: "$" lets one trailing newline through


@dataclass(frozen=True, slots=True)
class ModuleTarget:
    directory: Path  # absolute
    ref: str


def validate_ref(ref: str, *, source: str = "--ref") -> str:
    """A ref is lowercase segments joined by '/': no '..', no leading '/', no empty part."""
    problem = None
    if not ref:
        problem = "it is empty"
    elif ref.startswith("/"):
        problem = "it starts with '/'"
    else:
        for seg in ref.split("/"):
            if not seg:
                problem = "it has an empty segment"
            elif set(seg) == {"."}:
                problem = f"segment '{seg}' is only dots"
            elif ".." in seg:
                problem = f"segment '{seg}' contains '..'"
            elif seg.startswith("_") or seg.endswith("_"):
                problem = f"segment '{seg}' starts or ends with '_' ('a_/b' and 'a/_b' would share a record)"
            elif "__" in seg:
                problem = f"segment '{seg}' contains '__' (reserved: a ref's '/' becomes '__' in file names)"
            elif not _SEGMENT.match(seg):
                problem = f"segment '{seg}' may use only lowercase letters, digits, '_', '.', '-'"
            if problem:
                break
    if problem:
        raise UsageError(f"invalid module ref '{ref}' ({source}): {problem}; e.g. platform/network")
    return ref


def _relative(path: Path, root: Path) -> str | None:
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text


def resolve_module(module_dir: Path | str, ref: str | None, modules_root: Path | None) -> ModuleTarget:
    """Check the directory holds .tf files and work out its ref (exit 2 on any problem)."""
    directory = Path(os.path.abspath(module_dir))
    if not directory.is_dir():
        raise UsageError(f"module directory {module_dir} does not exist: pass the directory of a root module")
    if not any(p.suffix == ".tf" for p in directory.iterdir() if p.is_file()):
        raise UsageError(f"module directory {module_dir} holds no .tf files: pass the directory of a root module")
    if ref is not None:
        return ModuleTarget(directory, validate_ref(ref))
    cwd = Path.cwd()
    roots = [Path(os.path.abspath(modules_root))] if modules_root else [cwd / "modules"]
    roots.append(cwd)
    for root in roots:
        rel = _relative(directory, root.resolve()) or _relative(directory, root)
        if rel is not None:
            return ModuleTarget(directory, validate_ref(rel, source=f"derived from {module_dir}"))
    raise UsageError(
        f"module directory {module_dir} is outside the modules root and the current directory: "
        "pass --ref NAME (e.g. --ref platform/network)"
    )
