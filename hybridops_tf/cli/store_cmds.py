"""`hyops store init | status | import-local`: the record store outside the runtime root
(PostgreSQL, issue #12, or a SQLite file), through its Admin capability (store/ports.py)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

from hybridops_tf.base.errors import Interrupted, UsageError
from hybridops_tf.cli.interrupted import handles_signals
from hybridops_tf.cli.settings import commands, settings


def _url() -> str:
    from hybridops_tf.store.url import selected_url

    url = selected_url()
    if url is None:
        raise UsageError("no store selected: pass --store postgresql://USER@HOST:PORT/DB (the password through "
                         "PGPASSWORD or PGPASSFILE) or --store sqlite:///PATH, or set HYOPS_STORE")
    return url


@click.group("store")
def store_group() -> None:
    """The record store outside the runtime root (--store URL / HYOPS_STORE): PostgreSQL, or a
    SQLite file for one machine (sqlite:///PATH).

    \b
    Exit codes:
      0  done
      2  no store selected, a URL that names no store, or a schema this hyops cannot use
      4  the server could not be reached or written; nothing was changed

    \b
    Example:
      export HYOPS_STORE=postgresql://hyops@db.internal:5432/platform
      hyops store init
      hyops store import-local .hyops
      hyops store status
    """


@store_group.command("init")
@handles_signals
def init_cmd() -> None:
    """Create or migrate the store's schema (idempotent; a newer schema is refused).

    \b
    Exit codes:
      0  the schema is at this hyops's version
      2  no store selected, or its schema is newer than this hyops knows
      4  the server could not be reached or written; nothing was changed
      130  interrupted by SIGINT (143: SIGTERM); the migration is one transaction

    \b
    Example:
      HYOPS_STORE=postgresql://hyops@db:5432/platform PGPASSFILE=~/.pgpass hyops store init
    """
    from hybridops_tf.store import init_store
    from hybridops_tf.store.pgconn import StoreUnavailable
    from hybridops_tf.store.url import redact_url

    url = _url()
    try:
        before, after = init_store(url)
    except StoreUnavailable as err:
        from hybridops_tf.base.errors import RefusedError

        raise RefusedError(f"{err.strerror}; nothing was changed") from None
    if before == after:
        click.echo(f"store {redact_url(url)}: schema version {after}, nothing to migrate")
    else:
        click.echo(f"store {redact_url(url)}: schema version {before} -> {after}")


@store_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Show the server, the schema version, the number of records and the locks held
    (each with its holder's host, pid, user and run).

    \b
    Exit codes:
      0  shown
      2  no store selected, or a schema this hyops cannot use
      4  the server could not be reached

    \b
    Example:
      hyops store status --json   # with HYOPS_STORE set
    """

    summary = settings(ctx).runtime.admin().summary()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"store:          {summary['store']}")
    click.echo(f"server:         {summary['server']}")
    click.echo(f"schema version: {summary['schema_version']}")
    click.echo(f"records:        {summary['records']}")
    locks = summary["locks_held"]
    click.echo(f"locks held:     {len(locks)}")
    for lock in locks:
        click.echo(f"  {lock['key']}: {lock['holder']}")


@store_group.command("import-local")
@click.argument("root", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.pass_context
@handles_signals
def import_local_cmd(ctx: click.Context, root: Path | None) -> None:
    """Copy the records, rerun inputs and stack reports of a local runtime ROOT (default: the
    runtime root in use) into the store. Idempotent; the local copy is kept. A record the
    store already holds is kept unless the local one is newer.

    \b
    Exit codes:
      0  imported (unreadable local records are skipped with a warning)
      2  no store selected, or ROOT holds no records
      4  the server could not be reached or a record's lock is held; nothing more was written
      130  interrupted by SIGINT (143: SIGTERM); what was copied stays, run it again for the rest

    \b
    Example:
      hyops store import-local .hyops
    """
    from hybridops_tf.record import layout
    from hybridops_tf.runtime.transfer import import_local

    target = settings(ctx).runtime.admin()
    source = root if root is not None else settings(ctx).runtime.root
    if not layout.holds_records(source):
        raise UsageError(f"{source} holds no hyops records (no state/ or stacks/ folder): pass the runtime "
                         f"root to import, e.g. `{commands(ctx).store('import-local', 'path/to/.hyops')}`")
    try:
        counts = import_local(source, target)
    except Interrupted as err:  # each record goes under its lock: what was copied stays
        again = commands(ctx).store("import-local", *(() if root is None else (shlex.quote(str(root)),)))
        raise Interrupted(f"{err.message}; the records copied before it stay copied; next: run `{again}` "
                          "again (it keeps what the store already holds)") from None
    click.echo(f"imported from {source}: {counts.records} records ({counts.kept} kept, newer in the store), "
               f"{counts.documents} documents, {counts.skipped} unreadable records skipped")
