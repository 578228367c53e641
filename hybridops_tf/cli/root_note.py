"""The stderr lines that say which runtime root a command read (docs/contract.md: Commands and options).

Commands that answer questions about modules call `note_root`: `--all` and stack views
name the root they read, and any of them says loudly when that root is missing or holds
no records (the record folder of another project folder, or none, is the usual cause of
a "never run" that is not true).
"""

from __future__ import annotations

import click

from hybridops_tf.cli.settings import settings
from hybridops_tf.runtime import discover


def note_root(ctx: click.Context, name_it: bool = True) -> None:
    """`hyops: runtime root PATH (how)` when name_it; the loud warning when missing/empty."""
    choice: discover.RootChoice | None = settings(ctx).root_choice
    if choice is None:
        return
    store = settings(ctx).runtime.store
    if store.spans_roots:  # the records are the store's: the local root holds only run folders
        if name_it:
            click.echo(f"hyops: records in the {store.describe()}; run folders under {choice.describe()}", err=True)
        return
    if name_it:
        click.echo(f"hyops: runtime root {choice.describe()}", err=True)
    warning = discover.emptiness_warning(choice)
    if warning is not None:
        click.echo(f"hyops: {warning}", err=True)
