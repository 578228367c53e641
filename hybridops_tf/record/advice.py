"""The commands hyops prints for a person (or a CI job) to paste: one builder, so every printed
command names what it needs to act on the same record.

Every `next:` line, `last_error`, finding, Markdown row, JUnit text and report that advises a
hyops command builds it here (`Commands`), from a `Where`: the module's directory as the user can
type it (relative to the current directory when under it: `display_dir`), its ref, its workspace
when not `default`, the inputs a rerun needs and the stack it belongs to; `Commands.hyops` carries
the global options given (a `--runtime-root`, `--engine`, `--store` typed on the command line).
A command without its `--workspace` would act on the default workspace's record and state:
a pipeline that pastes it goes green over another workspace's lost create (docs/recovery.md).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hybridops_tf.base import numbers
from hybridops_tf.base.lazy_dataclass import dataclass


@dataclass(frozen=True, slots=True)
class Where:
    """How a person reaches the module: what to paste into a shell."""

    module_ref: str
    display_dir: str | None  # as the user can paste it; None when unknown (corrupt record)
    workspace: str | None = None
    uses_sim: bool = False
    inputs_args: tuple[str, ...] = ()  # `--inputs <rerun.inputs.yml>` when the module ran before
    stack_file: str | None = None  # reconciled as a member of this stack
    # A stack member's inputs as the stack file gives them now, as `--var` arguments (secrets
    # and values reconcile cannot know as placeholders); None when not a member or never run.
    stack_args: tuple[str, ...] | None = None


def where_of(module_ref: str, directory: Path | str | None, workspace: str | None) -> Where:
    """A module as a person reaches it from here: its directory as display_dir shows it."""
    return Where(module_ref, display_dir(directory) if directory else None,
                 workspace if workspace and workspace != "default" else None)


@dataclass(frozen=True, slots=True)
class Commands:
    """Builds the exact next-action commands; `hyops` carries the global options given."""

    hyops: str = "hyops"
    engine: str = "tofu"

    def _dir(self, where: Where) -> str:
        return shlex.quote(where.display_dir) if where.display_dir else "MODULE_DIR"

    def _module(self, command: str, where: Where, *extra: str) -> str:
        parts = [self.hyops, command, self._dir(where), "--ref", shlex.quote(where.module_ref),
                 *(("--workspace", shlex.quote(where.workspace)) if where.workspace else ()), *extra]
        return " ".join(parts)

    def apply(self, where: Where) -> str:
        """A stack member that never ran gets its inputs from the stack's wiring; one that ran,
        the stack file's inputs as they are now (its rerun.inputs.yml may hold an input the
        stack file no longer gives)."""
        if where.stack_file:
            if where.stack_args is None:
                return self.stack_apply(where)
            return self._module("apply", where, *map(shlex.quote, where.stack_args))
        return self._module("apply", where, *map(shlex.quote, where.inputs_args))

    def stack_apply(self, where: Where, resume: bool = True) -> str:
        """The member's stack, applied (--resume: members ok with nothing changed are skipped)."""
        return self.stack("apply", where.stack_file, *(("--resume",) if resume else ()))

    def refresh(self, where: Where) -> str:
        """A refresh-only apply: the state's objects read again through the provider in use."""
        return self._module("apply", where, *map(shlex.quote, where.inputs_args), "--", "-refresh-only")

    def invoke(self, where: Where, action: str) -> str:
        """An apply that invokes one action alone (Terraform 1.14+ `-invoke`): it re-runs an
        action that did not finish, and re-creates nothing. A stack member that ran gets the
        stack file's inputs as they are now, as its apply does."""
        given = where.stack_args if where.stack_file and where.stack_args is not None else where.inputs_args
        return self._module("apply", where, *map(shlex.quote, given), "--", shlex.quote(f"-invoke={action}"))

    def destroy(self, where: Where) -> str:
        return self._module("destroy", where, *map(shlex.quote, where.inputs_args))

    def reconcile(self, where: Where, *extra: str) -> str:
        return self._module("reconcile", where, *extra)

    def init(self, where: Where, *engine_args: str) -> str:
        """`hyops init` of the module, `-- ENGINE_ARGS` when given (say `-upgrade`)."""
        return self._module("init", where, *(("--", *map(shlex.quote, engine_args)) if engine_args else ()))

    def plan(self, where: Where) -> str:
        return self._module("plan", where, *map(shlex.quote, where.inputs_args))

    def write(self, where: Where) -> str:
        return self.reconcile(where, "--write")

    def import_(self, where: Where, address: str, object_id: str | None) -> str:
        ident = object_id if object_id else "<id>"
        return self.reconcile(where, "--import", shlex.quote(f"{address}={ident}"))

    @staticmethod
    def import_block(address: str, identity: Mapping[str, Any]) -> str:
        """An `import` block adopting an object by the provider's identity (engines >= 1.12), as
        HCL: values written as JSON (strings, numbers, booleans read alike in HCL) with template
        openers escaped (`$${`, `%%{`), so a value is never interpolated."""
        def value(v: Any) -> str:
            return numbers.dumps(v, ensure_ascii=False).replace("${", "$${").replace("%{", "%%{")

        fields = ", ".join(f"{key} = {value(v)}" for key, v in identity.items())
        return f"import {{\n  to       = {address}\n  identity = {{ {fields} }}\n}}"

    def forget(self, where: Where, address: str) -> str:
        return self.reconcile(where, "--forget-orphan", shlex.quote(address))

    def forget_missing(self, where: Where, object_id: str) -> str:
        return self.reconcile(where, "--forget-missing", shlex.quote(object_id))

    def state_mv(self, where: Where, source: str, destination: str) -> str:
        return self._engine_in(where, "state", "mv", shlex.quote(source), shlex.quote(destination))

    def state_rm(self, where: Where, address: str) -> str:
        return self._engine_in(where, "state", "rm", shlex.quote(address))

    def untaint(self, where: Where, address: str) -> str:
        """The engine's own `untaint`: a taint another writer made, undone without a replace."""
        return self._engine_in(where, "untaint", shlex.quote(address))

    def _engine_in(self, where: Where, *words: str) -> str:
        """The engine itself on the module's folder and workspace, as a person pastes it: the
        workspace in the command's own environment (`TF_WORKSPACE=W`), as nothing else selects it."""
        prefix = f"TF_WORKSPACE={shlex.quote(where.workspace)} " if where.workspace else ""
        return f"{prefix}{self.engine} -chdir={self._dir(where)} {' '.join(words)}"

    def forget_record(self, where: Where) -> str:
        return self.reconcile(where, "--forget-record")

    def push_errored(self, where: Where) -> str:
        return self._engine_in(where, "state", "push", "errored.tfstate")

    def sim_ls(self) -> str:
        return f"{self.hyops} sim ls"

    def sim_rm(self, object_id: str | None = None) -> str:
        return f"{self.hyops} sim rm {shlex.quote(object_id or '<id>')}"

    # Commands on a stack, on every record, and on the store: the same global options as the
    # module's, the stack file quoted as a path a shell takes whole (`STACK_FILE` when unknown).

    def stack(self, verb: str, stack_file: Path | str | None, *extra: str) -> str:
        """`hyops stack VERB STACK_FILE EXTRA...` (apply, destroy, status, graph)."""
        shown = shlex.quote(str(stack_file)) if stack_file else "STACK_FILE"
        return " ".join([self.hyops, "stack", verb, shown, *extra])

    def stack_resume(self, stack_file: Path | str | None) -> str:
        """The stack applied again, ok members with nothing changed skipped."""
        return self.stack("apply", stack_file, "--resume")

    def stack_destroy(self, stack_file: Path | str | None) -> str:
        return self.stack("destroy", stack_file)

    def stack_status(self, stack_file: Path | str | None) -> str:
        return self.stack("status", stack_file)

    def stack_work(self, *extra: str) -> str:
        """A worker of the queue (`--until-idle`, `-p N`)."""
        return " ".join([self.hyops, "stack", "work", *extra])

    def stack_cancel(self, run_id: str | None = None) -> str:
        return f"{self.hyops} stack cancel {shlex.quote(run_id) if run_id else 'RUN_ID'}"

    def reconcile_stack(self, stack_file: Path | str | None, *extra: str) -> str:
        shown = shlex.quote(str(stack_file)) if stack_file else "STACK_FILE"
        return " ".join([self.hyops, "reconcile", "--stack", shown, *extra])

    def reconcile_all(self, *extra: str) -> str:
        return " ".join([self.hyops, "reconcile", "--all", *extra])

    def status_all(self) -> str:
        return f"{self.hyops} status --all"

    def store(self, verb: str, *extra: str) -> str:
        """`hyops store init|status|import-local`."""
        return " ".join([self.hyops, "store", verb, *extra])

    def apply_plan(self, plan_file: Path | str | None) -> str:
        """A saved plan applied as reviewed."""
        return f"{self.hyops} apply {shlex.quote(str(plan_file)) if plan_file else 'PLAN_FILE'}"

    def plan_out(self, where: Where | None, plan_file: Path | str | None = None) -> str:
        """A plan kept for `hyops apply FILE` (`MODULE_DIR`/`FILE` when unknown)."""
        module = self._module("plan", where) if where is not None else f"{self.hyops} plan MODULE_DIR"
        return f"{module} --out {shlex.quote(str(plan_file)) if plan_file else 'FILE'}"

    def version(self) -> str:
        return f"{self.hyops} version"

    def with_root(self, root: Path | str) -> Commands:
        """The same commands on another runtime root (`--runtime-root ROOT`)."""
        return Commands(f"{self.hyops} --runtime-root {shlex.quote(str(root))}", self.engine)

    def module(self, command: str, where: Where, *extra: str) -> str:
        """`hyops COMMAND DIR --ref R [--workspace W] EXTRA...` for a command with no builder of
        its own (its name as the user typed it)."""
        return self._module(command, where, *extra)

    def named(self, *words: str) -> str:
        """A command named without a target (`hyops reconcile` in the current module's folder,
        `hyops sim ls`), with the global options given."""
        return " ".join([self.hyops, *words])


