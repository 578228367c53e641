"""`hyops status` and `hyops outputs`: records as stored, or a human table."""

from __future__ import annotations

import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import click

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import ExitCode, UsageError
from hybridops_tf.cli import render
from hybridops_tf.cli.options import module_options, target, workspace
from hybridops_tf.cli.render import format_option, table
from hybridops_tf.cli.settings import commands, settings
from hybridops_tf.record.actions import did_not_finish, never_started
from hybridops_tf.record.advice import Commands, where_of


@click.command("status")
@module_options
@click.option("--all", "all_", is_flag=True, help="Every record under the runtime root.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the record(s) exactly as stored (plus engine_alive, see above).")
@format_option
@click.pass_context
def status_cmd(ctx: click.Context, module_dir: Path, ref: str | None, all_: bool, as_json: bool,
               output_format: str | None) -> None:
    """Show the operation record of MODULE_DIR (or --all); stale `running` is marked.

    A `running` record whose hyops died while its engine still runs says so (pid, run;
    `engine_alive` in --json) instead of calling it stale. `--format markdown` prints a
    table (module, status, why, next action) for a PR comment or $GITHUB_STEP_SUMMARY.

    \b
    Exit codes:
      0  every record consistent
      2  usage error
      3  a record is missing or corrupt, stale `running`, its engine outlived
         hyops, it lists suspect orphans, or it is `retained` after a failure

    \b
    Example:
      hyops status --all
      hyops status modules/sim/vm --json
      hyops status --all --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from hybridops_tf.cli.root_note import note_root
    from hybridops_tf.record.address import record_key
    from hybridops_tf.runtime import status

    fmt = render.output_format(as_json, output_format)
    note_root(ctx, name_it=all_)
    if all_:
        entries = status.all_entries(settings(ctx).runtime.store)
    else:
        try:
            tgt = target(ctx, module_dir, ref)
        except UsageError as err:  # `hyops status` where no module is: the project's top, most often
            raise UsageError(f"{err.message}; `{commands(ctx).status_all()}` lists every record") from None
        store = settings(ctx).runtime.store
        key = record_key(tgt.ref, workspace(ctx, tgt.directory))
        if ref is None:  # a stack member's folder: its record is filed under the stack's ref
            key = status.record_of_folder(store, tgt.ref, tgt.directory, workspace(ctx, tgt.directory))
            if key != record_key(tgt.ref, workspace(ctx, tgt.directory)):
                click.echo(f"hyops: note: the record of {module_dir} is filed under {key} "
                           f"(no record under {tgt.ref})", err=True)
        entries = [status.entry(store, key)]
    for e in entries:
        if e.problem:
            click.echo(f"hyops: {e.problem}", err=True)
    if fmt == "markdown":
        from hybridops_tf.cli import markdown

        for line in markdown.status(entries, commands(ctx), settings(ctx).runtime.root.parent):
            click.echo(line)
    elif fmt == "json":
        docs = [e.shown_doc for e in entries if e.raw is not None]
        if all_:
            click.echo(numbers.dumps(docs, indent=2))
        elif docs:
            click.echo(numbers.dumps(docs[0], indent=2))
        else:
            click.echo("null")
    else:
        _table(entries, commands(ctx))
    ctx.exit(ExitCode.INCONSISTENT if any(e.inconsistent for e in entries) else ExitCode.OK)


def _table(entries: list, cmd: Commands) -> None:
    from hybridops_tf.runtime import state_look

    if not entries:
        click.echo("no records")
        return
    rows = [("MODULE", "STATUS", "RUN", "UPDATED", "NOTE")]
    for e in entries:
        rec = e.record
        note = ""
        if rec is not None:
            reconcile = cmd.reconcile(where_of(rec.module_ref, rec.module_dir, rec.workspace))
            if rec.suspect_orphans:
                note = f"{len(rec.suspect_orphans)} suspect orphan(s); "
            if e.stale:
                note += f"outcome uncertain: run {reconcile}; "
            if e.engine_alive is not None:
                note += (f"engine still running (pid {e.engine_alive.pid}, run {e.engine_alive.run_id}): "
                         f"its hyops died; wait for it to stop, then run {reconcile}; ")
            if did_not_finish(rec.actions):
                note += f"action(s) did not finish: {', '.join(a.address for a in did_not_finish(rec.actions))}; "
            if never_started(rec.actions):
                note += f"planned action(s) never started: {', '.join(a.address for a in never_started(rec.actions))}; "
            if e.written is not None:
                note += f"{e.written.headline()}: run {reconcile}; "
            elif e.not_looked is not None:
                note += f"state not compared with the record: {e.not_looked}; "
                if e.not_looked == state_look.NOT_LOCAL:
                    note += f"to compare: run {reconcile}; "
            if rec.last_error:
                note += rec.last_error  # whole: render.table wraps it on words
        elif e.problem is None:
            note = "no record"
        rows.append((e.module_ref, e.shown_status, rec.run_id if rec else "-",
                     rec.updated_at if rec else "-", note.strip("; ")))
    table(rows)


_SENSITIVE = {"sensitive": True}  # how a record stores a sensitive output (no value)
_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@click.command("outputs")
@module_options
@click.argument("name", required=False)
@click.option("--raw", is_flag=True, help="NAME's value without quotes (a string, number or bool only).")
@click.option("--json", "as_json", is_flag=True, help="JSON: NAME's value, else {name: value} as recorded.")
@click.pass_context
def outputs_cmd(ctx: click.Context, module_dir: Path, ref: str | None, name: str | None, raw: bool,
                as_json: bool) -> None:
    """Show the outputs recorded for MODULE_DIR, or NAME's value, as `tofu output` does.

    Without NAME: `name = value` lines (values as JSON). With NAME: its value as JSON (a
    string quoted, as with --json); --raw prints a string, number or bool bare, for scripts.
    A lone argument that is an output name and no directory is NAME in the current
    directory (`hyops outputs . NAME` when a directory has the output's name).
    Sensitive outputs are never recorded: NAME of one is exit 2 (read it with `tofu output`
    in the module, from state). An unknown NAME's message lists the recorded ones.

    \b
    Exit codes:
      0  printed
      2  usage error: an unknown or sensitive NAME, --raw of a list, map or null
      3  no record for the module

    \b
    Example:
      hyops outputs modules/sim/network --json
      hyops outputs modules/sim/network network_id --raw
    """
    from hybridops_tf.record.address import record_key

    if name is None and _is_name_not_dir(ctx, module_dir):
        name, module_dir = str(module_dir), Path(".")
    if raw and as_json:
        raise UsageError("--raw and --json cannot be combined: pick one")
    if raw and name is None:
        raise UsageError(f"--raw needs an output NAME (e.g. {commands(ctx).named('outputs', 'DIR', 'NAME', '--raw')})")
    tgt = target(ctx, module_dir, ref)
    key = record_key(tgt.ref, workspace(ctx, tgt.directory))
    record = settings(ctx).runtime.store.read(key)
    if record is None:
        from hybridops_tf.cli.root_note import note_root

        note_root(ctx, name_it=False)
        click.echo(f"hyops: no record for {key}", err=True)
        ctx.exit(ExitCode.INCONSISTENT)
    outputs = record.outputs or {}
    if name is not None:
        shown = _one_output(outputs, name, key, module_dir, raw)
        if raw:  # a value for scripts: its UTF-8 bytes, whatever the locale (render.ascii_streams)
            sys.stdout.flush()
            sys.stdout.buffer.write(shown.encode("utf-8") + b"\n")
            sys.stdout.buffer.flush()
        else:
            click.echo(shown)
        return
    if as_json:
        click.echo(numbers.dumps(outputs, indent=2))
        return
    for out_name, value in sorted(outputs.items()):
        shown = "(sensitive)" if value == _SENSITIVE else numbers.dumps(value)
        click.echo(f"{out_name} = {shown}")


def _is_name_not_dir(ctx: click.Context, module_dir: Path) -> bool:
    """`hyops outputs network_id` in a module: the one argument names an output, not a
    directory (an existing directory, or anything with a slash, stays MODULE_DIR)."""
    from click.core import ParameterSource

    given = ctx.get_parameter_source("module_dir") is not ParameterSource.DEFAULT
    text = str(module_dir)
    return given and _OUTPUT_NAME.fullmatch(text) is not None and not module_dir.is_dir()


def _one_output(outputs: dict[str, Any], name: str, key: str, module_dir: Path, raw: bool) -> str:
    """NAME's value as printed; UsageError (exit 2) when it cannot be."""
    if name not in outputs:
        known = ", ".join(sorted(outputs)) or "none"
        raise UsageError(f"no output {name!r} in the record of {key} (recorded: {known})")
    value = outputs[name]
    if value == _SENSITIVE:
        raise UsageError(f"output {name!r} of {key} is sensitive: hyops never records its value; "
                         f"read it from state with `tofu output -raw {name}` in {module_dir}")
    if raw:
        if isinstance(value, str):
            return value
        if isinstance(value, bool | int | float | Decimal):
            return numbers.dumps(value)
        kind = "null" if value is None else type(value).__name__.replace("dict", "map")
        raise UsageError(f"output {name!r} is a {kind}: --raw prints only a string, number or bool; "
                         "use --json")
    return numbers.dumps(value, indent=2)
