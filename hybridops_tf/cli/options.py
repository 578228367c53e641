"""Options shared by the per-module commands, and the `--` passthrough split."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hybridops_tf.modules import ModuleTarget, resolve_module


class PassthroughCommand(click.Command):
    """Everything after the first `--` goes to the engine unchanged (ctx.meta["passthrough"])."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta["passthrough"] = args[cut + 1 :]
            args = args[:cut]
        else:
            ctx.meta["passthrough"] = []
        return super().parse_args(ctx, args)


def module_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """MODULE_DIR (default .) and --ref, as every per-module command takes them."""
    func = click.option("--ref", help="Module ref (default: the directory relative to the modules root).")(func)
    func = click.argument("module_dir", default=".", type=click.Path(path_type=Path))(func)
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


def lock_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--lock-timeout", type=click.FloatRange(min=0), default=0, show_default=True,
        help="Seconds to wait for the module lock (0 = fail at once with exit 4).",
    )(func)


def target(ctx: click.Context, module_dir: Path, ref: str | None) -> ModuleTarget:
    return resolve_module(module_dir, ref, ctx.obj.modules_root)
