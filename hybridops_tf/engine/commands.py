"""Pure argv builders for the engine: every command hyops runs is spelled here.

Nothing here spawns a process (that is process.py's job), so each builder is unit-tested
as an exact list. `-chdir=DIR` comes first, exactly as `tofu -chdir=DIR apply` would be
typed, so local state and `.terraform` land where a raw run puts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

Argv = list[str]


def _base(engine: Path | str, module_dir: Path | str | None) -> Argv:
    argv = [str(engine)]
    if module_dir is not None:
        argv.append(f"-chdir={module_dir}")
    return argv


def version(engine: Path | str) -> Argv:
    return [str(engine), "version", "-json"]


def init(engine: Path | str, module_dir: Path | str) -> Argv:
    return [*_base(engine, module_dir), "init", "-input=false", "-no-color"]


def apply(engine: Path | str, module_dir: Path | str, extra: Sequence[str] = ()) -> Argv:
    return [*_base(engine, module_dir), "apply", "-auto-approve", "-input=false", "-json", *extra]


def destroy(engine: Path | str, module_dir: Path | str, extra: Sequence[str] = ()) -> Argv:
    return [*_base(engine, module_dir), "destroy", "-auto-approve", "-input=false", "-json", *extra]


# What `apply PLANFILE` still takes from the passthrough: a saved plan fixes the variables,
# targets and refresh mode (the engine refuses -var/-var-file with it), but not how it runs.
SAVED_PLAN_FLAGS = frozenset({"-parallelism", "-lock", "-lock-timeout", "-compact-warnings", "-no-color",
                              "-state", "-state-out", "-backup"})


def flag_name(arg: str) -> str | None:
    """The engine flag `arg` names, as `-name` (the engine takes one dash or two, and
    `-name=VALUE`), or None for an argument that is not a flag."""
    name = arg.lstrip("-").partition("=")[0]
    return f"-{name}" if arg.startswith("-") and name else None


def saved_plan_extra(extra: Sequence[str]) -> Argv:
    """The passthrough arguments `apply PLANFILE` accepts."""
    return [arg for arg in extra if flag_name(arg) in SAVED_PLAN_FLAGS]


def apply_saved(engine: Path | str, module_dir: Path | str, plan_file: Path | str,
                extra: Sequence[str] = ()) -> Argv:
    """`apply PLANFILE`: exactly the saved plan; no var file (it carries its variables)."""
    return [*_base(engine, module_dir), "apply", "-auto-approve", "-input=false", "-json",
            *saved_plan_extra(extra), str(plan_file)]


def plan(
    engine: Path | str,
    module_dir: Path | str,
    out: Path | str | None = None,
    *,
    refresh_only: bool = False,
    destroy: bool = False,
    extra: Sequence[str] = (),
) -> Argv:
    argv = [*_base(engine, module_dir), "plan", "-input=false", "-json"]
    if refresh_only:
        argv.append("-refresh-only")
    if destroy:
        argv.append("-destroy")
    if out is not None:
        argv.append(f"-out={out}")
    return [*argv, *extra]


def show_state(engine: Path | str, module_dir: Path | str) -> Argv:
    return [*_base(engine, module_dir), "show", "-json", "-no-color"]


def state_pull(engine: Path | str, module_dir: Path | str) -> Argv:
    """The current state as JSON (empty output when there is none): its lineage and serial."""
    return [*_base(engine, module_dir), "state", "pull"]


def show_plan(engine: Path | str, module_dir: Path | str, plan_file: Path | str) -> Argv:
    return [*_base(engine, module_dir), "show", "-json", "-no-color", str(plan_file)]


def output(engine: Path | str, module_dir: Path | str) -> Argv:
    return [*_base(engine, module_dir), "output", "-json", "-no-color"]


def import_(
    engine: Path | str, module_dir: Path | str, address: str, object_id: str, extra: Sequence[str] = ()
) -> Argv:
    return [*_base(engine, module_dir), "import", "-input=false", "-no-color", *extra, address, object_id]


def query(engine: Path | str, module_dir: Path | str) -> Argv:
    """`query -json`: the `list` blocks of the folder's `*.tfquery.hcl` files, as JSON lines."""
    return [*_base(engine, module_dir), "query", "-json", "-no-color"]
