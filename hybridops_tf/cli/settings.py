"""The global options as every command gets them (`settings(ctx)`), typed, with the runtime
root's context (runtime/root.py) built from them once per command."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hybridops_tf.base.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from hybridops_tf.record.advice import Commands
    from hybridops_tf.runtime.discover import RootChoice
    from hybridops_tf.runtime.root import Runtime


@dataclass(frozen=True)
class Settings:
    """Global options shared by every command (docs/contract.md: Commands and options, Exit codes)."""

    runtime_root: Path
    engine: str | None
    modules_root: Path | None
    root_choice: RootChoice | None = None  # how runtime_root was chosen (runtime/discover.py)
    engine_rule: str = "--engine/HYOPS_ENGINE"  # which of the two gave `engine`, when given
    store: str | None = None  # --store/HYOPS_STORE: a PostgreSQL URL; never print it unredacted

    @cached_property
    def runtime(self) -> Runtime:
        """The runtime root and its store, built once for the command and passed down."""
        from hybridops_tf.runtime.root import Runtime

        return Runtime(self.runtime_root, self.engine)


def settings(ctx: click.Context) -> Settings:
    """The Settings the `hyops` group put on the context (every command runs under it)."""
    found = ctx.find_object(Settings)
    if found is None:  # a command invoked without the group: a bug, not a user error
        raise RuntimeError("hyops command run without the hyops group's settings")
    return found


def hyops_prefix(ctx: click.Context) -> str:
    """`hyops` plus the global options typed on this command line, so pasted actions match."""
    from click.core import ParameterSource

    parent = ctx.find_root()
    import shlex

    parts, given = ["hyops"], settings(ctx)
    if parent.get_parameter_source("runtime_root") is ParameterSource.COMMANDLINE:
        parts += ["--runtime-root", shlex.quote(str(given.runtime.root))]
    if parent.get_parameter_source("engine") is ParameterSource.COMMANDLINE and given.engine:
        parts += ["--engine", shlex.quote(given.engine)]
    store = given.store
    if parent.get_parameter_source("store") is ParameterSource.COMMANDLINE and store:
        from hybridops_tf.store.url import redact_url  # a password belongs in PGPASSWORD, never here

        parts += ["--store", shlex.quote(redact_url(store))]
    return " ".join(parts)


def commands(ctx: click.Context | None = None) -> Commands:
    """The one builder of printed commands, with the global options typed on this command line.
    Without a context (the console entry after a command ended: a bug's line, a signal's), the
    command line's own group context, remembered when it ran; before it ran, none typed."""
    from hybridops_tf.record.advice import ADVISE, Commands

    ctx = ctx or click.get_current_context(silent=True) or _GROUP[0]
    if ctx is None or ctx.find_object(Settings) is None:
        return ADVISE
    return Commands(hyops_prefix(ctx))


_GROUP: list[click.Context | None] = [None]


def remember_group(ctx: click.Context) -> None:
    """The `hyops` group's context, for `commands()` once the command is done."""
    _GROUP[0] = ctx
