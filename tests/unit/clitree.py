"""The `hyops` command tree as Click builds it (`hybridops_tf.cli.main:cli`, a LazyGroup), walked
through every group: for the tests that hold each command to its docs and its help."""

from __future__ import annotations

from collections.abc import Iterator

import click


def walk(command: click.Command, path: tuple[str, ...] = (),
         parent: click.Context | None = None) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """(path, command) for the root and every command and subcommand, e.g. ("stack", "apply")."""
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, parent=parent, info_name=path[-1] if path else "hyops")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"hyops {' '.join((*path, name))} is listed but cannot be loaded"
            yield from walk(sub, (*path, name), ctx)
