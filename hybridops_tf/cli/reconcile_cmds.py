"""`hyops reconcile`: parse options, call reconcile.service, render the report."""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import Interrupted
from hybridops_tf.cli import render
from hybridops_tf.cli.interrupted import handles_signals
from hybridops_tf.cli.options import (
    input_options,
    lock_option,
    lookups_option,
    stack_file_type,
    workspace,
    workspace_option,
)
from hybridops_tf.cli.render import format_option
from hybridops_tf.cli.settings import hyops_prefix, settings

if TYPE_CHECKING:
    from hybridops_tf.reconcile.model import Alternative, Report

_DETAIL_WIDTH = 88
_NOTE_LOCK = threading.Lock()


@click.command("reconcile")
@click.argument("module_dir", required=False, type=click.Path(path_type=Path))
@click.option("--ref", help="Module ref (default: the directory relative to the modules root).")
@click.option("--stack", "stack_file", type=stack_file_type("--stack"), help="Every member of this stack file.")
@click.option("--all", "all_", is_flag=True, help="Every record under the runtime root.")
@click.option("--json", "as_json", is_flag=True, help='Print {"consistent", "modules": [...]} as JSON.')
@format_option
@click.option("--write", is_flag=True, help="Settle records from evidence (under the module lock).")
@click.option("--forget-orphan", "forget", multiple=True, metavar="ADDRESS",
              help="Drop a suspect orphan you have checked; recorded in a run folder. Repeatable.")
@click.option("--forget-released", "forget_released", multiple=True, metavar="ADDRESS",
              help="Drop a released object you found gone (deleted by hand); recorded in a run folder. Repeatable.")
@click.option("--forget-missing", "forget_missing", multiple=True, metavar="ID",
              help="Drop an object the record knows and no state holds (state_missing), once you deleted it or "
                   "found it gone; recorded in a run folder. Repeatable.")
@click.option("--import", "imports", multiple=True, metavar="ADDRESS=ID",
              help="Adopt a live object into state with the engine's import. Repeatable.")
@click.option("--forget-record", is_flag=True,
              help="Drop this module's record when another ref's record claims its engine state too "
                   "(a shared_state finding); recorded in a run folder. State and objects are untouched.")
@click.option("--parallelism", type=click.IntRange(min=1), default=4, show_default=True,
              help="How many modules of --stack/--all are checked at the same time.")
@input_options
@lock_option
@lookups_option
@workspace_option
@click.pass_context
@handles_signals
def reconcile_cmd(ctx: click.Context, module_dir: Path | None, ref: str | None, stack_file: Path | None,
                  all_: bool, as_json: bool, output_format: str | None, write: bool,
                  forget: tuple[str, ...], forget_released: tuple[str, ...], forget_missing: tuple[str, ...],
                  imports: tuple[str, ...],
                  forget_record: bool, parallelism: int,
                  inputs_file: Path | None, var_options: tuple[str, ...], lock_timeout: float,
                  lookups_file: Path | None) -> None:
    """Compare records with provider state; say what is live, uncertain, and what to run next.

    Read-only unless --write, --import, --forget-orphan, --forget-released, --forget-missing or
    --forget-record is given; never prompts. With a lookups file, a suspect orphan whose type has a lookup is looked
    up in the provider: `--write` adopts the one object found, or drops the orphan a complete
    lookup found none of.
    `--format markdown` prints a table (module, status, why, next action) for a PR comment
    or $GITHUB_STEP_SUMMARY.

    \b
    Exit codes:
      0  consistent
      1  could not check (e.g. the engine failed) or an --import failed
      2  usage error (e.g. a bad ADDRESS=ID, a lookups file that is not valid)
      3  findings (also --all with no records under the runtime root)
      4  lock busy (--write, --import, --forget-orphan, --forget-released, --forget-missing,
         --forget-record)
      130  interrupted by SIGINT (143: SIGTERM); records settled before it stay settled

    \b
    Example, after a red pipeline:
      hyops reconcile --all
      hyops reconcile modules/sim/network --json
      hyops reconcile --all --format markdown >> "$GITHUB_STEP_SUMMARY"
      hyops reconcile --stack modules/sim/stack.yml --parallelism 8
      hyops reconcile modules/sim/network --import sim_network.this=net-1a2b3c4d
      hyops reconcile modules/sim/network --write
    """
    from hybridops_tf.cli.root_note import note_root
    from hybridops_tf.reconcile.service import ReconcileRequest, reconcile

    fmt = render.output_format(as_json, output_format)
    note_root(ctx, name_it=all_ or stack_file is not None)
    req = ReconcileRequest(
        runtime=settings(ctx).runtime, modules_root=settings(ctx).modules_root,
        module_dir=module_dir, ref=ref, stack_file=stack_file, all_records=all_, write=write,
        forget=forget, forget_released=forget_released, forget_missing=forget_missing, imports=imports,
        forget_record=forget_record,
        inputs_file=inputs_file,
        var_options=var_options,
        lock_timeout=lock_timeout, argv=tuple(sys.argv[1:]), hyops_prefix=hyops_prefix(ctx),
        workspace=workspace(ctx, module_dir or Path(".")) if not (all_ or stack_file) else None,
        note=_note, parallelism=parallelism, lookups_file=lookups_file,
    )
    try:
        report = reconcile(req)
    except Interrupted as err:
        if req.read_only:
            raise
        raise Interrupted(f"{err.message}; what was written before it stays written; next: run the "
                          "same reconcile again") from None
    for message, _ in report.errors:
        click.echo(f"hyops: error: {message}", err=True)
    if fmt == "json":
        click.echo(numbers.dumps(report.to_dict(), indent=2))
    elif fmt == "markdown":
        from hybridops_tf.cli import markdown

        diagram: list[str] = []
        if stack_file is not None:  # the stack and its members' statuses, above the findings
            from hybridops_tf.picture.collect import stack_picture
            from hybridops_tf.picture.mermaid import markdown_block
            from hybridops_tf.stack.loader import load_stack

            stack = load_stack(stack_file, settings(ctx).runtime.hcl_cache(), read_only=not write,
                               tofu=settings(ctx).runtime.reads_tofu())
            diagram = markdown_block(stack_picture(stack, settings(ctx).runtime))
        for line in markdown.reconcile(report, diagram):
            click.echo(line)
    else:
        _render(report)
    ctx.exit(report.exit_code)