ADVISE = Commands()
"""The builder with no global options: for core code that names a command where the command
line that ran is not known (the CLI builds its own from the options typed: cli/settings.py)."""


def reconcile_command(module_ref: str, directory: Path | str | None, workspace: str | None, *extra: str,
                      hyops: str = "hyops") -> str:
    """`hyops reconcile` of a module's record (its ref, directory and workspace), as a person
    pastes it from here: what every "run reconcile first" says."""
    return Commands(hyops=hyops).reconcile(where_of(module_ref, directory, workspace), *extra)


def display_dir(path: Path | str, project_top: Path | None = None) -> str:
    """A module directory as the commands a summary prints name it, so they run on any
    runner that checked the repository out, wherever:
    - relative to the current directory when the module is under it (`modules/network`);
    - else, when the current directory is inside the project, under its top (the folder
      holding the runtime root): relative to the current directory all the same (`../vm`
      from inside a sibling module);
    - a directory that does not exist here (recorded by another runner, in its checkout of
      the same repository): the same module in this checkout, the longest tail of its path
      that is a directory holding `.tf` files under the current directory or the project
      top, shown as above;
    - else the path as recorded."""
    path = Path(os.path.abspath(path))
    try:
        cwd = Path.cwd()
    except OSError:  # the current directory was removed: nothing is relative to it
        return str(path)
    bases = [cwd]
    top = None if project_top is None else Path(os.path.abspath(project_top))
    if top is not None and top in cwd.parents:  # from outside the project, `..` paths help nobody
        bases.append(top)
    shown = _relative_under(path, bases, cwd)
    if shown is not None or path.is_dir():
        return shown if shown is not None else str(path)
    parts = path.parts[1:]  # without the root: the longest tail first
    for start in range(len(parts)):
        for base in bases:
            candidate = base.joinpath(*parts[start:])
            if _holds_tf(candidate):
                return _relative_under(candidate, bases, cwd) or str(path)
    return str(path)


def _relative_under(path: Path, bases: list[Path], cwd: Path) -> str | None:
    """`path` relative to `cwd` when it is under one of `bases`, else None."""
    if not any(path == base or base in path.parents for base in bases):
        return None
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return None


def _holds_tf(directory: Path) -> bool:
    try:
        return directory.is_dir() and any(p.suffix == ".tf" for p in directory.iterdir())
    except OSError:
        return False


def give_inputs(names: list[str], secret: frozenset[str]) -> str:
    """How to give required inputs that no source gives. A secret (a variable declared
    sensitive or ephemeral) as `TF_VAR_NAME` in the environment (a CI secret), never on a
    command line, where shell history, CI logs and the process list keep it; any other with
    `--var NAME=...` or in an --inputs file."""
    plain = [n for n in names if n not in secret]
    hidden = [n for n in names if n in secret]
    parts = [" ".join(f"--var {n}=..." for n in plain) + " (or an --inputs file)"] if plain else []
    if hidden:
        parts.append(f"set {' and '.join(f'TF_VAR_{n}=...' for n in hidden)} in the environment "
                     f"({'a secret' if len(hidden) == 1 else 'secrets'}: never on a command line)")
    return "pass " + "; ".join(parts) if plain else "; ".join(parts)

