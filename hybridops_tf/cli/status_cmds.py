"""`hyops status` and `hyops outputs`: records as stored, or a human table."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hybridops_tf.cli.options import module_options, target, workspace
from hybridops_tf.cli.render import table
from hybridops_tf.errors import ExitCode


@click.command("status")
@module_options
@click.option("--all", "all_", is_flag=True, help="Every record under the runtime root.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the record(s) exactly as stored (plus engine_alive, see above).")
@click.pass_context
def status_cmd(ctx: click.Context, module_dir: Path, ref: str | None, all_: bool, as_json: bool) -> None:
    """Show the operation record of MODULE_DIR (or --all); stale `running` is marked.

    A `running` record whose hyops died while its engine still runs says so (pid, run;
    `engine_alive` in --json) instead of calling it stale.
    Exit 3 when a record is missing or corrupt, stale, its engine outlived hyops, or it lists
    suspect orphans.

    \b
    Example:
      hyops status --all
      hyops status modules/sim/vm --json
    """
    from hybridops_tf import status
    from hybridops_tf.cli.root_note import note_root
    from hybridops_tf.record import RecordStore, record_key

    note_root(ctx, name_it=all_)
    if all_:
        entries = status.all_entries(ctx.obj.runtime_root)
    else:
        tgt = target(ctx, module_dir, ref)
        key = record_key(tgt.ref, workspace(ctx, tgt.directory))
        entries = [status.entry(RecordStore(ctx.obj.runtime_root), key)]
    for e in entries:
        if e.problem:
            click.echo(f"hyops: {e.problem}", err=True)
    if as_json:
        docs = [e.shown_doc for e in entries if e.raw is not None]
        if all_:
            click.echo(json.dumps(docs, indent=2))
        elif docs:
            click.echo(json.dumps(docs[0], indent=2))
        else:
            click.echo("null")
    else:
        _table(entries)
    ctx.exit(ExitCode.INCONSISTENT if any(e.inconsistent for e in entries) else ExitCode.OK)


def _table(entries: list) -> None:
    if not entries:
        click.echo("no records")
        return
    rows = [("MODULE", "STATUS", "RUN", "UPDATED", "NOTE")]
    for e in entries:
        rec = e.record
        note = ""
        if rec is not None:
            if rec.suspect_orphans:
                note = f"{len(rec.suspect_orphans)} suspect orphan(s); "
            if e.stale:
                note += "outcome uncertain: run hyops reconcile; "
            if e.engine_alive is not None:
                note += (f"engine still running (pid {e.engine_alive.pid}, run {e.engine_alive.run_id}): "
                         "its hyops died; wait for it to stop, then run hyops reconcile; ")
            if rec.last_error:
                note += rec.last_error[:70]
        elif e.problem is None:
            note = "no record"
        rows.append((e.module_ref, e.shown_status, rec.run_id if rec else "-",
                     rec.updated_at if rec else "-", note.strip("; ")))
    table(rows)


@click.command("outputs")
@module_options
@click.option("--json", "as_json", is_flag=True, help="Print {name: value} as recorded.")
@click.pass_context
def outputs_cmd(ctx: click.Context, module_dir: Path, ref: str | None, as_json: bool) -> None:
    """Show the outputs recorded for MODULE_DIR (sensitive ones are never recorded).

    \b
    Example:
      hyops outputs modules/sim/network --json
    """
    from hybridops_tf.record import RecordStore, record_key

    tgt = target(ctx, module_dir, ref)
    key = record_key(tgt.ref, workspace(ctx, tgt.directory))
    record = RecordStore(ctx.obj.runtime_root).read(key)
    if record is None:
        from hybridops_tf.cli.root_note import note_root

        note_root(ctx, name_it=False)
        click.echo(f"hyops: no record for {key}", err=True)
        ctx.exit(ExitCode.INCONSISTENT)
    outputs = record.outputs or {}
    if as_json:
        click.echo(json.dumps(outputs, indent=2))
        return
    for name, value in sorted(outputs.items()):
        shown = "(sensitive)" if value == {"sensitive": True} else json.dumps(value)
        click.echo(f"{name} = {shown}")
