"""Options shared by the per-module commands, and the `--` passthrough split."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.settings import Settings, settings
from hybridops_tf.record.address import ModuleTarget, choose_ref

INPUT_OPTIONS = ("--var", "--inputs", "--var-file")


class PassthroughCommand(click.Command):
    """Everything after the first `--` goes to the engine (ctx.meta["passthrough"]), except
    its `-var`/`-var-file`, which `cli_inputs` takes as inputs. ctx.meta["input_order"]
    keeps the order of the input options as typed (Click keeps it per option only)."""

    passes_through = True  # habits.py moves engine flags typed before `--` after it

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta["passthrough"] = args[cut + 1 :]
            args = args[:cut]
        else:
            ctx.meta["passthrough"] = []
        ctx.meta["input_order"] = _input_order(args)
        return super().parse_args(ctx, args)


def _input_order(args: list[str]) -> list[str]:
    """The input options in the order typed: `--var`, `--inputs`, `--var-file`, once each use."""
    order: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        flag = arg.partition("=")[0]
        if flag in INPUT_OPTIONS:
            order.append(flag)
            skip = "=" not in arg
    return order


def cli_inputs(ctx: click.Context, var_options: tuple[str, ...], inputs_files: tuple[Path, ...],
               var_files: tuple[Path, ...], module_dir: Path) -> tuple[list[Any], list[str]]:
    """The explicit inputs in the order given, then the engine's `-var`/`-var-file` from the
    passthrough in theirs; and the passthrough without them. A relative `-var-file` after
    `--` is the module directory's, as for `tofu -chdir=DIR` (hyops's own --inputs and
    --var-file are relative to the current directory). UsageError (exit 2) for a
    passthrough flag without its value."""
    from hybridops_tf.inputs.values import CliInput, split_engine_flags

    queues: dict[str, list[str]] = {"--var": list(var_options), "--inputs": [str(p) for p in inputs_files],
                                    "--var-file": [str(p) for p in var_files]}
    order = ctx.meta.get("input_order") or []
    if sorted(order) != sorted([k for k, v in queues.items() for _ in v]):  # not as scanned: files first
        order = ["--inputs"] * len(inputs_files) + ["--var-file"] * len(var_files) + ["--var"] * len(var_options)
    given = [CliInput(option, queues[option].pop(0)) for option in order]
    engine_inputs, rest = split_engine_flags(ctx.meta.get("passthrough") or [])
    for item in given:
        if item.option in ("--inputs", "--var-file") and not _recorded_inputs(ctx, Path(item.text)):
            _file_where_read(Path(item.text), Path.cwd(), module_dir, before_dashes=True)
    for item in engine_inputs:
        if item.option == "--var-file":
            _file_where_read(Path(item.text), module_dir, Path.cwd(), before_dashes=False)
    engine_inputs = [CliInput(i.option, str(module_dir / i.text)) if i.option == "--var-file" else i
                     for i in engine_inputs]  # an absolute text stays as it is
    return given + engine_inputs, rest


def _recorded_inputs(ctx: click.Context, path: Path) -> bool:
    """A module's rerun.inputs.yml in this runtime root: the core brings a shared store's copy
    when the file is not here (a summary's command run on another runner)."""
    given = ctx.find_object(Settings)  # None: a command run without the hyops group (a test's)
    return given is not None and given.runtime.rerun_inputs_key(path) is not None


def _file_where_read(name: Path, here: Path, other: Path, *, before_dashes: bool) -> None:
    """A relative inputs file missing where it is read: say where that is, and whether the
    other place (the module folder, or the current one) has it (UsageError, exit 2)."""
    if name.is_absolute() or (here / name).exists():
        return
    if before_dashes:
        rule = f"--inputs/--var-file/-var-file before `--` are read from the current folder ({here})"
        fix = (f"; {other / name} exists: pass it by that path, or put -var-file={name} after `--` "
               "(read from the module folder, as the engine reads it)")
    else:
        rule = (f"a -var-file after `--` is read from the module folder ({here}), as the engine "
                f"reads it (`tofu -chdir={here}`)")
        fix = f"; {other / name} exists: pass it before `--` (--var-file {name})"
    found = (other / name).exists()
    raise UsageError(f"cannot read inputs file {name}: not in {here}: {rule}"
                     + (fix if found else f" (nor is it in {other})"))


def module_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """MODULE_DIR (default .), --ref and --workspace, as every per-module command takes them.

    --workspace is kept in ctx.meta (read it with `workspace(ctx)`), so commands need no
    extra parameter for it."""
    func = workspace_option(func)
    func = click.option("--ref", help="Module ref (default: the directory relative to the modules root).")(func)
    func = click.argument("module_dir", default=".", type=click.Path(path_type=Path))(func)
    return func


def workspace_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--workspace NAME, kept in ctx.meta for `workspace(ctx)`."""
    return click.option(
        "--workspace", metavar="NAME", expose_value=False,
        callback=lambda ctx, _param, value: ctx.meta.__setitem__("workspace", value),
        help="The engine workspace (default: TF_WORKSPACE, else the one selected in the module, "
             "else `default`). Each workspace has its own record, lock and run folders.",
    )(func)


def workspace(ctx: click.Context, module_dir: Path | None = None) -> str | None:
    """The workspace the engine will use, as the engine picks it: --workspace, else
    TF_WORKSPACE, else the one `workspace select` left in MODULE_DIR/.terraform/environment;
    None for the default workspace. Validated (exit 2)."""
    import os

    from hybridops_tf.record.address import DEFAULT_WORKSPACE, validate_workspace

    given = ctx.meta.get("workspace")
    name, source = (given, "--workspace") if given else (os.environ.get("TF_WORKSPACE") or None, "TF_WORKSPACE")
    if name is None and module_dir is not None:
        try:
            selected = (module_dir / ".terraform" / "environment").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            selected = ""
        name, source = (selected or None), f"{module_dir}/.terraform/environment"
    if name is None or name == DEFAULT_WORKSPACE:
        return None
    return validate_workspace(name, source)


def module_input_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--var, --inputs and --var-file for apply/destroy/plan: repeatable, applied in the order
    given (see cli_inputs), above the module's own terraform.tfvars and *.auto.tfvars."""
    func = click.option(
        "--var-file", "var_files", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
        help="Same as --inputs (the engine's spelling). Repeatable.",
    )(func)
    func = click.option(
        "--var", "var_options", multiple=True, metavar="NAME=VALUE",
        help="Set an input; VALUE is parsed as YAML. Repeatable; later options win.",
    )(func)
    func = click.option(
        "--inputs", "inputs_files", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
        help="Inputs file: .tfvars (HCL), .tfvars.json (JSON), else a YAML mapping. Repeatable.",
    )(func)
    return func


def input_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--var", "var_options", multiple=True, metavar="NAME=VALUE",
        help="Set an input; VALUE is parsed as YAML. Repeatable; wins over --inputs.",
    )(func)
    func = click.option(
        "--inputs", "inputs_file", type=click.Path(path_type=Path), help="YAML mapping of inputs."
    )(func)
    return func


