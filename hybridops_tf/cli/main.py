"""The `hyops` entry point: global options, lazy command groups, error -> exit code.

Command modules are imported only when their command runs, so `hyops --help` stays fast
(python-hcl2, grpc and tf are never imported for help).
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from hybridops_tf.base import notices
from hybridops_tf.base.errors import ExitCode, HyopsError, Interrupted, UsageError
from hybridops_tf.cli.settings import Settings, commands, remember_group
from hybridops_tf.runtime import discover, hooks
from hybridops_tf.runtime.discover import RootChoice

if TYPE_CHECKING:
    from hybridops_tf.runtime.hooks import EnvironmentHook


def say(level: notices.Level, text: str) -> None:
    """Where the core's notices go: stderr, `hyops: warning: TEXT`; an engine line as it is."""
    if level is notices.Level.ENGINE:
        line = text
    elif level is notices.Level.PLAIN:
        line = f"hyops: {text}"
    else:
        line = f"hyops: {level.value}: {text}"
    print(line, file=sys.stderr, flush=True)


class SimHook:
    """The sim's engine-environment hook (sim/install.py's SIM_ENVIRONMENT), imported when the
    core first asks it about a module: a command that runs no module (status, outputs,
    version, ...) never loads the sim (tests/unit/test_import_sets.py)."""

    _hook: EnvironmentHook | None = None

    def _sim(self) -> EnvironmentHook:
        if self._hook is None:
            from hybridops_tf.sim.install import SIM_ENVIRONMENT

            self._hook = SIM_ENVIRONMENT
        return self._hook

    @property
    def usage_errors(self) -> tuple[type[Exception], ...]:
        errors: tuple[type[Exception], ...] = getattr(self._sim(), "usage_errors", ())
        return errors

    def applies(self, module_dir: Path) -> bool:
        return self._sim().applies(module_dir)

    def guarded_path(self, runtime_root: Path) -> Path:
        return self._sim().guarded_path(runtime_root)

    def engine_env(self, runtime_root: Path) -> dict[str, str]:
        return self._sim().engine_env(runtime_root)


SIM_HOOK = SimHook()

# The composition root: the core asks runtime.hooks for extra engine environment and never
# imports the sim, and tells the user things through base.notices and never prints; both
# are set here, at import, so every command (and CliRunner) has them.
hooks.register(SIM_HOOK)
notices.listen(say)

