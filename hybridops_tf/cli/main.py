"""The `hyops` entry point: global options, lazy command groups, error -> exit code.

Command modules are imported only when their command runs, so `hyops --help` stays fast
(python-hcl2, grpc and tf are never imported for help).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from hybridops_tf import __version__
from hybridops_tf.errors import HyopsError

# command name -> "module:attribute" of a click command, loaded on first use.
_COMMANDS: dict[str, tuple[str, str]] = {
    "apply": ("hybridops_tf.cli.module_cmds:apply_cmd", "Apply a module under the operation contract."),
    "destroy": ("hybridops_tf.cli.module_cmds:destroy_cmd", "Destroy a module and verify its state is empty."),
    "plan": ("hybridops_tf.cli.module_cmds:plan_cmd", "Plan a module into its run folder (never changes status)."),
    "status": ("hybridops_tf.cli.status_cmds:status_cmd", "Show operation records."),
    "outputs": ("hybridops_tf.cli.status_cmds:outputs_cmd", "Show a module's recorded outputs."),
    "reconcile": ("hybridops_tf.cli.reconcile_cmds:reconcile_cmd", "Compare records with provider state."),
    "stack": ("hybridops_tf.cli.stack_cmds:stack_group", "Run stacks of modules as a dependency graph."),
    "sim": ("hybridops_tf.cli.sim:sim_group", "The simulated cloud: list objects, install the provider."),
}


@dataclass(frozen=True)
class Settings:
    """Global options shared by every command (DESIGN §2, §10)."""

    runtime_root: Path
    engine: str | None
    modules_root: Path | None


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands whose module is installed (found without importing it)."""
        from importlib.util import find_spec

        return sorted(name for name, (target, _) in _COMMANDS.items() if find_spec(target.split(":")[0]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        try:
            module_name, attr = target[0].split(":")
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            return None
        return getattr(module, attr)

    def invoke(self, ctx: click.Context) -> object:
        """The one place a HyopsError becomes a message and its exit code (CliRunner too)."""
        try:
            return super().invoke(ctx)
        except HyopsError as err:
            click.echo(f"hyops: error: {err.message}", err=True)
            ctx.exit(err.exit_code)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--runtime-root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HYOPS_RUNTIME_ROOT",
    default=".hyops",
    show_default=True,
    help="Where records, run folders and configs live (env HYOPS_RUNTIME_ROOT).",
)
@click.option("--engine", envvar="HYOPS_ENGINE", help="Path of tofu/terraform (env HYOPS_ENGINE).")
@click.option(
    "--modules-root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HYOPS_MODULES_ROOT",
    help="Root that module refs are relative to (env HYOPS_MODULES_ROOT; default ./modules).",
)
@click.version_option(version=__version__, prog_name="hyops")
@click.pass_context
def cli(ctx: click.Context, runtime_root: Path, engine: str | None, modules_root: Path | None) -> None:
    """hyops: apply and destroy OpenTofu/Terraform modules with an honest operation record.

    \b
    Example, after a red pipeline:
      hyops status --all
      hyops reconcile modules/sim/vm
    """
    ctx.obj = Settings(runtime_root=runtime_root.absolute(), engine=engine, modules_root=modules_root)


def main() -> None:
    """Console entry: HyopsError -> one line on stderr and its exit code."""
    try:
        rc = cli.main(standalone_mode=False)
    except HyopsError as err:
        click.echo(f"hyops: error: {err.message}", err=True)
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo("hyops: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(2 if isinstance(err, click.UsageError | click.BadParameter) else err.exit_code)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except BrokenPipeError:
        os._exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)


def entry() -> None:
    """The `hyops` console script: main(), then exit without tearing the interpreter down.

    Why: by the time main() returns, every record and run file is fsynced and closed and the
    module lock released; what is left is Python's own teardown of ~300 modules, some 20 ms
    on every command (a third of issue #3's overhead budget). So flush stdout/stderr and
    leave with os._exit. Tracebacks (a bug, never a user error) still take the normal path.
    """
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message") semantics
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said there
            code = code or 1
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # a worker still runs (never expected): let the interpreter join it as usual
    os._exit(code)


if __name__ == "__main__":
    entry()