def lookups_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--lookups FILE (env HYOPS_LOOKUPS): how reconcile asks the provider about suspect orphans."""
    return click.option(
        "--lookups", "lookups_file", metavar="FILE", envvar="HYOPS_LOOKUPS",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Lookups file: per resource type, a command that lists the provider's objects a lost "
             "create may have made (env HYOPS_LOOKUPS; default: hyops.lookups.yml beside the runtime "
             "root, when there is one).",
    )(func)


def lock_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--lock-timeout", type=click.FloatRange(min=0), default=0, show_default=True,
        help="Seconds to wait for the module lock (0 = fail at once with exit 4).",
    )(func)


def target(ctx: click.Context, module_dir: Path, ref: str | None) -> ModuleTarget:
    """The module and its ref; a ref found from the project's top or the folder's own name
    (a run inside the module's folder) is named on stderr, so a user sees which record it is."""
    chosen = choose_ref(module_dir, ref, settings(ctx).modules_root, settings(ctx).runtime.root.parent)
    if chosen.how in ("project", "folder name"):
        why = ("its path from the project's top, where the runtime root is" if chosen.how == "project"
               else "the name of the current folder")
        click.echo(f"hyops: module ref {chosen.target.ref} ({why}; --ref to choose another)", err=True)
    return chosen.target


class NonEmpty(click.ParamType):
    """A value that may not be empty: an empty STACK_FILE or `--run ""` is most often a CI
    variable that was never set, which click would read as "." or as no run. One line (exit 2)
    naming the argument and what to pass instead, as every usage error."""

    name = "text"

    def __init__(self, what: str, fix: str, path: bool = False) -> None:
        self.what, self.fix, self.path = what, fix, path

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"{self.what} is empty (a CI variable that was never set?): {self.fix}")
        return Path(value) if self.path and isinstance(value, str) else value

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        """A path completes as a file, as click.Path does."""
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="file")] if self.path else []


def stack_file_type(what: str = "STACK_FILE") -> NonEmpty:
    return NonEmpty(what, "pass the stack file's path, e.g. modules/sim/stack.yml"
                    + (", or leave it out for ./stack.yml" if what == "STACK_FILE" else ""), path=True)