# command name -> "module:attribute" of a click command, loaded on first use.
_COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("hybridops_tf.cli.init_cmd:init_cmd", "Run the engine's init in a module (e.g. -- -upgrade)."),
    "apply": ("hybridops_tf.cli.module_cmds:apply_cmd", "Apply a module under the operation contract."),
    "destroy": ("hybridops_tf.cli.module_cmds:destroy_cmd", "Destroy a module and verify its state is empty."),
    "plan": ("hybridops_tf.cli.module_cmds:plan_cmd", "Plan a module into its run folder (never changes status)."),
    "status": ("hybridops_tf.cli.status_cmds:status_cmd", "Show operation records."),
    "outputs": ("hybridops_tf.cli.status_cmds:outputs_cmd", "Show a module's recorded outputs."),
    "reconcile": ("hybridops_tf.cli.reconcile_cmds:reconcile_cmd", "Compare records with provider state."),
    "stack": ("hybridops_tf.cli.stack_cmds:stack_group", "Run stacks of modules as a dependency graph."),
    "report": ("hybridops_tf.cli.report_cmd:report_cmd",
               "Write one HTML page of a stack, module or every record: graph, timeline, next commands."),
    "store": ("hybridops_tf.cli.store_cmds:store_group",
              "The shared PostgreSQL record store: init, status, import-local."),
    "sim": ("hybridops_tf.cli.sim:sim_group", "The simulated cloud: list objects, install the provider."),
    "version": ("hybridops_tf.cli.version_cmd:version_cmd", "Show hyops's version and the engine it runs, and why."),
    "completion": ("hybridops_tf.cli.completion_cmd:completion_cmd",
                   "Print the shell completion script (bash, zsh, fish)."),
}


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

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Before Click reads them: global options after the command moved in front, tofu's
        single-dash habits made hyops's spelling (habits.py). Not while completing a word, nor
        when no word starts with `-` (habits.py would return them as they are)."""
        if ctx.parent is None and not ctx.resilient_parsing and any(arg.startswith("-") for arg in args):
            from hybridops_tf.cli.habits import rewrite_argv

            try:
                args = rewrite_argv(self, ctx, args)
            except HyopsError as err:
                _fail(ctx, err)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        """The one place a HyopsError becomes a message and its exit code (CliRunner too)."""
        try:
            return super().invoke(ctx)
        except HyopsError as err:
            _fail(ctx, err)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True, no_args_is_help=True)
@click.option(
    "--runtime-root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HYOPS_RUNTIME_ROOT",
    default=None,
    help="Where records, run folders and configs live (env HYOPS_RUNTIME_ROOT; default: the "
         "nearest .hyops directory in the current directory or above it, else ./.hyops).",
)
@click.option("--engine", envvar="HYOPS_ENGINE", help="Path of tofu/terraform (env HYOPS_ENGINE).")
@click.option(
    "--modules-root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="HYOPS_MODULES_ROOT",
    help="Root that module refs are relative to (env HYOPS_MODULES_ROOT; default ./modules).",
)
@click.option(
    "--store", metavar="URL", envvar="HYOPS_STORE",
    help="Shared record store, a PostgreSQL URL (env HYOPS_STORE; default: the local runtime root). "
         "A password in the URL is never printed; prefer PGPASSWORD/PGPASSFILE.",
)
@click.option("--version", "show_version", is_flag=True,
              help="Show hyops's version and the engine it would run (as `hyops version`), then exit.")
@click.pass_context
def cli(ctx: click.Context, runtime_root: Path | None, engine: str | None, modules_root: Path | None,
        store: str | None, show_version: bool) -> None:
    """hyops: apply and destroy OpenTofu/Terraform modules with an honest operation record.

    \b
    Example, after a red pipeline:
      hyops status --all
      hyops reconcile modules/sim/vm
    """
    from click.core import ParameterSource

    from hybridops_tf.store import url

    url.configure(store)
    from hybridops_tf.base import bugs
    root_how = (discover.HOW_ENV if ctx.get_parameter_source("runtime_root") is ParameterSource.ENVIRONMENT
                else discover.HOW_OPTION)
    try:
        cwd = Path("/") if runtime_root is not None and runtime_root.is_absolute() else Path.cwd()
        choice = discover.choose(runtime_root, root_how, cwd, os.environ)
    except OSError as err:  # the current directory was removed under us
        raise UsageError(f"cannot read the current directory ({err.strerror or err}): cd to the project "
                         "folder or pass --runtime-root DIR") from None
    for line in choice.skipped:
        click.echo(f"hyops: warning: {line}", err=True)
    engine_rule = ("HYOPS_ENGINE" if ctx.get_parameter_source("engine") is ParameterSource.ENVIRONMENT
                   else "--engine")
    bugs.remember_runtime_root(choice.path)
    ctx.obj = Settings(runtime_root=choice.path, engine=engine, modules_root=modules_root,
                       root_choice=choice, engine_rule=engine_rule, store=store or None)
    remember_group(ctx)
    if choice.how == discover.HOW_NEW and not os.path.lexists(choice.path):
        ctx.call_on_close(lambda: _announce_created(choice))
    if show_version:
        from hybridops_tf.cli.version_cmd import print_version

        ctx.exit(print_version(ctx.obj, as_json=False))
    if ctx.invoked_subcommand is None:  # options but no command: as click says without --version
        ctx.fail("Missing command.")


def _fail(ctx: click.Context, err: HyopsError) -> NoReturn:
    _say(err)
    ctx.exit(err.exit_code)


def _say(err: HyopsError) -> None:
    """A HyopsError's one line: `hyops: error: ...`; a signal's is not an error (interrupted.py)."""
    if isinstance(err, Interrupted):
        from hybridops_tf.cli import interrupted

        interrupted.say(interrupted.raised(err.message))
    else:
        click.echo(f"hyops: error: {err.message}", err=True)


def _announce_created(choice: RootChoice) -> None:
    """Said once, by the command that made the default root (it did not exist at its start)."""
    if choice.path.is_dir():
        shown = os.path.relpath(choice.path)
        shown = shown if shown.startswith(("./", "../", "/")) else f"./{shown}"
        click.echo(f"hyops: created runtime root {shown} ({choice.path}); commands run in this "
                   "folder or below it use it", err=True)


def main() -> None:
    """Console entry: HyopsError -> one line on stderr and its exit code."""
    from hybridops_tf.cli.render import ascii_streams

    ascii_streams()  # ASCII output where the locale is not UTF-8 (render.py)
    threading.excepthook = _thread_bug
    try:
        rc = cli.main(standalone_mode=False)
    except HyopsError as err:
        _say(err)
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
    except OSError as err:
        if err.errno not in _STORAGE_ERRNOS:
            _bug(err)  # anything else is a bug
        where = f" {err.filename}" if err.filename else ""
        click.echo(f"hyops: error: cannot write{where}: {err.strerror or err}; check that the runtime root "
                   "is writable and has room (--runtime-root to use another)", err=True)
        sys.exit(ExitCode.FAILED)  # it may come after the engine ran: never claim nothing changed
    except Exception as err:  # noqa: BLE001 - a bug in hyops: one line, the trace in a file (base/bugs.py)
        _bug(err)
    sys.exit(rc if isinstance(rc, int) else 0)


def _bug(err: BaseException) -> NoReturn:
    """An exception hyops did not expect: its trace to a file, one line to the user, exit 70."""
    from hybridops_tf.base import bugs

    click.echo(_bug_line(err), err=True)
    sys.exit(bugs.BUG_EXIT)


def _bug_line(err: BaseException) -> str:
    from hybridops_tf.base import bugs

    cmd = commands()
    return bugs.one_line(err, bugs.write_trace(err), cmd.status_all(), cmd.named("reconcile"))


def _thread_bug(args: threading.ExceptHookArgs) -> None:
    """A thread's unexpected exception: its trace to a file and one line, never a traceback; the
    command's own result says what happened to its run."""
    if args.exc_value is None or isinstance(args.exc_value, SystemExit):
        return
    click.echo(_bug_line(args.exc_value), err=True)


# A write the machine refused (read-only, no permission, no room): the user's to fix, said in
# one line, exit 1. The core turns the writes whose failure means more (records, locks, the
# running record: exit 4 before any engine runs) into HyopsErrors itself; this catches the
# rest (run folders, caches, CLI configs), wherever they fail.
_STORAGE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


def entry() -> None:
    """The `hyops` console script's work (cli/console.py installs the signal handling first):
    main(), its exit code made 130/143 after a signal (interrupted.py), then exit without
    tearing the interpreter down.

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
    from hybridops_tf.cli.interrupted import final_code

    code = final_code(code)
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
