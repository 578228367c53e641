"""`hyops init`: parse options, call the core, render."""

from __future__ import annotations

from pathlib import Path

import click

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.cli import interrupted
from hybridops_tf.cli.interrupted import handles_signals
from hybridops_tf.cli.options import (
    PassthroughCommand,
    lock_option,
    module_options,
    target,
    workspace,
)
from hybridops_tf.cli.settings import commands, settings
from hybridops_tf.record.advice import where_of

ENGINE_ARGS = "[-- ENGINE_ARGS]"


class _InitCommand(PassthroughCommand):
    """The usage line shows `[-- ENGINE_ARGS]`: what follows `--` goes to the engine's init."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return pieces if ENGINE_ARGS in pieces else [*pieces, ENGINE_ARGS]


@click.command("init", cls=_InitCommand)
@module_options
@lock_option
@click.pass_context
@handles_signals
def init_cmd(ctx: click.Context, module_dir: Path, ref: str | None, lock_timeout: float) -> None:
    """Run the engine's `init` in MODULE_DIR [-- ENGINE_ARGS], under the module lock.

    apply, destroy and plan run init on their own when the module has none, or when its
    child-module sources, provider requirements or backend changed since the last init
    (announced on stderr). Use this for `-upgrade`, `-reconfigure` and the like.

    \b
    Exit codes:
      0    ok
      1    the engine's init failed
      2    usage error
      4    lock busy
      130  interrupted by SIGINT (143: SIGTERM); no record or state was changed

    \b
    Example:
      hyops init modules/sim/network
      hyops init modules/sim/network -- -upgrade
    """
    from hybridops_tf.operation.init import run_init

    tgt = target(ctx, module_dir, ref)
    outcome = run_init(tgt, settings(ctx).runtime, ctx.meta["passthrough"], lock_timeout,
                       workspace(ctx, tgt.directory))
    if outcome.output:
        click.echo(outcome.output.rstrip("\n"))
    if outcome.exit_code == ExitCode.INTERRUPTED:
        again = commands(ctx).init(where_of(tgt.ref, tgt.directory, workspace(ctx, tgt.directory)),
                                   *ctx.meta["passthrough"])
        interrupted.say(f"hyops: {outcome.message}; next: {again} again")
    else:
        click.echo(outcome.message, err=outcome.exit_code != 0)
    ctx.exit(outcome.exit_code)
