"""`hyops plan`: a run folder with the plan's events and a redacted plan.json.

Plan never changes a record's status. The binary plan file holds input values in the clear
(sensitive ones too), so it is written to a private temporary directory (memory-backed
/dev/shm when there is one), read back with `show -json`, redacted, and deleted.

The redacted document is also what `hyops plan` prints (cli/plan_render renders it).
With `detailed_exitcode` (`--detailed-exitcode`, or `-detailed-exitcode` after `--`) the exit
code is the engine's: 0 no change, 2 changes pending (the only place hyops' 2 is not a usage
error); a failure stays 1.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hybridops_tf.engine import commands
from hybridops_tf.engine.events import ChangeSummary, parse_event
from hybridops_tf.engine.sensitive import redact_sensitive
from hybridops_tf.errors import EngineError, ExitCode, HyopsError
from hybridops_tf.modules import ModuleTarget
from hybridops_tf.operation import Outcome
from hybridops_tf.record import record_key
from hybridops_tf.redact import redact_event_line
from hybridops_tf.runs import EventLog, RunFolder, new_run_id
from hybridops_tf.runtime import Runtime


@dataclass
class PlanRequest:
    target: ModuleTarget
    runtime_root: Path
    engine: str | None = None
    inputs_file: Path | None = None
    var_options: Sequence[str] = ()
    stack_inputs: dict | None = None
    sensitive_inputs: frozenset[str] = frozenset()
    passthrough: Sequence[str] = ()
    argv: Sequence[str] = ()
    command: str = "plan"
    workspace: str | None = None
    detailed_exitcode: bool = False


CHANGES_PENDING = 2  # the engine's -detailed-exitcode for "succeeded, there are changes"
DETAILED_FLAGS = frozenset({"-detailed-exitcode", "--detailed-exitcode"})


@dataclass
class PlanOutcome(Outcome):
    """An Outcome plus the redacted plan document (plan.json's content) to render."""

    plan_doc: dict = field(default_factory=dict)
    has_changes: bool = False


def split_detailed_exitcode(passthrough: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether the passthrough asks for `-detailed-exitcode`, and the passthrough without it
    (hyops always passes the flag itself, once)."""
    rest = [arg for arg in passthrough if arg not in DETAILED_FLAGS]
    return len(rest) != len(passthrough), rest


def _private_tmp() -> str:
    shm = Path("/dev/shm")
    return tempfile.mkdtemp(prefix="hyops-plan-", dir=str(shm) if shm.is_dir() else None)


def run_plan(req: PlanRequest) -> PlanOutcome:
    rt = Runtime(req.runtime_root)
    resolved = rt.resolve_inputs(req.target, req.inputs_file, req.var_options, req.stack_inputs)
    rt.ensure_root()
    run_id = new_run_id("plan")
    folder = RunFolder.create(req.runtime_root, record_key(req.target.ref, req.workspace), run_id)
    meta = rt.meta(req, run_id, resolved)
    folder.write_meta(meta)
    summary: list[ChangeSummary] = []
    asked, passthrough = split_detailed_exitcode(req.passthrough)
    detailed = req.detailed_exitcode or asked
    try:
        engine = rt.engine_for(req.target, req.engine, resolved, req.workspace, folder)
        meta["engine"] = engine.info.to_json()
        rt.write_run_inputs(folder, resolved)  # a plan changes nothing: rerun.inputs.yml stays
        tmp = _private_tmp()
        try:
            plan_file = Path(tmp) / "plan.tfplan"
            log = EventLog(folder)

            def on_line(line: str) -> None:
                log.append(redact_event_line(line))
                event = parse_event(line)
                if isinstance(event, ChangeSummary):
                    summary.append(event)

            try:
                result = engine.stream(
                    engine.argv(commands.plan, plan_file, extra=["-detailed-exitcode", *passthrough]),
                    on_line, folder.stderr_path)
            finally:
                log.close()
            if result.returncode not in (0, CHANGES_PENDING) or not plan_file.exists():
                raise EngineError(f"plan of {req.target.ref} failed (exit {result.returncode}); "
                                  f"see {folder.events_path}")
            doc = redact_sensitive(engine.show_plan_doc(plan_file))
            folder.write_text("plan.json", json.dumps(doc, indent=2) + "\n")
            pending = result.returncode == CHANGES_PENDING
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except HyopsError as err:
        rt.finish_run(folder, meta, err.exit_code, {"outcome": "failed", "error": err.message})
        raise
    counts = summary[-1] if summary else None
    text = (f"{counts.add} to add, {counts.change} to change, {counts.remove} to destroy"
            if counts else "plan complete")
    code = CHANGES_PENDING if detailed and pending else ExitCode.OK
    rt.finish_run(folder, meta, code, {"outcome": "planned", "summary": text, "changes_pending": pending})
    return PlanOutcome(None, code, run_id, folder.path,
                       f"plan {req.target.ref}: {text} (run {run_id}, {folder.path / 'plan.json'})",
                       plan_doc=doc, has_changes=pending)
