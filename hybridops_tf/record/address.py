"""Module addressing (docs/contract.md: Commands and options): directory -> module_ref,
validated before anything runs."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hybridops_tf.base.config_names import holds_configuration
from hybridops_tf.base.errors import UsageError
from hybridops_tf.base.lazy_dataclass import dataclass

_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+\Z")  # \Z, not $: "$" lets one trailing newline through


@dataclass(frozen=True, slots=True)
class ModuleTarget:
    directory: Path  # absolute
    ref: str


def validate_ref(ref: str, *, source: str = "--ref", derived: bool = False) -> str:
    """A ref is segments joined by '/' (ASCII letters of either case, as folder names have
    them, digits, '_', '.', '-'): no '..', no leading '/', no empty part. A `derived` ref (from
    a folder's path) that is not one is refused offering `--ref` with a valid one."""
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
                problem = f"segment '{seg}' may use only ASCII letters (A-Z, a-z), digits, '_', '.', '-'"
            if problem:
                break
    if problem and derived:
        raise UsageError(f"invalid module ref '{ref}' ({source}): {problem}; name its record with "
                         f"--ref {suggest_ref(ref)} (or any other valid ref)")
    if problem:
        raise UsageError(f"invalid module ref '{ref}' ({source}): {problem}; e.g. platform/network")
    return ref


def suggest_ref(text: str) -> str:
    """A valid ref near `text`: accents dropped (`café` -> `cafe`), any other character
    outside the ref's alphabet a '-', each segment trimmed to what validate_ref takes."""
    import unicodedata

    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    segments = []
    for seg in plain.split("/"):
        seg = re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_.-]+", "-", seg)).replace("..", "-").strip("_.-")
        if seg:
            segments.append(seg)
    return "/".join(segments) or "my-module"


def _relative(path: Path, root: Path) -> str | None:
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text


@dataclass(frozen=True, slots=True)
class RefChoice:
    """A module and how its ref was chosen, for the note that names it."""

    target: ModuleTarget
    how: str  # "given", "modules root", "current directory", "project", "folder name"


def resolve_module(module_dir: Path | str, ref: str | None, modules_root: Path | None,
                   project_top: Path | None = None) -> ModuleTarget:
    """Check the directory holds configuration files and work out its ref (exit 2 on any problem)."""
    return choose_ref(module_dir, ref, modules_root, project_top).target


def choose_ref(module_dir: Path | str, ref: str | None, modules_root: Path | None,
               project_top: Path | None = None) -> RefChoice:
    """The module and its ref: `ref` when given; else the module's path from the modules root
    (`--modules-root`, else `./modules`), from the current directory, or from the project's
    top (the folder holding the runtime root: `<top>/modules`, then `<top>`), so that a run
    inside the module's own folder gets the ref a run from the top gives it; else, for the
    current directory itself, its folder name (as `cd infra && terraform apply` works)."""
    directory = Path(os.path.abspath(module_dir))
    if not directory.is_dir():
        raise UsageError(f"module directory {module_dir} does not exist: pass the directory of a root module")
    if not holds_configuration(directory):  # a root of `.tf.json` files only is a root, as the engine reads it
        raise UsageError(f"module directory {module_dir} holds no .tf files (nor .tf.json, .tofu, .tofu.json): "
                         "pass the directory of a root module")
    if ref is not None:
        return RefChoice(ModuleTarget(directory, validate_ref(ref)), "given")
    cwd = Path.cwd()
    roots = [(Path(os.path.abspath(modules_root)), "modules root")] if modules_root else \
        [(cwd / "modules", "modules root")]
    roots.append((cwd, "current directory"))
    if project_top is not None and modules_root is None:
        top = Path(os.path.abspath(project_top))
        roots += [(top / "modules", "project"), (top, "project")]
    for root, how in roots:
        rel = _relative(directory, root.resolve()) or _relative(directory, root)
        if rel is not None:
            derived = validate_ref(rel, source=f"derived from {module_dir}", derived=True)
            return RefChoice(ModuleTarget(directory, derived), how)
    if directory in (cwd, cwd.resolve()) and directory.name:
        name = validate_ref(directory.name, source=f"the name of the folder {directory}", derived=True)
        return RefChoice(ModuleTarget(directory, name), "folder name")
    raise UsageError(
        f"module directory {module_dir} is outside the modules root, the current directory and the "
        "project (the folder holding the runtime root): pass --ref NAME (e.g. --ref platform/network)"
    )


def module_id(module_ref: str) -> str:
    """The folder name of a record key: `platform/network` -> `platform__network`,
    `platform/network@stg` -> `platform__network@stg`. A capital of the ref is written `^`
    and its small letter (`envs/Prod` -> `envs__^prod`): folder names stay distinct where the
    filesystem ignores case, and no lowercase ref can spell `^`."""
    ref, at, workspace = module_ref.partition("@")
    ref = "".join(f"^{c.lower()}" if "A" <= c <= "Z" else c for c in ref)
    return ref.replace("/", "__") + at + workspace


def key_of_module_id(name: str) -> str:
    """The record key a folder name encodes (module_id's inverse)."""
    ref, at, workspace = name.partition("@")
    out, caps = [], False
    for c in ref.replace("__", "/"):
        if c == "^":
            caps = True
            continue
        out.append(c.upper() if caps else c)
        caps = False
    return "".join(out) + at + workspace


DEFAULT_WORKSPACE = "default"
_WORKSPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,89}\Z")


def validate_workspace(name: str, source: str = "--workspace") -> str:
    """A workspace name hyops can put in a path; the engine's own rules are looser only in
    characters no one uses (UsageError, exit 2, otherwise)."""
    if not _WORKSPACE.match(name):
        raise UsageError(f"{source} {name!r} is not a workspace name hyops accepts: use letters, digits, "
                         "'_', '.' and '-' (at most 90, starting with a letter or digit)")
    return name


def record_key(module_ref: str, workspace: str | None = None) -> str:
    """What identifies a record, its lock and its run folders: the module ref, and the
    workspace unless it is the default one (whose paths are the ref's alone). `@` cannot
    appear in a module ref, so the key is unambiguous."""
    if not workspace or workspace == DEFAULT_WORKSPACE:
        return module_ref
    return f"{module_ref}@{workspace}"


def split_key(key: str) -> tuple[str, str | None]:
    """(module_ref, workspace or None) of a record key."""
    ref, at, workspace = key.partition("@")
    return ref, (workspace if at else None)
