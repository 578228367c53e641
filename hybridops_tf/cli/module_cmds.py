"""`hyops apply`, `destroy`, `plan`: parse options, call the core, render."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hybridops_tf.cli.approval import auto_approve_option
from hybridops_tf.cli.interrupted import handles_signals
from hybridops_tf.cli.options import (
    PassthroughCommand,
    cli_inputs,
    lock_option,
    module_input_options,
    module_options,
    target,
    workspace,
)
from hybridops_tf.cli.render import ProgressPrinter, echo_outcome
from hybridops_tf.cli.settings import commands, hyops_prefix, settings

Inputs = tuple[tuple[Path, ...], tuple[str, ...], tuple[Path, ...]]  # --inputs, --var, --var-file
ENGINE_ARGS = "[-- ENGINE_ARGS]"


class ModuleCommand(PassthroughCommand):
    """A per-module command whose usage line names the `--` passthrough."""

    targets = "[MODULE_DIR]"

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = [self.targets if p == "[MODULE_DIR]" else p for p in super().collect_usage_pieces(ctx)]
        return pieces if any("ENGINE_ARGS" in p for p in pieces) else [*pieces, ENGINE_ARGS]


class ApplyCommand(ModuleCommand):
    targets = "[MODULE_DIR | PLAN_FILE]"


def _run(ctx: click.Context, command: str, module_dir: Path, ref: str | None, inputs: Inputs,
         lock_timeout: float, allow_uncertain: bool = False) -> None:
    from hybridops_tf.cli import approval
    from hybridops_tf.operation import steps
    from hybridops_tf.operation.request import ModuleRequest
    from hybridops_tf.record.lifecycle import Command

    if module_dir.is_file():
        _apply_saved_plan(ctx, command, module_dir, ref, inputs, lock_timeout, allow_uncertain)
    tgt = target(ctx, module_dir, ref)
    space = workspace(ctx, tgt.directory)
    given, passthrough = cli_inputs(ctx, inputs[1], inputs[0], inputs[2], tgt.directory)
    auto, passthrough = approval.split_auto_approve(passthrough)
    if approval.must_ask(auto or bool(ctx.meta.get("auto_approve"))):
        result = approval.reviewed_run(ctx, command, tgt, space, given, passthrough, lock_timeout,
                                       allow_uncertain, ProgressPrinter())
        if isinstance(result, int):
            ctx.exit(result)
        outcome = result
    else:
        outcome = steps.run(ModuleRequest(
            command=Command(command), target=tgt, runtime=settings(ctx).runtime,
            var_options=given, passthrough=passthrough, workspace=space,
            lock_timeout=lock_timeout, allow_uncertain=allow_uncertain, argv=sys.argv[1:],
            on_event=ProgressPrinter(),
        ))
    echo_outcome(outcome, command, tgt.ref, str(module_dir), space, hyops_prefix(ctx))
    ctx.exit(outcome.exit_code)


def _apply_saved_plan(ctx: click.Context, command: str, plan_file: Path, ref: str | None, inputs: Inputs,
                      lock_timeout: float, allow_uncertain: bool) -> None:
    """`hyops apply PLAN_FILE`: exactly that plan, never asked (it was reviewed); inputs given
    only for its ephemeral variables, which no plan file keeps (plan/saved.py)."""
    from hybridops_tf.base.errors import UsageError
    from hybridops_tf.cli import approval
    from hybridops_tf.operation import steps
    from hybridops_tf.plan import saved

    if command != "apply":
        raise UsageError(f"{plan_file} is a file: {command} takes a module directory; a saved destroy "
                         f"plan is applied with `{commands(ctx).apply_plan(plan_file)}`")
    given, passthrough = cli_inputs(ctx, inputs[1], inputs[0], inputs[2], Path.cwd())
    req = saved.saved_plan_request(saved.SavedPlanApply(
        plan_file=plan_file, runtime=settings(ctx).runtime,
        modules_root=settings(ctx).modules_root, ref=ref, workspace_of=lambda directory: workspace(ctx, directory),
        passthrough=approval.split_auto_approve(passthrough)[1], lock_timeout=lock_timeout,
        allow_uncertain=allow_uncertain, argv=sys.argv[1:], on_event=ProgressPrinter(), var_options=given,
    ))
    outcome = steps.run(req)
    echo_outcome(outcome, req.command, req.target.ref, str(req.target.directory), req.workspace, hyops_prefix(ctx))
    ctx.exit(outcome.exit_code)


@click.command("apply", cls=ApplyCommand)
@module_options
@module_input_options
@lock_option
@click.option("--allow-uncertain", is_flag=True,
              help="Apply even though the record says the last outcome is uncertain.")
@auto_approve_option
@click.pass_context
@handles_signals
def apply_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
              var_options: tuple[str, ...], var_files: tuple[Path, ...], lock_timeout: float,
              allow_uncertain: bool) -> None:
    """Apply MODULE_DIR, recording `running` before the engine may change anything.

    On a terminal (stdin and stdout) it shows the plan and asks for `yes` first, then applies
    exactly that plan; --auto-approve, `-- -auto-approve` or HYOPS_AUTO_APPROVE=1 skip the
    question, and without a terminal (CI) it never asks. PLAN_FILE (made by `hyops plan
    --out`) applies exactly that plan, without asking: refused (exit 4) when it was made for
    another module, workspace or engine, or its state moved on ("Saved plan is stale").

    \b
    Exit codes:
      0    applied (record ok)
      1    the apply failed (record error; `hyops reconcile` shows what is live)
      2    usage error, or the engine refused before changing anything (record unchanged)
      4    refused, nothing changed: lock busy, uncertain outcome (suspect orphans, a
           stale running record, objects no state holds: state_missing), a saved plan for
           another module/workspace/engine or a stale one, or the answer was not `yes`
      130  interrupted by SIGINT (143: SIGTERM); the record says what is known

    \b
    Example:
      hyops apply modules/sim/vm --var network_id=net-1234abcd
      hyops apply modules/sim/network -- -parallelism=2
      hyops plan modules/sim/network --out network.tfplan && hyops apply network.tfplan
    """
    _run(ctx, "apply", module_dir, ref, (inputs_files, var_options, var_files), lock_timeout, allow_uncertain)


@click.command("destroy", cls=ModuleCommand)
@module_options
@module_input_options
@lock_option
@click.option("--allow-uncertain", is_flag=True,
              help="Destroy even though the record holds objects no state holds (state_missing).")
@auto_approve_option
@click.pass_context
@handles_signals
def destroy_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
                var_options: tuple[str, ...], var_files: tuple[Path, ...], lock_timeout: float,
                allow_uncertain: bool) -> None:
    """Destroy MODULE_DIR; `destroyed` only once the state is confirmed empty.

    The inputs recorded by the module's last run (rerun.inputs.yml) are used again; inputs
    given here win over them, variable by variable. On a terminal it shows the destroy plan
    and asks for `yes` (as apply does); --auto-approve or HYOPS_AUTO_APPROVE=1 skip that.
    Arguments after `--` go to the engine.

    \b
    Exit codes:
      0    destroyed (state confirmed empty)
      1    the destroy failed or left resources (record error)
      2    usage error, or the engine refused before changing anything (record unchanged)
      4    refused, nothing changed: lock busy, the record holds objects no state holds
           (state_missing), or the answer was not `yes`
      130  interrupted by SIGINT (143: SIGTERM); the record says what is known

    \b
    Example:
      hyops destroy modules/sim/vm --var network_id=net-1234abcd
    """
    _run(ctx, "destroy", module_dir, ref, (inputs_files, var_options, var_files), lock_timeout, allow_uncertain)


@click.command("plan", cls=ModuleCommand)
@module_options
@module_input_options
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 0 when nothing would change, 2 when changes are pending, 1 on error "
                   "(the engine's -detailed-exitcode; also accepted after --).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Keep the engine's plan file as FILE (mode 0600; it holds every input in the clear) "
                   "for `hyops apply FILE`.")
@click.option("--format", "output_format", type=click.Choice(("text", "markdown")), default="text",
              show_default=True, help="markdown: a table (resource, action, changed attributes) for a PR "
                                      "comment or $GITHUB_STEP_SUMMARY.")
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=0, show_default=True, metavar="SECONDS",
              help="Seconds the engine waits for its state lock (plan takes no hyops lock).")
@click.pass_context
@handles_signals
def plan_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
             var_options: tuple[str, ...], var_files: tuple[Path, ...], detailed_exitcode: bool,
             out: Path | None, output_format: str, lock_timeout: float) -> None:
    """Plan MODULE_DIR: print each resource's change, then the counts.

    Creates, in-place updates, replaces (and which attribute forces them), deletes and reads,
    with changed attributes as `old -> new`; sensitive values print as (sensitive). The run
    folder keeps the events and the redacted plan.json. Never changes a status. Inputs: the
    last run's (rerun.inputs.yml) under those given, as for destroy. Arguments after `--` go
    to the engine. --out FILE keeps the plan (and FILE.hyops.json, what it was made for, no
    secrets) for `hyops apply FILE`.

    \b
    Exit codes:
      0    planned
      1    the plan failed
      2    usage error
      130  interrupted by SIGINT (143: SIGTERM); nothing was changed
    With --detailed-exitcode (or `-- -detailed-exitcode`): 0 no changes, 2 changes
    pending (the one place 2 means "changes"), 1 any error hyops reports (a misspelt
    option is still Click's 2).

    \b
    Example:
      hyops plan modules/sim/network
      hyops plan modules/sim/network --detailed-exitcode
      hyops plan modules/sim/network --out network.tfplan --format markdown
    """
    from hybridops_tf.base.errors import HyopsError
    from hybridops_tf.plan import planner
    from hybridops_tf.plan.request import PlanRequest

    detailed = planner.wants_detailed(detailed_exitcode, ctx.meta.get("passthrough") or ())
    try:
        tgt = target(ctx, module_dir, ref)
        given, passthrough = cli_inputs(ctx, var_options, inputs_files, var_files, tgt.directory)
        space = workspace(ctx, tgt.directory)
        outcome = planner.run_plan(PlanRequest(
            target=tgt, runtime=settings(ctx).runtime,
            workspace=space, var_options=given, passthrough=passthrough,
            argv=sys.argv[1:], detailed_exitcode=detailed, out=out, lock_timeout=lock_timeout,
        ))
    except HyopsError as err:
        if output_format == "markdown":  # a pull-request job shows stdout: the failure goes there too
            from hybridops_tf.cli.plan_render import render_markdown_failure

            for line in render_markdown_failure(f"Plan: {ref or module_dir}", err.message):
                click.echo(line)
        raise planner.reported_error(err, detailed) from None
    # the renderer loads once the plan ran: the state parser it uses then came with the event
    # parser, at the engine's first line, while the engine ran (tests/integration/test_startup.py)
    from hybridops_tf.cli.plan_render import render_markdown, render_plan

    if output_format == "markdown":
        title = f"Plan: {tgt.ref}" + (f" (workspace {space})" if space else "")
        lines = render_markdown(outcome.plan_doc, title, f"{outcome.summary} (run {outcome.run_id})")
    else:
        lines = [*render_plan(outcome.plan_doc), outcome.message]
    for line in lines:
        click.echo(line)
    if out is not None:
        click.echo(f"hyops: note: {out} holds every input in the clear (mode 0600); apply it with "
                   f"`{commands(ctx).apply_plan(out)}`", err=True)
    ctx.exit(outcome.exit_code)