def _note(text: str) -> None:
    """One whole line per note, in one write: notes come from several worker threads."""
    with _NOTE_LOCK:
        click.echo(f"hyops: {text}", err=True)


def _wrap(text: str) -> list[str]:
    """Wrapped at spaces only: a path or command is never split inside (hyphens included)."""
    return textwrap.wrap(text, _DETAIL_WIDTH, break_on_hyphens=False, break_long_words=False) or [""]


def _render(report: Report) -> None:
    """A table per module, then the next actions once, in order: a step is run; a "one of"
    item is a choice between alternatives (run exactly one of them)."""
    from hybridops_tf.reconcile.model import FORGOTTEN

    if not report.modules:
        click.echo("no modules to reconcile (no records under the runtime root)")
    items: list[str | tuple[str, tuple[Alternative, ...]]] = []
    seen: set[object] = set()
    for mod in report.modules:
        where = f" ({mod.module_dir})" if mod.module_dir else ""
        click.echo(f"{mod.name}{where}: record {mod.status}")
        for act in mod.actions:
            click.echo(f"  {'done' if act.ok else 'FAILED'}: {act.kind}: {act.detail}")
        rows = [(f.code.value, f.detail) for f in mod.findings]
        rows += [("could_not_check", why) for why in mod.unchecked]
        if not rows and mod.status != FORGOTTEN:
            click.echo("  consistent: the record agrees with the state and the live objects")
        for address, ident in mod.released:
            click.echo(f"  released: {address} ({ident}) no longer managed, on purpose; it lived when released and "
                       f"hyops sees it no more (once it is gone: --forget-released {address})")
        width = max((len(code) for code, _ in rows), default=0)
        for code, detail in rows:
            lines = _wrap(detail)
            click.echo(f"  {code.ljust(width)}  {lines[0]}")
            for line in lines[1:]:
                click.echo(f"  {' ' * width}  {line}")
        for f in mod.findings:
            for step in f.next_actions:
                if step not in seen:
                    seen.add(step)
                    items.append(step)
            key = tuple(a.command for a in f.alternatives)
            if key and key not in seen:
                seen.add(key)
                about = " ".join([f.code.value, *f.addresses[:3]] + (["..."] if len(f.addresses) > 3 else []))
                items.append((f"{about} in {mod.name}", f.alternatives))
        click.echo("")
    if items:
        click.echo("next actions, in order:")
        for i, item in enumerate(items, 1):
            if isinstance(item, str):
                click.echo(f"  {i}. {item}")
                continue
            label, choices = item
            click.echo(f"  {i}. one of ({label}), run only the one that fits:")
            for letter, alt in zip("abcdefghij", choices, strict=False):
                click.echo(f"     {letter}. {alt.command}")
                click.echo(f"        when: {alt.when}")
    click.echo(report.summary())
