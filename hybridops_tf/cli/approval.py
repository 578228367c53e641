"""Approval like the engine's: on a terminal, apply and destroy show the plan and ask.

Why this exists: a person at a terminal expects `apply` to show what it will do and wait for
`yes`, as `tofu apply` does; a pipeline must never wait. So hyops asks only when stdin and
stdout are both terminals, and never with `--auto-approve` (the engine's `-auto-approve`,
after `--` too) or `HYOPS_AUTO_APPROVE=1`. What was shown is what is applied: the plan is
saved to a private temporary file (memory-backed /dev/shm when there is one, deleted after),
shown, and after `yes` applied through the saved-plan path of `hyops apply FILE`
(plan/reviewed.py runs that; this module shows and asks), so approval and plan files share
one code path. Any other answer changes
nothing and exits 4 (refused before any mutation).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.base.interrupts import INTERRUPTS
from hybridops_tf.cli.settings import settings

if TYPE_CHECKING:
    from hybridops_tf.operation.request import Outcome
    from hybridops_tf.plan.planner import MemberPlan, PlanOutcome
    from hybridops_tf.record.address import ModuleTarget
    from hybridops_tf.stack.model import Stack

AUTO_APPROVE_ENV = "HYOPS_AUTO_APPROVE"
QUESTION = "Do you want to perform these actions? Only 'yes' will be accepted:"
AT_THE_QUESTION = "\nhyops: interrupted by {signal} at the question; nothing was changed; next: run the command again"
ENGINE_SPELLINGS = frozenset({"-auto-approve", "--auto-approve"})
CANCELLED = ExitCode.REFUSED  # nothing changed, as for every refusal before a mutation


def auto_approve_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--auto-approve, kept in ctx.meta (read it with `must_ask`)."""
    return click.option(
        "--auto-approve", is_flag=True, expose_value=False,
        callback=lambda ctx, _param, value: ctx.meta.__setitem__("auto_approve", value),
        help=f"Do not show the plan and ask on a terminal (as {AUTO_APPROVE_ENV}=1). Without a "
             "terminal hyops never asks.",
    )(func)


def split_auto_approve(passthrough: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether the passthrough says -auto-approve, and the passthrough without it."""
    rest = [arg for arg in passthrough if arg not in ENGINE_SPELLINGS]
    return len(rest) != len(passthrough), rest


def must_ask(auto_approve: bool, environ: Any = None, stdin: Any = None, stdout: Any = None) -> bool:
    """True only for a person at a terminal who did not approve in advance."""
    env = os.environ if environ is None else environ
    if auto_approve or env.get(AUTO_APPROVE_ENV) == "1":
        return False
    streams = (stdin or sys.stdin, stdout or sys.stdout)
    return all(getattr(s, "isatty", lambda: False)() for s in streams)


def approved(read_line: Callable[[], str] | None = None, err: bool = False) -> bool:
    """Ask once; only `yes` approves (end of input and Ctrl-D do not)."""
    click.echo(f"\n{QUESTION} ", nl=False, err=err)
    try:
        with INTERRUPTS.at_rest(AT_THE_QUESTION):  # Ctrl-C at the question: nothing ran yet, exit at once
            answer = (read_line or sys.stdin.readline)()
    except EOFError:
        answer = ""
    return answer.strip() == "yes"


def cancelled(command: str, err: bool = False) -> int:
    click.echo(f"{command.capitalize()} cancelled.", err=err)
    click.echo(f"hyops: the answer was not 'yes': nothing was changed (exit {CANCELLED})", err=True)
    return CANCELLED


def reviewed_run(ctx: click.Context, command: str, tgt: ModuleTarget, space: str | None,
                 given: Sequence[Any], passthrough: Sequence[str], lock_timeout: float,
                 allow_uncertain: bool, on_event: Any) -> Outcome | int:
    """The plan shown here and asked about, then applied exactly (plan/reviewed.py): the
    Outcome of the apply, or the exit code of a cancel."""
    from hybridops_tf.cli.plan_render import render_plan
    from hybridops_tf.plan import reviewed
    from hybridops_tf.record.lifecycle import Command

    def show(plan: PlanOutcome) -> None:
        for line in render_plan(plan.plan_doc):
            click.echo(line)
        click.echo(plan.message)

    outcome = reviewed.run(reviewed.ReviewedRun(
        command=Command(command), target=tgt, runtime=settings(ctx).runtime,
        modules_root=settings(ctx).modules_root, workspace=space, var_options=given, passthrough=passthrough,
        lock_timeout=lock_timeout, allow_uncertain=allow_uncertain, argv=sys.argv[1:], on_event=on_event,
    ), show, approved)
    return cancelled(command) if outcome is None else outcome


def stack_summary_lines(stack_name: str, command: str, plans: Sequence[MemberPlan]) -> list[str]:
    width = max((len(p.name) for p in plans), default=0)
    return [f"Plan of stack {stack_name} ({command}):",
            *(f"  {p.name.ljust(width)}  {p.module_ref}: {p.summary}" for p in plans)]


def confirm_stack(ctx: click.Context, stack: Stack, command: str, auto_approve: bool, err: bool = False) -> None:
    """On a terminal: the whole stack's plan summary once, one question; a cancel exits 4.
    err: say it all on stderr (stdout carries a --json document)."""
    if not must_ask(auto_approve):
        return
    from hybridops_tf.plan.planner import plan_stack

    plans = plan_stack(stack, settings(ctx).runtime, command,
                       on_member=lambda name: click.echo(f"[{name}] planning...", err=True))
    for line in stack_summary_lines(stack.name, command, plans):
        click.echo(line, err=err)
    if any(p.has_changes for p in plans) and not approved(err=err):
        ctx.exit(cancelled(command, err=err))
