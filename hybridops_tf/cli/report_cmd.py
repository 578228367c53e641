"""`hyops report`: parse options, gather the report (picture.collect), write its HTML page."""

from __future__ import annotations

import os
from pathlib import Path

import click

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.options import lookups_option, workspace, workspace_option
from hybridops_tf.cli.settings import settings
from hybridops_tf.stack.model import DEFAULT_STACK_FILE


@click.command("report")
@click.argument("target", required=False, type=click.Path(path_type=Path))
@click.option("--all", "all_", is_flag=True, help="Every record under the runtime root.")
@click.option("--html", "html_file", required=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report here: one HTML file, no script, nothing loaded from the network.")
@click.option("--ref", help="Module ref of MODULE_DIR (default: its path relative to the modules root).")
@click.option("--no-reconcile", is_flag=True,
              help="Leave out the next commands: run no read-only reconcile (no engine call).")
@lookups_option
@workspace_option
@click.pass_context
def report_cmd(ctx: click.Context, target: Path | None, all_: bool, html_file: Path, ref: str | None,
               no_reconcile: bool, lookups_file: Path | None) -> None:
    """Write one HTML page of STACK_FILE, MODULE_DIR or --all, for a run artifact.

    TARGET is a stack file or a module directory (default: ./stack.yml when there is one,
    else the current directory). The page holds the stack's graph with each member's
    status, the last run's timeline (a bar per resource, the point where it stopped and
    what never started), and per module its status, last error, resources by status,
    suspect orphans and the exact next commands of a read-only `hyops reconcile` (which
    changes nothing). Inline CSS and SVG only: it opens offline, in a CI artifact viewer.
    Sensitive values never appear.

    \b
    Exit codes:
      0  written (whatever the statuses)
      1  the file could not be written
      2  usage error: no such TARGET, an invalid stack file, --ref with a stack or --all

    \b
    Example:
      hyops report modules/sim/stack.yml --html hyops-report.html
      hyops report modules/sim/vm --html vm.html --no-reconcile
      hyops report --all --html hyops-report.html
    """
    from hybridops_tf.base.files import atomic_write_text
    from hybridops_tf.cli.reconcile_cmds import _note
    from hybridops_tf.cli.root_note import note_root
    from hybridops_tf.cli.settings import hyops_prefix
    from hybridops_tf.picture import collect, html

    stack_file, module_dir = _what(target, all_, ref)
    note_root(ctx, name_it=module_dir is None)
    data = collect.gather(collect.ReportRequest(
        runtime=settings(ctx).runtime, modules_root=settings(ctx).modules_root,
        stack_file=stack_file, module_dir=module_dir, ref=ref, all_records=all_,
        workspace=workspace(ctx, module_dir) if module_dir is not None else None,
        reconcile=not no_reconcile, hyops_prefix=hyops_prefix(ctx), note=_note, lookups_file=lookups_file))
    atomic_write_text(html_file, html.render(data))
    click.echo(f"report: {html_file}")


def _what(target: Path | None, all_: bool, ref: str | None) -> tuple[Path | None, Path | None]:
    """(stack file, module directory): at most one set; both None for --all. UsageError else."""
    if all_:
        if target is not None or ref is not None:
            raise UsageError("--all reports every record: pass no STACK_FILE or MODULE_DIR, and no --ref")
        return None, None
    if target is None:
        target = Path(DEFAULT_STACK_FILE) if os.path.isfile(DEFAULT_STACK_FILE) else Path(".")
    if target.is_dir():
        return None, target
    if target.is_file():
        if ref is not None:
            raise UsageError(f"--ref names one module, and {target} is a stack file: pass MODULE_DIR instead")
        return target, None
    raise UsageError(f"{target}: no such stack file or module directory; pass a stack file (stack.yml), "
                     "a module directory, or --all")
