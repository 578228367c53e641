"""What hyops says and exits with after SIGINT or SIGTERM (docs/running.md: Signals).

A command that can change anything is marked `@handles_signals`: from its first line to
hyops's exit a signal is remembered and passed to the engines that run, nothing new starts,
what ran settles from evidence, and the command says ONE line, `hyops: interrupted by SIGINT
<what was interrupted>; next: <what to run>`, on stderr. Whatever the command's own exit
code, hyops then exits 130 (SIGINT) or 143 (SIGTERM): `final_code`, in the console entry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hybridops_tf.base.errors import ExitCode
from hybridops_tf.base.interrupts import INTERRUPTS, exit_code

if TYPE_CHECKING:
    from hybridops_tf.record.advice import Commands

F = TypeVar("F", bound=Callable[..., Any])

RUN_AGAIN = "run the command again when wanted"
SIGNALLED = "signals_handled"  # the attribute that marks a command callback (tests/unit/test_interrupts.py)


def handles_signals(func: F) -> F:
    """Mark a command that can change anything (see the module docstring)."""

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        INTERRUPTS.hold()
        with INTERRUPTS:
            return func(*args, **kwargs)

    setattr(command, SIGNALLED, True)
    return command  # type: ignore[return-value]


def say(line: str) -> None:
    """The command's one line about the signal (later lines are only its output)."""
    click.echo(line, err=True)
    INTERRUPTS.reported = True


def raised(message: str) -> str:
    """The line for an Interrupted that stopped the command (its message says where)."""
    return f"hyops: {message}" + ("" if "; next: " in message else f"; next: {RUN_AGAIN}")


def module_line(outcome: Any, command: str, ref: str, reconcile: str) -> str | None:
    """The line after apply/destroy of one module when a signal came, else None; `reconcile` is
    the module's reconcile command (record/advice.py)."""
    if INTERRUPTS.received is None:
        return None
    status = outcome.record.status.value if outcome.record is not None else "no record"
    if outcome.unchanged:
        return f"hyops: {outcome.message} ({status}); next: run the {command} again when wanted"
    if outcome.exit_code == ExitCode.INTERRUPTED:
        return (f"hyops: interrupted by {INTERRUPTS.name()}: the {command} of {ref} was stopped and its record "
                f"says {status}; next: {reconcile}")
    done = status in ("ok", "destroyed") and outcome.exit_code == ExitCode.OK
    return (f"hyops: interrupted by {INTERRUPTS.name()} as the {command} of {ref} ended: its record says "
            f"{status}; next: {'nothing, it is done' if done else reconcile}")


def stack_line(report: Any, command: str, stack_file: Path | str, cmd: Commands) -> str | None:
    """The line after `stack apply|destroy` when a signal came, else None."""
    if INTERRUPTS.received is None:
        return None
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items())
    unfinished = any(m.status in ("error", "interrupted", "pending") for m in report.members)
    again = cmd.stack_resume(stack_file) if command == "apply" else cmd.stack_destroy(stack_file)
    advice = f"{cmd.reconcile_stack(stack_file)}, then {again}" if unfinished else "nothing, every member ended"
    return (f"hyops: interrupted by {INTERRUPTS.name()}: stack {report.stack} {command} stopped ({counts}); "
            f"next: {advice}")


def final_code(code: int) -> int:
    """After a signal: 130 or 143, whatever the command returned; and its one line, if the
    command had none to say (it had finished, say, when the signal came)."""
    if INTERRUPTS.received is None:
        return code
    if not INTERRUPTS.reported:
        from hybridops_tf.cli.settings import commands

        say(f"hyops: interrupted by {INTERRUPTS.name()}; what ran is shown above; next: "
            f"`{commands().status_all()}` says what each record holds")
    return exit_code(INTERRUPTS.received)
