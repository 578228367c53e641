"""Queued stack runs: `stack apply|destroy --queue [--wait]` and `stack work` (stack/queue)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hybridops_tf.base.errors import ExitCode, HyopsError
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.cli import interrupted
from hybridops_tf.cli.options import NonEmpty
from hybridops_tf.cli.settings import commands, settings
from hybridops_tf.cli.stack_show import RunPrinter

_MARK = {"ok": "✓", "skipped": "=", "destroyed": "✓", "absent": "✓", "retained": "~", "error": "✗",
         "pending": "…", "interrupted": "✗", "queued": "·", "running": "▶", "cancelled": "⊘"}


def submit(ctx: click.Context, command: str, stack: Any, stack_file: Path, options: Any, wait: bool, fmt: str,
           table: Callable[[list[dict[str, Any]], dict[str, str] | None], None],
           junit_path: Path | None = None, supersede: bool = False) -> None:
    """Queue the run and print its id (exit 0); with `wait`, follow it to its end and exit as
    `stack apply` would, writing `junit_path` (the merged run, or the refusal) as `stack apply`
    does. `table` prints the members (cli/stack_show.py's members_table)."""
    from hybridops_tf.stack.queue.submit import queue_run
    from hybridops_tf.stack.queue.view import exit_code, queued_report

    runtime = settings(ctx).runtime
    try:
        queued = queue_run(stack, command, runtime, options, supersede=supersede, advise=commands(ctx))
    except HyopsError as err:
        if junit_path is not None:
            from hybridops_tf.stack import junit

            junit.write_or_say(junit_path, junit.refusal_xml(stack.name, command, str(stack.file), err.message))
        raise
    run = queued.run
    for old in queued.superseded:
        _say_cancelled(old)
    click.echo(f"queued {run.run_id}: stack {stack.name} {command}, {len(queued.rows)} members "
               f"({sum(r.status == 'queued' for r in queued.rows)} ready); workers: "
               f"{commands(ctx).stack_work('--until-idle')}",
               err=True)
    if not wait:
        if fmt == "json":
            click.echo(json.dumps(queued_report(run, queued.rows).to_dict(), indent=2))
        elif fmt == "text":
            click.echo(run.run_id)
        if INTERRUPTS.received is not None:  # it came as the run was written: it is queued all the same
            interrupted.say(f"hyops: interrupted by {INTERRUPTS.name()} after run {run.run_id} was queued: its "
                            f"workers run it; next: {commands(ctx).stack_status(stack_file)}")
        ctx.exit(ExitCode.OK)
    from hybridops_tf.stack.queue import jobs
    from hybridops_tf.stack.queue.wait import wait_run

    waited = wait_run(jobs.queue_store(runtime.store, "--wait"), run.run_id, _progress_line)
    report = queued_report(waited.run, waited.rows)
    doc = report.to_dict()
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        counts = ", ".join(f"{n} {s}" for s, n in report.counts().items())
        click.echo(f"stack {stack.name} {command}: {counts} (run {run.run_id}, queued)")
        table(doc["members"], None)
    written = True
    if junit_path is not None:  # the run as it stands: ended, or (waiting interrupted) going on
        from hybridops_tf.stack import junit

        written = junit.write_or_say(junit_path, junit.report_xml(report))
    if waited.interrupted is not None:
        interrupted.say(f"hyops: interrupted by {INTERRUPTS.name()}: stopped waiting; run {run.run_id} goes on "
                        f"with its workers; next: {commands(ctx).stack_status(stack_file)}")
        ctx.exit(128 + waited.interrupted)
    code = exit_code(waited.rows)
    ctx.exit(ExitCode.FAILED if code == ExitCode.OK and not written else code)


def _say_cancelled(done: Any, err: bool = True) -> None:
    """One line for a cancelled run (stack/queue/cancel.py: Cancelled)."""
    run = done.run
    if done.already_finished:
        click.echo(f"run {run.run_id} had finished ({run.finished_at}): nothing to cancel", err=err)
        return
    going = "; ".join(f"{name} runs on {worker}" for name, worker in done.running)
    click.echo(f"cancelled {run.run_id} (stack {run.stack} {run.command}): {len(done.withdrawn)} member(s) withdrawn"
               + (f"; still running, it finishes and settles as usual: {going}" if going else "; run finished"),
               err=err)


@click.command("cancel")
@click.argument("run_id", metavar="RUN", type=NonEmpty("RUN", "pass the queued run's id (what `stack apply "
                                                              "--queue` printed; `stack status STACK_FILE` "
                                                              "names the last one)"))
@click.pass_context
@interrupted.handles_signals
def cancel_cmd(ctx: click.Context, run_id: str) -> None:
    """Withdraw a queued run (`stack apply|destroy --queue`) nobody should work any more.

    Its members no worker took yet become `cancelled` (their records untouched, their jobs
    out of the queue); a member a worker runs now finishes and settles as usual, and the run
    finishes with it. Run it when the pipeline that queued the run is cancelled, or queue the
    next run with `--supersede`, which does this first.

    \b
    Exit codes:
      0    cancelled (or it had finished: nothing to cancel)
      2    no shared store, or no such run
      4    the store could not be reached

    \b
    Example:
      hyops stack cancel stack-apply-20260101T000000Z-abcd
    """
    from hybridops_tf.stack.queue.cancel import withdraw

    _say_cancelled(withdraw(settings(ctx).runtime, run_id), err=False)
    ctx.exit(ExitCode.OK)


def _progress_line(row: Any) -> None:
    where = f" on {row.worker}" if row.worker else ""
    why = f" (blocked by {row.blocked_by})" if row.blocked_by else ""
    error = f": {row.error.splitlines()[0]}" if row.error and row.status not in ("queued", "running") else ""
    click.echo(f"[{row.name}] {_MARK.get(row.status, ' ')} {row.status}{where}{why}{error}", err=True)


class _WorkerPrinter(RunPrinter):
    """`stack apply`'s member lines (cli/stack_show.py), each start naming the worker; no
    per-resource lines (many workers' logs are read side by side)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def member_started(self, name: str, action: str) -> None:
        click.echo(f"[{name}] {action}… (worker {self.name})", err=True)

    def event_sink(self, name: str) -> Any:
        return None


@click.command("work")
@click.option("--name", default=None, metavar="NAME",
              help="The worker's name in `stack status`, the report and JSON (default HOST:PID).")
@click.option("--until-idle", is_flag=True,
              help="Exit once no queued run it serves has a member queued or running.")
@click.option("--run", "run_id", default=None, metavar="ID", help="Take only this queued run's members.",
              type=NonEmpty("--run", "pass a queued run's id (what `stack apply --queue` printed), or leave "
                            "--run out to serve every queued run"))
@click.option("-p", "--parallelism", type=click.IntRange(min=1), default=1, show_default=True,
              help="How many members this worker runs at the same time.")
@click.pass_context
@interrupted.handles_signals
def work_cmd(ctx: click.Context, name: str | None, until_idle: bool, run_id: str | None, parallelism: int) -> None:
    """Run members of queued stack runs (`stack apply|destroy STACK --queue`).

    Each member runs exactly as `stack apply` runs it (module lock, record, inputs wired
    from its upstreams' records in the store), in this checkout: run it from the directory
    the run was queued from. When a member ends, its dependants whose upstreams are all ok
    are queued; after a failure they are pending. A worker whose heartbeat stops
    (HYOPS_QUEUE_HEARTBEAT, HYOPS_QUEUE_LOST_AFTER) has its member reported
    `interrupted: worker NAME lost`, never run again by itself.

    \b
    Exit codes:
      0    served (every member it ran ended as it should; members it handed
           back, say of a run queued from another commit, do not count)
      1    a member it ran failed, or ended after the run gave it up (this
           worker was silent past HYOPS_QUEUE_LOST_AFTER and found lost)
      2    no shared store, or no such --run
      4    the store could not be reached
      130  interrupted (143 for SIGTERM); its members settled first

    \b
    Example:
      hyops stack work --until-idle
      hyops stack work --name runner-3 -p 2 --run stack-apply-20260101T000000Z-abcd
    """
    from hybridops_tf.stack.queue.work import WorkRequest, default_name, work

    worker = name or default_name()
    result = work(WorkRequest(
        runtime=settings(ctx).runtime, name=worker, parallelism=parallelism, until_idle=until_idle, run_id=run_id,
        listener=_WorkerPrinter(worker), argv=sys.argv[1:],
        on_lost=lambda lost: click.echo(
            f"[{lost.member}] ✗ interrupted: worker {lost.worker} "
            f"{'silent but still holding the module lock (frozen)' if lost.frozen else 'lost'} (run {lost.run_id})",
            err=True),
        on_given_up=lambda end: click.echo(
            f"[{end.member}] ended {end.result.status.value} after run {end.run_id} gave it up (worker {worker} "
            "was silent past its heartbeat); the run still counts it interrupted and its dependants "
            f"pending; its record says what ran: `{commands(ctx).stack_status(None)}`", err=True),
        on_handed_back=lambda end: click.echo(
            f"[{end.member}] not run by this worker (run {end.run_id}): "
            f"{(end.result.error or 'stopped before it started').splitlines()[0]}",
            err=True)))
    back = f", {len(result.handed_back)} handed back" if result.handed_back else ""
    click.echo(f"worker {worker}: {len(result.ran)} member(s) run{back}", err=True)
    if INTERRUPTS.received is not None:
        interrupted.say(f"hyops: interrupted by {INTERRUPTS.name()}: worker {worker} took nothing new and the "
                        "members it ran settled (above); other workers go on with their runs; next: "
                        f"`{commands(ctx).stack_status(None)}` says where each run stands")
    ctx.exit(result.exit_code)
