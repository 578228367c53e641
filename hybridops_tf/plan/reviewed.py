"""Apply or destroy what was shown: plan into a private file, let the caller show it and ask,
and after a yes apply exactly that plan through the saved-plan path (plan/saved.py), so a
reviewed run and `hyops apply FILE` share one code path. The caller (the CLI, at a terminal)
supplies how to show a plan and how to ask; nothing here prints or reads a terminal.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.inputs.values import CliInput
from hybridops_tf.operation import guards, steps
from hybridops_tf.operation.request import EventSink, ModuleRequest, Outcome
from hybridops_tf.plan import planner, saved
from hybridops_tf.plan.request import PlanRequest
from hybridops_tf.record.address import ModuleTarget, record_key
from hybridops_tf.record.lifecycle import Command

if TYPE_CHECKING:
    from hybridops_tf.runtime.root import Runtime


@dataclass
class ReviewedRun:
    """One apply or destroy of one module that a person reviews before it runs."""

    command: Command  # APPLY or DESTROY
    target: ModuleTarget
    runtime: Runtime
    modules_root: Path | None = None
    workspace: str | None = None
    var_options: Sequence[str | CliInput] = ()
    passthrough: Sequence[str] = ()
    lock_timeout: float = 0
    allow_uncertain: bool = False
    argv: Sequence[str] = ()
    on_event: EventSink | None = None


def run(req: ReviewedRun, show: Callable[[planner.PlanOutcome], Any], ask: Callable[[], bool]) -> Outcome | None:
    """The outcome of the apply of exactly the plan shown; None when the answer was not yes
    (nothing changed). A plan without changes is applied without asking (it changes nothing
    but the record). An uncertain record is refused before the question, not after it."""
    destroy = req.command is Command.DESTROY
    if not destroy:
        guards.guard(ModuleRequest(command=Command.APPLY, target=req.target, runtime=req.runtime,
                                  allow_uncertain=req.allow_uncertain),
                    req.runtime.store.read(record_key(req.target.ref, req.workspace)))
    tmp = planner.private_tmp()
    try:
        plan_file = Path(tmp) / "reviewed.tfplan"
        plan = planner.run_plan(PlanRequest(
            target=req.target, runtime=req.runtime, workspace=req.workspace,
            var_options=req.var_options, passthrough=req.passthrough, argv=req.argv, out=plan_file,
            destroy=destroy,
        ))
        show(plan)
        if plan.has_changes and not ask():
            return None
        return steps.run(saved.saved_plan_request(saved.SavedPlanApply(
            plan_file=plan_file, runtime=req.runtime,
            modules_root=req.modules_root, ref=req.target.ref, workspace_of=lambda _dir: req.workspace,
            passthrough=req.passthrough, lock_timeout=req.lock_timeout, allow_uncertain=req.allow_uncertain,
            argv=req.argv, on_event=req.on_event, reviewed=True,
            var_options=[i if isinstance(i, CliInput) else CliInput("--var", i) for i in req.var_options],
        )))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
