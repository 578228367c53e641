"""`hyops apply`, `destroy`, `plan`: parse options, call the core, render."""

from __future__ import annotations

import sys
from pathlib import Path

import click

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

Inputs = tuple[tuple[Path, ...], tuple[str, ...], tuple[Path, ...]]  # --inputs, --var, --var-file


def _run(ctx: click.Context, command: str, module_dir: Path, ref: str | None, inputs: Inputs,
         lock_timeout: float, allow_uncertain: bool = False) -> None:
    from hybridops_tf import operation
    from hybridops_tf.inputs import CliInput
    from hybridops_tf.record import record_key

    tgt = target(ctx, module_dir, ref)
    space = workspace(ctx, tgt.directory)
    given, passthrough = cli_inputs(ctx, inputs[1], inputs[0], inputs[2], tgt.directory)
    if command == "destroy":  # what exists was built with the last run's inputs; given ones win
        given = [CliInput("recorded", record_key(tgt.ref, space)), *given]
    outcome = operation.run(operation.ModuleRequest(
        command=command, target=tgt, runtime_root=ctx.obj.runtime_root, engine=ctx.obj.engine,
        var_options=given, passthrough=passthrough, workspace=space,
        lock_timeout=lock_timeout, allow_uncertain=allow_uncertain, argv=sys.argv[1:],
        on_event=ProgressPrinter(),
    ))
    echo_outcome(outcome, command, tgt.ref, str(module_dir))
    ctx.exit(outcome.exit_code)


@click.command("apply", cls=PassthroughCommand)
@module_options
@module_input_options
@lock_option
@click.option("--allow-uncertain", is_flag=True,
              help="Apply even though the record says the last outcome is uncertain.")
@click.pass_context
def apply_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
              var_options: tuple[str, ...], var_files: tuple[Path, ...], lock_timeout: float,
              allow_uncertain: bool) -> None:
    """Apply MODULE_DIR, recording `running` before the engine may change anything.

    \b
    Example:
      hyops apply modules/sim/vm --var network_id=net-1234abcd
      hyops apply modules/sim/network -- -parallelism=2
    """
    _run(ctx, "apply", module_dir, ref, (inputs_files, var_options, var_files), lock_timeout, allow_uncertain)


@click.command("destroy", cls=PassthroughCommand)
@module_options
@module_input_options
@lock_option
@click.pass_context
def destroy_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
                var_options: tuple[str, ...], var_files: tuple[Path, ...], lock_timeout: float) -> None:
    """Destroy MODULE_DIR; `destroyed` only once the state is confirmed empty.

    The inputs recorded by the module's last run (rerun.inputs.yml) are used again; inputs
    given here win over them, variable by variable.

    \b
    Example:
      hyops destroy modules/sim/vm --var network_id=net-1234abcd
    """
    _run(ctx, "destroy", module_dir, ref, (inputs_files, var_options, var_files), lock_timeout)


@click.command("plan", cls=PassthroughCommand)
@module_options
@module_input_options
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 0 when nothing would change, 2 when changes are pending, 1 on error "
                   "(the engine's -detailed-exitcode; also accepted after --).")
@click.pass_context
def plan_cmd(ctx: click.Context, module_dir: Path, ref: str | None, inputs_files: tuple[Path, ...],
             var_options: tuple[str, ...], var_files: tuple[Path, ...], detailed_exitcode: bool) -> None:
    """Plan MODULE_DIR [-- ENGINE_ARGS]: print each resource's change, then the counts.

    Creates, in-place updates, replaces (and which attribute forces them), deletes and reads,
    with changed attributes as `old -> new`; sensitive values print as (sensitive). The run
    folder keeps the events and the redacted plan.json. Never changes a status.

    Exit codes: 0 planned, 1 the plan failed, 2 a usage error; with --detailed-exitcode
    (or `-- -detailed-exitcode`) 0 no changes, 2 changes pending (the one place 2 means
    "changes"), 1 any error hyops reports (a misspelt option is still Click's 2).

    \b
    Example:
      hyops plan modules/sim/network
      hyops plan modules/sim/network --detailed-exitcode
    """
    from hybridops_tf import planning
    from hybridops_tf.cli.plan_render import render_plan
    from hybridops_tf.errors import HyopsError, OperationFailed

    detailed = detailed_exitcode or bool(planning.DETAILED_FLAGS & set(ctx.meta.get("passthrough") or []))
    try:
        tgt = target(ctx, module_dir, ref)
        given, passthrough = cli_inputs(ctx, var_options, inputs_files, var_files, tgt.directory)
        outcome = planning.run_plan(planning.PlanRequest(
            target=tgt, runtime_root=ctx.obj.runtime_root, engine=ctx.obj.engine,
            workspace=workspace(ctx, tgt.directory), var_options=given, passthrough=passthrough,
            argv=sys.argv[1:], detailed_exitcode=detailed,
        ))
    except HyopsError as err:
        if detailed and err.exit_code == planning.CHANGES_PENDING:  # 2 must only mean "changes"
            raise OperationFailed(err.message) from None
        raise
    for line in render_plan(outcome.plan_doc):
        click.echo(line)
    click.echo(outcome.message)
    ctx.exit(outcome.exit_code)
