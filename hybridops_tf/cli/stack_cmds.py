"""`hyops stack apply|destroy|status|graph`: parse options, call the stack core, render."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.cli import interrupted, render
from hybridops_tf.cli.options import lock_option, stack_file_type
from hybridops_tf.cli.render import format_option
from hybridops_tf.cli.settings import commands, settings
from hybridops_tf.cli.stack_show import RunPrinter, markdown_status, members_table, picture
from hybridops_tf.stack.model import DEFAULT_STACK_FILE


def _stack_file(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("stack_file", default=DEFAULT_STACK_FILE, type=stack_file_type())(func)


def _run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    from hybridops_tf.cli.approval import auto_approve_option

    func = lock_option(func)
    func = auto_approve_option(func)
    func = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                        expose_value=False, callback=lambda ctx, _p, value: ctx.meta.__setitem__("junit", value),
                        help="Also write the run as JUnit XML, a test case per member (written when "
                             "the run fails too); with --queue, only with --wait.")(func)
    func = click.option("--json", "as_json", is_flag=True,
                        help="Print the run report (stacks/<stack>/latest.json) on stdout.")(func)
    func = click.option("--format", "output_format", type=click.Choice(render.FORMATS), default=None,
                        help="text (default), json (as --json), or markdown: the stack as a Mermaid "
                             "flowchart with each member's status, then a table, for $GITHUB_STEP_SUMMARY.")(func)
    func = click.option("--continue-on-error", is_flag=True,
                        help="After a failure, let members that do not depend on it go on.")(func)
    func = click.option("--parallelism", type=click.IntRange(min=1), default=4, show_default=True,
                        help="How many members may run at the same time.")(func)
    func = click.option("--queue", is_flag=True, expose_value=False,
                        callback=lambda ctx, _p, value: ctx.meta.__setitem__("queue", value),
                        help="Queue the run in the shared store and print its id: workers on any runner "
                             "(`hyops stack work`) run its members.")(func)
    func = click.option("--wait", is_flag=True, expose_value=False,
                        callback=lambda ctx, _p, value: ctx.meta.__setitem__("wait", value),
                        help="With --queue: print progress until the run ends, and exit as without --queue.")(func)
    func = click.option("--supersede", is_flag=True, expose_value=False,
                        callback=lambda ctx, _p, value: ctx.meta.__setitem__("supersede", value),
                        help="With --queue: cancel the stack's unfinished queued run first (its members no "
                             "worker took yet); without it, such a run refuses the new one (exit 4).")(func)
    return _stack_file(func)


@click.group("stack")
def stack_group() -> None:
    """Run a stack of modules (stack.yml) as a dependency graph.

    \b
    Example:
      hyops stack apply modules/sim/stack.yml
      hyops stack status modules/sim/stack.yml
    """


def _run(ctx: click.Context, command: str, stack_file: Path, parallelism: int,
         continue_on_error: bool, lock_timeout: float, as_json: bool, resume: bool = False,
         include_retained: bool = False, output_format: str | None = None) -> None:
    from hybridops_tf.stack.loader import load_stack
    from hybridops_tf.stack.runner import StackRequest, run_stack

    fmt = render.output_format(as_json, output_format)
    if ctx.meta.get("queue") and ctx.meta.get("junit") and not ctx.meta.get("wait"):
        from hybridops_tf.base.errors import UsageError

        later = commands(ctx).stack("status", stack_file, "--junit", shlex.quote(str(ctx.meta["junit"])))
        raise UsageError(f"--junit with --queue needs --wait: the run ends on its workers, after this command; "
                         f"add --wait, or write it once they are done with `{later}`")
    from click.core import ParameterSource

    if ctx.meta.get("queue") and ctx.get_parameter_source("parallelism") is ParameterSource.COMMANDLINE:
        from hybridops_tf.base.errors import UsageError

        raise UsageError(f"--parallelism is the workers' with --queue: give each `{commands(ctx).stack_work('-p N')}` "
                         "its N (how many workers run, and how many members each takes at once)")
    # --queue runs nothing here: an input only the workers' environment gives (the CI recipe's
    # deployment secret) is noted, as the read-only commands note it; each worker checks it
    stack = load_stack(stack_file, settings(ctx).runtime.hcl_cache(), read_only=bool(ctx.meta.get("queue")),
                       tofu=settings(ctx).runtime.reads_tofu())
    from hybridops_tf.cli.approval import confirm_stack

    confirm_stack(ctx, stack, command, bool(ctx.meta.get("auto_approve")), err=fmt != "text")  # terminal: ask once
    if ctx.meta.get("queue"):
        from hybridops_tf.cli.queue_cmds import submit
        from hybridops_tf.stack.queue.tables import RunOptions

        submit(ctx, command, stack, stack_file, RunOptions(continue_on_error, resume, include_retained, lock_timeout),
               bool(ctx.meta.get("wait")), fmt, members_table, ctx.meta.get("junit"), bool(ctx.meta.get("supersede")))
    elif ctx.meta.get("wait") or ctx.meta.get("supersede"):
        from hybridops_tf.base.errors import UsageError

        option = "--wait follows" if ctx.meta.get("wait") else "--supersede cancels the stack's unfinished"
        raise UsageError(f"{option} queued run: use it with --queue")
    result = run_stack(StackRequest(
        stack=stack, command=command, runtime=settings(ctx).runtime,
        parallelism=parallelism, continue_on_error=continue_on_error, resume=resume,
        include_retained=include_retained, lock_timeout=lock_timeout, argv=sys.argv[1:],
        listener=RunPrinter(), junit=ctx.meta.get("junit"),
    ))
    doc = result.report.to_dict()
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    elif fmt == "markdown":
        markdown_status(ctx, stack, stack_file, doc, heading=f"hyops stack {command}")
    else:
        counts = ", ".join(f"{n} {s}" for s, n in result.report.counts().items())
        click.echo(f"stack {stack.name} {command}: {counts} (run {result.report.run_id})")
        members_table(doc["members"], None)
        if result.report_path is not None:
            click.echo(f"report: {result.report_path}")
        if result.exit_code == ExitCode.FAILED and command == "apply":
            cmd = commands(ctx)
            click.echo(f"next: fix the cause, then `{cmd.stack_resume(stack_file)}` (ok members with nothing "
                       f"changed are skipped); `{cmd.reconcile_stack(stack_file)}` shows what is live")
        elif result.exit_code == ExitCode.FAILED:
            click.echo(f"next: fix the cause, then `{commands(ctx).stack_destroy(stack_file)}` again "
                       "(destroyed members are skipped)")
    line = interrupted.stack_line(result.report, command, stack_file, commands(ctx))
    if line is not None:
        interrupted.say(line)
    ctx.exit(result.exit_code)


@stack_group.command("apply")
@_run_options
@click.option("--resume", is_flag=True,
              help="Skip members whose record is ok and was applied from the same configuration "
                   "files, inputs, engine and workspace as now.")
@click.pass_context
@interrupted.handles_signals
def apply_cmd(ctx: click.Context, stack_file: Path, parallelism: int, continue_on_error: bool,
              lock_timeout: float, as_json: bool, output_format: str | None, resume: bool) -> None:
    """Apply every member of STACK_FILE in dependency order.

    A member starts only when all its upstreams are ok in this run; otherwise it stays
    `pending` (never started, record untouched). `--junit FILE` writes each member as a
    JUnit test case (error fails, pending is skipped), also when the run fails.

    \b
    Exit codes:
      0    every member ok
      1    a member failed
      2    invalid stack file
      4    refused before anything ran (a lock busy, an uncertain member; with
           --queue, an unfinished queued run of the stack, unless --supersede)
      130  interrupted by SIGINT (143: SIGTERM): stopped members `interrupted`, the rest `pending`

    \b
    Example:
      hyops stack apply modules/sim/stack.yml
      hyops stack apply modules/sim/stack.yml --resume --parallelism 8
      hyops stack apply modules/sim/stack.yml --junit hyops-junit.xml
      hyops stack apply stack.yml --format markdown >> "$GITHUB_STEP_SUMMARY"
      hyops stack apply stack.yml --queue          # then: hyops stack work --until-idle
      hyops stack apply stack.yml --queue --supersede   # a newer commit's run replaces the last
    """
    _run(ctx, "apply", stack_file, parallelism, continue_on_error, lock_timeout, as_json,
         resume=resume, output_format=output_format)


@stack_group.command("destroy")
@_run_options
@click.option("--include-retained", is_flag=True,
              help="Also destroy members that are retained (record or retain_on_destroy).")
@click.pass_context
@interrupted.handles_signals
def destroy_cmd(ctx: click.Context, stack_file: Path, parallelism: int, continue_on_error: bool,
                lock_timeout: float, as_json: bool, output_format: str | None, include_retained: bool) -> None:
    """Destroy STACK_FILE's members in reverse order, each one verified.

    Members already `destroyed`/`absent` are skipped; `retain_on_destroy` members are
    marked `retained`. A member `owned_by` another is confirmed gone (refresh) only after
    its owner's destroy is verified; if that destroy fails it stays pending. `--junit FILE`
    as for `stack apply`.

    \b
    Exit codes:
      0    every member destroyed, absent or retained
      1    a member failed
      2    invalid stack file
      4    refused before anything ran (a lock busy; with --queue, an unfinished
           queued run of the stack, unless --supersede)
      130  interrupted by SIGINT (143: SIGTERM): stopped members `interrupted`, the rest `pending`

    \b
    Example:
      hyops stack destroy modules/sim/stack.yml
      hyops stack destroy modules/sim/stack.yml --junit hyops-junit.xml
    """
    _run(ctx, "destroy", stack_file, parallelism, continue_on_error, lock_timeout, as_json,
         include_retained=include_retained, output_format=output_format)


@stack_group.command("status")
@_stack_file
@click.option("--json", "as_json", is_flag=True,
              help="Print the last run report; members it lacks show their record status.")
@format_option
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also write the last run, as shown, as JUnit XML: a queued run's once its workers are done.")
@click.pass_context
def status_cmd(ctx: click.Context, stack_file: Path, as_json: bool, output_format: str | None,
               junit_path: Path | None) -> None:
    """Show the last run of STACK_FILE: ok, failed, pending and why.

    The last run report is read with every member's record now: a run whose runner stopped
    before writing its end is shown as interrupted, its members as their records say, and a
    member whose outcome is uncertain (a stale `running` record, suspect orphans) is named
    first, as is one whose state was written outside hyops since its record's stamp (as
    `hyops status` says it). `--format markdown` prints a table (member, status, why, next action) for a PR
    comment or $GITHUB_STEP_SUMMARY. `--junit FILE` writes the run as shown as JUnit XML
    (each member a test case naming the worker that ran it; an uncertain member fails, and
    so does a run that never ran, still runs or was interrupted): the last CI job of a
    queued run writes it after the workers.

    \b
    Exit codes:
      0  shown, and nothing uncertain
      1  shown, and the --junit file could not be written
      2  invalid stack file, or an unreadable run report or record
      3  shown: the last run did not finish (its runner is gone), or a member's outcome is
         uncertain or its state was written outside hyops (`hyops reconcile --stack
         STACK_FILE` says what is live)

    \b
    Example:
      hyops stack status modules/sim/stack.yml
      hyops stack status modules/sim/stack.yml --json
      hyops stack status modules/sim/stack.yml --format markdown >> "$GITHUB_STEP_SUMMARY"
      hyops stack status stack.yml --junit hyops-junit.xml   # after `hyops stack work` jobs
    """
    from hybridops_tf.cli.root_note import note_root
    from hybridops_tf.stack import view
    from hybridops_tf.stack.loader import load_stack
    from hybridops_tf.stack.status import records_now, status_document

    runtime = settings(ctx).runtime
    stack = load_stack(stack_file, runtime.hcl_cache(), read_only=True, tofu=runtime.reads_tofu())
    note_root(ctx)
    entries = records_now(stack, runtime)
    doc = status_document(stack, runtime, entries)
    code = ExitCode.INCONSISTENT if view.is_uncertain(doc) else ExitCode.OK
    fmt = render.output_format(as_json, output_format)
    if fmt == "markdown":
        markdown_status(ctx, stack, stack_file, doc, entries=entries)
    elif fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(view.headline(doc))
        for line in view.uncertain_lines(doc):
            click.echo(f"uncertain: {line}")
        for line in view.not_read_lines(doc):
            click.echo(f"state not compared with the record: {line}")
        if view.reconcile_compares(doc):
            click.echo(f"to compare: `{commands(ctx).reconcile_stack(stack_file)}` reads those states with the engine")
        members_table(doc["members"], {name: e.shown_status for name, e in entries.items()}, doc.get("state"))
        if code != ExitCode.OK:
            click.echo(f"next: `{commands(ctx).reconcile_stack(stack_file)}` says what is live and what to run")
    if junit_path is not None:
        from hybridops_tf.stack import junit

        if not junit.write_or_say(junit_path, junit.status_xml(doc)) and code == ExitCode.OK:
            code = ExitCode.FAILED
    ctx.exit(code)


@stack_group.command("graph")
@_stack_file
@click.option("--format", "graph_format", type=click.Choice(("text", "dot", "mermaid")), default=None,
              help="text (default), dot (Graphviz) or mermaid (a flowchart GitHub and GitLab draw).")
@click.option("--dot", is_flag=True, help="The same as --format dot.")
@click.option("--status", "with_status", is_flag=True,
              help="Draw each member's status: the last stack run report's, else its record's.")
@click.pass_context
def graph_cmd(ctx: click.Context, stack_file: Path, graph_format: str | None, dot: bool, with_status: bool) -> None:
    """Show STACK_FILE's members, edges, wiring and destroy order.

    With --status each member carries its status as `stack status --json` gives it (ok,
    error, pending and what blocked it, destroyed, retained, running or stale, ...), drawn
    with its own colour, line style and glyph, so it reads in grey too.

    \b
    Exit codes:
      0  shown
      2  invalid stack file, or --dot with another --format

    \b
    Example:
      hyops stack graph modules/sim/stack.yml
      hyops stack graph modules/sim/stack.yml --format dot | dot -Tsvg > stack.svg
      hyops stack graph modules/sim/stack.yml --format mermaid --status
    """
    from hybridops_tf.base.errors import UsageError
    from hybridops_tf.stack import graph
    from hybridops_tf.stack.loader import load_stack

    if dot and graph_format not in (None, "dot"):
        raise UsageError(f"--dot and --format {graph_format} cannot be combined: --dot is --format dot")
    fmt = "dot" if dot else graph_format or "text"
    stack = load_stack(stack_file, settings(ctx).runtime.hcl_cache(), read_only=True,
                       tofu=settings(ctx).runtime.reads_tofu())
    if not with_status and fmt != "mermaid":
        click.echo(graph.to_dot(stack) if fmt == "dot" else graph.to_text(stack))
        return
    from hybridops_tf.picture import dot as dot_render
    from hybridops_tf.picture import graph_text, mermaid

    if with_status:
        from hybridops_tf.cli.root_note import note_root

        note_root(ctx)
    pic = picture(ctx, stack, with_status)
    if fmt == "mermaid":
        click.echo("\n".join(mermaid.to_mermaid(pic)))
    else:
        click.echo(dot_render.to_dot(pic) if fmt == "dot" else graph_text.to_text(stack, pic))


def _register_work() -> None:
    from hybridops_tf.cli.queue_cmds import cancel_cmd, work_cmd

    stack_group.add_command(work_cmd)
    stack_group.add_command(cancel_cmd)


_register_work()
